/**
 * The cable trace of a path endpoint drawn as SVG (issue 25), like Nautobot's `…/trace/` page: per segment
 * the near object's parent (device, circuit, power panel) and port, the cable (its colour, label, type and
 * length) and the far port and parent, every box a link to the object. Input is the service layer's
 * `traceSegments` (the same as `GET /api/<app>/<model>/<id>/trace/`); output is trusted markup built from
 * escaped parts.
 */
import type { Ctx } from "../service/context.ts";
import { esc } from "./format.ts";
import { parentOf } from "./typeahead.ts";
import { uiUrl } from "./views.ts";

type Obj = Record<string, unknown>;

/** One object of a hop as the page shows it. */
export interface HopNode {
  name: string;
  url?: string;
  parent?: { name: string; url?: string };
}

/** One segment: near end, cable (null: the path stops here) and far end. */
export interface Hop {
  near: HopNode;
  cable: { name: string; url?: string; color?: string; detail: string } | null;
  far: HopNode | null;
}

const WIDTH = 460;
const BOX = { w: 240, h: 40 };
const CABLE = 90;

/** The parent (device, circuit…) of a nested node, found by the registry's parent field of its model. */
function nodeOf(ctx: Ctx, o: Obj): HopNode {
  const url = typeof o.url === "string" ? o.url : "";
  const m = /\/api\/([^/]+)\/([^/]+)\//.exec(url);
  const model = m ? ctx.reg.byUrl(m[1]!, m[2]!) : undefined;
  const p = model ? parentOf(ctx, model) : undefined;
  const parent = p ? (o[p.field] as Obj | null | undefined) : undefined;
  return {
    name: String(o.name ?? o.display ?? ""),
    url: uiUrl(o.url),
    ...(parent
      ? { parent: { name: String(parent.display ?? parent.name ?? ""), url: uiUrl(parent.url) } }
      : {}),
  };
}

/** The hops of `traceSegments`' `[near, cable, far]` list. */
export function hopsOf(ctx: Ctx, segments: unknown[]): Hop[] {
  return segments.map((s) => {
    const [near, cable, far] = s as [Obj, Obj | null, Obj | null];
    const color = cable && /^[0-9a-f]{6}$/i.test(String(cable.color ?? "")) ? String(cable.color) : undefined;
    const length = cable?.length ? `${cable.length} ${String(cable.length_unit ?? "")}`.trim() : "";
    const type =
      cable?.type && typeof cable.type === "object"
        ? String((cable.type as Obj).label ?? "")
        : String(cable?.type ?? "");
    return {
      near: nodeOf(ctx, near),
      cable: cable
        ? {
            name: String(cable.display ?? cable.label ?? `#${cable.id}`),
            url: uiUrl(cable.url),
            ...(color ? { color } : {}),
            detail: [type, length].filter(Boolean).join(" · "),
          }
        : null,
      far: far ? nodeOf(ctx, far) : null,
    };
  });
}

const link = (url: string | undefined, inner: string) => (url ? `<a href="${esc(url)}">${inner}</a>` : inner);

/** A labelled box centred at `y` (its top), a link when `url` is given. */
function box(y: number, text: string, url: string | undefined, cls: string): string {
  const x = (WIDTH - BOX.w) / 2;
  return link(
    url,
    `<g class="${cls}"><rect x="${x}" y="${y}" width="${BOX.w}" height="${BOX.h}" rx="4"/>` +
      `<text x="${WIDTH / 2}" y="${y + BOX.h / 2 + 5}" text-anchor="middle">${esc(text)}</text></g>`,
  );
}

/** The SVG drawing of the hops (top to bottom), with a title for screen readers. */
export function traceSvg(hops: Hop[], title: string): string {
  const parts: string[] = [];
  let y = 10;
  const node = (n: HopNode) => {
    if (n.parent) {
      parts.push(box(y, n.parent.name, n.parent.url, "parent"));
      y += BOX.h + 4;
    }
    parts.push(box(y, n.name, n.url, "port"));
    y += BOX.h;
  };
  hops.forEach((h, i) => {
    if (i) y += 24;
    node(h.near);
    if (!h.cable) return;
    const x = WIDTH / 2;
    const stroke = h.cable.color ? `#${h.cable.color}` : "#6b7280";
    parts.push(
      `<line class="cable" x1="${x}" y1="${y}" x2="${x}" y2="${y + CABLE}" stroke="${stroke}" stroke-width="6"/>`,
      link(
        h.cable.url,
        `<text class="cable-label" x="${x + 14}" y="${y + CABLE / 2}">${esc(h.cable.name)}</text>`,
      ),
      `<text class="cable-detail" x="${x + 14}" y="${y + CABLE / 2 + 18}">${esc(h.cable.detail)}</text>`,
    );
    y += CABLE;
    if (h.far) node(h.far);
  });
  const height = y + 10;
  return (
    `<svg class="trace" role="group" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg" ` +
    `viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}"><title>${esc(title)}</title>` +
    `${parts.join("")}</svg>`
  );
}
