/**
 * Accounts outside the HTTP flow: superusers and API tokens for the CLI, the demo, tests and benchmarks.
 * Passwords are stored as scrypt hashes, token keys as SHA-256 (the key itself is returned once).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Store } from "../store/db.ts";
import { storedTime } from "../store/values.ts";
import { hashPassword } from "./passwords.ts";
import { hashTokenKey, SYSTEM_USER } from "./write.ts";

/**
 * Create a superuser, or reset the password and flags of an existing user of that name.
 * @returns the user's id and whether it was created.
 */
export async function ensureSuperuser(
  store: Store,
  username: string,
  password: string,
): Promise<{ id: string; created: boolean }> {
  const existing = await store.db
    .selectFrom("users_user")
    .select("id")
    .where("username", "=", username)
    .executeTakeFirst();
  if (existing) {
    await store.db
      .updateTable("users_user")
      .set({ password: await hashPassword(password), is_superuser: true, is_staff: true, is_active: true })
      .where("id", "=", existing.id)
      .execute();
    return { id: existing.id as string, created: false };
  }
  const id = randomUUID();
  await store.db
    .insertInto("users_user")
    .values({
      id,
      username,
      password: await hashPassword(password),
      first_name: "",
      last_name: "",
      email: "",
      is_staff: true,
      is_active: true,
      is_superuser: true,
      date_joined: storedTime(),
    })
    .execute();
  return { id, created: true };
}

/**
 * Create an API token for a user. `key` (40 characters) defaults to 40 random hex digits.
 * @returns the key in clear (stored hashed).
 * @throws Error when a token with this key already exists.
 */
export async function createToken(
  store: Store,
  userId: string,
  opts: { key?: string; writeEnabled?: boolean; description?: string } = {},
): Promise<string> {
  const key = opts.key ?? randomBytes(20).toString("hex");
  const clash = await store.db
    .selectFrom("users_token")
    .select("id")
    .where("key", "=", hashTokenKey(key))
    .executeTakeFirst();
  if (clash) throw new Error("a token with this key already exists");
  await store.db
    .insertInto("users_token")
    .values({
      id: randomUUID(),
      user_id: userId,
      created: storedTime(),
      expires: null,
      key: hashTokenKey(key),
      key_suffix: key.slice(-6),
      write_enabled: opts.writeEnabled ?? true,
      description: opts.description ?? "",
    })
    .execute();
  return key;
}

/**
 * The user a change log names for changes written without an acting user (`Ctx.changedBy`; the NetBox
 * importer's `--user`, issue 25): the user called `username`, else the first superuser (earliest joined,
 * then by username), else `{ id: null, username: "system" }`.
 * @throws Error when `username` is given and no such user exists.
 */
export async function changeLogUser(
  store: Store,
  username?: string,
): Promise<{ id: string | null; username: string }> {
  let q = store.db.selectFrom("users_user").select(["id", "username"]);
  q = username
    ? q.where("username", "=", username)
    : q.where("is_superuser", "=", true).orderBy("date_joined").orderBy("username");
  const row = await q.limit(1).executeTakeFirst();
  if (row) return { id: String(row.id), username: String(row.username) };
  if (username) throw new Error(`no user named ${JSON.stringify(username)}`);
  return { id: null, username: SYSTEM_USER };
}
