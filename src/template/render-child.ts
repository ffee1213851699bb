/**
 * Child-process entry of the bounded template renderer (template/bounded.ts, issue 12). Started with a
 * small `--max-old-space-size`, so a template that exhausts memory kills only this process. Receives
 * `{id, source, context, maxBytes}` over IPC and answers `{id, out}` or `{id, error}`.
 *
 * A batch (bounded.ts `renderMany`) is `{id, templates, contexts, from, maxBytes, deadline, budgetBytes}`:
 * item i is template `i % templates.length` over context `floor(i / templates.length)`, rendered in order
 * from `from`, each answered `{id, i, out}` or `{id, i, error}` as soon as it is done; then `{id, done,
 * next}`, with `stopped: true` when it stopped before the end because `deadline` (epoch ms) passed or the
 * outputs would exceed `budgetBytes` in total.
 *
 * Its first message, once the renderer is loaded, is `{ready: true}`: the parent starts a render's clock
 * only then (bounded.ts, issue 24: starting a process on a busy machine is not rendering).
 */
import { renderTemplate } from "./jinja.ts";

interface One {
  id: number;
  source: string;
  context: Record<string, unknown>;
  maxBytes: number;
}
interface Batch {
  id: number;
  templates: string[];
  contexts: Array<Record<string, unknown>>;
  from: number;
  maxBytes: number;
  deadline: number;
  budgetBytes: number;
}

/** One render: its output, or the error message (also for an output over `maxBytes`). */
function render(
  source: string,
  context: Record<string, unknown>,
  maxBytes: number,
): { out: string } | { error: string } {
  try {
    const out = renderTemplate(source, context);
    return Buffer.byteLength(out, "utf8") > maxBytes
      ? { error: `template output exceeds ${maxBytes} bytes` }
      : { out };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function runBatch(msg: Batch): void {
  const per = msg.templates.length;
  const total = msg.contexts.length * per;
  let left = msg.budgetBytes;
  for (let i = msg.from; i < total; i++) {
    if (Date.now() >= msg.deadline)
      return void process.send?.({ id: msg.id, done: true, next: i, stopped: true });
    const one = render(
      msg.templates[i % per] as string,
      msg.contexts[Math.floor(i / per)] ?? {},
      msg.maxBytes,
    );
    if ("out" in one) {
      left -= Buffer.byteLength(one.out, "utf8");
      if (left < 0) return void process.send?.({ id: msg.id, done: true, next: i, stopped: true });
    }
    process.send?.({ id: msg.id, i, ...one });
  }
  process.send?.({ id: msg.id, done: true, next: total });
}

process.on("message", (msg: One | Batch) => {
  if ("templates" in msg) return runBatch(msg);
  process.send?.({ id: msg.id, ...render(msg.source, msg.context, msg.maxBytes) });
});
process.send?.({ ready: true });
