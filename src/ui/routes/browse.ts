/**
 * The object browser, generated from the model registry for every model: home (counts per model, recent
 * changes), detail pages (`/<app>/<path>/<id>/`: every field, related objects as links, the object's
 * change log) and a global search; list pages are `list.ts`. Reads go through the service layer with the user's permissions.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { formFieldText } from "../../registry/form-text.ts";
import { APP_LABELS, hasNotes, type Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError, NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { versioned } from "../../service/history.ts";
import { mayDo } from "../../service/permissions.ts";
import { boundedFilters, getRow, listRows } from "../../service/read.ts";
import { represent } from "../../service/represent.ts";
import type { Row } from "../../service/rows.ts";
import { cablingLinks } from "../cabling.ts";
import { type ChildTable, childTables } from "../children.ts";
import { contentTypeLabel, objectTitle, withContentTypeLabels } from "../columns.ts";
import { detailTools } from "../detail-tools.ts";
import { esc, type MarkdownBudget, markdownBudget, markdownHtml, valueHtml } from "../format.ts";
import { memberTable } from "../group-members.ts";
import { queryParams as params } from "../list-query.ts";
import { browsable } from "../menu.ts";
import { noteLinks } from "../notes.ts";
import { PANEL_FIELDS, PANEL_TITLES, PANELS } from "../panels.ts";
import type { UiKit } from "../plugin.ts";
import { relationshipRows } from "../relationships.ts";
import { type TabDef, type TabLink, tabDefs, tabLinks, tabTable } from "../tabs.ts";
import { labelOf, titleOf, uiUrl } from "../views.ts";
import { ACTIONS } from "./actions.ts";

type Obj = Record<string, unknown>;

/** Fields a tabbed page shows on its Config Context tab instead of the main tab. */
const CONTEXT_FIELDS = ["config_context", "local_context_data", "local_context_schema"];

/** The object changes of one object (or the latest ones), newest first, as rows of the changes table. */
async function changesFor(ctx: Ctx, objectId?: string): Promise<Obj[]> {
  const oc = ctx.reg.get("extras.objectchange");
  if (!mayDo(ctx.grants, oc, "view")) return [];
  const p = new Map<string, string[]>(objectId ? [["changed_object_id", [objectId]]] : []);
  const { rows } = await listRows(ctx, oc, { params: p, limit: objectId ? 50 : 15, offset: 0 });
  return rows.map((r) => {
    const m = ctx.reg.models.get(String(r.changed_object_type));
    return {
      changeUrl: `/${oc.app}/${oc.path}/${r.id}/`,
      time: String(r.time ?? "")
        .replace("T", " ")
        .slice(0, 19),
      user: r.user_name,
      action: r.action,
      type: m ? titleOf(m.verbose) : contentTypeLabel(ctx.reg, String(r.changed_object_type)),
      repr: r.object_repr,
      url: m && r.action !== "delete" ? `/${m.app}/${m.path}/${r.changed_object_id}/` : undefined,
    };
  });
}

/** An object's notes (Nautobot's Notes tab), the first 100, as the API lists them, rendered within `budget`. */
async function notesOf(ctx: Ctx, model: Model, id: string, budget: MarkdownBudget): Promise<Obj[]> {
  const { rows } = await listRows(ctx, ctx.reg.get("extras.note"), {
    params: new Map([
      ["assigned_object_type", [model.key]],
      ["assigned_object_id", [id]],
    ]),
    limit: 100,
    offset: 0,
  });
  return rows.map((n) => ({
    user: n.user_name,
    time: String(n.created ?? "")
      .replace("T", " ")
      .slice(0, 16),
    note: markdownHtml(n.note, budget),
    // Edit and delete for its author and who may change/delete notes (issue 25, ui/notes.ts).
    ...noteLinks(ctx, n),
  }));
}

export async function browseRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const modelOf = (req: FastifyRequest): Model => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = kit.reg.byUrl(a, model);
    if (!m || !browsable(m)) throw new NotFoundError();
    return m;
  };
  const needView = (ctx: Ctx, model: Model) => {
    if (!mayDo(ctx.grants, model, "view")) throw new PermissionDenied();
  };

  app.get("/", async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const apps: Obj[] = [];
    for (const a of ["dcim", "ipam", "circuits", "virtualization", "tenancy", "extras"]) {
      const models: Obj[] = [];
      for (const m of kit.reg.appModels(a)) {
        if (!browsable(m) || m.readOnly || !mayDo(ctx.grants, m, "view")) continue;
        if (m.key.endsWith("template") || m.key.includes("association") || m.key.includes("membership"))
          continue;
        const { count } = await listRows(ctx, m, { params: new Map(), limit: 0, offset: 0 }).catch(() => ({
          count: 0,
        }));
        models.push({ title: titleOf(m.plural ?? `${m.verbose}s`), url: `/${m.app}/${m.path}/`, count });
      }
      if (models.length) apps.push({ label: APP_LABELS[a] ?? a, models });
    }
    return kit.page(req, reply, "home", { title: "Home", apps, changes: await changesFor(ctx) });
  });

  app.get("/search/", async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const q = (params(req).get("q")?.[0] ?? "").trim();
    boundedFilters(new Map([["q", [q]]]), new Set());
    const hits: Obj[] = [];
    if (q) {
      for (const key of [
        "ipam.ipaddress",
        "dcim.device",
        "circuits.circuit",
        "dcim.site",
        "ipam.prefix",
        "ipam.vlan",
        "dcim.rack",
        "virtualization.virtualmachine",
        "dcim.interface",
        "tenancy.tenant",
      ]) {
        const m = kit.reg.get(key);
        if (!mayDo(ctx.grants, m, "view")) continue;
        const { rows, count } = await listRows(ctx, m, {
          params: new Map([["q", [q]]]),
          limit: 20,
          offset: 0,
        });
        if (!count) continue;
        for (const o of await represent(ctx, m, rows, "nested"))
          hits.push({ type: titleOf(m.verbose), display: o.display, url: uiUrl(o.url) });
      }
    }
    // One hit: straight to it.
    if (hits.length === 1 && hits[0]?.url) return reply.redirect(String(hits[0].url), 302);
    const rows = hits.map((h) => [esc(h.type), `<a href="${esc(h.url)}">${esc(h.display)}</a>`]);
    return kit.page(req, reply, "list", {
      title: `Search: ${q}`,
      q,
      count: hits.length,
      limit: 50,
      columns: [
        { label: "Type", sortUrl: "#" },
        { label: "Object", sortUrl: "#" },
      ],
      rows,
      from: hits.length ? 1 : 0,
      to: hits.length,
    });
  });

  /**
   * An object's detail page; for a model with tabs (ui/tabs.ts), the tab `slug` ("" the main tab, a
   * child model's path, `config-context`, `notes`, `changelog`) and only what that tab shows.
   * @throws NotFoundError for an unknown tab or object, PermissionDenied without the view permission
   */
  const detail = async (req: FastifyRequest, reply: FastifyReply, slug: string) => {
    const model = modelOf(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const tabList = tabDefs(kit.reg, model);
    const tab = tabList?.find((t) => t.slug === slug);
    if (slug && !tab) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    needView(ctx, model);
    const row = await getRow(ctx, model, id);
    const tabs = tabList && tab ? await tabLinks(ctx, model, id, tabList, tab) : undefined;
    // A tab other than the main one shows no field: the title needs only the display.
    if (tab && tab.kind !== "main") {
      const [obj] = await represent(ctx, model, [row], "nested");
      if (!obj) throw new AppError(404, "Not found.");
      return tabPage(req, reply, ctx, model, row, obj, tab, tabs ?? []);
    }
    const [obj] = await represent(ctx, model, [row], "full", {
      nestIds: true,
      include: new Set(["relationships", "computed_fields"]),
      // The config context has its own tab.
      excludeConfigContext: !!tab,
    });
    if (!obj) throw new AppError(404, "Not found.");
    // One Markdown budget for the page: comments first, then the notes (issue 23).
    const budget = markdownBudget();
    const fields = Object.entries(withContentTypeLabels(kit.reg, model, obj))
      .filter(
        ([k]) =>
          !["id", "url", "display", "notes_url", "relationships"].includes(k) &&
          !PANEL_FIELDS[model.key]?.includes(k) &&
          // Shown by the Config Context tab.
          !(tab && CONTEXT_FIELDS.includes(k)),
      )
      .map(([k, v]) => ({
        // Nautobot's label of a model field (as its forms, else OPTIONS, acronyms upper case), else the key in words.
        label: model.fields[k]
          ? labelOf(formFieldText(model, k, model.fields[k]).label)
          : titleOf(k.replace(/_/g, " ")),
        value: valueHtml(v, k, budget),
      }));
    // Each relationship side as its label and peer links (issue 25, relationships.ts).
    fields.push(...(await relationshipRows(ctx, model, obj.relationships)));
    // Objects pointing here (a site's racks and devices, a device's interfaces): counts linking to the
    // filtered list, one count query per relation.
    const related: Obj[] = [];
    for (const r of kit.reg.reverseOf(model.key)) {
      if (r.def.kind !== "fk" || !browsable(r.from) || !mayDo(ctx.grants, r.from, "view")) continue;
      const param = r.def.idFilter ?? `${r.field}_id`;
      // Children with a tab of their own are counted there.
      if (tabList?.some((t) => t.child === r.from && t.param === param)) continue;
      const { count } = await listRows(ctx, r.from, {
        params: new Map([[param, [id]]]),
        limit: 0,
        offset: 0,
      });
      if (!count) continue;
      related.push({
        label: `${titleOf(r.from.plural ?? `${r.from.verbose}s`)}${r.from.fieldList.filter(([, d]) => d.kind === "fk" && d.to === model.key).length > 1 ? ` (${r.field.replace(/_/g, " ")})` : ""}`,
        url: `/${r.from.app}/${r.from.path}/?${param}=${id}`,
        count,
      });
    }
    const writable = !model.readOnly && model.key !== "users.token";
    const actions = mayDo(ctx.grants, kit.reg.get("extras.webhook"), "change")
      ? (ACTIONS[model.key] ?? []).map((x) => ({
          url: `/${model.app}/${model.path}/${id}/${x.name}/`,
          label: x.label(row),
        }))
      : [];
    // A tabbed page's child tables are its tabs.
    const children: ChildTable[] = tab ? [] : await childTables(ctx, model, row);
    // A dynamic group's members, paged as the API's members endpoint (issue 25, group-members.ts).
    if (model.key === "extras.dynamicgroup") {
      const members = await memberTable(ctx, row, params(req));
      if (members) children.unshift(members);
    }
    const links = cablingLinks(ctx, model, id, row.cable_id);
    // Issue 25: "Add components", allocation buttons and a prefix's free space (detail-tools.ts).
    const tools = await detailTools(ctx, model, row);
    // Notes (Nautobot's Notes tab): newest last, as the API lists them, with an add form.
    const noteModel = kit.reg.get("extras.note");
    const notes =
      !tab && hasNotes(model) && mayDo(ctx.grants, noteModel, "view")
        ? await notesOf(ctx, model, id, budget)
        : undefined;
    const panel = PANELS[model.key];
    const panels = panel ? await panel(ctx, row) : [];
    return kit.page(req, reply, "detail", {
      tabs,
      showMain: true,
      children: [...children, ...tools.tables],
      menus: tools.menus,
      tools: tools.tools,
      notes,
      notesUrl:
        notes && mayDo(ctx.grants, noteModel, "add") ? `/${model.app}/${model.path}/${id}/notes/` : undefined,
      panels,
      panelTitle: PANEL_TITLES[model.key] ?? "",
      actions,
      links,
      editUrl:
        writable && mayDo(ctx.grants, model, "change")
          ? `/${model.app}/${model.path}/${id}/edit/`
          : undefined,
      deleteUrl:
        writable && mayDo(ctx.grants, model, "delete")
          ? `/${model.app}/${model.path}/${id}/delete/`
          : undefined,
      // Issue 27: the object's versions, diffs and revert (ui/routes/history.ts).
      historyUrl: versioned(model) ? `/${model.app}/${model.path}/${id}/history/` : undefined,
      related,
      title: objectTitle(model, obj),
      verbose: titleOf(model.verbose),
      plural: titleOf(model.plural ?? `${model.verbose}s`),
      listUrl: `/${model.app}/${model.path}/`,
      fields,
      showChanges: !tab && !!model.changelog,
      changes: !tab && model.changelog ? await changesFor(ctx, id) : [],
    });
  };

  app.get("/:app/:model/:id/", async (req, reply) => detail(req, reply, ""));
  // A tab of a tabbed detail page (`/dcim/devices/<id>/interfaces/`); fixed segments (`edit/`, `trace/`)
  // are other routes, which the router matches first.
  app.get("/:app/:model/:id/:tab/", async (req, reply) =>
    detail(req, reply, (req.params as { tab: string }).tab),
  );

  /** A tab other than the main one: the header and toolbar of the object, the tab bar, and the tab. */
  const tabPage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    ctx: Ctx,
    model: Model,
    row: Row,
    obj: Obj,
    tab: TabDef,
    tabs: TabLink[],
  ) => {
    const id = String(row.id);
    const tools = await detailTools(ctx, model, row);
    const writable = !model.readOnly && model.key !== "users.token";
    const noteModel = kit.reg.get("extras.note");
    let extra: Obj = {};
    if (tab.kind === "children") {
      const table = await tabTable(ctx, model, row, tab, params(req));
      if (!table) throw new PermissionDenied();
      extra = { tabTable: table };
    } else if (tab.kind === "config-context") {
      const [full] = await represent(ctx, model, [row], "full", { nestIds: true, include: new Set() });
      extra = {
        configContext: [
          { title: "Rendered Context", html: valueHtml(full?.config_context ?? {}) },
          { title: "Local Context", html: valueHtml(full?.local_context_data) },
          { title: "Local Context Schema", html: valueHtml(full?.local_context_schema) },
        ],
      };
    } else if (tab.kind === "notes") {
      if (!mayDo(ctx.grants, noteModel, "view")) throw new PermissionDenied();
      extra = {
        notes: await notesOf(ctx, model, id, markdownBudget()),
        notesUrl: mayDo(ctx.grants, noteModel, "add")
          ? `/${model.app}/${model.path}/${id}/notes/`
          : undefined,
      };
    } else if (tab.kind === "changelog") {
      extra = { showChanges: true, changes: await changesFor(ctx, id) };
    }
    return kit.page(req, reply, "detail", {
      tabs,
      showMain: false,
      children: [],
      menus: tools.menus,
      tools: [],
      panels: [],
      actions: [],
      links: cablingLinks(ctx, model, id, row.cable_id),
      editUrl:
        writable && mayDo(ctx.grants, model, "change")
          ? `/${model.app}/${model.path}/${id}/edit/`
          : undefined,
      deleteUrl:
        writable && mayDo(ctx.grants, model, "delete")
          ? `/${model.app}/${model.path}/${id}/delete/`
          : undefined,
      related: [],
      fields: [],
      title: `${objectTitle(model, obj)} – ${tab.label}`,
      heading: objectTitle(model, obj),
      verbose: titleOf(model.verbose),
      plural: titleOf(model.plural ?? `${model.verbose}s`),
      listUrl: `/${model.app}/${model.path}/`,
      showChanges: false,
      changes: [],
      ...extra,
    });
  };
}
