/**
 * Child tables of detail pages (issue 10): a site's racks and devices, a rack's devices, a device's
 * interfaces (with their connections and IP addresses) and other components, an interface's IP addresses,
 * a prefix's child prefixes and
 * IP addresses, a VLAN's prefixes, a virtual machine's interfaces. Each table is the child model's list
 * filtered by one API filter whose value is the object, read through the service layer with the user's
 * permissions: one list query per table and one query per relation of its page, never one per row.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { mayDo } from "../service/permissions.ts";
import { listRows } from "../service/read.ts";
import { represent } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import { cablingLinks, isTermination, peerHtml } from "./cabling.ts";
import { esc, valueHtml } from "./format.ts";
import { titleOf, uiUrl } from "./views.ts";

/** One child table of a model's detail page. */
interface ChildSpec {
  /** The child model's key. */
  model: string;
  /** The API filter of the child list that selects this object's children. */
  param: string;
  /** The filter's value: `{id}` (default) or `{prefix}`, substituted from the object. */
  value?: string;
  /** Columns after the display; default: the child's list columns minus the relation back to the object. */
  columns?: string[];
  /** An extra "IP Addresses" column: the IP address filter that takes the child rows' ids. */
  addresses?: "interface_id" | "vminterface_id";
}

/** The child tables per model key. */
export const CHILD_TABLES: Record<string, ChildSpec[]> = {
  "dcim.site": [
    { model: "dcim.rack", param: "site_id" },
    { model: "dcim.device", param: "site_id" },
  ],
  "dcim.rack": [{ model: "dcim.device", param: "rack_id" }],
  "dcim.device": [
    {
      model: "dcim.interface",
      param: "device_id",
      columns: ["type", "enabled", "mgmt_only", "connected_endpoint", "mode", "untagged_vlan"],
      addresses: "interface_id",
    },
    { model: "dcim.consoleport", param: "device_id", columns: ["type", "connected_endpoint"] },
    { model: "dcim.consoleserverport", param: "device_id", columns: ["type", "connected_endpoint"] },
    { model: "dcim.powerport", param: "device_id", columns: ["type", "connected_endpoint"] },
    { model: "dcim.poweroutlet", param: "device_id", columns: ["type", "power_port", "connected_endpoint"] },
    { model: "dcim.frontport", param: "device_id", columns: ["type", "rear_port", "cable_peer"] },
    { model: "dcim.rearport", param: "device_id", columns: ["type", "positions", "cable_peer"] },
  ],
  "dcim.interface": [
    { model: "ipam.ipaddress", param: "interface_id", columns: ["status", "vrf", "role", "dns_name"] },
  ],
  "virtualization.vminterface": [
    { model: "ipam.ipaddress", param: "vminterface_id", columns: ["status", "vrf", "role", "dns_name"] },
  ],
  // A prefix's child prefixes and addresses, with its free space as rows: prefix-tables.ts (issue 25).
  "ipam.vlan": [{ model: "ipam.prefix", param: "vlan_id" }],
  "virtualization.virtualmachine": [
    {
      model: "virtualization.vminterface",
      param: "virtual_machine_id",
      columns: ["enabled", "mac_address", "mtu", "mode", "untagged_vlan"],
      addresses: "vminterface_id",
    },
  ],
};

/** Rows shown per child table; the title links to the full filtered list when there are more. */
export const CHILD_ROWS = 50;

/** A child table ready for the detail template: every cell is trusted HTML built from escaped parts. */
export interface ChildTable {
  title: string;
  more?: string;
  columns: string[];
  rows: string[][];
}

/**
 * The IP addresses assigned to the given interfaces (`param`: the IP address filter taking their ids,
 * `interface_id` or `vminterface_id`), as links grouped by interface id (one query).
 */
export async function addressesOf(ctx: Ctx, param: string, ids: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const ip = ctx.reg.get("ipam.ipaddress");
  if (!ids.length || !mayDo(ctx.grants, ip, "view")) return out;
  const { rows } = await listRows(ctx, ip, { params: new Map([[param, ids]]), limit: 10_000, offset: 0 });
  const objs = await represent(ctx, ip, rows, "nested");
  rows.forEach((r, i) => {
    const key = String(r.assigned_object_id);
    out.set(key, [...(out.get(key) ?? []), valueHtml(objs[i])]);
  });
  return out;
}

/** The child tables of one object's detail page; empty tables and those the user may not view are left out. */
export async function childTables(ctx: Ctx, model: Model, row: Row): Promise<ChildTable[]> {
  const out: ChildTable[] = [];
  for (const c of CHILD_TABLES[model.key] ?? []) {
    const child = ctx.reg.get(c.model);
    if (!mayDo(ctx.grants, child, "view")) continue;
    const v = (c.value ?? "{id}")
      .replace("{id}", String(row.id))
      .replace("{prefix}", String(row.prefix ?? ""));
    const { count, rows } = await listRows(ctx, child, {
      params: new Map([[c.param, [v]]]),
      limit: CHILD_ROWS,
      offset: 0,
    });
    if (!count) continue;
    // Cable terminations: the cable, the peer (device › port) and Connect/Trace links (issue 25).
    const cabled = isTermination(ctx, child);
    const cols = (
      c.columns ??
      listColumns(child).filter((n) => child.fields[n]?.kind !== "fk" || child.fields[n]?.to !== model.key)
    ).filter((n) => !cabled || !["cable", "connected_endpoint", "cable_peer"].includes(n));
    const objs = await represent(ctx, child, rows, "full", {
      nestIds: true,
      include: new Set(),
      excludeConfigContext: true,
    });
    const ips = c.addresses
      ? await addressesOf(
          ctx,
          c.addresses,
          rows.map((r) => String(r.id)),
        )
      : undefined;
    const list = `/${child.app}/${child.path}/?${new URLSearchParams({ [c.param]: v })}`;
    out.push({
      title: `${titleOf(child.plural ?? `${child.verbose}s`)} (${count})`,
      more: count > CHILD_ROWS ? list : undefined,
      columns: [
        titleOf(child.verbose),
        ...cols.map((n) => titleOf(n.replace(/_/g, " "))),
        ...(ips ? ["IP Addresses"] : []),
        ...(cabled ? ["Cable", "Connection", "Cabling"] : []),
      ],
      rows: objs.map((o, i) => [
        `<a href="${esc(uiUrl(o.url))}">${esc(o.display)}</a>`,
        ...cols.map((n) => valueHtml(o[n], n)),
        ...(ips ? [ips.get(String(o.id))?.join(", ") ?? '<span class="muted">—</span>'] : []),
        ...(cabled
          ? [
              o.cable ? valueHtml(o.cable, "cable") : '<span class="muted">—</span>',
              peerHtml(ctx, o.connected_endpoint ?? o.cable_peer),
              cablingLinks(ctx, child, String(o.id), rows[i]?.cable_id)
                .map((l) => `<a href="${esc(l.url)}">${esc(l.label)}</a>`)
                .join(" · "),
            ]
          : []),
      ]),
    });
  }
  return out;
}

/** The list columns of a model: up to six short fields after the display (status first). */
export function listColumns(model: Model): string[] {
  const skip = new Set(["description", "comments", "custom_fields", "config_context", "local_context_data"]);
  const out: string[] = [];
  for (const [name, fd] of model.fieldList) {
    if (fd.hidden || fd.writeOnly || skip.has(name) || out.length >= 6) continue;
    if (["fk", "status", "choice", "str", "int", "ip", "slug", "count", "bool"].includes(fd.kind))
      out.push(name);
  }
  return out.filter((n) => n !== "name" && n !== "slug").slice(0, 6);
}
