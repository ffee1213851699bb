/**
 * `GET /<app>/<model>/<id>/trace/` (issue 25): the cable trace page of every path endpoint (the models with
 * a `connected_endpoint`: interfaces, console/power ports and outlets, circuit terminations, power feeds),
 * from the service layer's `traceSegments` with the user's view permission (404 for another model or an
 * object the user may not see).
 */
import type { FastifyInstance } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { isPathEndpoint, traceSegments } from "../../service/cable-paths.ts";
import { NotFoundError } from "../../service/errors.ts";
import { represent } from "../../service/represent.ts";
import { rowFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";
import { hopsOf, traceSvg } from "../trace.ts";
import { titleOf } from "../views.ts";

export async function traceRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  app.get("/:app/:model/:id/trace/", async (req, reply) => {
    const { app: a, model: path, id: raw } = req.params as { app: string; model: string; id: string };
    const model = kit.reg.byUrl(a, path);
    const id = normalizeUuid(raw);
    if (!model || !id || !isPathEndpoint(model)) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    const row = await rowFor(ctx, model, id, "view");
    const [obj] = await represent(ctx, model, [row], "nested");
    const hops = hopsOf(ctx, await traceSegments(ctx, model, id));
    const title = `Cable trace for ${titleOf(model.verbose)} ${String(obj?.display ?? id)}`;
    return kit.page(req, reply, "trace", {
      title,
      objectUrl: `/${model.app}/${model.path}/${id}/`,
      display: String(obj?.display ?? id),
      hops,
      svg: hops.length ? traceSvg(hops, title) : "",
    });
  });
}
