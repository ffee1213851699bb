/**
 * `POST /api/<app>/<model>/upsert/` on every model's list endpoint (issue 28; an extension, no Nautobot
 * path): one object or a list, each matched by natural key and created, updated or left alone
 * (service/upsert.ts), all in one transaction. The answer is a list of `{result, object}` in the order of
 * the items, `result` being `created`, `updated` or `unchanged` and `object` the full representation.
 */
import type { FastifyInstance } from "fastify";
import { NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import { upsertObjects } from "../../service/upsert.ts";
import { inTransaction } from "../../service/write.ts";
import type { HttpKit } from "../kit.ts";
import { nonAtomic, sendPartial } from "./bulk-partial.ts";
import { checkBulkSize } from "./models.ts";

/** The upsert action of every model (read-only models answer 405, those without a natural key 400). */
export async function upsertRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  app.post("/api/:app/:model/upsert/", async (req, reply) => {
    const { app: a, model: name } = req.params as { app: string; model: string };
    const model = kit.regFor(req).byUrl(a, name);
    if (!model) throw new NotFoundError();
    // Either right lets the request in; each item needs its own (service/upsert.ts).
    if (!req.auth.actor) kit.need(req, model, "add");
    else if (!mayDo(req.grants, model, "add") && !mayDo(req.grants, model, "change"))
      throw new PermissionDenied();
    if (nonAtomic(req)) return sendPartial(kit, req, reply, model, "UPSERT");
    const items = Array.isArray(req.body) ? req.body : [req.body];
    checkBulkSize(items, kit.config.maxBulk);
    const ctx = kit.ctxFor(req);
    const answer = await inTransaction(ctx, async (t) => {
      const outcomes = await upsertObjects(t, model, items);
      const objs = await kit.renderIds(
        t,
        model,
        outcomes.map((o) => o.id),
      );
      return outcomes.map((o, i) => ({ result: o.result, object: objs[i] }));
    });
    return kit.send(req, reply, 200, answer);
  });
}
