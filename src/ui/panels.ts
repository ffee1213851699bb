/**
 * Extra panels of detail pages, declared per model (issue 10): a rack's front and rear elevations, drawn
 * inline as SVG (service/elevation.ts) with each device linking to its page.
 */
import type { Ctx } from "../service/context.ts";
import { elevationSvg, rackUnits } from "../service/elevation.ts";
import type { Row } from "../service/rows.ts";
import { uiUrl } from "./views.ts";

/** A panel: a title and trusted HTML (built from escaped parts). */
export interface Panel {
  title: string;
  html: string;
}

export const PANELS: Record<string, (ctx: Ctx, row: Row) => Promise<Panel[]>> = {
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
