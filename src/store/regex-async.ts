/**
 * A regular-expression search that leaves the event loop free (custom-field `validation_regex`, task t5).
 * `regex-offload.ts` waits for its worker with `Atomics.wait`, because SQLite calls `regexp` synchronously:
 * the loop is held until the answer or the deadline. Callers that can await (value validation) use this
 * instead: the search runs on a worker thread of its own (regex-thread.ts, message mode) while the loop
 * serves other requests; past the caller's deadline the worker is terminated (a new one starts for the
 * next search) and the promise rejects with RegexDeadlineError.
 *
 * One worker, one search at a time, in arrival order: a search whose deadline passed while it waited for
 * its turn is rejected without running, so a queue of slow searches costs each caller at most its own
 * deadline.
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { RegexDeadlineError } from "./regex-offload.ts";

const THREAD = fileURLToPath(new URL("./regex-thread.ts", import.meta.url));

interface Job {
  pattern: string;
  flags: number;
  value: string;
  deadline: number;
  resolve(found: boolean): void;
  reject(e: Error): void;
}

const queue: Job[] = [];
let worker: Worker | undefined;
let busy = false;
let seq = 0;

function thread(): Worker {
  if (!worker) {
    const w = new Worker(THREAD);
    w.unref();
    worker = w;
  }
  return worker;
}

const late = () => new RegexDeadlineError("The regular expression search ran past its deadline.");

/** Start the next queued search when none runs. */
function next(): void {
  if (busy) return;
  const job = queue.shift();
  if (!job) return;
  const left = job.deadline - Date.now();
  if (left <= 0) {
    job.reject(late());
    next();
    return;
  }
  busy = true;
  const w = thread();
  seq = (seq % 1_000_000_000) + 1;
  const id = seq;
  let timer: NodeJS.Timeout | undefined;
  const finish = (drop: boolean) => {
    if (timer) clearTimeout(timer);
    w.off("message", onMessage);
    w.off("error", onFailure);
    w.off("exit", onFailure);
    if (drop) {
      if (worker === w) worker = undefined;
      void w.terminate();
    } else w.unref();
    busy = false;
    queueMicrotask(next);
  };
  const onMessage = (m: { id: number; found: number }) => {
    if (m.id !== id) return;
    finish(false);
    job.resolve(m.found === 1);
  };
  const onFailure = (e?: unknown) => {
    finish(true);
    job.reject(e instanceof Error ? e : new Error("The regular expression worker stopped."));
  };
  if (Number.isFinite(left))
    timer = setTimeout(
      () => {
        finish(true);
        job.reject(late());
      },
      Math.min(left, 2_147_483_647),
    );
  w.on("message", onMessage);
  w.on("error", onFailure);
  w.on("exit", onFailure);
  w.ref();
  w.postMessage({ id, pattern: job.pattern, flags: job.flags, value: job.value });
}

/**
 * Whether `value` contains a match of `pattern` (RE2 syntax, re2js `flags`; an unusable pattern is no
 * match), searched on a worker thread without holding the event loop. `deadline` is an epoch time in
 * milliseconds (`Infinity` for none), counted from the call, time waiting for the worker included.
 * Rejects with RegexDeadlineError when it passes first, or with the worker's error if it fails.
 */
export function searchAsync(
  pattern: string,
  flags: number,
  value: string,
  deadline: number,
): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    queue.push({ pattern, flags, value, deadline, resolve, reject });
    next();
  });
}
