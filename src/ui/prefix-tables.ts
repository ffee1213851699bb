/**
 * A prefix's child tables with its free space as rows (issue 25; Nautobot 1.6's prefix "Child Prefixes" and
 * "IP Addresses" tabs, `add_available_prefixes` / `add_available_ipaddresses`): the child prefixes with the
 * free blocks between them, and the addresses with the runs of free addresses between them
 * ("10.0.0.5/24 – 10.0.0.9/24 · 5 available"), each free row linking to the add form pre-filled with its
 * first address (and the parent's VRF). Read through the service layer with the user's permissions: one
 * list query per table, one for the free blocks, one per relation of the page.
 */

import { addressSlots, type FreeRun, prefixSlots } from "../service/availability.ts";
import type { Ctx } from "../service/context.ts";
import { mayDo } from "../service/permissions.ts";
import { listRows } from "../service/read.ts";
import { represent } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import { CHILD_ROWS, type ChildTable } from "./children.ts";
import { esc, valueHtml } from "./format.ts";
import { titleOf, uiUrl } from "./views.ts";

type Obj = Record<string, unknown>;

const PREFIX_COLUMNS = ["status", "vrf", "site", "vlan", "description"];
const ADDRESS_COLUMNS = ["status", "vrf", "role", "assigned_object", "dns_name", "description"];

/** A free row: the range linking to the pre-filled add form, its size, blank cells after. */
function freeRow(run: FreeRun, addUrl: string | undefined, what: string, cells: number): string[] {
  const range = run.first === run.last ? run.first : `${run.first} – ${run.last}`;
  const label = `${run.count.toLocaleString("en-US")} ${run.count === 1n ? what : what === "address" ? "addresses" : `${what}s`} available`;
  const first = addUrl
    ? `<a class="available" href="${esc(addUrl)}">${esc(range)}</a>`
    : `<span class="available">${esc(range)}</span>`;
  return [first, `<span class="badge available">${esc(label)}</span>`, ...Array(cells - 1).fill("")];
}

/** The pre-filled add URL of a model, or undefined when the user may not add it. */
function addUrlOf(ctx: Ctx, key: string, values: Record<string, string>): string | undefined {
  const m = ctx.reg.get(key);
  if (!mayDo(ctx.grants, m, "add")) return undefined;
  const q = new URLSearchParams(Object.entries(values).filter(([, v]) => v));
  return `/${m.app}/${m.path}/add/?${q}`;
}

/** The child prefix and IP address tables of a prefix's detail page, free space included. */
export async function prefixTables(ctx: Ctx, row: Row): Promise<ChildTable[]> {
  const out: ChildTable[] = [];
  const text = String(row.prefix);
  const vrf = row.vrf_id ? String(row.vrf_id) : "";
  const prefixModel = ctx.reg.get("ipam.prefix");
  const ipModel = ctx.reg.get("ipam.ipaddress");
  if (mayDo(ctx.grants, prefixModel, "view")) {
    const { count, rows } = await listRows(ctx, prefixModel, {
      params: new Map([["within", [text]]]),
      limit: CHILD_ROWS,
      offset: 0,
    });
    const objs = await represent(ctx, prefixModel, rows, "full", {
      include: new Set(),
      excludeConfigContext: true,
    });
    const slots = await prefixSlots(ctx, row, objs);
    out.push({
      title: `Prefixes (${count})`,
      more: count > CHILD_ROWS ? `/ipam/prefixes/?${new URLSearchParams({ within: text })}` : undefined,
      columns: [
        "Prefix",
        ...PREFIX_COLUMNS.map((c) => prefixModel.fields[c]?.label ?? titleOf(c.replace(/_/g, " "))),
      ],
      rows: slots.map((s) =>
        "item" in s
          ? [
              `<a href="${esc(uiUrl((s.item as Obj).url))}">${esc((s.item as Obj).display)}</a>`,
              ...PREFIX_COLUMNS.map((c) => valueHtml((s.item as Obj)[c], c)),
            ]
          : freeRow(
              s.free,
              addUrlOf(ctx, "ipam.prefix", { prefix: s.free.first, vrf }),
              "address",
              PREFIX_COLUMNS.length,
            ),
      ),
    });
  }
  if (mayDo(ctx.grants, ipModel, "view")) {
    const { count, rows } = await listRows(ctx, ipModel, {
      params: new Map([["parent", [text]]]),
      limit: CHILD_ROWS,
      offset: 0,
    });
    const objs = await represent(ctx, ipModel, rows, "full", {
      include: new Set(),
      excludeConfigContext: true,
    });
    const slots = addressSlots({ prefix: text, isPool: !!row.is_pool }, objs, count <= CHILD_ROWS);
    out.push({
      title: `IP Addresses (${count})`,
      more: count > CHILD_ROWS ? `/ipam/ip-addresses/?${new URLSearchParams({ parent: text })}` : undefined,
      columns: [
        "Address",
        ...ADDRESS_COLUMNS.map((c) => ipModel.fields[c]?.label ?? titleOf(c.replace(/_/g, " "))),
      ],
      rows: slots.map((s) =>
        "item" in s
          ? [
              `<a href="${esc(uiUrl(s.item.url))}">${esc(s.item.display)}</a>`,
              ...ADDRESS_COLUMNS.map((c) => valueHtml(s.item[c], c)),
            ]
          : freeRow(
              s.free,
              addUrlOf(ctx, "ipam.ipaddress", { address: s.free.first, vrf }),
              "IP",
              ADDRESS_COLUMNS.length,
            ),
      ),
    });
  }
  return out;
}
