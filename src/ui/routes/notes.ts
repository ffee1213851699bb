/**
 * Edit and delete a note from the notes panel of an object's page (issue 25): `/extras/notes/<id>/edit/`
 * (the note's text) and `/extras/notes/<id>/delete/` (confirm, then delete), for its author and for users
 * with the change/delete permission on notes (`ui/notes.ts`). These static routes take precedence over the
 * generic form of `edit.ts` for notes only; both return to the object's notes panel.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Ctx } from "../../service/context.ts";
import { NotFoundError, ValidationError } from "../../service/errors.ts";
import { deleteObjects, inTransaction, updateObject } from "../../service/write.ts";
import { flash } from "../flash.ts";
import type { Control } from "../forms.ts";
import { splitErrors } from "../forms.ts";
import { noteFor, noteTargetUrl } from "../notes.ts";
import type { UiKit } from "../plugin.ts";

export async function noteRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const noteModel = kit.reg.get("extras.note");
  const base = `/${noteModel.app}/${noteModel.path}`;
  const idOf = (req: FastifyRequest) => {
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    return id;
  };
  /** The edit form: one text area, the errors of the last post beside it. */
  const form = (
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: Ctx,
    note: Record<string, unknown>,
    text: string,
    errors: string[] = [],
    general: string[] = [],
  ) => {
    const control: Control = {
      name: "note",
      label: "Note",
      kind: "textarea",
      required: true,
      value: text,
      errors,
      help: "Markdown is supported.",
    };
    return kit.page(
      req,
      reply,
      "form",
      {
        title: "Edit note",
        action: `${base}/${String(note.id)}/edit/`,
        cancel: noteTargetUrl(ctx, note),
        controls: [control],
        general,
      },
      errors.length || general.length ? 400 : 200,
    );
  };

  app.get(`${base}/:id/edit/`, async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const { note } = await noteFor(ctx, idOf(req), "change");
    return form(req, reply, ctx, note, String(note.note ?? ""));
  });

  app.post(`${base}/:id/edit/`, async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const { note, writeCtx } = await noteFor(ctx, idOf(req), "change");
    const raw = (req.body as Record<string, unknown> | undefined)?.note;
    const text = typeof raw === "string" ? raw.trim() : "";
    if (!text) return form(req, reply, ctx, note, "", ["This field may not be blank."]);
    try {
      await inTransaction(writeCtx, (t) => updateObject(t, noteModel, String(note.id), { note: text }, true));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const { fields, general } = splitErrors(e);
      const { note: noteErrors = [], ...rest } = fields;
      return form(req, reply, ctx, note, text, noteErrors, [
        ...general,
        ...Object.entries(rest).flatMap(([k, m]) => m.map((x) => `${k}: ${x}`)),
      ]);
    }
    flash(req, "success", "Modified note");
    return reply.redirect(noteTargetUrl(ctx, note), 302);
  });

  app.get(`${base}/:id/delete/`, async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const { note } = await noteFor(ctx, idOf(req), "delete");
    const text = String(note.note ?? "");
    return kit.page(req, reply, "confirm", {
      title: "Delete note",
      what: `the note "${text.length > 80 ? `${text.slice(0, 80)}…` : text}" by ${String(note.user_name ?? "")}`,
      action: `${base}/${String(note.id)}/delete/`,
      cancel: noteTargetUrl(ctx, note),
    });
  });

  app.post(`${base}/:id/delete/`, async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const { note, writeCtx } = await noteFor(ctx, idOf(req), "delete");
    await inTransaction(writeCtx, (t) => deleteObjects(t, noteModel, [String(note.id)]));
    flash(req, "success", "Deleted note");
    return reply.redirect(noteTargetUrl(ctx, note), 302);
  });
}
