/**
 * Cabling in the web UI (issue 25): the "Connect" and "Trace" links of every cable termination (the
 * registry's `cable_terminations` models) and the peer of a connection (device › port) as a device page's
 * component tables show it. "Connect" opens the cable form with the A side filled in
 * (`/dcim/cables/add/?termination_a_type=<app.model>&termination_a_id=<id>`).
 */
import type { Model } from "../registry/index.ts";
import { isPathEndpoint } from "../service/cable-paths.ts";
import type { Ctx } from "../service/context.ts";
import { mayDo } from "../service/permissions.ts";
import { esc } from "./format.ts";
import { parentOf } from "./typeahead.ts";
import { uiUrl } from "./views.ts";

type Obj = Record<string, unknown>;

/** Whether objects of `model` end cables (interfaces, ports, circuit terminations, power feeds). */
export function isTermination(ctx: Ctx, model: Model): boolean {
  return ctx.reg.resolveAllowed("cable_terminations").includes(model.key);
}

/**
 * The cabling links of one object: "Connect" (no cable yet, the user may add cables) and "Trace" (a path
 * endpoint with a cable). `cableId` is the object's `cable_id` column (null/undefined: not cabled).
 */
export function cablingLinks(
  ctx: Ctx,
  model: Model,
  id: string,
  cableId: unknown,
): Array<{ label: string; url: string }> {
  if (!isTermination(ctx, model)) return [];
  const cable = ctx.reg.get("dcim.cable");
  const out: Array<{ label: string; url: string }> = [];
  if (!cableId && mayDo(ctx.grants, cable, "add"))
    out.push({
      label: "Connect",
      url: `/${cable.app}/${cable.path}/add/?${new URLSearchParams({
        termination_a_type: model.key,
        termination_a_id: id,
      })}`,
    });
  if (cableId && isPathEndpoint(model))
    out.push({ label: "Trace", url: `/${model.app}/${model.path}/${id}/trace/` });
  return out;
}

/** A nested peer (connected endpoint or cable peer) as `parent › port` links; `—` without one. */
export function peerHtml(ctx: Ctx, peer: unknown): string {
  if (!peer || typeof peer !== "object") return '<span class="muted">—</span>';
  const o = peer as Obj;
  const m = /\/api\/([^/]+)\/([^/]+)\//.exec(String(o.url ?? ""));
  const model = m ? ctx.reg.byUrl(m[1]!, m[2]!) : undefined;
  const p = model ? parentOf(ctx, model) : undefined;
  const parent = p ? (o[p.field] as Obj | null | undefined) : undefined;
  const a = (x: Obj) => `<a href="${esc(uiUrl(x.url) ?? "")}">${esc(x.display ?? x.name)}</a>`;
  return parent ? `${a(parent)} › ${a({ ...o, display: o.name ?? o.display })}` : a(o);
}
