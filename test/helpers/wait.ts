/**
 * Test helper: poll until a condition yields a value.
 *
 * Deadlines here detect hangs, they do not measure speed (issue 24: on a 2-core machine shared with other
 * work, load 8–14, waits of 10–30 s ran out while nothing was wrong). A test that checks that something is
 * fast compares against a baseline measured in the same run, never against this deadline.
 */

/**
 * The shortest time (ms) any wait of the test helpers allows before calling it a hang: 2 minutes. A
 * shorter `timeoutMs` asked for by a caller is raised to this.
 */
export const HANG_MS = 120_000;

/**
 * Call `fn` every `everyMs` until it returns something other than undefined, null or false, and return
 * that (a condition written as a boolean waits until it is true).
 * @param timeoutMs how long to wait (ms) before failing; never less than HANG_MS.
 * @throws Error after the deadline, with `why()` (the last observed state) in the message when given.
 */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = HANG_MS,
  why?: () => string,
  everyMs = 50,
): Promise<T> {
  const ms = Math.max(timeoutMs, HANG_MS);
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms${why ? `: ${why()}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
