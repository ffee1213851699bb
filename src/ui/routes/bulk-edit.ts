/**
 * Bulk edit from list pages (issue 10; Nautobot's `BulkEditView`): the selected rows get one form of the
 * fields objects commonly share (status, role, tenant, platform…, custom fields; never names, slugs or
 * other unique fields). A blank control leaves the field unchanged, "Set null" clears it, tags are added and
 * removed, custom fields given are merged into each object's.
 * Every object is updated through the service layer in one transaction: all or none, with the first
 * object's validation errors shown beside the fields, naming the object.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Model } from "../../registry/index.ts";
import type { FieldDef } from "../../registry/meta.ts";
import type { Ctx } from "../../service/context.ts";
import { NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { checkItemVersions, PreconditionFailed, versionOf } from "../../service/object-versions.ts";
import { mayDo } from "../../service/permissions.ts";
import { represent } from "../../service/represent.ts";
import { inTransaction, snapshots, updateObject } from "../../service/write.ts";
import { conflictMessage, postedVersions, VERSIONS_INPUT } from "../conflict.ts";
import { flash, returnTo } from "../flash.ts";
import { bodyFromForm, type Control, controlsFor, extrasFromForm, splitErrors } from "../forms.ts";
import { rowsFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf } from "../views.ts";

type Obj = Record<string, unknown>;

/** Most objects one bulk edit changes (a list page shows at most 1,000 rows). */
const MAX_OBJECTS = 1000;

/** Field kinds a bulk edit offers: values many objects share. */
const BULK_KINDS = new Set([
  "fk",
  "status",
  "choice",
  "bool",
  "int",
  "decimal",
  "str",
  "text",
  "date",
  "mac",
]);

/** Whether a field belongs on the bulk-edit form: writable, shared, not an identity. */
export function bulkEditable(name: string, fd: FieldDef): boolean {
  if (fd.readOnly || fd.hidden || fd.writeOnly || !BULK_KINDS.has(fd.kind)) return false;
  if (fd.unique || name === "name" || name === "slug" || name === "_name") return false;
  return !(fd.kind === "str" && name.endsWith("_id"));
}

const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(String) : v === undefined || v === "" ? [] : [String(v)];

/** The controls of the bulk form: blank means unchanged; checkboxes become yes/no selects. */
async function bulkControls(ctx: Ctx, model: Model, posted: Obj, errors: Record<string, string[]>) {
  const fields = new Set(model.fieldList.filter(([n, fd]) => bulkEditable(n, fd)).map(([n]) => n));
  const all = await controlsFor(ctx, model, { _bulk: true }, errors);
  const out: Array<Control & { nullable: boolean }> = [];
  for (const c of all) {
    const custom = c.name.startsWith("cf_") && !model.fields[c.name];
    if (!fields.has(c.name) && !custom) continue;
    const fd = model.fields[c.name];
    // Custom fields can always be cleared (null), as the API allows for any custom field not required.
    const nullable = fd
      ? !fd.required && (fd.nullable || fd.kind === "fk" || fd.kind === "str" || fd.kind === "text")
      : !c.required;
    const value = String(list(posted[c.name])[0] ?? "");
    if (c.kind === "multi") {
      out.push({ ...c, value: list(posted[c.name]), required: false, nullable });
      continue;
    }
    if (c.kind === "checkbox")
      out.push({
        ...c,
        kind: "select",
        value,
        options: [
          { value: "true", label: "Yes" },
          { value: "false", label: "No" },
        ],
        nullable: false,
      });
    else out.push({ ...c, value, required: false, nullable });
  }
  if (model.tags) {
    const tags = all.find((c) => c.name === "tags");
    if (tags?.options)
      for (const [name, label] of [
        ["add_tags", "Add tags"],
        ["remove_tags", "Remove tags"],
      ] as const)
        out.push({ ...tags, name, label, value: list(posted[name]), nullable: false, errors: [] });
  }
  return out;
}

export async function bulkEditRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const target = (req: FastifyRequest): Model => {
    const { app: a, model: path } = req.params as { app: string; model: string };
    const model = kit.reg.byUrl(a, path);
    if (!model || model.readOnly || model.key === "users.token") throw new NotFoundError();
    return model;
  };

  app.post("/:app/:model/edit/", async (req, reply) => {
    const model = target(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, model, "change")) throw new PermissionDenied();
    const posted = (req.body ?? {}) as Obj;
    const ids = list(posted.pk)
      .map((v) => normalizeUuid(v))
      .filter((v): v is string => !!v)
      .slice(0, MAX_OBJECTS);
    const listUrl = `/${model.app}/${model.path}/`;
    // Back to the list as it was (filters, sort, page): issue 25.
    const back = returnTo(posted.return_url, listUrl);
    if (!ids.length) return reply.redirect(back, 302);
    // Every selected object must be one the user may change (the API's `change` constraints): 403 (or 404
    // for one they may not see) otherwise, never a silent subset (issue 23).
    const rows = await rowsFor(ctx, model, ids, "change");
    const objs = await represent(ctx, model, rows, "full", {
      nestIds: true,
      include: new Set(),
      excludeConfigContext: true,
    });
    // The versions the form was drawn from (issue 26): those posted with it, else the current ones.
    const drawnFrom = postedVersions(posted[VERSIONS_INPUT]);
    const current = new Map(rows.map((r) => [String(r.id), versionOf(r)]));
    const draw = async (
      errors: Record<string, string[]> = {},
      general: string[] = [],
      status = 200,
      versions: ReadonlyMap<string, number> = drawnFrom.size ? drawnFrom : current,
    ) =>
      kit.page(
        req,
        reply,
        "bulk-edit",
        {
          title: `Edit ${objs.length} ${titleOf(model.plural ?? `${model.verbose}s`)}`,
          what: objs.map((o) => String(o.display)),
          ids: objs.map((o) => String(o.id)),
          versions: objs
            .filter((o) => versions.has(String(o.id)))
            .map((o) => `${o.id}:${versions.get(String(o.id))}`),
          action: `${listUrl}edit/`,
          cancel: back,
          returnUrl: back,
          controls: await bulkControls(ctx, model, posted, errors),
          nullify: list(posted._nullify),
          general,
        },
        status,
      );
    if (posted._apply !== "yes" || !objs.length) return draw();

    // The patch: non-blank controls, then the fields to clear.
    const { body: converted } = bodyFromForm(model, posted);
    const patch: Obj = {};
    const errors: Record<string, string[]> = {};
    for (const [name, fd] of model.fieldList) {
      if (!bulkEditable(name, fd)) continue;
      const raw = list(posted[name])[0] ?? "";
      if (raw !== "") {
        if ((fd.kind === "int" || fd.kind === "decimal") && !/^-?\d+(\.\d+)?$/.test(raw))
          errors[name] = ["Enter a number."];
        else patch[name] = fd.kind === "bool" ? raw === "true" : converted[name];
      }
    }
    for (const name of list(posted._nullify)) {
      const fd = model.fields[name];
      if (fd && bulkEditable(name, fd)) patch[name] = fd.kind === "str" || fd.kind === "text" ? "" : null;
    }
    // Custom fields: the ones given (or set to null) are merged into each object's custom fields.
    if (model.customFields) {
      const given = Object.keys(posted).filter(
        (k) => k.startsWith("cf_") && list(posted[k]).some((v) => v !== ""),
      );
      const cleared = list(posted._nullify).filter((k) => k.startsWith("cf_"));
      if (given.length || cleared.length) {
        const typed: Obj = {};
        await extrasFromForm(ctx, model, Object.fromEntries(given.map((k) => [k, posted[k]])), typed, errors);
        const all = (typed.custom_fields ?? {}) as Obj;
        const cf: Obj = {};
        for (const k of given) cf[k.slice(3)] = all[k.slice(3)];
        for (const k of cleared) cf[k.slice(3)] = null;
        patch.custom_fields = cf;
      }
    }
    if (Object.keys(errors).length) return draw(errors, [], 400);
    const add = list(posted.add_tags);
    const remove = new Set(list(posted.remove_tags));
    const tagsOf = (o: Obj) => (Array.isArray(o.tags) ? o.tags.map((t) => String((t as Obj).id)) : []);
    let at = "";
    const expected = objs.flatMap((o, index) => {
      const version = drawnFrom.get(String(o.id));
      return version ? [{ index, id: String(o.id), version }] : [];
    });
    try {
      await inTransaction(ctx, async (t) => {
        // A save over someone else's change overwrites nothing (issue 26).
        await checkItemVersions(t, model, expected);
        const taken = await snapshots(
          t,
          model,
          objs.map((o) => String(o.id)),
        );
        for (const o of objs) {
          at = String(o.display);
          const body: Obj = { ...patch };
          if (model.tags && (add.length || remove.size))
            body.tags = [...new Set([...tagsOf(o), ...add])].filter((x) => !remove.has(x));
          if (Object.keys(body).length) await updateObject(t, model, String(o.id), body, true, taken);
        }
      });
    } catch (e) {
      if (e instanceof PreconditionFailed) {
        const stale =
          (e.body as { stale?: Array<{ index: number; id: string; current: number }> }).stale ?? [];
        const messages: string[] = [];
        for (const x of stale.slice(0, 5))
          messages.push(
            await conflictMessage(
              ctx,
              model,
              x.id,
              String(objs[x.index]?.display ?? x.id),
              drawnFrom.get(x.id)!,
            ),
          );
        if (stale.length > 5) messages.push(`${stale.length - 5} more of the selected objects changed too.`);
        const now = new Map(current);
        for (const x of stale) now.set(x.id, x.current);
        return draw({}, messages, 409, now);
      }
      if (!(e instanceof ValidationError)) throw e;
      const { fields, general } = splitErrors(e);
      return draw(fields, [`${at} failed validation; no object was changed.`, ...general], 400);
    }
    flash(
      req,
      "success",
      `Updated ${objs.length} ${objs.length === 1 ? model.verbose : (model.plural ?? `${model.verbose}s`)}`,
    );
    return reply.redirect(back, 302);
  });
}
