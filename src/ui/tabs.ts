/**
 * Tabs of detail pages (issue 25), as Nautobot 1.6 splits a device's page (`dcim/device/base.html`): the
 * object's own fields, one tab per kind of child (interfaces, front and rear ports, console and power ports
 * and outlets, device bays, inventory items) with its count, then Config Context, Notes and Change Log.
 * Which models have tabs is declared (`registry/presentation.ts` `TABBED_DETAIL_PAGES`); the child tabs are
 * derived from the registry: every model whose required FK named after the parent cascades from it
 * (`interface.device`, `vminterface.virtual_machine`, `rackreservation.rack`), then the parent's declared
 * child tables (`children.ts`: a rack's devices). Each tab is its own server-rendered page at
 * `/<app>/<path>/<id>/<tab>/` (Nautobot's URLs: `/dcim/devices/<id>/interfaces/`, `…/config-context/`,
 * `…/notes/`, `…/changelog/`), so it can be bookmarked.
 *
 * Reads go through the service layer with the user's permissions: one count query per tab, and for the
 * shown tab one list query and one query per relation of its page (service/represent.ts loads set-wise),
 * never one per row.
 */
import { hasNotes, type Model, type Registry } from "../registry/index.ts";
import { TAB_COLUMNS, TABBED_DETAIL_PAGES } from "../registry/presentation.ts";
import type { Ctx } from "../service/context.ts";
import { mayDo } from "../service/permissions.ts";
import { listRows } from "../service/read.ts";
import { represent } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import { cablingLinks, peerHtml } from "./cabling.ts";
import { addressesOf, CHILD_TABLES } from "./children.ts";
import { defaultColumns, objectTitle } from "./columns.ts";
import { esc, valueHtml } from "./format.ts";
import { browsable } from "./menu.ts";
import { componentModels } from "./routes/components.ts";
import { titleOf, uiUrl } from "./views.ts";

type Obj = Record<string, unknown>;

/** One tab of a detail page. */
export interface TabDef {
  /** The URL segment after the object's id: "" for the main tab, a child model's path, or a fixed name. */
  slug: string;
  /** The tab's label (without its count). */
  label: string;
  kind: "main" | "children" | "config-context" | "notes" | "changelog";
  /** Children tabs: the child model, the API filter selecting the parent's children, and the FK's name. */
  child?: Model;
  param?: string;
  field?: string;
}

/** Rows per page of a child tab unless `?limit=` says otherwise (Nautobot's `PAGINATE_COUNT`). */
export const TAB_ROWS = 50;

/**
 * The child relations of `parent` that are components of it: required FKs to it, named after it
 * (underscores aside) and cascading on delete, from browsable, writable, non-template models, in
 * registry order (Nautobot's tab order for a device). Each with the API filter (`device_id`) selecting
 * the children of one parent.
 */
export function componentRelations(
  reg: Registry,
  parent: Model,
): Array<{ child: Model; field: string; param: string }> {
  return reg
    .reverseOf(parent.key)
    .filter(
      (r) =>
        r.def.kind === "fk" &&
        r.def.required &&
        r.def.onDelete === "CASCADE" &&
        r.field.replace(/_/g, "") === parent.name &&
        browsable(r.from) &&
        !r.from.readOnly &&
        !r.from.key.endsWith("template"),
    )
    .map((r) => ({
      child: r.from,
      field: r.field,
      param: (r.def.kind === "fk" ? r.def.idFilter : undefined) ?? `${r.field}_id`,
    }));
}

/**
 * The tabs of `model`'s detail page, main tab first; undefined when its page has no tabs. Child tabs are
 * the component relations, then the declared child tables of other models; then Config Context (models
 * with a rendered `config_context`), Notes and Change Log (models with those capabilities).
 */
export function tabDefs(reg: Registry, model: Model): TabDef[] | undefined {
  if (!TABBED_DETAIL_PAGES.has(model.key)) return undefined;
  const tabs: TabDef[] = [{ slug: "", label: titleOf(model.verbose), kind: "main" }];
  const seen = new Set<string>();
  const add = (child: Model, param: string, field?: string) => {
    if (seen.has(child.key)) return;
    seen.add(child.key);
    tabs.push({
      slug: child.path,
      label: titleOf(child.plural ?? `${child.verbose}s`),
      kind: "children",
      child,
      param,
      ...(field ? { field } : {}),
    });
  };
  for (const r of componentRelations(reg, model)) add(r.child, r.param, r.field);
  for (const c of CHILD_TABLES[model.key] ?? []) {
    if ((c.value ?? "{id}") !== "{id}") continue;
    const child = reg.get(c.model);
    const fk = child.fieldList.find(
      ([n, d]) => d.kind === "fk" && d.to === model.key && `${n}_id` === c.param,
    );
    add(child, c.param, fk?.[0]);
  }
  if (model.fields.config_context)
    tabs.push({ slug: "config-context", label: "Config Context", kind: "config-context" });
  if (hasNotes(model)) tabs.push({ slug: "notes", label: "Notes", kind: "notes" });
  if (model.changelog) tabs.push({ slug: "changelog", label: "Change Log", kind: "changelog" });
  return tabs;
}

/**
 * Where an object's notes are shown: its Notes tab on a tabbed page (`/dcim/devices/<id>/notes/`), else
 * the notes card of its detail page (`/dcim/sites/<id>/#notes`). Where adding, editing or deleting a note
 * returns to.
 */
export function notesPageUrl(model: Pick<Model, "app" | "path" | "key">, id: string): string {
  const base = `/${model.app}/${model.path}/${id}/`;
  return TABBED_DETAIL_PAGES.has(model.key) ? `${base}notes/` : `${base}#notes`;
}

/** A tab as the detail template draws it. */
export interface TabLink {
  label: string;
  url: string;
  count?: number;
  active: boolean;
}

/**
 * The tab bar of one object's page with `active` shown: the tabs the user may view, each child tab with
 * its count (one count query per tab, under the user's view restriction) and left out when empty unless it
 * is the active one (as Nautobot hides empty component tabs); Notes with its count.
 */
export async function tabLinks(
  ctx: Ctx,
  model: Model,
  id: string,
  tabs: TabDef[],
  active: TabDef,
): Promise<TabLink[]> {
  const base = `/${model.app}/${model.path}/${id}/`;
  const out: TabLink[] = [];
  for (const t of tabs) {
    let count: number | undefined;
    if (t.kind === "children" && t.child && t.param) {
      if (!mayDo(ctx.grants, t.child, "view")) continue;
      count = (await listRows(ctx, t.child, { params: new Map([[t.param, [id]]]), limit: 0, offset: 0 }))
        .count;
      if (!count && t !== active) continue;
    } else if (t.kind === "notes") {
      const note = ctx.reg.get("extras.note");
      if (!mayDo(ctx.grants, note, "view")) continue;
      count = (
        await listRows(ctx, note, {
          params: new Map([
            ["assigned_object_type", [model.key]],
            ["assigned_object_id", [id]],
          ]),
          limit: 0,
          offset: 0,
        })
      ).count;
    } else if (t.kind === "changelog" && !mayDo(ctx.grants, ctx.reg.get("extras.objectchange"), "view"))
      continue;
    out.push({ label: t.label, url: `${base}${t.slug ? `${t.slug}/` : ""}`, count, active: t === active });
  }
  return out;
}

/** A child tab's table: header labels, rows of trusted HTML cells, pager, and the add link. */
export interface TabTable {
  title: string;
  columns: string[];
  rows: string[][];
  pager: { text: string; prev?: string; next?: string };
  /** "Add interfaces": the bulk add of components (pre-filled with the parent), or the child's add form. */
  add?: { label: string; url: string };
}

/** Column labels of the derived columns and of fields whose Nautobot column has its own verbose name. */
const LABELS: Record<string, string> = {
  cable: "Cable",
  connection: "Connection",
  cable_peer: "Cable Peer",
  ip_addresses: "IP Addresses",
  parent_interface: "Parent",
  lag: "LAG",
  mtu: "MTU",
  mac_address: "MAC Address",
  rear_port_position: "Position",
  part_id: "Part ID",
};

/** Columns computed from the row rather than read from one field. */
const DERIVED = new Set(["connection", "cable_peer", "ip_addresses", "cable"]);

/** The IP address filter taking a child model's ids (`interface_id`), when addresses can be assigned to it. */
function addressFilter(ctx: Ctx, child: Model): string | undefined {
  const ip = ctx.reg.models.get("ipam.ipaddress");
  const name = `${child.name}_id`;
  return ip?.filters?.[name] ? name : undefined;
}

/**
 * The table of child tab `tab` of object `row` of `model`, page `query` (`limit`, default `TAB_ROWS`, at
 * most 1,000; `offset`): the child's name, then its `TAB_COLUMNS` (Nautobot's columns), the peer of a
 * connection (device › port), IP addresses, and the cabling and edit links of each row the user may use.
 * @returns undefined when the user may not view the child model.
 */
export async function tabTable(
  ctx: Ctx,
  model: Model,
  row: Row,
  tab: TabDef,
  query: Map<string, string[]>,
): Promise<TabTable | undefined> {
  const child = tab.child;
  if (!child || !tab.param || !mayDo(ctx.grants, child, "view")) return undefined;
  const id = String(row.id);
  const limit = Math.min(Math.max(Number(query.get("limit")?.[0]) || TAB_ROWS, 1), 1000);
  const offset = Math.max(Number(query.get("offset")?.[0]) || 0, 0);
  const page = await listRows(ctx, child, { params: new Map([[tab.param, [id]]]), limit, offset });
  const declared = TAB_COLUMNS[child.key];
  const cols = (
    declared ??
    defaultColumns(child).filter((n) => child.fields[n]?.kind !== "fk" || child.fields[n]?.to !== model.key)
  ).filter(
    (n) =>
      (n === "cable" && !!child.fields.cable) ||
      (n === "connection" && !!child.fields.connected_endpoint) ||
      (n === "cable_peer" && !!child.fields.cable_peer) ||
      (n === "ip_addresses" && !!addressFilter(ctx, child)) ||
      (!DERIVED.has(n) && !!child.fields[n] && !child.fields[n]?.hidden),
  );
  const objs = await represent(ctx, child, page.rows, "full", {
    nestIds: true,
    include: new Set(),
    excludeConfigContext: true,
  });
  const ipParam = cols.includes("ip_addresses") ? addressFilter(ctx, child) : undefined;
  const ips = ipParam
    ? await addressesOf(
        ctx,
        ipParam,
        page.rows.map((r) => String(r.id)),
      )
    : undefined;
  const cable = ctx.reg.get("dcim.cable");
  const cell = (o: Obj, n: string): string => {
    if (n === "connection") return peerHtml(ctx, o.connected_endpoint);
    if (n === "cable_peer") return peerHtml(ctx, o.cable_peer);
    if (n === "ip_addresses") return ips?.get(String(o.id))?.join(", ") || '<span class="muted">—</span>';
    if (n === "cable") {
      const c = o.cable as Obj | null | undefined;
      return c
        ? `<a href="${esc(uiUrl(c.url))}">${esc(objectTitle(cable, c))}</a>`
        : '<span class="muted">—</span>';
    }
    return valueHtml(o[n], n);
  };
  const mayChange = mayDo(ctx.grants, child, "change");
  const plural = child.plural ?? `${child.verbose}s`;
  const last = Math.min(offset + page.rows.length, page.count);
  const at = (o: number) => `?${new URLSearchParams({ limit: String(limit), offset: String(o) })}`;
  return {
    title: `${titleOf(plural)} (${page.count})`,
    columns: [
      "Name",
      ...cols.map((n) => LABELS[n] ?? child.fields[n]?.label ?? titleOf(n.replace(/_/g, " "))),
      "Actions",
    ],
    rows: objs.map((o, i) => {
      const links = [
        ...cablingLinks(ctx, child, String(o.id), page.rows[i]?.cable_id),
        ...(mayChange ? [{ label: "Edit", url: `/${child.app}/${child.path}/${o.id}/edit/` }] : []),
      ];
      return [
        `<a href="${esc(uiUrl(o.url))}">${esc(objectTitle(child, o))}</a>`,
        ...cols.map((n) => cell(o, n)),
        links.map((l) => `<a href="${esc(l.url)}">${esc(l.label)}</a>`).join(" · "),
      ];
    }),
    pager: {
      text: page.count ? `Showing ${offset + 1}–${last} of ${page.count}` : `No ${plural}`,
      ...(offset > 0 ? { prev: at(Math.max(offset - limit, 0)) } : {}),
      ...(offset + limit < page.count ? { next: at(offset + limit) } : {}),
    },
    add: addLink(ctx, model, id, tab),
  };
}

/**
 * The add link of a child tab: the bulk add with name ranges for components with a name
 * (`/dcim/devices/<id>/components/interfaces/add/`, routes/components.ts), else the child's add form with
 * the parent filled in (`/dcim/rack-reservations/add/?rack=<id>`); undefined without the add permission.
 */
function addLink(ctx: Ctx, model: Model, id: string, tab: TabDef): TabTable["add"] {
  const child = tab.child;
  if (!child || child.readOnly || !mayDo(ctx.grants, child, "add")) return undefined;
  const label = `Add ${child.plural ?? `${child.verbose}s`}`;
  if (componentModels(ctx.reg, model.key).includes(child))
    return { label, url: `/${model.app}/${model.path}/${id}/components/${child.path}/add/` };
  return tab.field
    ? { label, url: `/${child.app}/${child.path}/add/?${new URLSearchParams({ [tab.field]: id })}` }
    : undefined;
}
