/**
 * Extra panels of detail pages, declared per model (issue 10): a rack's front and rear elevations, drawn
 * inline as SVG (service/elevation.ts) with each device linking to its page; a prefix's utilisation; an
 * object change's difference; a webhook delivery's attempts and the request it sent. `PANEL_TITLES` names the card that holds a model's panels.
 */

import { prefixUtilization } from "../service/allocation.ts";
import type { Ctx } from "../service/context.ts";
import { elevationSvg, rackUnits } from "../service/elevation.ts";
import { redactDeliveries } from "../service/outbox.ts";
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
  "extras.webhookdelivery": "Delivery",
};

/** Fields a model's panels show instead of the field table (an object change's snapshots). */
export const PANEL_FIELDS: Record<string, string[]> = {
  "extras.objectchange": ["object_data", "prechange_data"],
  "extras.webhookdelivery": ["request", "attempt_log"],
};

/** A header table: one row per header, values escaped. */
const headerTable = (headers: Record<string, unknown>) =>
  `<table class="attrs">${Object.entries(headers)
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td><code>${esc(String(v))}</code></td></tr>`)
    .join("")}</table>`;

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
  /**
   * A webhook delivery: every attempt (number, start, status, duration, error, the receiver's answer) and the
   * last request as sent, its headers with the signature redacted (issue 10, "Deliveries"). The receiver's
   * answer and the request's credential headers are hidden from a user who may not change the webhook, as
   * the API does (`redactDeliveries`).
   */
  "extras.webhookdelivery": async (ctx, row) => {
    const log = (json(row.attempt_log) ?? []) as unknown as Array<Record<string, unknown>>;
    const [shown] = await redactDeliveries(ctx, [
      { webhook: row.webhook_id, attempt_log: log, request: json(row.request) },
    ]);
    const attempts = ((shown?.attempt_log ?? []) as Array<Record<string, unknown>>).map(
      (a) =>
        `<tr><td class="num">${esc(String(a.number ?? ""))}</td><td>${esc(
          String(a.started ?? "")
            .replace("T", " ")
            .slice(0, 23),
        )}</td><td class="num">${esc(String(a.status_code ?? "—"))}</td><td class="num">${esc(String(a.duration_ms ?? ""))}</td><td>${esc(String(a.error ?? ""))}</td><td><code>${esc(String(a.response ?? "").slice(0, 500))}</code></td></tr>`,
    );
    const request = (shown?.request ?? null) as {
      method?: string;
      url?: string;
      headers?: Record<string, unknown>;
      body?: string;
    } | null;
    return [
      {
        title: "Attempts",
        html: `<table class="list"><thead><tr><th>#</th><th>Started</th><th>Status</th><th>Duration (ms)</th><th>Error</th><th>Response</th></tr></thead><tbody>${attempts.join("") || '<tr><td colspan="6" class="muted">Not attempted yet.</td></tr>'}</tbody></table>`,
      },
      {
        title: "Request",
        html: request
          ? `<p><code>${esc(String(request.method ?? ""))} ${esc(String(request.url ?? ""))}</code></p>${headerTable(request.headers ?? {})}<pre class="body">${esc(String(request.body ?? ""))}</pre>`
          : '<p class="muted">No request sent yet.</p>',
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
        html: elevationSvg(units, {
          link: (d) => uiUrl(d.url),
          label: `${face === "front" ? "Front" : "Rear"} elevation of ${String(row.name ?? "")}`,
        }),
      });
    }
    return out;
  },
};
