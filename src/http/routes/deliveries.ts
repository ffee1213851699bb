/**
 * Webhook deliveries retried by hand (issue 4): one delivery, or every failed delivery of a webhook.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { retryDeliveries } from "../../service/outbox.ts";
import { mayDo } from "../../service/permissions.ts";
import { inTransaction } from "../../service/write.ts";
import type { HttpKit } from "../kit.ts";

/** `POST …/webhook-deliveries/<id>/retry/` and `POST …/webhooks/<id>/retry-failed/`. */
export async function deliveryRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  /** Retrying is changing a webhook's deliveries: it needs `change` on webhooks (403 otherwise). */
  const needWebhookChange = (req: FastifyRequest) => {
    if (req.auth.actor && !mayDo(req.grants, kit.reg.get("extras.webhook"), "change"))
      throw new PermissionDenied();
  };
  app.post("/api/extras/webhook-deliveries/:id/retry/", async (req, reply) => {
    needWebhookChange(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = kit.ctxFor(req);
    await inTransaction(ctx, (t) => retryDeliveries(t, { deliveryId: id }));
    const [obj] = await kit.renderIds(ctx, kit.reg.get("extras.webhookdelivery"), [id]);
    return kit.send(req, reply, 200, obj);
  });
  app.post("/api/extras/webhooks/:id/retry-failed/", async (req, reply) => {
    needWebhookChange(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = kit.ctxFor(req);
    const retried = await inTransaction(ctx, (t) => retryDeliveries(t, { webhookId: id }));
    return kit.send(req, reply, 200, { retried });
  });
}
