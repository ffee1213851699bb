/**
 * A user's own account (issue 25, the web interface's profile, Nautobot 1.6 `/user/profile/`,
 * `/user/api-tokens/`, `/user/change-password/`): their API tokens and their password. Every logged-in user
 * may do these to their own account without an object permission (Nautobot's views need only a login);
 * nobody reaches another user's tokens here. Writes go through `createObject`/`updateObject`/`deleteObjects`
 * (token keys hashed, passwords scrypt-hashed), one transaction each.
 */
import type { Ctx } from "./context.ts";
import { AppError, NotFoundError, ValidationError } from "./errors.ts";
import { checkPassword, type LoginLimiter } from "./login-limit.ts";
import { listRows } from "./read.ts";
import type { Row } from "./rows.ts";
import { endOtherSessions } from "./sessions.ts";
import { createObject, deleteObjects, inTransaction, updateObject } from "./write.ts";

/** `ctx` without object permissions: the user acts on what is theirs. @throws AppError 403 without a user. */
function own(ctx: Ctx): Ctx & { actor: NonNullable<Ctx["actor"]> } {
  if (!ctx.actor) throw new AppError(403, "Not logged in.");
  return { ...ctx, grants: undefined, actor: ctx.actor };
}

/** The acting user's API tokens (raw `users_token` rows, oldest first; `key` is the stored hash). */
export async function ownTokens(ctx: Ctx): Promise<Row[]> {
  const c = own(ctx);
  const { rows } = await listRows(c, c.reg.get("users.token"), {
    params: new Map(),
    limit: undefined,
    offset: 0,
    ownerColumn: ["user_id", c.actor.id],
  });
  return rows;
}

/**
 * Create a token for the acting user (40 random hex digits). `expires`: an ISO date or date-time, or
 * undefined for never.
 * @returns its id and its key in clear, which is never readable again (stored as SHA-256).
 * @throws ValidationError (400) naming the field, as the API's `POST /api/users/tokens/`.
 */
export async function createOwnToken(
  ctx: Ctx,
  input: { description: string; writeEnabled: boolean; expires?: string | undefined },
): Promise<{ id: string; key: string }> {
  const c = own(ctx);
  const id = await inTransaction(c, (t) =>
    createObject(t, t.reg.get("users.token"), {
      description: input.description,
      write_enabled: input.writeEnabled,
      ...(input.expires ? { expires: input.expires } : {}),
    }),
  );
  return { id, key: c.freshTokenKeys.get(id) ?? "" };
}

/** Delete one of the acting user's tokens. @throws NotFoundError (404) for any other token. */
export async function deleteOwnToken(ctx: Ctx, id: string): Promise<void> {
  if (!(await ownTokens(ctx)).some((r) => String(r.id) === id)) throw new NotFoundError();
  await inTransaction(own(ctx), (t) => deleteObjects(t, t.reg.get("users.token"), [id]));
}

/**
 * Change the acting user's password (Django's `PasswordChangeForm`: the current password, the new one
 * twice). The current password is checked by the shared limiter of every password check (login-limit.ts:
 * failures count against the client address `ip` and the username), the new one is stored scrypt-hashed
 * through `updateObject`. The user's other web sessions end (Django's `update_session_auth_hash` keeps only
 * the current one, `keepSession`); API tokens stay valid.
 * @throws ValidationError (400) `{old_password|new_password1|new_password2: [message]}`; AppError 429 with
 *   `Retry-After` when `ip` is over the limiter's limit.
 */
export async function changeOwnPassword(
  ctx: Ctx,
  limiter: LoginLimiter,
  input: { ip: string; current: string; password: string; confirm: string; keepSession?: string | undefined },
): Promise<void> {
  const c = own(ctx);
  if (!input.current) throw new ValidationError({ old_password: ["This field is required."] });
  if (!input.password) throw new ValidationError({ new_password1: ["This field is required."] });
  if (input.password !== input.confirm)
    throw new ValidationError({ new_password2: ["The two password fields didn’t match."] });
  const ok = await checkPassword(c.store, limiter, {
    ip: input.ip,
    username: c.actor.username,
    password: input.current,
  });
  if (!ok || String(ok.id) !== c.actor.id)
    throw new ValidationError({
      old_password: ["Your old password was entered incorrectly. Please enter it again."],
    });
  await inTransaction(c, (t) =>
    updateObject(t, t.reg.get("users.user"), c.actor.id, { password: input.password }, true),
  );
  await endOtherSessions(c.store, c.actor.id, input.keepSession);
}
