/**
 * Generated stylesheet of the web UI: status badges in each status's own colour, as Nautobot shows them
 * (the status's `color` as background, black or white text, whichever contrasts more). The statuses are
 * data, so the sheet is built from the `extras_status` rows through the service layer.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { statusesById } from "../../service/rows.ts";
import type { UiKit } from "../plugin.ts";

/**
 * Black or white text for a badge of background `hex` (6 hex digits, no `#`): whichever contrasts more
 * by WCAG 2.1's contrast ratio (relative luminance, sRGB linearised), so a badge always reaches 4.5:1
 * (issue 25, axe-core's color-contrast rule). Nautobot's `utils.foreground_color` thresholds the plain
 * weighted sum at 186 instead and puts white on its mid greens and ambers (about 2.8:1 on `4caf50`).
 */
export function foregroundColor(hex: string): string {
  const lin = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * lin(0) + 0.7152 * lin(2) + 0.0722 * lin(4);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "000000" : "ffffff";
}

/**
 * Browser libraries served from their npm packages (no CDN, no build step): URL path → file resolved from
 * the package and its content type. tom-select: the typeahead selects of the forms (issue 25).
 */
const VENDOR: Record<string, { file: string; type: string }> = {
  "tom-select.js": {
    file: "tom-select/dist/js/tom-select.complete.min.js",
    type: "text/javascript; charset=utf-8",
  },
  "tom-select.css": { file: "tom-select/dist/css/tom-select.min.css", type: "text/css; charset=utf-8" },
};

export async function assetRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const vendor = new Map<string, Buffer>();
  for (const [name, v] of Object.entries(VENDOR))
    vendor.set(name, await readFile(fileURLToPath(import.meta.resolve(v.file))));
  app.get("/ui/vendor/:name", async (req, reply) => {
    const name = (req.params as { name: string }).name;
    const body = vendor.get(name);
    if (!body) return reply.code(404).send("Not found");
    return reply
      .header("Content-Type", VENDOR[name]!.type)
      .header("Cache-Control", "private, max-age=3600")
      .send(body);
  });
  app.get("/ui/status-colors.css", async (req, reply) => {
    const ctx = await kit.ctxFor(req);
    const rules: string[] = [];
    for (const s of (await statusesById(ctx)).values()) {
      const slug = String(s.slug ?? "");
      const color = String(s.color ?? "").toLowerCase();
      // Only safe class names and hex colours reach the sheet.
      if (!/^[a-z0-9_-]+$/.test(slug) || !/^[0-9a-f]{6}$/.test(color)) continue;
      rules.push(`.badge.status.${slug}{background:#${color};color:#${foregroundColor(color)}}`);
    }
    return reply
      .header("Content-Type", "text/css; charset=utf-8")
      .header("Cache-Control", "private, max-age=60")
      .send(`${rules.join("\n")}\n`);
  });
}
