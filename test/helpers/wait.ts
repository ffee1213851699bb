/** Test helper: poll until a condition yields a value. */

/**
 * Call `fn` every `everyMs` until it returns something other than undefined, null or false, and return
 * that (a condition written as a boolean waits until it is true).
 * @throws Error after `timeoutMs`, with `why()` (the last observed state) in the message when given.
 */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 15000,
  why?: () => string,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`condition not met in time${why ? `: ${why()}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
