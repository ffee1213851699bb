/**
 * A regular-expression search that the caller's deadline can interrupt (issue 23). re2js matches in
 * linear time but cannot be stopped part-way, and SQLite calls our `regexp` function synchronously, so a
 * search over a long text (a program of thousands of instructions over megabytes of `comments`) would hold
 * the event loop for minutes. `searchOffThread` runs it on a worker thread while this thread waits on a
 * shared cell with `Atomics.wait` until the answer or the deadline; past the deadline the worker is
 * terminated (a new one starts on the next call) and `RegexDeadlineError` is thrown.
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

const THREAD = fileURLToPath(new URL("./regex-thread.ts", import.meta.url));

/** The deadline of a regular-expression search passed before it finished. */
export class RegexDeadlineError extends Error {
  override name = "RegexDeadlineError";
}

let worker: Worker | undefined;
let cell: Int32Array = new Int32Array(2);
let seq = 0;

function thread(): Worker {
  if (!worker) {
    const buffer = new SharedArrayBuffer(8);
    cell = new Int32Array(buffer);
    const w = new Worker(THREAD, { workerData: { buffer } });
    w.unref();
    w.on("error", () => {
      if (worker === w) worker = undefined;
    });
    worker = w;
  }
  return worker;
}

/**
 * Whether `value` contains a match of `pattern` (RE2 syntax, re2js `flags`), searched on the worker thread.
 * `deadline` is an epoch time in milliseconds (`Infinity` for none). Throws RegexDeadlineError when it
 * passes first; an unusable pattern is no match.
 */
export function searchOffThread(pattern: string, flags: number, value: string, deadline: number): boolean {
  const w = thread();
  seq = (seq % 1_000_000_000) + 1;
  const id = seq;
  Atomics.store(cell, 0, 0);
  w.postMessage({ id, pattern, flags, value });
  for (;;) {
    if (Atomics.load(cell, 0) === id) return Atomics.load(cell, 1) === 1;
    const left = deadline - Date.now();
    if (left <= 0) {
      worker = undefined;
      void w.terminate();
      throw new RegexDeadlineError("The regular expression search ran past its deadline.");
    }
    Atomics.wait(cell, 0, 0, Math.min(left, 1000));
  }
}
