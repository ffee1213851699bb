/**
 * Web UI sessions (issue 10): stored in the database (`ui_session`) so that several processes share them,
 * signed with a secret kept in `inventory_meta` (created once per database), and logins checked with the
 * same users and passwords as the API.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Store } from "../store/db.ts";
import type { Actor } from "./context.ts";
import { checkPassword, type LoginLimiter } from "./login-limit.ts";

type Callback<T = void> = (err?: unknown, value?: T) => void;

/** A session as @fastify/session hands it to its store (a plain object with a `cookie`). */
type SessionData = Record<string, unknown> & { cookie?: { expires?: Date | string | null } };

/** Default lifetime of a session: two weeks, Django's SESSION_COOKIE_AGE. */
export const SESSION_MAX_AGE_MS = 14 * 24 * 3600 * 1000;

/** The @fastify/session store over `ui_session` (express-session's callback interface). */
export function sessionStore(store: Store) {
  return {
    get(sid: string, cb: Callback<SessionData | null>) {
      store.db
        .selectFrom("ui_session")
        .select(["data", "expires"])
        .where("sid", "=", sid)
        .executeTakeFirst()
        .then(async (row) => {
          if (!row) return cb(undefined, null);
          if (Date.parse(String(row.expires)) <= Date.now()) {
            await store.db.deleteFrom("ui_session").where("sid", "=", sid).execute();
            return cb(undefined, null);
          }
          const data = JSON.parse(String(row.data)) as SessionData;
          if (data.cookie?.expires) data.cookie.expires = new Date(data.cookie.expires);
          cb(undefined, data);
        }, cb);
    },
    set(sid: string, session: SessionData, cb: Callback) {
      const exp = session.cookie?.expires
        ? new Date(session.cookie.expires)
        : new Date(Date.now() + SESSION_MAX_AGE_MS);
      const row = { sid, data: JSON.stringify(session), expires: exp.toISOString() };
      store.db
        .insertInto("ui_session")
        .values(row)
        .onConflict((oc) => oc.column("sid").doUpdateSet({ data: row.data, expires: row.expires }))
        .execute()
        .then(() => cb(), cb);
    },
    destroy(sid: string, cb: Callback) {
      store.db
        .deleteFrom("ui_session")
        .where("sid", "=", sid)
        .execute()
        .then(() => cb(), cb);
    },
  };
}

/** The secret signing session cookies, created once per database. */
export async function sessionSecret(store: Store): Promise<string> {
  const key = "ui_session_secret";
  const found = await store.db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "=", key)
    .executeTakeFirst();
  if (found?.value) return String(found.value);
  const value = randomBytes(32).toString("hex");
  await store.db
    .insertInto("inventory_meta")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const again = await store.db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "=", key)
    .executeTakeFirst();
  return String(again?.value ?? value);
}

/**
 * Check a web login through the shared limiter (login-limit.ts; one scrypt whether or not the user exists);
 * undefined when wrong or inactive.
 * @throws AppError 429 with `Retry-After` when the client address `ip` is over its limit.
 */
export async function verifyLogin(
  store: Store,
  limiter: LoginLimiter,
  attempt: { ip: string; username: string; password: string },
): Promise<Actor | undefined> {
  const user = await checkPassword(store, limiter, attempt);
  if (!user?.is_active) return undefined;
  return { id: user.id, username: user.username, isSuperuser: !!user.is_superuser };
}

/** The active user behind a session, or undefined (deleted or deactivated since login). */
export async function actorById(store: Store, id: string): Promise<Actor | undefined> {
  const user = await store.db
    .selectFrom("users_user")
    .select(["id", "username", "is_active", "is_superuser"])
    .where("id", "=", id)
    .executeTakeFirst();
  if (!user?.is_active) return undefined;
  return { id: user.id, username: user.username, isSuperuser: !!user.is_superuser };
}

/**
 * The user of a web session named by a `Cookie` header (the signed `sessionid` cookie the web interface
 * sets), or undefined: no cookie, a bad signature, an expired or logged-out session, an inactive user.
 * Lets the browsable API pages accept the session (issue 10).
 */
export async function actorFromSessionCookie(
  store: Store,
  cookieHeader: string | undefined,
): Promise<Actor | undefined> {
  const raw = /(?:^|;\s*)sessionid=([^;]+)/.exec(cookieHeader ?? "")?.[1];
  if (!raw) return undefined;
  const value = decodeURIComponent(raw);
  const dot = value.lastIndexOf(".");
  if (dot <= 0) return undefined;
  const sid = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(
    createHmac("sha256", await sessionSecret(store))
      .update(sid)
      .digest("base64")
      .replace(/=/g, ""),
  );
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const row = await store.db
    .selectFrom("ui_session")
    .select(["data", "expires"])
    .where("sid", "=", sid)
    .executeTakeFirst();
  if (!row || Date.parse(String(row.expires)) <= Date.now()) return undefined;
  const userId = (JSON.parse(String(row.data)) as { userId?: string }).userId;
  return userId ? actorById(store, userId) : undefined;
}

/**
 * End every web session of user `userId` except `keepSid` (after a password change). Sessions are JSON
 * text, so candidates are found by text and confirmed by parsing.
 */
export async function endOtherSessions(store: Store, userId: string, keepSid?: string): Promise<void> {
  const rows = await store.db
    .selectFrom("ui_session")
    .select(["sid", "data"])
    .where("data", "like", `%${userId}%`)
    .execute();
  const sids = rows
    .filter((r) => r.sid !== keepSid && (JSON.parse(String(r.data)) as { userId?: string }).userId === userId)
    .map((r) => String(r.sid));
  if (sids.length) await store.db.deleteFrom("ui_session").where("sid", "in", sids).execute();
}
