/**
 * Per-user preferences of the web interface (issue 25), stored in the database (`ui_preference`, one JSON
 * value per user and key) so that every process sees the same choice. Nautobot keeps them in the user's
 * `config_data` under dotted keys (`tables.<TableName>.columns`); its 1.6 `UserSerializer` does not expose
 * that field, so neither does the API here. Keys used: `tables.<app>.<model>.columns` (string[]).
 */
import type { Store } from "../store/db.ts";

/** Longest stored value, in characters of JSON: a preference is a short list, never a document. */
export const PREFERENCE_MAX_CHARS = 10_000;

/** The stored value of `key` for user `userId` (parsed JSON), or undefined when none (or unreadable). */
export async function getPreference(store: Store, userId: string, key: string): Promise<unknown> {
  const row = await store.db
    .selectFrom("ui_preference")
    .select("value")
    .where("user_id", "=", userId)
    .where("key", "=", key)
    .executeTakeFirst();
  if (!row) return undefined;
  try {
    return JSON.parse(String(row.value));
  } catch {
    return undefined;
  }
}

/**
 * Store `value` (JSON-serialisable) as user `userId`'s `key`, replacing any earlier value.
 * @throws RangeError when the JSON is longer than PREFERENCE_MAX_CHARS (callers bound their input first).
 */
export async function setPreference(
  store: Store,
  userId: string,
  key: string,
  value: unknown,
): Promise<void> {
  const json = JSON.stringify(value);
  if (json.length > PREFERENCE_MAX_CHARS) throw new RangeError(`preference ${key} is too long`);
  await store.db
    .insertInto("ui_preference")
    .values({ user_id: userId, key, value: json })
    .onConflict((oc) => oc.columns(["user_id", "key"]).doUpdateSet({ value: json }))
    .execute();
}

/** Forget user `userId`'s `key` (back to the default); nothing when none is stored. */
export async function deletePreference(store: Store, userId: string, key: string): Promise<void> {
  await store.db.deleteFrom("ui_preference").where("user_id", "=", userId).where("key", "=", key).execute();
}
