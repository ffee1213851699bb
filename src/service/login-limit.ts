/**
 * The one limiter of every password check (issue 12, reworked for issue 23): HTTP Basic on
 * `POST /api/users/tokens/` and the web interface's `POST /login/` both go through `checkPassword`.
 *
 * - Per client address: after `maxFailures` failed attempts within `windowMs`, further attempts from that
 *   address are refused with 429 and `Retry-After` (the seconds left of the window of its first counted
 *   failure), before any lookup or hashing, so guessing costs the server nothing.
 * - Per username: never a lockout (the real user, from another address, must still get in), only a growing
 *   delay: once a username has `maxFailures` failures in its window, each further check of it waits
 *   `min(delayBaseMs × 2^(n − maxFailures), delayMaxMs)` ms before hashing (n = its failures so far). The
 *   wait is a timer, so it holds no thread and never the event loop.
 *
 * Every attempt is counted as a failure before the password is checked (so concurrent guesses cannot all
 * slip under the limit) and taken back when it succeeds; a success also clears the username's count.
 * State is per process (with N API processes an address gets N × maxFailures attempts) and bounded
 * (`MAX_KEYS` entries; the oldest go first).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Store } from "../store/db.ts";
import { AppError } from "./errors.ts";
import { verifyPassword } from "./passwords.ts";

/**
 * Limits (config.ts reads them from `INVENTORY_LOGIN_MAX_FAILURES`, `INVENTORY_LOGIN_WINDOW` (seconds),
 * `INVENTORY_LOGIN_DELAY_BASE` and `INVENTORY_LOGIN_DELAY_MAX` (milliseconds)).
 */
export interface LoginLimits {
  /** Failures per client address before 429, and per username before the delay starts. */
  maxFailures: number;
  /** Length of a counting window in ms. */
  windowMs: number;
  /** First delay of a username's check past `maxFailures` failures, ms, doubling per failure (250). */
  delayBaseMs?: number;
  /** Longest delay of one check, ms (4000). */
  delayMaxMs?: number;
}

/** The defaults of `INVENTORY_LOGIN_*` (config.ts), for a limiter built without configuration. */
export const DEFAULT_LOGIN_LIMITS: Required<LoginLimits> = {
  maxFailures: 10,
  windowMs: 300_000,
  delayBaseMs: 250,
  delayMaxMs: 4000,
};

/** Most entries kept (addresses and usernames); past it the oldest are forgotten. */
const MAX_KEYS = 100_000;
/** Usernames are at most 150 characters (Nautobot `AbstractUser.username`): longer ones are cut for keys. */
const MAX_USERNAME = 150;

/** Counts failures per client address and per username in fixed windows. */
export class LoginLimiter {
  private readonly counts = new Map<string, { n: number; until: number }>();
  private readonly limits: Required<LoginLimits>;
  constructor(limits: LoginLimits) {
    this.limits = {
      maxFailures: limits.maxFailures,
      windowMs: limits.windowMs,
      delayBaseMs: limits.delayBaseMs ?? DEFAULT_LOGIN_LIMITS.delayBaseMs,
      delayMaxMs: limits.delayMaxMs ?? DEFAULT_LOGIN_LIMITS.delayMaxMs,
    };
  }

  /**
   * Let one password check of `username` from address `ip` proceed: refuse it when the address is over its
   * limit, else count it as a failure of both and wait the username's delay.
   * @throws AppError 429 with `Retry-After` (seconds) when `ip` has `maxFailures` failures in its window.
   */
  async admit(ip: string, username: string, now = Date.now()): Promise<void> {
    const ipKey = `ip:${ip}`;
    const userKey = userKeyOf(username);
    const c = this.live(ipKey, now);
    if (c && c.n >= this.limits.maxFailures) {
      const wait = Math.max(1, Math.ceil((c.until - now) / 1000));
      throw new AppError(429, `Request was throttled. Expected available in ${wait} seconds.`, undefined, {
        "Retry-After": String(wait),
      });
    }
    const delay = this.delayMs(username, now);
    this.fail(ipKey, now);
    this.fail(userKey, now);
    if (delay > 0) await sleep(delay);
  }

  /** The wait in ms the next check of `username` gets (0 below `maxFailures` failures). */
  delayMs(username: string, now = Date.now()): number {
    const n = this.live(userKeyOf(username), now)?.n ?? 0;
    const { maxFailures, delayBaseMs, delayMaxMs } = this.limits;
    if (n < maxFailures) return 0;
    return Math.min(delayBaseMs * 2 ** Math.min(n - maxFailures, 30), delayMaxMs);
  }

  /** The check succeeded: take back the address's counted failure and forget the username's. */
  succeeded(ip: string, username: string): void {
    this.counts.delete(userKeyOf(username));
    const c = this.counts.get(`ip:${ip}`);
    if (c && c.n > 0) c.n--;
  }

  private live(key: string, now: number) {
    const c = this.counts.get(key);
    return c && c.until > now ? c : undefined;
  }

  private fail(key: string, now: number): void {
    const c = this.live(key, now);
    if (c) {
      c.n++;
      return;
    }
    this.counts.delete(key);
    if (this.counts.size >= MAX_KEYS) this.sweep(now);
    this.counts.set(key, { n: 1, until: now + this.limits.windowMs });
  }

  /** Drop ended windows; if still full, the oldest entries (a Map keeps insertion order). */
  private sweep(now: number): void {
    for (const [k, c] of this.counts) if (c.until <= now) this.counts.delete(k);
    for (const k of this.counts.keys()) {
      if (this.counts.size < MAX_KEYS * 0.9) break;
      this.counts.delete(k);
    }
  }
}

const userKeyOf = (username: string) => `user:${username.slice(0, MAX_USERNAME)}`;

/** The user row a password check returns. */
export interface CheckedUser {
  id: string;
  username: string;
  is_active: boolean | number;
  is_superuser: boolean | number;
}

/**
 * Check `username`/`password` from client address `ip` through `limiter` (one scrypt whether or not the
 * user exists). Returns the user when the password is right (active or not: callers word the refusal),
 * else undefined.
 * @throws AppError 429 when `ip` is over its limit (see `LoginLimiter.admit`).
 */
export async function checkPassword(
  store: Store,
  limiter: LoginLimiter,
  attempt: { ip: string; username: string; password: string },
): Promise<CheckedUser | undefined> {
  await limiter.admit(attempt.ip, attempt.username);
  const user = await store.db
    .selectFrom("users_user")
    .select(["id", "username", "password", "is_active", "is_superuser"])
    .where("username", "=", attempt.username)
    .executeTakeFirst();
  if (!(await verifyPassword(attempt.password, user?.password)) || !user) return undefined;
  limiter.succeeded(attempt.ip, attempt.username);
  return user;
}
