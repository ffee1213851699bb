/**
 * Worker thread of `regex-offload.ts` and `regex-async.ts` (issue 23): runs one RE2 search at a time. With
 * a shared cell in `workerData.buffer` (the synchronous caller) it publishes the answer there
 * (`[state, result]`: state = the request's id once done, result 1 = match, 0 = none or an unusable
 * pattern), so the requesting thread can wait for it with a deadline and terminate this thread when the
 * deadline passes; without one (the asynchronous caller) it answers with a message `{ id, found }`. The last
 * compiled pattern is kept: the rows of one statement share it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { RE2JS } from "re2js";

const buffer = (workerData as { buffer?: SharedArrayBuffer } | undefined)?.buffer;
const cell = buffer ? new Int32Array(buffer) : undefined;
let lastKey = "";
let last: RE2JS | undefined;

parentPort?.on("message", (m: { id: number; pattern: string; flags: number; value: string }) => {
  let found = 0;
  try {
    const key = `${m.flags}:${m.pattern}`;
    if (key !== lastKey || !last) {
      last = RE2JS.compile(m.pattern, m.flags);
      lastKey = key;
    }
    found = last.test(m.value) ? 1 : 0;
  } catch {
    found = 0;
  }
  if (!cell) {
    parentPort?.postMessage({ id: m.id, found });
    return;
  }
  Atomics.store(cell, 1, found);
  Atomics.store(cell, 0, m.id);
  Atomics.notify(cell, 0);
});
