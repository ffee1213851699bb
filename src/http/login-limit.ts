/**
 * Failed-login limiter for HTTP Basic authentication (issue 12): after `maxFailures` failed attempts within
 * `windowMs` for one client IP or one username, further attempts are refused with 429 and `Retry-After`
 * until the window of the first counted failure ends — before any password hashing, so guessing costs the
 * server nothing. State is per process (with several API processes the effective limit is N × max).
 * Every attempt is counted as a failure before the password is checked (so concurrent guesses cannot all
 * slip under the limit) and taken back when it succeeds; a success also clears the username's count.
 */
import type { LoginLimits } from "../config.ts";

/** Counts failures per key (`ip:…`, `user:…`) in fixed windows. */
export class LoginLimiter {
  private readonly counts = new Map<string, { n: number; until: number }>();
  private readonly limits: LoginLimits;
  constructor(limits: LoginLimits) {
    this.limits = limits;
  }

  /** Seconds to wait when any of `keys` is over its limit, else 0. */
  blockedFor(keys: readonly string[], now = Date.now()): number {
    let wait = 0;
    for (const k of keys) {
      const c = this.counts.get(k);
      if (c && c.until > now && c.n >= this.limits.maxFailures)
        wait = Math.max(wait, Math.ceil((c.until - now) / 1000));
    }
    return wait;
  }

  /** Count one failure for each key. */
  fail(keys: readonly string[], now = Date.now()): void {
    if (this.counts.size > 100_000) this.sweep(now);
    for (const k of keys) {
      const c = this.counts.get(k);
      if (!c || c.until <= now) this.counts.set(k, { n: 1, until: now + this.limits.windowMs });
      else c.n++;
    }
  }

  /** Take back one counted failure of `ipKey` and forget `userKey`'s (the attempt succeeded). */
  succeeded(ipKey: string, userKey: string): void {
    this.counts.delete(userKey);
    const c = this.counts.get(ipKey);
    if (c && c.n > 0) c.n--;
  }

  private sweep(now: number): void {
    for (const [k, c] of this.counts) if (c.until <= now) this.counts.delete(k);
  }
}
