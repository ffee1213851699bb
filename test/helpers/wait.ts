/** Test helper: poll until a condition yields a value. */

/**
 * Call `fn` every `everyMs` until it returns something other than undefined, and return that.
 * @throws Error after `timeoutMs`, with `why()` (the last observed state) in the message when given.
 */
export async function waitUntil<T>(
  fn: () => Promise<T | undefined>,
  timeoutMs = 15000,
  why?: () => string,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`condition not met in time${why ? `: ${why()}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
