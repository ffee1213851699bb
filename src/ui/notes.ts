/**
 * Who may edit or delete a note from an object's notes panel (issue 25): its author always (the user the
 * note was written by, `extras_note.user_id`), anyone else with Nautobot's `change`/`delete` permission on
 * notes, within its constraints. An author edits their own note without an object permission, as Nautobot's
 * profile pages let a user manage what is theirs; the write is still one service-layer transaction with the
 * change log naming them.
 */
import type { Ctx } from "../service/context.ts";
import { mayDo } from "../service/permissions.ts";
import { getRow } from "../service/read.ts";
import type { Row } from "../service/rows.ts";
import { rowFor } from "./guard.ts";
import { notesPageUrl } from "./tabs.ts";

/** Whether the acting user wrote `note` (a raw `extras_note` row). */
export const isAuthor = (ctx: Ctx, note: Row): boolean =>
  !!ctx.actor && !!note.user_id && String(note.user_id) === ctx.actor.id;

/**
 * The panel's links of one note (raw row): its edit and delete pages, when the user is its author or holds
 * the model-level permission (row constraints are checked when the page is opened).
 */
export function noteLinks(ctx: Ctx, note: Row): { editUrl?: string; deleteUrl?: string } {
  const model = ctx.reg.get("extras.note");
  const own = isAuthor(ctx, note);
  const base = `/${model.app}/${model.path}/${String(note.id)}`;
  return {
    ...(own || mayDo(ctx.grants, model, "change") ? { editUrl: `${base}/edit/` } : {}),
    ...(own || mayDo(ctx.grants, model, "delete") ? { deleteUrl: `${base}/delete/` } : {}),
  };
}

/**
 * The note `id` the user may `action`, and the context to write it with: the user's own (their grants)
 * for a note of someone else, unrestricted for their own note.
 * @throws NotFoundError (404) for a note the user may not view; PermissionDenied (403) for someone else's
 *   note without the permission (guard.ts `rowFor`).
 */
export async function noteFor(
  ctx: Ctx,
  id: string,
  action: "change" | "delete",
): Promise<{ note: Row; writeCtx: Ctx }> {
  const model = ctx.reg.get("extras.note");
  const note = await getRow(ctx, model, id);
  if (isAuthor(ctx, note)) return { note, writeCtx: { ...ctx, grants: undefined } };
  return { note: await rowFor(ctx, model, id, action), writeCtx: ctx };
}

/** The detail page of the object a note is attached to, at its notes panel. */
export function noteTargetUrl(ctx: Ctx, note: Row): string {
  const target = ctx.reg.models.get(String(note.assigned_object_type));
  return target ? notesPageUrl(target, String(note.assigned_object_id)) : "/";
}
