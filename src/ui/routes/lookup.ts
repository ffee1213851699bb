/**
 * `GET /ui-api/lookup/?model=<app.model>&q=<text>&<filter>=<value>…` (issue 25): what the forms'
 * typeaheads ask, with the session (the REST API takes tokens only). Answers
 * `{results: [{id, display}], more}` (at most `LOOKUP_LIMIT`) through the service layer's list with the
 * user's object permissions; filters the model does not have are left out. 404 for an unknown model, 403
 * without view permission, 400 naming the filter for a bad filter value. `Server-Timing: app;dur=<ms>`.
 */
import { performance } from "node:perf_hooks";
import type { FastifyInstance } from "fastify";
import { NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import type { UiKit } from "../plugin.ts";
import { lookup } from "../typeahead.ts";

export async function lookupRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  app.get("/ui-api/lookup/", async (req, reply) => {
    const started = performance.now();
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
      if (typeof v === "string") query[k] = v;
    const model = kit.reg.models.get(query.model ?? "");
    if (!model) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, model, "view")) throw new PermissionDenied();
    delete query.model;
    let body: Awaited<ReturnType<typeof lookup>>;
    try {
      body = await lookup(ctx, model, query);
    } catch (e) {
      // A bad filter value (`device_id=x`): 400 with the API's `{filter: [message]}` body.
      if (e instanceof ValidationError) return reply.code(400).send(e.errors);
      throw e;
    }
    return reply
      .header("Cache-Control", "no-store")
      .header("Server-Timing", `app;dur=${(performance.now() - started).toFixed(1)}`)
      .send(body);
  });
}
