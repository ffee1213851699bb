/**
 * Object actions of the web interface, declared as data per model and drawn as buttons on detail pages
 * (issue 10): a webhook's "Send test", "Retry failed deliveries" and "Enable"/"Disable"; a delivery's
 * "Retry now". Each is a CSRF-protected POST to `/<app>/<model>/<id>/<action>/` that needs `change` on
 * that webhook (the delivery's webhook), as the API's retry actions do (`guard.ts`: 403, or 404 for what
 * the user may not see).
 */
import type { FastifyInstance } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { retryDeliveries } from "../../service/outbox.ts";
import { mayDo } from "../../service/permissions.ts";
import { inTransaction, updateObject } from "../../service/write.ts";
import { sendTest } from "../../webhooks/test-send.ts";
import type { WorkerSettings } from "../../webhooks/worker.ts";
import { flash } from "../flash.ts";
import { rowFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";

/** The actions of a model: URL segment and button label. `label` may depend on the row. */
export const ACTIONS: Record<
  string,
  Array<{ name: string; label: (row: Record<string, unknown>) => string }>
> = {
  "extras.webhook": [
    { name: "test", label: () => "Send test" },
    { name: "retry-failed", label: () => "Retry failed deliveries" },
    { name: "toggle", label: (r) => (r.enabled ? "Disable" : "Enable") },
  ],
  "extras.webhookdelivery": [
    { name: "retry", label: (r) => (r.state === "succeeded" ? "Deliver again" : "Retry now") },
  ],
};

export async function actionRoutes(
  app: FastifyInstance,
  { kit, webhookSettings }: { kit: UiKit; webhookSettings: WorkerSettings },
): Promise<void> {
  app.post("/:app/:model/:id/:action/", async (req, reply) => {
    const { app: a, model: path, id: rawId, action } = req.params as Record<string, string>;
    const model = kit.reg.byUrl(a!, path!);
    const id = normalizeUuid(rawId ?? "");
    if (!model || !id || !ACTIONS[model.key]?.some((x) => x.name === action)) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    // Every action changes a webhook (or its deliveries): `change` on that very webhook, as the API's retry
    // actions (issue 23); a delivery first needs to be visible (its webhook too, `viewThrough`).
    const hooks = kit.reg.get("extras.webhook");
    if (!mayDo(ctx.grants, hooks, "change")) throw new PermissionDenied();
    const row = await rowFor(ctx, model, id, model.key === "extras.webhook" ? "change" : "view");
    if (model.key !== "extras.webhook") await rowFor(ctx, hooks, String(row.webhook_id), "change");
    const back = `/${model.app}/${model.path}/${id}/`;
    if (model.key === "extras.webhookdelivery") {
      const n = await inTransaction(ctx, (t) => retryDeliveries(t, { deliveryId: id }));
      flash(req, "success", `Delivery queued again${retried(n)}.`);
      return reply.redirect(back, 302);
    }
    if (action === "retry-failed") {
      const n = await inTransaction(ctx, (t) => retryDeliveries(t, { webhookId: id }));
      flash(req, "success", `Failed deliveries of ${String(row.name)} queued again${retried(n)}.`);
      return reply.redirect(`/extras/webhook-deliveries/?webhook_id=${id}`, 302);
    }
    if (action === "toggle") {
      await inTransaction(ctx, (t) => updateObject(t, model, id, { enabled: !row.enabled }, true));
      flash(req, "success", `${row.enabled ? "Disabled" : "Enabled"} webhook ${String(row.name)}.`);
      return reply.redirect(back, 302);
    }
    const out = await sendTest(kit.store, id, webhookSettings);
    if (!out) throw new NotFoundError();
    // Shown on this very page (the result is drawn now, not after a redirect).
    flash(
      req,
      out.error === null ? "success" : "danger",
      out.error === null
        ? `Test event sent to ${String(row.name)}.`
        : `Test event to ${String(row.name)} failed: ${out.error}`,
    );
    return kit.page(req, reply, "test-result", {
      title: `Test of ${String(row.name)}`,
      back,
      ok: out.error === null,
      outcome: out,
      // One `Name: Value` per line (escaped by the template).
      requestHeaders: headerLines(out.request.headers),
      responseHeaders: headerLines(out.responseHeaders),
    });
  });
}

/** Headers as text, one `Name: Value` per line. */
const headerLines = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");

/** " (n deliveries)" when the retry function reports a count, else nothing. */
const retried = (n: unknown) =>
  typeof n === "number" ? ` (${n} ${n === 1 ? "delivery" : "deliveries"})` : "";
