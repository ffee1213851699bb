/**
 * History pages (issue 27): an object's History (`/<app>/<model>/<id>/history/`: its versions, each viewable
 * at its point and diffable with the one before, a time picker to view the object as of any time, and a
 * diff between two points), and "Revert this request" (`/history/revert/?request_id=`: the dry run's plan
 * and conflicts, then a confirmed POST that applies it).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Model } from "../../registry/index.ts";
import { AppError, NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { resolvePoint, versioned } from "../../service/history.ts";
import { objectAt, objectDiff, objectVersions } from "../../service/history-diff.ts";
import { mayDo } from "../../service/permissions.ts";
import { revert } from "../../service/revert.ts";
import { flash } from "../flash.ts";
import { valueHtml } from "../format.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf } from "../views.ts";

export async function historyPageRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const modelOf = (req: FastifyRequest): Model => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = kit.reg.byUrl(a, model);
    if (!m || !versioned(m)) throw new NotFoundError();
    return m;
  };
  const q = (req: FastifyRequest, name: string) =>
    new URL(req.url, "http://x").searchParams.get(name) ?? undefined;

  app.get("/:app/:model/:id/history/", async (req, reply) => {
    const model = modelOf(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, model, "view")) throw new PermissionDenied();
    const base = `/${model.app}/${model.path}/${id}/`;
    const versions = await objectVersions(ctx, id);
    if (!versions.length) throw new NotFoundError();
    let diff:
      | { title: string; rows: Array<{ field: string; before: string; after: string }>; action: string }
      | undefined;
    const from = q(req, "from_seq");
    const to = q(req, "to_seq");
    if (from !== undefined || to !== undefined) {
      const a = await resolvePoint(ctx, undefined, from ?? "");
      const b = to === undefined ? versions[0]!.seq : await resolvePoint(ctx, undefined, to);
      const d = await objectDiff(ctx, model, id, Math.min(a, b), Math.max(a, b));
      diff = {
        title: `Changes from ${Math.min(a, b)} to ${Math.max(a, b)}`,
        action: d.action,
        rows: Object.entries(d.changes).map(([field, [x, y]]) => ({
          field: titleOf(field.replace(/_/g, " ")),
          before: valueHtml(x, field),
          after: valueHtml(y, field),
        })),
      };
    }
    if (!versions.some((v) => v.action !== "deleted")) throw new NotFoundError();
    const title = await displayAt(kit, req, model, id, versions);
    return kit.page(req, reply, "history", {
      title: `${title}: history`,
      objectUrl: base,
      listUrl: `/${model.app}/${model.path}/`,
      plural: titleOf(model.plural ?? `${model.verbose}s`),
      diff,
      versions: versions.map((v, i) => ({
        ...v,
        viewUrl: v.action === "deleted" ? undefined : `${base}?as_of_seq=${v.seq}`,
        diffUrl: versions[i + 1]
          ? `${base}history/?from_seq=${versions[i + 1]!.seq}&to_seq=${v.seq}`
          : undefined,
        revertUrl: v.requestId
          ? `/history/revert/?request_id=${encodeURIComponent(v.requestId)}&next=${encodeURIComponent(`${base}history/`)}`
          : undefined,
      })),
    });
  });

  /** The dry run of reverting a request, and the confirm button. */
  app.get("/history/revert/", async (req, reply) => {
    const requestId = q(req, "request_id");
    if (!requestId) throw new AppError(400, "request_id is required.");
    const ctx = await kit.ctxFor(req);
    const result = await revert(ctx, { requestId }, true);
    return kit.page(req, reply, "revert", {
      title: "Revert this request",
      requestId,
      next: safeNext(q(req, "next")),
      plan: result.plan.map((p) => ({ ...p, type: p.object_type })),
      conflicts: result.conflicts.map((c) => ({
        ...c,
        detail: c.detail === undefined ? "" : JSON.stringify(c.detail),
      })),
    });
  });

  app.post("/history/revert/", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, string>;
    const requestId = body.request_id;
    if (!requestId) throw new AppError(400, "request_id is required.");
    const ctx = await kit.ctxFor(req);
    const result = await revert(ctx, { requestId }, false);
    const next = safeNext(body.next) ?? "/";
    if (result.conflicts.length) {
      flash(
        req,
        "danger",
        `Not reverted: ${result.conflicts.length} conflict${result.conflicts.length === 1 ? "" : "s"}.`,
      );
      return reply.redirect(
        `/history/revert/?request_id=${encodeURIComponent(requestId)}&next=${encodeURIComponent(next)}`,
        303,
      );
    }
    flash(
      req,
      "success",
      `Reverted the request: ${result.plan.length} change${result.plan.length === 1 ? "" : "s"}.`,
    );
    return reply.redirect(next, 303);
  });
}

/** A local path to return to, or undefined (never another site). */
function safeNext(next: string | undefined): string | undefined {
  return next?.startsWith("/") && !next.startsWith("//") ? next : undefined;
}

/** The object's display at its newest version that is not a deletion. */
async function displayAt(
  kit: UiKit,
  req: FastifyRequest,
  model: Model,
  id: string,
  versions: Array<{ seq: number; action: string }>,
): Promise<string> {
  const v = versions.find((x) => x.action !== "deleted")!;
  const ctx = await kit.ctxFor(req);
  const o = await objectAt(ctx, model, id, v.seq);
  // Read under the user's view restriction: an object outside it has no history page for them.
  if (!o) throw new NotFoundError();
  return typeof o.display === "string" ? o.display : id;
}
