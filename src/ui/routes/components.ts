/**
 * Bulk creation of components from their parent's page (issue 25; Nautobot 1.6 `ComponentCreateView`
 * and `ComponentCreateForm`, `VMInterfaceCreateView`): one form per component model of the registry (a
 * device's interfaces, front/rear ports, console and power ports and outlets, device bays, inventory items;
 * a virtual machine's interfaces: every model with a required FK named after the parent and a `name`), whose
 * `name_pattern` and (for models with a label) `label_pattern` accept Nautobot's alphanumeric ranges
 * (`eth[0-47]`, `ge-0/0/[0-3]`, `[a-c]`, `[1,3,5-7]`, several brackets; service/expand.ts). The other
 * fields are the model's form controls, shared by every component made. Every component is created through
 * the service layer's bulk create in one transaction: all or none, errors shown on the form.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Model, Registry } from "../../registry/index.ts";
import { TABBED_DETAIL_PAGES } from "../../registry/presentation.ts";
import type { Ctx } from "../../service/context.ts";
import { NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { expandComponentNames } from "../../service/expand.ts";
import { mayDo } from "../../service/permissions.ts";
import { createMany, inTransaction } from "../../service/write.ts";
import { flash } from "../flash.ts";
import { bodyFromForm, type Control, controlsFor, extrasFromForm, splitErrors } from "../forms.ts";
import { rowFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf } from "../views.ts";

type Obj = Record<string, unknown>;

/** Most error lines shown for one bulk create (the rest are summarised). */
const SHOWN_ERRORS = 20;

/**
 * The FK of `model` that makes it a component of `parent` (a model key): a required FK to it named after
 * it, underscores aside (`device` for `dcim.device`, `virtual_machine` for `virtualization.virtualmachine`).
 */
export function parentField(reg: Registry, model: Model, parent: string): string | undefined {
  const name = reg.models.get(parent)?.name;
  return model.fieldList.find(
    ([n, d]) => d.kind === "fk" && d.to === parent && !!d.required && n.replace(/_/g, "") === name,
  )?.[0];
}

/**
 * The component models of a parent model (`dcim.device`, `virtualization.virtualmachine`): a required FK
 * named after the parent (`parentField`) and a `name`; the name (and the `label`, where the model has one)
 * are created from patterns.
 */
export function componentModels(reg: Registry, parent = "dcim.device"): Model[] {
  return [...reg.models.values()].filter(
    (m) => !!parentField(reg, m, parent) && !!m.fields.name && !m.readOnly && !m.key.endsWith("template"),
  );
}

/** The "Add components" menu of a device page: the component models the user may add. */
export function componentMenu(ctx: Ctx, model: Model, id: string): Array<{ label: string; url: string }> {
  if (!mayDo(ctx.grants, model, "change") && !mayDo(ctx.grants, model, "view")) return [];
  return componentModels(ctx.reg, model.key)
    .filter((m) => mayDo(ctx.grants, m, "add"))
    .map((m) => ({
      label: titleOf(m.plural ?? `${m.verbose}s`),
      url: `/${model.app}/${model.path}/${id}/components/${m.path}/add/`,
    }));
}

export async function componentRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const target = (req: FastifyRequest) => {
    const { app: a, model: path, id: raw, component } = req.params as Record<string, string>;
    const parent = kit.reg.byUrl(a!, path!);
    const id = normalizeUuid(raw ?? "");
    const model = parent && componentModels(kit.reg, parent.key).find((m) => m.path === component);
    const field = parent && model && parentField(kit.reg, model, parent.key);
    if (!parent || !model || !field || !id) throw new NotFoundError();
    return { parent, model, field, id };
  };

  const draw = async (
    req: FastifyRequest,
    reply: Parameters<UiKit["page"]>[1],
    ctx: Ctx,
    t: ReturnType<typeof target>,
    display: string,
    posted: Obj,
    errors: Record<string, string[]> = {},
    general: string[] = [],
    status = 200,
  ) => {
    const patterns: Control[] = [
      {
        name: "name_pattern",
        label: "Name",
        kind: "text",
        required: true,
        value: String(posted.name_pattern ?? ""),
        help: "Alphanumeric ranges are supported for bulk creation. Mixed cases and types within a single range are not supported. Examples: [ge,xe]-0/0/[0-9], e[0-3][a-d,f]",
        errors: errors.name_pattern ?? [],
      },
      ...(t.model.fields.label
        ? [
            {
              name: "label_pattern",
              label: "Label",
              kind: "text" as const,
              required: false,
              value: String(posted.label_pattern ?? ""),
              help: "Alphanumeric ranges are supported. (Must match the number of names being created.)",
              errors: errors.label_pattern ?? [],
            },
          ]
        : []),
    ];
    const rest = (await controlsFor(ctx, t.model, posted, errors)).filter(
      (c) => ![t.field, "name", "label"].includes(c.name),
    );
    return kit.page(
      req,
      reply,
      "form",
      {
        title: `Add ${titleOf(t.model.plural ?? `${t.model.verbose}s`)} to ${display}`,
        action: `/${t.parent.app}/${t.parent.path}/${t.id}/components/${t.model.path}/add/`,
        cancel: `/${t.parent.app}/${t.parent.path}/${t.id}/`,
        controls: [...patterns, ...rest],
        general,
      },
      status,
    );
  };

  const start = async (req: FastifyRequest) => {
    const t = target(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, t.model, "add")) throw new PermissionDenied();
    const row = await rowFor(ctx, t.parent, t.id, "view");
    return { t, ctx, display: String(row.name ?? row.id) };
  };

  app.get("/:app/:model/:id/components/:component/add/", async (req, reply) => {
    const { t, ctx, display } = await start(req);
    return draw(req, reply, ctx, t, display, {});
  });

  app.post("/:app/:model/:id/components/:component/add/", async (req, reply) => {
    const { t, ctx, display } = await start(req);
    const posted = (req.body ?? {}) as Obj;
    const { body, errors } = bodyFromForm(t.model, posted);
    await extrasFromForm(ctx, t.model, posted, body, errors);
    let items: Obj[] = [];
    try {
      items = expandComponentNames(String(posted.name_pattern ?? ""), String(posted.label_pattern ?? "")).map(
        (n) => ({
          ...body,
          [t.field]: t.id,
          name: n.name,
          ...(t.model.fields.label ? { label: n.label ?? "" } : {}),
        }),
      );
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      Object.assign(errors, splitErrors(e).fields);
    }
    if (Object.keys(errors).length) return draw(req, reply, ctx, t, display, posted, errors, [], 400);
    try {
      await inTransaction(ctx, (tx) => createMany(tx, t.model, items));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const list = Array.isArray(e.errors) ? (e.errors as Obj[]) : [e.errors as Obj];
      const failed = list
        .map((err, i) => ({ err, name: String(items[i]?.name ?? "") }))
        .filter(({ err }) => err && Object.keys(err).length);
      const lines = failed
        .slice(0, SHOWN_ERRORS)
        .flatMap(({ err, name }) =>
          Object.entries(err).map(
            ([k, v]) =>
              `${name}: ${k === "__all__" || k === "non_field_errors" ? "" : `${k}: `}${[v].flat(3).join(" ")}`,
          ),
        );
      if (failed.length > SHOWN_ERRORS) lines.push(`… and ${failed.length - SHOWN_ERRORS} more.`);
      const first = splitErrors(new ValidationError(failed[0]?.err ?? {})).fields;
      delete first.name;
      delete first.label;
      return draw(
        req,
        reply,
        ctx,
        t,
        display,
        posted,
        first,
        [`${failed.length} of ${items.length} failed validation; nothing was created.`, ...lines],
        400,
      );
    }
    const many = items.length === 1 ? t.model.verbose : (t.model.plural ?? `${t.model.verbose}s`);
    flash(req, "success", `Created ${items.length} ${many}`);
    // Back to the component's tab of the parent's page (Nautobot's `return_url`), else the page.
    // (A component model is a child tab of a tabbed parent, at its URL path: ui/tabs.ts.)
    const tab = TABBED_DETAIL_PAGES.has(t.parent.key) ? `${t.model.path}/` : "";
    return reply.redirect(`/${t.parent.app}/${t.parent.path}/${t.id}/${tab}`, 302);
  });
}
