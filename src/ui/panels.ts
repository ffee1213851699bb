/**
 * Extra panels of detail pages, declared per model (issue 10): a rack's front and rear elevations, drawn
 * inline as SVG (service/elevation.ts) with each device linking to its page; a prefix's utilisation; an
 * object change's difference. `PANEL_TITLES` names the card that holds a model's panels.
 */

import { prefixUtilization } from "../service/allocation.ts";
import type { Ctx } from "../service/context.ts";
import { elevationSvg, rackUnits } from "../service/elevation.ts";
import type { Row } from "../service/rows.ts";
import { esc } from "./format.ts";
import { uiUrl } from "./views.ts";

/** A panel: a title and trusted HTML (built from escaped parts). */
export interface Panel {
  title: string;
  html: string;
}

/** Parse a stored JSON column (text on SQLite, parsed already on PostgreSQL drivers). */
const json = (v: unknown): Record<string, unknown> | null =>
  v === null || v === undefined
    ? null
    : typeof v === "string"
      ? (JSON.parse(v) as Record<string, unknown>)
      : (v as Record<string, unknown>);

/** A value of a snapshot as short escaped text. */
const show = (v: unknown) => esc(v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

export const PANEL_TITLES: Record<string, string> = {
  "dcim.rack": "Elevation",
  "ipam.prefix": "Utilization",
  "extras.objectchange": "Difference",
};

/** Fields a model's panels show instead of the field table (an object change's snapshots). */
export const PANEL_FIELDS: Record<string, string[]> = {
  "extras.objectchange": ["object_data", "prechange_data"],
};

export const PANELS: Record<string, (ctx: Ctx, row: Row) => Promise<Panel[]>> = {
  /** An object change: the fields it changed, before and after, changed values highlighted. */
  "extras.objectchange": async (_ctx, row) => {
    const pre = json(row.prechange_data);
    const post = row.action === "delete" ? null : json(row.object_data);
    const keys = [...new Set([...Object.keys(pre ?? {}), ...Object.keys(post ?? {})])].filter(
      (k) => k !== "last_updated",
    );
    const changed = keys.filter((k) => JSON.stringify(pre?.[k]) !== JSON.stringify(post?.[k]));
    const rows = (row.action === "update" ? changed : keys).map(
      (k) =>
        `<tr><th>${esc(k)}</th><td class="${pre ? "removed" : ""}">${pre ? show(pre[k]) : ""}</td><td class="${post ? "added" : ""}">${post ? show(post[k]) : ""}</td></tr>`,
    );
    return [
      {
        title:
          row.action === "update"
            ? "Changed fields"
            : row.action === "create"
              ? "Created with"
              : "Deleted with",
        html: `<table class="list diff"><thead><tr><th>Field</th><th>Before</th><th>After</th></tr></thead><tbody>${rows.join("") || '<tr><td colspan="3" class="muted">No field changed.</td></tr>'}</tbody></table>`,
      },
    ];
  },
  /** A prefix: a bar of its utilisation, as Nautobot's prefix page shows it. */
  "ipam.prefix": async (ctx, row) => {
    const { used, size } = await prefixUtilization(ctx, row);
    const pct = size > 0n ? Number((used * 10_000n) / size) / 100 : 0;
    const level = pct >= 90 ? "high" : pct >= 70 ? "mid" : "low";
    return [
      {
        title: `${used.toLocaleString("en")} of ${size.toLocaleString("en")} addresses`,
        html: `<div class="util ${level}" role="meter" aria-valuenow="${pct}" aria-valuemin="0" aria-valuemax="100" aria-label="Utilization"><span style="width:${Math.min(pct, 100)}%"></span><b>${pct}%</b></div>`,
      },
    ];
  },
  "dcim.rack": async (ctx, row) => {
    const out: Panel[] = [];
    for (const face of ["front", "rear"] as const) {
      const units = await rackUnits(ctx, row, face);
      out.push({
        title: face === "front" ? "Front" : "Rear",
        html: elevationSvg(units, { link: (d) => uiUrl(d.url) }),
      });
    }
    return out;
  },
};
