/**
 * Bounded template rendering (issue 12, "templates without limits"). Webhook templates render in a small
 * pool of child processes, each started with a heap cap, so a template with nested loops or
 * `range(100000000)` can neither block the event loop nor grow the server's memory: a render past its
 * deadline kills its process, a process that runs out of heap dies alone, an output over the byte budget is
 * refused, and `range()` is limited. Worker threads were tried first: V8 aborts the whole process when a
 * thread's single allocation crosses its heap limit, so threads cannot contain a memory bomb.
 * Every failure is a `TemplateError` with a readable message (recorded as a failed delivery attempt).
 *
 * Two lanes of renderers (issue 23): webhook renders (`renderBounded`) and computed fields of read
 * responses (`renderMany`) never wait for each other's processes, so readers cannot starve webhook
 * delivery. `renderMany` sends a page's objects in batches (many renders per message) and stops at the
 * request's deadline and output budget; what it did not render is left for the caller's fallback.
 *
 * Starting a renderer process is not rendering (issue 24): a new process is used once it reported that it
 * is ready, and only then do the budgets' clocks run, so a machine slow to start a process does not turn
 * the first webhook or computed field into a timeout. A process not ready within RENDERER_START_MS is a
 * hang: it is killed and the render fails.
 */
import { type ChildProcess, fork } from "node:child_process";
import { setPriority } from "node:os";
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
/** How long a new renderer process may take to report that it is ready before it counts as hung (ms). */
const RENDERER_START_MS = 120_000;

/** Which pool a render uses: webhook deliveries, or computed fields of API and UI responses. */
type LaneName = "webhook" | "reader";
/** A reply of the renderer (render-child.ts): one render's output or error, or the end of a batch. */
interface Reply {
  id: number;
  /** The process has loaded the renderer and waits for work (its first message). */
  ready?: boolean;
  i?: number;
  out?: string;
  error?: string;
  done?: boolean;
  next?: number;
  /** The batch ended early because the request's deadline or output budget ran out. */
  stopped?: boolean;
}
/** The task a renderer is busy with: it gets the replies with its id, and the process's exit. */
interface Task {
  id: number;
  onMessage(m: Reply): void;
  onExit(): void;
}
interface Renderer {
  proc: ChildProcess;
  heapMb: number;
  lane: Lane;
  task: Task | undefined;
  /** Resolves true once the process reported that it is ready; false when it exited or hung first. */
  ready: Promise<boolean>;
}
interface Lane {
  /** Renderer processes kept at most (each serves one task at a time). */
  max: number;
  /** Niceness of its processes: readers' renders yield the CPU to the server and to webhook renders. */
  nice: number;
  idle: Renderer[];
  live: number;
  waiting: Array<() => void>;
}

const LANES: Record<LaneName, Lane> = {
  webhook: { max: 2, nice: 0, idle: [], live: 0, waiting: [] },
  reader: { max: 2, nice: 10, idle: [], live: 0, waiting: [] },
};
let nextId = 1;

function spawnRenderer(lane: Lane, heapMb: number): Renderer {
  const proc = fork(CHILD, [], {
    execArgv: [`--max-old-space-size=${heapMb}`, "--disable-warning=ExperimentalWarning"],
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    serialization: "advanced",
  });
  lane.live++;
  try {
    if (lane.nice && proc.pid) setPriority(proc.pid, lane.nice);
  } catch {
    // Best effort: a platform without priorities renders at the normal one.
  }
  let started: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => {
    // Not unref'd: someone waits for this process, so the event loop stays alive until it is ready.
    const hung = setTimeout(() => proc.kill("SIGKILL"), RENDERER_START_MS);
    started = (ok) => {
      clearTimeout(hung);
      resolve(ok);
    };
  });
  const r: Renderer = { proc, heapMb, lane, task: undefined, ready };
  proc.on("message", (m: Reply) => {
    if (m.ready) started(true);
    else if (r.task?.id === m.id) r.task.onMessage(m);
  });
  proc.on("exit", () => {
    started(false);
    lane.live--;
    const at = lane.idle.indexOf(r);
    if (at >= 0) lane.idle.splice(at, 1);
    const task = r.task;
    r.task = undefined;
    task?.onExit();
    lane.waiting.shift()?.();
  });
  proc.unref();
  (proc.channel as { unref?: () => void } | undefined)?.unref?.();
  return r;
}

/** The task of `r` is over: back to its lane's idle list. */
function release(r: Renderer): void {
  r.task = undefined;
  r.lane.idle.push(r);
  r.lane.waiting.shift()?.();
}

/** The task of `r` overran: kill the process (its exit wakes the next waiter); the task is not told. */
function kill(r: Renderer): void {
  r.task = undefined;
  r.proc.kill("SIGKILL");
}

/**
 * A ready renderer of `lane`, waiting for one while all are busy; undefined when `until` (epoch ms) passes
 * first, or when a new process exited or hung before it was ready. `onStart` is told how long (ms) starting
 * a new process took, time that belongs to no render's budget.
 */
async function acquire(
  name: LaneName,
  heapMb: number,
  until = Number.POSITIVE_INFINITY,
  onStart: (ms: number) => void = () => {},
): Promise<Renderer | undefined> {
  const lane = LANES[name];
  for (;;) {
    const r = lane.idle.pop();
    if (r && r.heapMb === heapMb && r.proc.connected) return r;
    if (r) r.proc.kill("SIGKILL");
    else if (lane.live < lane.max) {
      const fresh = spawnRenderer(lane, heapMb);
      const t0 = Date.now();
      const ok = await fresh.ready;
      onStart(Date.now() - t0);
      if (ok) return fresh;
      if (fresh.proc.exitCode === null && fresh.proc.signalCode === null) fresh.proc.kill("SIGKILL");
      return undefined;
    } else {
      const left = until - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = Number.isFinite(left)
          ? setTimeout(() => {
              const at = lane.waiting.indexOf(wake);
              if (at >= 0) lane.waiting.splice(at, 1);
              resolve();
            }, left)
          : undefined;
        lane.waiting.push(wake);
      });
    }
  }
}

/**
 * Render `source` over `context` (plain JSON values) within `budget`, in the webhook lane.
 * @throws TemplateError on a syntax or render error, a render past its deadline, an output over the byte
 *   budget, a `range()` over 100,000 items, or a renderer that ran out of heap.
 */
export async function renderBounded(
  source: string,
  context: Record<string, unknown>,
  budget: RenderBudget,
): Promise<string> {
  const r = await acquire("webhook", budget.heapMb);
  if (!r) throw new TemplateError("the template renderer process did not start");
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      kill(r);
      reject(new TemplateError(`template rendering exceeded ${budget.timeoutMs / 1000} s and was stopped`));
    }, budget.timeoutMs);
    r.task = {
      id,
      onMessage(m) {
        clearTimeout(timer);
        release(r);
        if (m.error !== undefined) reject(new TemplateError(m.error));
        else resolve(m.out ?? "");
      },
      onExit() {
        clearTimeout(timer);
        reject(new TemplateError(`template rendering exceeded its memory budget of ${r.heapMb} MB`));
      },
    };
    r.proc.send({ id, source, context, maxBytes: budget.maxBytes });
  });
}

/** Limits of all the renders of one request (`renderMany`). */
export interface RequestBudget {
  /** Epoch milliseconds after which nothing more is rendered. */
  deadline: number;
  /** Output bytes (UTF-8) the renders may produce in total. */
  maxBytes: number;
}

/**
 * The budget of the computed fields of one request starting `now`: `INVENTORY_COMPUTED_TIMEOUT` seconds
 * (default 2) and `INVENTORY_COMPUTED_MAX_BYTES` output bytes (default 4 MiB) in total (issue 23).
 */
export function requestBudgetFromEnv(env: NodeJS.ProcessEnv = process.env, now = Date.now()): RequestBudget {
  const num = (v: string | undefined, d: number) => (v && Number(v) > 0 ? Number(v) : d);
  return {
    deadline: now + num(env.INVENTORY_COMPUTED_TIMEOUT, 2) * 1000,
    maxBytes: num(env.INVENTORY_COMPUTED_MAX_BYTES, 4 * 1024 * 1024),
  };
}

/** Objects sent to a renderer per message. */
const BATCH = 100;

/**
 * Render each of `templates` over each of `contexts` in the reader lane, batch by batch, within `budget`
 * per render and `request` for all of them. Time spent starting a renderer process is added to
 * `request.deadline` (it is the request's, shared by its calls): starting is not rendering.
 * @returns one entry per (context, template), context-major (`[c * templates.length + t]`): the output, or
 *   undefined when that render failed (syntax or render error, over its own deadline or output budget, out
 *   of heap) or was not done because the request's deadline or output budget ran out first. Never throws.
 */
export async function renderMany(
  templates: readonly string[],
  contexts: ReadonlyArray<Record<string, unknown>>,
  budget: RenderBudget,
  request: RequestBudget,
): Promise<Array<string | undefined>> {
  const per = templates.length;
  const out = new Array<string | undefined>(contexts.length * per).fill(undefined);
  const spent = { bytes: 0 };
  for (let start = 0; start < contexts.length; start += BATCH) {
    const slice = contexts.slice(start, start + BATCH);
    let from = 0;
    while (from < slice.length * per) {
      if (Date.now() >= request.deadline || spent.bytes >= request.maxBytes) return out;
      const r = await acquire("reader", budget.heapMb, request.deadline, (ms) => {
        request.deadline += ms;
      });
      if (!r) return out;
      const ran = await runBatch(r, templates, slice, from, budget, request, spent.bytes, (i, text) => {
        out[start * per + i] = text;
        spent.bytes += Buffer.byteLength(text, "utf8");
      });
      if (ran.stopped) return out;
      from = ran.next;
    }
  }
  return out;
}

/**
 * One message's worth of renders on `r`, from item `from` on. Resolves with the item to go on from (the
 * end when the batch finished, else past the render that overran and was killed), or `stopped` when the
 * renderer stopped for the request's deadline or output budget.
 */
function runBatch(
  r: Renderer,
  templates: readonly string[],
  contexts: ReadonlyArray<Record<string, unknown>>,
  from: number,
  budget: RenderBudget,
  request: RequestBudget,
  spentBytes: number,
  record: (i: number, text: string) => void,
): Promise<{ next: number; stopped?: boolean }> {
  const id = nextId++;
  const total = contexts.length * templates.length;
  let current = from;
  return new Promise<{ next: number; stopped?: boolean }>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      const ms = Math.max(0, Math.min(budget.timeoutMs, request.deadline - Date.now()));
      timer = setTimeout(() => {
        kill(r);
        resolve({ next: current + 1 });
      }, ms);
    };
    r.task = {
      id,
      onMessage(m) {
        if (m.done) {
          clearTimeout(timer);
          release(r);
          resolve({ next: m.next ?? total, stopped: m.stopped === true });
          return;
        }
        if (m.i === undefined) return;
        if (m.out !== undefined) record(m.i, m.out);
        current = m.i + 1;
        arm();
      },
      onExit() {
        clearTimeout(timer);
        resolve({ next: current + 1 });
      },
    };
    arm();
    r.proc.send({
      id,
      templates,
      contexts,
      from,
      maxBytes: budget.maxBytes,
      deadline: request.deadline,
      budgetBytes: request.maxBytes - spentBytes,
    });
  });
}

/** Stop the idle renderer processes of both lanes (worker shutdown). */
export async function closeRenderers(): Promise<void> {
  for (const lane of Object.values(LANES)) for (const r of lane.idle.splice(0)) r.proc.kill("SIGKILL");
}
