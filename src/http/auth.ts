/**
 * Authentication: `Authorization: Token <key>` (and HTTP Basic on POST /api/users/tokens/), with
 * Nautobot's 403 messages (nautobot-api-core.md §7, §8). Tokens and passwords are stored hashed.
 */
import type { Actor } from "../service/context.ts";
import { AppError } from "../service/errors.ts";
import { checkPassword, type LoginLimiter } from "../service/login-limit.ts";
import { hashTokenKey } from "../service/write.ts";
import type { Store } from "../store/db.ts";

/** Result of authenticating a request. */
export interface Auth {
  actor: Actor | undefined;
  /** The token may write (false for read-only tokens). */
  writeEnabled: boolean;
}

const forbid = (detail: string) => new AppError(403, detail);

/**
 * Authenticate from the Authorization header. Returns an anonymous Auth when no credentials are sent.
 * @throws AppError 403 for malformed or invalid credentials.
 */
export async function authenticate(
  store: Store,
  header: string | undefined,
  basic: { limiter: LoginLimiter; ip: string } | undefined,
): Promise<Auth> {
  if (!header) return { actor: undefined, writeEnabled: false };
  const parts = header.trim().split(/\s+/);
  const scheme = (parts[0] ?? "").toLowerCase();
  if (scheme === "basic" && basic) {
    const decoded = Buffer.from(parts[1] ?? "", "base64").toString("utf8");
    const i = decoded.indexOf(":");
    const username = i < 0 ? decoded : decoded.slice(0, i);
    const password = decoded.slice(i + 1);
    // The shared limiter (service/login-limit.ts): 429 for an address over its limit, a delay per username.
    const user = await checkPassword(store, basic.limiter, { ip: basic.ip, username, password });
    if (!user || i < 0) throw forbid("Invalid username/password.");
    if (!user.is_active) throw forbid("User inactive or deleted.");
    return {
      actor: { id: user.id, username: user.username, isSuperuser: !!user.is_superuser },
      writeEnabled: true,
    };
  }
  if (scheme !== "token") return { actor: undefined, writeEnabled: false };
  if (parts.length === 1) throw forbid("Invalid token header. No credentials provided.");
  if (parts.length > 2) throw forbid("Invalid token header. Token string should not contain spaces.");
  const key = parts[1]!;
  const cached = tokenCache.get(key);
  if (cached && cached.until > Date.now()) return cached.auth;
  const row = await store.db
    .selectFrom("users_token as k")
    .innerJoin("users_user as u", "u.id", "k.user_id")
    .select([
      "k.expires",
      "k.write_enabled",
      "u.id as user_id",
      "u.username",
      "u.is_active",
      "u.is_superuser",
    ])
    .where("k.key", "=", hashTokenKey(key))
    .executeTakeFirst();
  if (!row) throw forbid("Invalid token");
  if (row.expires && Date.parse(row.expires) <= Date.now()) throw forbid("Token expired");
  if (!row.is_active) throw forbid("User inactive");
  const auth = {
    actor: { id: row.user_id, username: row.username, isSuperuser: !!row.is_superuser },
    writeEnabled: !!row.write_enabled,
  };
  if (tokenCache.size >= 10000) tokenCache.clear();
  const expires = row.expires ? Date.parse(row.expires) : Number.POSITIVE_INFINITY;
  tokenCache.set(key, { auth, until: Math.min(Date.now() + TOKEN_CACHE_MS, expires) });
  return auth;
}

/**
 * Valid tokens are remembered for a few seconds so that a burst of requests costs one lookup; a revoked
 * or changed token stops working within TOKEN_CACHE_MS (in every process).
 */
const TOKEN_CACHE_MS = 5000;
const tokenCache = new Map<string, { auth: Auth; until: number }>();

/** Forget cached tokens (after token or user changes in this process). */
export function clearTokenCache(): void {
  tokenCache.clear();
}
