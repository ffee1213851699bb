/**
 * `GET /api/dcim/racks/<id>/elevation/` (Nautobot 1.6 `RackViewSet.elevation`): the units of one face
 * (`face=front|rear`, default front) as a paginated list of `{id, name, face, device, occupied}`, or with
 * `render=svg` the drawing (`unit_width`, `unit_height` in pixels).
 */
import type { FastifyInstance } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { elevationSvg, rackUnits } from "../../service/elevation.ts";
import { NotFoundError, ValidationError } from "../../service/errors.ts";
import { getRow } from "../../service/read.ts";
import { type HttpKit, intParam, queryParams } from "../kit.ts";

export async function elevationRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  app.get("/api/dcim/racks/:id/elevation/", async (req, reply) => {
    const model = kit.reg.get("dcim.rack");
    kit.need(req, model, "view");
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = kit.ctxFor(req);
    const rack = await getRow(ctx, model, id);
    const q = queryParams(req.url, req);
    const face = q.get("face")?.[0] ?? "front";
    if (face !== "front" && face !== "rear")
      throw new ValidationError({ face: [`"${face}" is not a valid choice.`] });
    const render = q.get("render")?.[0] ?? "json";
    if (render !== "json" && render !== "svg")
      throw new ValidationError({ render: [`"${render}" is not a valid choice.`] });
    const units = await rackUnits(ctx, rack, face);
    if (render === "svg") {
      const unitWidth = intParam(q.get("unit_width")?.[0]);
      const unitHeight = intParam(q.get("unit_height")?.[0]);
      const svg = elevationSvg(units, {
        ...(unitWidth && unitWidth > 0 && unitWidth <= 2000 ? { unitWidth } : {}),
        ...(unitHeight && unitHeight > 0 && unitHeight <= 200 ? { unitHeight } : {}),
      });
      return reply.header("Content-Type", "image/svg+xml").send(svg);
    }
    const limit = kit.pageLimit(req);
    const offset = kit.pageOffset(req);
    return kit.send(
      req,
      reply,
      200,
      kit.pageBody(req, ctx, {
        count: units.length,
        limit,
        offset,
        results: units.slice(offset, offset + limit),
      }),
    );
  });
}
