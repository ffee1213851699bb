/**
 * Bounded template rendering (issue 12, "templates without limits"). Webhook templates render in a small
 * pool of child processes, each started with a heap cap, so a template with nested loops or
 * `range(100000000)` can neither block the event loop nor grow the server's memory: a render past its
 * deadline kills its process, a process that runs out of heap dies alone, an output over the byte budget is
 * refused, and `range()` is limited. Worker threads were tried first: V8 aborts the whole process when a
 * thread's single allocation crosses its heap limit, so threads cannot contain a memory bomb.
 * Every failure is a `TemplateError` with a readable message (recorded as a failed delivery attempt).
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TemplateError } from "./jinja.ts";

/** Budget of one render: wall-clock milliseconds, output bytes, renderer heap megabytes. */
export interface RenderBudget {
  timeoutMs: number;
  maxBytes: number;
  heapMb: number;
}

/**
 * Budget from `INVENTORY_TEMPLATE_TIMEOUT` (seconds, default 2), `INVENTORY_TEMPLATE_MAX_BYTES` (default
 * 1 MiB) and `INVENTORY_TEMPLATE_HEAP_MB` (default 64).
 */
export function renderBudgetFromEnv(env: NodeJS.ProcessEnv = process.env): RenderBudget {
  const num = (v: string | undefined, d: number) => (v && Number(v) > 0 ? Number(v) : d);
  return {
    timeoutMs: num(env.INVENTORY_TEMPLATE_TIMEOUT, 2) * 1000,
    maxBytes: num(env.INVENTORY_TEMPLATE_MAX_BYTES, 1024 * 1024),
    heapMb: num(env.INVENTORY_TEMPLATE_HEAP_MB, 64),
  };
}

const CHILD = fileURLToPath(new URL("./render-child.ts", import.meta.url));
/** Renderer processes kept at most (each serves one render at a time). */
const MAX_CHILDREN = 2;

interface Pending {
  resolve(out: string): void;
  reject(e: Error): void;
}
interface Renderer {
  proc: ChildProcess;
  heapMb: number;
  busy: (Pending & { id: number; timer: NodeJS.Timeout }) | undefined;
}

const idle: Renderer[] = [];
let live = 0;
let nextId = 1;
const waiting: Array<() => void> = [];

function spawnRenderer(heapMb: number): Renderer {
  const proc = fork(CHILD, [], {
    execArgv: [`--max-old-space-size=${heapMb}`, "--disable-warning=ExperimentalWarning"],
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    serialization: "advanced",
  });
  live++;
  const r: Renderer = { proc, heapMb, busy: undefined };
  proc.on("message", (m: { id: number; out?: string; error?: string }) => {
    const task = r.busy;
    if (!task || task.id !== m.id) return;
    clearTimeout(task.timer);
    r.busy = undefined;
    release(r);
    if (m.error !== undefined) task.reject(new TemplateError(m.error));
    else task.resolve(m.out ?? "");
  });
  proc.on("exit", () => {
    live--;
    const at = idle.indexOf(r);
    if (at >= 0) idle.splice(at, 1);
    const task = r.busy;
    r.busy = undefined;
    if (task) {
      clearTimeout(task.timer);
      task.reject(new TemplateError(`template rendering exceeded its memory budget of ${r.heapMb} MB`));
    }
    waiting.shift()?.();
  });
  proc.unref();
  (proc.channel as { unref?: () => void } | undefined)?.unref?.();
  return r;
}

function release(r: Renderer): void {
  idle.push(r);
  waiting.shift()?.();
}

async function acquire(heapMb: number): Promise<Renderer> {
  for (;;) {
    const r = idle.pop();
    if (r && r.heapMb === heapMb && r.proc.connected) return r;
    if (r) r.proc.kill("SIGKILL");
    else if (live < MAX_CHILDREN) return spawnRenderer(heapMb);
    else await new Promise<void>((resolve) => waiting.push(resolve));
  }
}

/**
 * Render `source` over `context` (plain JSON values) within `budget`.
 * @throws TemplateError on a syntax or render error, a render past its deadline, an output over the byte
 *   budget, a `range()` over 100,000 items, or a renderer that ran out of heap.
 */
export async function renderBounded(
  source: string,
  context: Record<string, unknown>,
  budget: RenderBudget,
): Promise<string> {
  const r = await acquire(budget.heapMb);
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (r.busy?.id !== id) return;
      r.busy = undefined;
      r.proc.kill("SIGKILL");
      reject(new TemplateError(`template rendering exceeded ${budget.timeoutMs / 1000} s and was stopped`));
    }, budget.timeoutMs);
    r.busy = { id, resolve, reject, timer };
    r.proc.send({ id, source, context, maxBytes: budget.maxBytes });
  });
}

/** Stop the renderer processes (worker shutdown). */
export async function closeRenderers(): Promise<void> {
  for (const r of idle.splice(0)) r.proc.kill("SIGKILL");
}
