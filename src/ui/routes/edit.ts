/**
 * Create, edit and delete forms for every model (issue 10), generated from the registry: GET draws the
 * form, POST converts it into the API's write body and calls the service layer (validation, change log,
 * webhooks, permissions in one transaction); errors are shown beside their fields. An object the user may
 * view but not change (or delete) is a 403, one they may not view a 404 (`guard.ts`, issue 23).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { hasNotes, type Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import {
  AppError,
  NotFoundError,
  PermissionDenied,
  ProtectedError,
  ValidationError,
} from "../../service/errors.ts";
import { checkIfMatch, etagOf, PreconditionFailed, versionOf } from "../../service/object-versions.ts";
import { mayDo } from "../../service/permissions.ts";
import { getRow } from "../../service/read.ts";
import { represent } from "../../service/represent.ts";
import { createObject, deleteObjects, inTransaction, updateObject } from "../../service/write.ts";
import { conflictMessage, postedVersion, VERSION_INPUT } from "../conflict.ts";
import { displayOf, flash, returnTo } from "../flash.ts";
import { bodyFromForm, controlsFor, extrasFromForm, splitErrors } from "../forms.ts";
import { rowFor, rowsFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";
import { relationshipControls, relationshipsFromForm } from "../relationships.ts";
import { notesPageUrl } from "../tabs.ts";
import { titleOf } from "../views.ts";

type Obj = Record<string, unknown>;

export async function editRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const target = (req: FastifyRequest) => {
    const { app: a, model: path } = req.params as { app: string; model: string };
    const model = kit.reg.byUrl(a, path);
    if (!model || model.readOnly || model.key === "users.token") throw new NotFoundError();
    return model;
  };
  const need = (ctx: Ctx, model: Model, action: "add" | "change" | "delete") => {
    if (!mayDo(ctx.grants, model, action)) throw new PermissionDenied();
  };
  const form = async (
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: Ctx,
    model: Model,
    current: Obj,
    opts: {
      id?: string;
      errors?: Record<string, string[]>;
      general?: string[];
      status?: number;
      fresh?: boolean;
      /** The object's version the form is drawn from (a hidden input; issue 26, edit conflicts). */
      version?: number | undefined;
    },
  ) =>
    kit.page(
      req,
      reply,
      "form",
      {
        title: opts.id ? `Edit ${titleOf(model.verbose)}` : `Add ${titleOf(model.verbose)}`,
        action: opts.id ? `/${model.app}/${model.path}/${opts.id}/edit/` : `/${model.app}/${model.path}/add/`,
        cancel: opts.id ? `/${model.app}/${model.path}/${opts.id}/` : `/${model.app}/${model.path}/`,
        version: opts.version,
        ...(await drawn(ctx, model, current, opts)),
      },
      opts.status ?? 200,
    );
  /** The controls, and the general messages plus every field error no control shows (never a silent 400). */
  const drawn = async (
    ctx: Ctx,
    model: Model,
    current: Obj,
    opts: { id?: string; errors?: Record<string, string[]>; general?: string[]; fresh?: boolean },
  ) => {
    const errors = { ...(opts.errors ?? {}) };
    const general: string[] = [];
    // DRF's unique-together message ("The fields a, b must make a unique set.") goes beside the last of
    // its fields that the form shows (a cable's B side already cabled), else on top of the form.
    for (const m of opts.general ?? []) {
      const named = /^The fields (.+) must make a unique set\.$/.exec(m)?.[1]?.split(", ") ?? [];
      const at = named.reverse().find((n) => model.fieldList.some(([f]) => n === f || n.startsWith(`${f}_`)));
      // Both fields of one generic FK (a cable's B side): say it in words.
      const gfk = model.fieldList.find(
        ([f, fd]) =>
          fd.kind === "gfk" && named.length === 2 && named.every((n) => n === `${f}_type` || n === `${f}_id`),
      );
      const text = gfk ? `Another ${model.verbose} already has this ${gfk[0].replace(/_/g, " ")}. (${m})` : m;
      if (at) errors[at] = [...(errors[at] ?? []), text];
      else general.push(m);
    }
    const controls = [
      ...(await controlsFor(ctx, model, current, errors, { id: opts.id, fresh: opts.fresh })),
      // Relationship fields after the custom fields, as Nautobot's forms (issue 25); a posted form is
      // redrawn with `fresh: false`.
      ...(await relationshipControls(ctx, model, current, errors, {
        id: opts.id,
        posted: opts.fresh === false,
      })),
    ];
    const shown = new Set(controls.map((c) => c.name));
    // A relationship's errors (`relationships.<slug>`) are shown beside its controls.
    for (const c of controls) {
      const slug = /^cr_(.+)__(?:source|destination|peer)$/.exec(c.name)?.[1];
      if (slug) shown.add(`relationships.${slug}`);
    }
    // A generic FK's errors under its own name are shown beside its `<name>_id` control.
    for (const [n, fd] of model.fieldList) if (fd.kind === "gfk" && shown.has(`${n}_id`)) shown.add(n);
    for (const [k, msgs] of Object.entries(errors))
      if (!shown.has(k)) general.push(...msgs.map((m) => `${titleOf(k.replace(/_/g, " "))}: ${m}`));
    return { controls, general };
  };
  /** Save a posted form; on a validation error, draw it again with the errors. */
  const save = async (req: FastifyRequest, reply: FastifyReply, model: Model, id?: string) => {
    const ctx = await kit.ctxFor(req);
    need(ctx, model, id ? "change" : "add");
    const posted = (req.body ?? {}) as Obj;
    const { body, errors } = bodyFromForm(model, posted);
    await extrasFromForm(ctx, model, posted, body, errors);
    await relationshipsFromForm(ctx, model, posted, body, id);
    // The version the form was drawn from: a save over someone else's change overwrites nothing (issue 26).
    const since = id ? postedVersion(posted[VERSION_INPUT]) : undefined;
    if (Object.keys(errors).length)
      return form(req, reply, ctx, model, posted, { id, errors, status: 400, fresh: false, version: since });
    try {
      const saved = await inTransaction(ctx, async (t) => {
        if (id) {
          if (since) await checkIfMatch(t, model, id, [etagOf(id, since)]);
          await updateObject(t, model, id, body, true);
          return id;
        }
        return createObject(t, model, body);
      });
      flash(
        req,
        "success",
        `${id ? "Modified" : "Created"} ${model.verbose} ${await displayOf(ctx, model, saved)}`,
      );
      return reply.redirect(`/${model.app}/${model.path}/${saved}/`, 302);
    } catch (e) {
      if (id && since && e instanceof PreconditionFailed) {
        const row = await rowFor(ctx, model, id, "change");
        const [obj] = await represent(ctx, model, [row], "full", { nestIds: true });
        const general = [await conflictMessage(ctx, model, id, String(obj?.display ?? id), since)];
        return form(req, reply, ctx, model, obj ?? {}, { id, general, status: 409, version: versionOf(row) });
      }
      if (!(e instanceof ValidationError)) throw e;
      const { fields, general } = splitErrors(e);
      return form(req, reply, ctx, model, posted, {
        id,
        errors: fields,
        general,
        status: 400,
        fresh: false,
        version: since,
      });
    }
  };

  app.get("/:app/:model/add/", async (req, reply) => {
    const model = target(req);
    const ctx = await kit.ctxFor(req);
    need(ctx, model, "add");
    // Initial values from the query (`/dcim/cables/add/?termination_a_type=…&termination_a_id=…`, "Connect").
    const initial = Object.fromEntries(
      Object.entries((req.query ?? {}) as Record<string, unknown>).filter(([, v]) => typeof v === "string"),
    );
    return form(req, reply, ctx, model, initial, { fresh: true });
  });
  app.post("/:app/:model/add/", async (req, reply) => save(req, reply, target(req)));

  app.get("/:app/:model/:id/edit/", async (req, reply) => {
    const model = target(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    const row = await rowFor(ctx, model, id, "change");
    const [obj] = await represent(ctx, model, [row], "full", { nestIds: true });
    return form(req, reply, ctx, model, obj ?? {}, { id, version: versionOf(row) });
  });
  app.post("/:app/:model/:id/edit/", async (req, reply) => {
    const model = target(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    await rowFor(await kit.ctxFor(req), model, id, "change");
    return save(req, reply, model, id);
  });

  // A note on an object (Nautobot's Notes tab), through the service layer like `POST …/notes/` in the API.
  app.post("/:app/:model/:id/notes/", async (req, reply) => {
    const { app: a, model: path } = req.params as { app: string; model: string };
    const model = kit.reg.byUrl(a, path);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!model || !hasNotes(model) || !id) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    const noteModel = kit.reg.get("extras.note");
    need(ctx, noteModel, "add");
    await getRow(ctx, model, id);
    const note = String((req.body as Obj | undefined)?.note ?? "").trim();
    if (note)
      await inTransaction(ctx, (t) =>
        createObject(t, noteModel, { note, assigned_object_type: model.key, assigned_object_id: id }),
      );
    if (note) flash(req, "success", "Created note");
    return reply.redirect(notesPageUrl(model, id), 302);
  });

  // Bulk delete from a list page: the selected rows, confirmed, then deleted all or none in one transaction.
  app.post("/:app/:model/delete/", async (req, reply) => {
    const model = target(req);
    const ctx = await kit.ctxFor(req);
    need(ctx, model, "delete");
    const body = (req.body ?? {}) as Record<string, unknown>;
    const raw = body.pk;
    const ids = (Array.isArray(raw) ? raw : raw ? [raw] : [])
      .map((v) => normalizeUuid(String(v)))
      .filter((v): v is string => !!v);
    const list = `/${model.app}/${model.path}/`;
    // Back to the list as it was (its filters, sort and page), a local path of this list only.
    const back = returnTo(body.return_url, list);
    if (!ids.length) return reply.redirect(back, 302);
    // Every selected object must be deletable by the user: 403 (or 404) otherwise, never a silent subset.
    const rows = await rowsFor(ctx, model, ids, "delete");
    if (body.confirm !== "yes") {
      const objs = await represent(ctx, model, rows, "nested");
      return kit.page(req, reply, "confirm", {
        title: `Delete ${objs.length} ${titleOf(model.plural ?? `${model.verbose}s`)}`,
        what: objs.map((o) => String(o.display)).join(", "),
        action: list.replace(/\/$/, "/delete/"),
        cancel: back,
        returnUrl: back,
        ids: rows.map((r) => String(r.id)),
      });
    }
    try {
      await inTransaction(ctx, (t) =>
        deleteObjects(
          t,
          model,
          rows.map((r) => String(r.id)),
        ),
      );
    } catch (e) {
      if (e instanceof ProtectedError) throw new AppError(409, e.message);
      throw e;
    }
    flash(
      req,
      "success",
      `Deleted ${rows.length} ${rows.length === 1 ? model.verbose : (model.plural ?? `${model.verbose}s`)}`,
    );
    return reply.redirect(back, 302);
  });

  app.get("/:app/:model/:id/delete/", async (req, reply) => {
    const model = target(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    const row = await rowFor(ctx, model, id, "delete");
    const [obj] = await represent(ctx, model, [row], "nested");
    return kit.page(req, reply, "confirm", {
      title: `Delete ${titleOf(model.verbose)}`,
      what: String(obj?.display ?? id),
      action: `/${model.app}/${model.path}/${id}/delete/`,
      cancel: `/${model.app}/${model.path}/${id}/`,
    });
  });
  app.post("/:app/:model/:id/delete/", async (req, reply) => {
    const model = target(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    await rowFor(ctx, model, id, "delete");
    const shown = await displayOf(ctx, model, id);
    try {
      await inTransaction(ctx, (t) => deleteObjects(t, model, [id]));
    } catch (e) {
      if (e instanceof ProtectedError) throw new AppError(409, e.message);
      throw e;
    }
    flash(req, "success", `Deleted ${model.verbose} ${shown}`);
    return reply.redirect(`/${model.app}/${model.path}/`, 302);
  });
}
