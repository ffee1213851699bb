/**
 * Rack elevations (Nautobot 1.6 `RackViewSet.elevation`, `Rack.get_rack_units`): the units of one face of a
 * rack, top to bottom (bottom to top with `desc_units`), each with the device occupying it, and the same as
 * an SVG drawing. A device occupies `position … position + u_height - 1` on its face, and on both faces when
 * its type is full depth. Devices are loaded in one query, their nested forms in one more.
 */
import type { Ctx } from "./context.ts";
import { nestedFor } from "./represent.ts";
import type { Row } from "./rows.ts";

/** One unit of an elevation, as Nautobot's `RackUnitSerializer`. */
export interface RackUnit {
  id: number;
  name: string;
  face: { value: string; label: string };
  device: Record<string, unknown> | null;
  occupied: boolean;
}

const FACES: Record<string, string> = { front: "Front", rear: "Rear" };

/** The units of `face` of a rack row. @throws nothing; an unknown face is the caller's 400. */
export async function rackUnits(ctx: Ctx, rack: Row, face: "front" | "rear"): Promise<RackUnit[]> {
  const devices = await ctx.db
    .selectFrom("dcim_device as d")
    .innerJoin("dcim_devicetype as dt", "dt.id", "d.device_type_id")
    .select(["d.id", "d.position", "d.face", "dt.u_height", "dt.is_full_depth"])
    .where("d.rack_id", "=", String(rack.id))
    .where("d.position", "is not", null)
    .execute();
  const byUnit = new Map<number, string>();
  for (const d of devices) {
    const height = Number(d.u_height ?? 1);
    if (height < 1) continue;
    if (d.face !== face && !d.is_full_depth) continue;
    for (let u = Number(d.position); u < Number(d.position) + height; u++) byUnit.set(u, String(d.id));
  }
  const nested = await nestedFor(ctx, ctx.reg.get("dcim.device"), [...new Set(byUnit.values())]);
  const height = Number(rack.u_height ?? 42);
  const order = Array.from({ length: height }, (_, i) => (rack.desc_units ? i + 1 : height - i));
  return order.map((u) => {
    const dev = byUnit.get(u);
    return {
      id: u,
      name: `U${u}`,
      face: { value: face, label: FACES[face]! },
      device: dev ? (nested.get(dev) ?? null) : null,
      occupied: !!dev,
    };
  });
}

const xml = (s: unknown) =>
  String(s ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

/**
 * The elevation as SVG: unit labels on the left, one slot per unit, a device as one block over its units
 * with its name (linked to `link(device)` when given). Sizes in pixels (Nautobot's defaults: 230 × 22).
 * Named by `label` (aria-label, default "Rack elevation"): an image, or a group when it holds links (an
 * image's content is presentational, so links inside one are unreachable: axe-core's nested-interactive).
 */
export function elevationSvg(
  units: RackUnit[],
  opts: {
    unitWidth?: number;
    unitHeight?: number;
    link?: (device: Record<string, unknown>) => string | undefined;
    label?: string;
  } = {},
): string {
  const w = opts.unitWidth ?? 230;
  const h = opts.unitHeight ?? 22;
  const legend = 30;
  const height = units.length * h + 4;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${w + legend + 4}" height="${height}" viewBox="0 0 ${w + legend + 4} ${height}" role="${opts.link ? "group" : "img"}" aria-label="${xml(opts.label ?? "Rack elevation")}">`,
    "<style>text{font:11px sans-serif;dominant-baseline:middle}.u{fill:#7b8794;text-anchor:end}.slot{fill:#f5f7fa;stroke:#cbd2d9}.dev{fill:#9fb3c8;stroke:#243b53}.name{fill:#102a43;text-anchor:middle}</style>",
    `<rect x="${legend}" y="1" width="${w + 2}" height="${units.length * h + 2}" fill="none" stroke="#102a43" stroke-width="2"/>`,
  ];
  units.forEach((u, i) => {
    const y = 2 + i * h;
    parts.push(`<text class="u" x="${legend - 4}" y="${y + h / 2}">${u.id}</text>`);
    if (!u.occupied) parts.push(`<rect class="slot" x="${legend + 1}" y="${y}" width="${w}" height="${h}"/>`);
  });
  // One block per run of units held by the same device.
  for (let i = 0; i < units.length; ) {
    const dev = units[i]!.device;
    let j = i + 1;
    while (dev && j < units.length && units[j]!.device?.id === dev.id) j++;
    if (dev) {
      const y = 2 + i * h;
      const block = `<rect class="dev" x="${legend + 1}" y="${y}" width="${w}" height="${(j - i) * h}"/><text class="name" x="${legend + 1 + w / 2}" y="${y + ((j - i) * h) / 2}">${xml(dev.display)}</text>`;
      const href = opts.link?.(dev);
      parts.push(href ? `<a href="${xml(href)}" xlink:href="${xml(href)}">${block}</a>` : block);
    }
    i = j;
  }
  parts.push("</svg>");
  return parts.join("");
}
