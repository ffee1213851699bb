/**
 * History endpoints (issue 27; extensions, no Nautobot path):
 *
 * - `GET /api/history/diff/?object_type=&object_id=&from_seq=|from=&to_seq=|to=`: one object between two
 *   points (`to` defaults to now), field by field;
 * - `GET /api/history/changes/?[object_type=][&request_id=]&from_seq=…&to_seq=…&limit=&offset=`: every
 *   object that changed between two points (or in one request), as diffs, paged;
 * - `POST /api/history/revert/`: `{"request_id": …}`, `{"changes": [ObjectChange ids]}` or
 *   `{"object_type": …, "object_id": …, "as_of_seq"|"as_of": …}`, with `"dry_run"` (default true: the plan
 *   and its conflicts, nothing written). Applied (`"dry_run": false`) only without conflicts: 200 with the
 *   plan, else 409 with the conflicts and nothing changed.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError } from "../../service/errors.ts";
import { resolvePoint } from "../../service/history.ts";
import { changesBetween, objectDiff } from "../../service/history-diff.ts";
import { mayDo } from "../../service/permissions.ts";
import { type RevertTarget, revert } from "../../service/revert.ts";
import { analyzeHistory, pruneHistory } from "../../store/history-maintenance.ts";
import { type HttpKit, intParam, queryParams } from "../kit.ts";

/** Most diffs per page of `changes/`. */
const MAX_CHANGES_PAGE = 200;

export async function historyRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  const config = { loginRequired: true };
  const one = (req: FastifyRequest, name: string) => queryParams(req.url, req).get(name)?.[0];
  const modelNamed = (
    req: FastifyRequest,
    type: string | undefined,
    required: boolean,
  ): Model | undefined => {
    if (type === undefined) {
      if (required) throw new AppError(400, "object_type: this field is required.");
      return undefined;
    }
    const m = kit.regFor(req).models.get(type);
    if (!m) throw new AppError(400, `object_type: unknown content type "${type}".`);
    kit.need(req, m, "view");
    return m;
  };
  /** A point from `<name>_seq` or `<name>` (a time); `fallback` when neither is given. */
  const pointOf = async (ctx: Ctx, req: FastifyRequest, name: string, fallback?: number) => {
    const seq = one(req, `${name}_seq`);
    const time = one(req, name);
    if (seq === undefined && time === undefined) {
      if (fallback !== undefined) return fallback;
      throw new AppError(400, `${name}_seq or ${name}: a point is required.`);
    }
    try {
      return await resolvePoint(ctx, time, seq);
    } catch (e) {
      if (e instanceof AppError)
        throw new AppError(400, e.message.replace(/^as_of(_seq)?/, name + (seq ? "_seq" : "")));
      throw e;
    }
  };
  const latest = async (ctx: Ctx) => resolvePoint(ctx, new Date().toISOString(), undefined);

  app.get("/api/history/diff/", { config }, async (req, reply) => {
    const ctx = kit.ctxFor(req);
    const model = modelNamed(req, one(req, "object_type"), true)!;
    const id = one(req, "object_id");
    if (!id) throw new AppError(400, "object_id: this field is required.");
    const to = await pointOf(ctx, req, "to", await latest(ctx));
    const from = await pointOf(ctx, req, "from");
    if (from > to) throw new AppError(400, "from is after to.");
    return kit.send(req, reply, 200, await objectDiff(ctx, model, id, from, to));
  });

  app.get("/api/history/changes/", { config }, async (req, reply) => {
    const ctx = kit.ctxFor(req);
    const type = modelNamed(req, one(req, "object_type"), false);
    const requestId = one(req, "request_id");
    const limit = Math.min(Math.max(intParam(one(req, "limit")) ?? 50, 1), MAX_CHANGES_PAGE);
    const offset = Math.max(intParam(one(req, "offset")) ?? 0, 0);
    const points =
      requestId !== undefined
        ? {}
        : { from: await pointOf(ctx, req, "from"), to: await pointOf(ctx, req, "to", await latest(ctx)) };
    const page = await changesBetween(
      ctx,
      {
        ...(type ? { type } : {}),
        ...(requestId !== undefined ? { requestId } : {}),
        ...points,
        limit,
        offset,
      },
      (m) => !req.auth.actor || mayDo(req.grants, m, "view"),
    );
    const url = (o: number) => {
      const p = new URLSearchParams();
      for (const [k, vs] of queryParams(req.url, req))
        if (k !== "offset" && k !== "limit") for (const v of vs) p.append(k, v);
      p.set("limit", String(limit));
      p.set("offset", String(o));
      return `${ctx.baseUrl}/api/history/changes/?${p.toString()}`;
    };
    return kit.send(req, reply, 200, {
      ...page,
      next: offset + limit < page.count ? url(offset + limit) : null,
      previous: offset > 0 ? url(Math.max(0, offset - limit)) : null,
    });
  });

  app.post("/api/history/revert/", { config }, async (req, reply) => {
    const ctx = kit.ctxFor(req);
    if (!req.auth.writeEnabled) throw new AppError(403, "This token is read-only.");
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body !== "object" || Array.isArray(body))
      throw new AppError(400, "A JSON object is required.");
    const dryRun = body.dry_run === undefined ? true : body.dry_run;
    if (typeof dryRun !== "boolean") throw new AppError(400, "dry_run: a boolean is required.");
    let target: RevertTarget;
    if (typeof body.request_id === "string") target = { requestId: body.request_id };
    else if (
      Array.isArray(body.changes) &&
      body.changes.every((c) => typeof c === "string") &&
      body.changes.length
    )
      target = { changeIds: body.changes as string[] };
    else if (typeof body.object_type === "string" && typeof body.object_id === "string") {
      const m = modelNamed(req, body.object_type, true)!;
      const asOf = typeof body.as_of === "string" ? body.as_of : undefined;
      const asOfSeq = body.as_of_seq === undefined ? undefined : String(body.as_of_seq);
      if (asOf === undefined && asOfSeq === undefined)
        throw new AppError(400, "as_of_seq or as_of: a point is required.");
      target = { object: { type: m.key, id: body.object_id }, point: await resolvePoint(ctx, asOf, asOfSeq) };
    } else
      throw new AppError(
        400,
        "Give request_id, changes (a list of change ids) or object_type, object_id and as_of_seq.",
      );
    const result = await revert(ctx, target, dryRun);
    return kit.send(req, reply, !dryRun && result.conflicts.length ? 409 : 200, result);
  });

  const cfg = kit.config.changeFeed;
  // Statistics of the history tables (PostgreSQL; store/history-maintenance.ts `analyzeHistory`), at the
  // retention purge's interval.
  {
    let closing = false;
    let timer: NodeJS.Timeout | undefined;
    const run = async () => {
      try {
        await analyzeHistory(kit.store, kit.reg);
      } catch (e) {
        app.log.warn({ err: e }, "history statistics: ANALYZE failed");
      }
      if (!closing) {
        timer = setTimeout(run, cfg.purgeIntervalMs);
        timer.unref();
      }
    };
    timer = setTimeout(run, Math.min(cfg.purgeIntervalMs, 5000));
    timer.unref();
    app.addHook("onClose", async () => {
      closing = true;
      if (timer) clearTimeout(timer);
    });
  }
  // Retention: each API process prunes history older than INVENTORY_HISTORY_RETENTION_DAYS.
  if (cfg.historyRetentionDays > 0) {
    let closing = false;
    let timer: NodeJS.Timeout | undefined;
    const ctx = kit.systemCtx();
    const run = async () => {
      try {
        const cutoff = new Date(Date.now() - cfg.historyRetentionDays * 86_400_000).toISOString();
        const point = await resolvePoint(ctx, cutoff, undefined).catch(() => undefined);
        if (point !== undefined) await pruneHistory(kit.store, kit.reg, point);
      } catch (e) {
        app.log.warn({ err: e }, "history retention: prune failed");
      }
      if (!closing) {
        timer = setTimeout(run, cfg.purgeIntervalMs);
        timer.unref();
      }
    };
    timer = setTimeout(run, Math.min(cfg.purgeIntervalMs, 1000));
    timer.unref();
    app.addHook("onClose", async () => {
      closing = true;
      if (timer) clearTimeout(timer);
    });
  }
}
