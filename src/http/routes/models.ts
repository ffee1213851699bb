/**
 * The generic list and detail endpoints of every registered model (no per-model handlers): paginated,
 * filtered lists; single, bulk and nested creates; PUT/PATCH/DELETE of one object or a list (Nautobot 1.6
 * bulk operations); OPTIONS. Behaviour follows the seed (Endpoints, Errors, Limits) and Nautobot 1.6 at
 * API version 1.2 (nautobot-api-core.md).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid, RESERVED_PARAMS } from "../../query/filters.ts";
import type { Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError, NotFoundError, ValidationError } from "../../service/errors.ts";
import { historyRange, versioned } from "../../service/history.ts";
import { checkIfMatch, checkItemVersions, itemVersions, VERSION_KEY } from "../../service/object-versions.ts";
import { mayDo, restriction } from "../../service/permissions.ts";
import {
  boundedFilters,
  getRow,
  listRows,
  listRowsWhereIn,
  listVersions,
  plainLookup,
} from "../../service/read.ts";
import { detailUrl, represent } from "../../service/represent.ts";
import {
  createMany,
  createObject,
  deleteObjects,
  inTransaction,
  lockForUpdate,
  snapshots,
  updateObject,
} from "../../service/write.ts";
import { pinnedRead } from "../as-of.ts";
import { hasIfNoneMatch, ifMatchTags, objectNotModified, pageNotModified } from "../conditional.ts";
import { type HttpKit, includeParam, intParam, METHOD_ACTION, queryParams, withTokenKey } from "../kit.ts";
import { optionsFor } from "../options.ts";
import { nonAtomic, sendPartial } from "./bulk-partial.ts";

/** Routes of `/api/<app>/<model>/` and `/api/<app>/<model>/<id>/`. */
export async function modelRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  const { config } = kit;
  const modelOf = (req: FastifyRequest): Model => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = kit.regFor(req).byUrl(a, model);
    if (!m) throw new NotFoundError();
    return m;
  };

  const listParams = (req: FastifyRequest, model: Model) => {
    const ignore = new Set(RESERVED_PARAMS);
    if (model.configContext) ignore.add("exclude");
    return { params: boundedFilters(queryParams(req.url, req), ignore), ignore };
  };

  const ownerOf = (req: FastifyRequest, model: Model): [string, string] | undefined =>
    model.key === "users.token" ? ["user_id", req.auth.actor?.id ?? "__anonymous__"] : undefined;

  const renderOpts = (req: FastifyRequest, model: Model) => {
    const ex = queryParams(req.url, req).get("exclude") ?? [];
    return {
      excludeConfigContext: !!model.configContext && ex.some((v) => v.includes("config_context")),
      // Opt-in keys are pruned on GET only (Nautobot 1.6 `OptInFieldsMixin`).
      include: includeParam(req),
    };
  };

  /** The `Allow` header: the methods this user may actually use on the endpoint. */
  const allowFor = (req: FastifyRequest, model: Model, methods: string): string =>
    methods
      .split(", ")
      .filter((m) => {
        const a = METHOD_ACTION[m];
        if (!a) return true;
        if (a !== "view" && (model.readOnly || (req.auth.actor && !req.auth.writeEnabled))) return false;
        return !req.auth.actor || mayDo(req.grants, model, a);
      })
      .join(", ");

  const grantsOf = (req: FastifyRequest, model: Model) => ({
    post: mayDo(req.grants, model, "add"),
    put: mayDo(req.grants, model, "change"),
  });

  const LIST_ALLOW = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";
  const DETAIL_ALLOW = "GET, PUT, PATCH, DELETE, HEAD, OPTIONS";
  const RO_ALLOW = "GET, HEAD, OPTIONS";

  // Lists and details read history at `as_of`/`as_of_seq` (http/as-of.ts) for versioned models.
  const historyRoute = { config: { asOf: true } };
  const historyOf = (req: FastifyRequest, model: Model) => {
    if (req.asOfSeq !== undefined && !versioned(model))
      throw new AppError(400, `as_of: ${model.key} keeps no history.`);
  };

  app.all("/api/:app/:model/", historyRoute, async (req, reply) => {
    const model = modelOf(req);
    historyOf(req, model);
    reply.header("Allow", allowFor(req, model, model.readOnly ? RO_ALLOW : LIST_ALLOW));
    const ctx = kit.ctxFor(req);
    const method = req.method;
    kit.needForMethod(req, model);
    if (method === "GET" || method === "HEAD") {
      const { params, ignore } = listParams(req, model);
      const limit = kit.pageLimit(req);
      const offsetRaw = intParam(params.get("offset")?.[0]);
      const offset = offsetRaw !== undefined && offsetRaw > 0 ? offsetRaw : 0;
      const listP = {
        params,
        ignore,
        limit,
        offset,
        ...(ownerOf(req, model) ? { ownerColumn: ownerOf(req, model)! } : {}),
      };
      // Revalidation (If-None-Match): the page's ids and versions only, nothing loaded or rendered on a hit.
      if (
        hasIfNoneMatch(req) &&
        pageNotModified(req, reply, ctx.baseUrl, await listVersions(ctx, model, listP))
      )
        return reply;
      const pageOf = async (c: Ctx) => {
        const { count, rows } = await listRows(c, model, listP);
        return { c, count, rows };
      };
      const { page, point } = await pinnedRead(req, {
        latest: async () => (await historyRange(ctx)).latest,
        tokenNow: async () => (await kit.store.freshTokens()).data,
        live: () => pageOf(ctx),
        atPoint: (p) => pageOf(kit.ctxAt(req, p)),
        paged: ({ count }) =>
          versioned(model) &&
          !!kit.store.asOf &&
          limit !== undefined &&
          (offset > 0 || offset + limit < count),
      });
      const { count, rows } = page;
      if (pageNotModified(req, reply, ctx.baseUrl, { count, rows })) return reply;
      const results = await kit.visible(
        page.c,
        model,
        await represent(page.c, model, rows, kit.isBrief(req) ? "nested" : "full", renderOpts(req, model)),
      );
      const pageUrl = (newOffset: number | undefined) => {
        const p = new URLSearchParams();
        const entries: Array<[string, string]> = [];
        for (const [k, vs] of params)
          if (k !== "limit" && k !== "offset" && k !== "as_of" && k !== "as_of_seq")
            for (const v of vs) entries.push([k, v]);
        // A walk through a list stays at its first page's point (issue 27).
        const at = req.asOfSeq ?? point;
        if (at !== undefined) entries.push(["as_of_seq", String(at)]);
        if (limit !== undefined) entries.push(["limit", String(limit)]);
        if (newOffset !== undefined) entries.push(["offset", String(newOffset)]);
        entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        for (const [k, v] of entries) p.append(k, v);
        return `${ctx.baseUrl}${req.url.split("?")[0]}?${p.toString()}`;
      };
      const next = limit !== undefined && offset + limit < count ? pageUrl(offset + limit) : null;
      let previous: string | null = null;
      if (limit !== undefined && offset > 0)
        previous = pageUrl(offset - limit > 0 ? offset - limit : undefined);
      return kit.send(req, reply, 200, {
        count,
        next,
        previous,
        results: results.map((o) => withTokenKey(ctx, model, o)),
      });
    }
    if (method === "OPTIONS")
      return kit.send(req, reply, 200, await optionsFor(ctx, model, "list", req.auth, grantsOf(req, model)));
    if (model.readOnly) throw new AppError(405, `Method "${method}" not allowed.`);
    // `?atomic=false` (issue 28, an extension): each item on its own, per-item results (routes/bulk-partial.ts).
    if (
      (method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE") &&
      nonAtomic(req)
    )
      return sendPartial(kit, req, reply, model, method, ownerOf(req, model));
    if (method === "POST") {
      const body = req.body;
      if (Array.isArray(body)) {
        checkBulkSize(body, config.maxBulk);
        // Rendered inside the write's transaction, with the definitions and tag lookups it already made.
        const objs = await inTransaction(ctx, async (t) =>
          kit.renderIds(t, model, await createMany(t, model, body), { created: true }),
        );
        return kit.send(req, reply, 201, objs);
      }
      const [obj] = await inTransaction(ctx, async (t) =>
        kit.renderIds(t, model, [await createObject(t, model, body)], { created: true }),
      );
      const id = String(obj!.id);
      reply.header("Location", detailUrl(ctx, model, id));
      if (model.key === "dcim.device" && kit.isBrief(req)) {
        const [n] = await represent(
          ctx,
          model,
          await ctx.db.selectFrom(model.table).selectAll().where("id", "=", id).execute(),
          "nested",
        );
        return kit.send(req, reply, 201, n);
      }
      return kit.send(req, reply, 201, obj);
    }
    if (method === "PUT" || method === "PATCH" || method === "DELETE") {
      const items = await bulkItems(req.body, config.maxBulk);
      const owner = ownerOf(req, model);
      /** A 400 naming every listed id that is not in `found` (issue 5). */
      const allFound = (found: Set<string>): Set<string> => {
        if (items.some((i) => !found.has(i.id))) {
          throw new ValidationError(
            items.map((i) => (found.has(i.id) ? {} : { id: [`Object with id ${i.id} does not exist.`] })),
          );
        }
        return found;
      };
      /** The listed objects this user may act on; any other id is a 400 naming it. */
      const select = async (t: Ctx): Promise<Set<string>> => {
        // An id lookup, not a client filter: the by-id read (in slices within the bind-variable limits).
        const rows = await listRowsWhereIn(
          t,
          model,
          "id",
          items.map((i) => i.id),
          {
            params: new Map(),
            limit: undefined,
            offset: 0,
            action: method === "DELETE" ? "delete" : "change",
            ...(owner ? { ownerColumn: owner } : {}),
          },
        );
        return allFound(new Set(rows.map((r) => r.id as string)));
      };
      // Versions the items name (`_version`, issue 26), checked on the locked rows before anything changes.
      const expected = itemVersions(items);
      if (method === "DELETE") {
        await inTransaction(ctx, async (t) => {
          const found = await select(t);
          await checkItemVersions(t, model, expected);
          if (found.size) await deleteObjects(t, model, [...found]);
        });
        return reply.code(204).send();
      }
      const objs = await inTransaction(ctx, async (t) => {
        // Locked first (in id order, so concurrent bulks cannot deadlock), then the pre-change snapshots.
        const locked = await lockForUpdate(t, model, [...new Set(items.map((i) => i.id))]);
        // A user whom no constraint restricts may change every row there is: the locked rows are the
        // found ones (one read fewer); models with after-write hooks lock nothing (lockForUpdate).
        const found =
          !owner && !model.afterWrite && (await restriction(t, model, "change")) === undefined
            ? allFound(new Set(locked.keys()))
            : await select(t);
        await checkItemVersions(t, model, expected, locked);
        const done: string[] = [];
        const stored = [...locked.values()].filter((l) => found.has(l.stored.id as string));
        const taken = await snapshots(
          t,
          model,
          [...found],
          stored.length === found.size ? stored.map((l) => l.stored) : undefined,
        );
        for (const item of items) {
          if (!found.has(item.id)) continue;
          const { id: _id, [VERSION_KEY]: _version, ...data } = item.raw;
          await updateObject(t, model, item.id, data, method === "PATCH", taken, locked);
          done.push(item.id);
        }
        return kit.renderIds(t, model, done);
      });
      return kit.send(req, reply, 200, objs);
    }
    throw new AppError(405, `Method "${method}" not allowed.`);
  });

  app.all("/api/:app/:model/:id/", historyRoute, async (req, reply) => {
    const model = modelOf(req);
    historyOf(req, model);
    reply.header("Allow", allowFor(req, model, model.readOnly ? RO_ALLOW : DETAIL_ALLOW));
    const ctx = kit.ctxFor(req);
    kit.needForMethod(req, model);
    const rawId = (req.params as { id: string }).id;
    const id =
      normalizeUuid(rawId) ??
      (model.key === "extras.contenttype" && !rawId.includes("\u0000") ? rawId : undefined);
    if (!id) throw new NotFoundError();
    const owner = ownerOf(req, model);
    const method = req.method;
    const { params, ignore } = listParams(req, model);
    const listP = { params, ignore, limit: 1, offset: 0, ...(owner ? { ownerColumn: owner } : {}) };
    if (method === "GET" || method === "HEAD") {
      const { ctx: c, row } = await kit.rowFor(req, model, id, listP);
      if (objectNotModified(req, reply, row)) return reply;
      const [obj] = await kit.visible(
        c,
        model,
        await represent(c, model, [row], kit.isBrief(req) ? "nested" : "full", renderOpts(req, model)),
      );
      return kit.send(req, reply, 200, withTokenKey(c, model, obj!));
    }
    if (method === "OPTIONS")
      return kit.send(
        req,
        reply,
        200,
        await optionsFor(ctx, model, "detail", req.auth, grantsOf(req, model)),
      );
    if (model.readOnly) throw new AppError(405, `Method "${method}" not allowed.`);
    // The object as this user may change or delete it (404 otherwise), read in the write's transaction.
    const visible = { ...listP, action: method === "DELETE" ? ("delete" as const) : ("change" as const) };
    // If-Match (issue 26): checked in the write's transaction on the locked row before anything changes.
    const tags = ifMatchTags(req);
    if (method === "PUT" || method === "PATCH") {
      const [obj] = await inTransaction(ctx, async (t) => {
        // With nothing to check but existence, the update's own locked read answers 404.
        if (!plainLookup(t, visible)) await getRow(t, model, id, visible);
        if (tags) await checkIfMatch(t, model, id, tags);
        await updateObject(t, model, id, req.body, method === "PATCH");
        return kit.renderIds(t, model, [id]);
      });
      return kit.send(req, reply, 200, obj);
    }
    if (method === "DELETE") {
      await inTransaction(ctx, async (t) => {
        await getRow(t, model, id, visible);
        if (tags) await checkIfMatch(t, model, id, tags);
        await deleteObjects(t, model, [id]);
      });
      return reply.code(204).send();
    }
    throw new AppError(405, `Method "${method}" not allowed.`);
  });
}

/** Refuse a bulk body of more than `max` items (issue 12), before any work is done. */
export function checkBulkSize(items: unknown[], max: number): void {
  if (items.length > max)
    throw new ValidationError({
      non_field_errors: [
        `Too many items in one request: ${items.length} (the maximum is ${max}; INVENTORY_MAX_BULK).`,
      ],
    });
}

/** Items of a bulk body checked between turns of the event loop (issue 23: /health stays fast). */
const ITEMS_PER_TURN = 2000;

/**
 * Validate a bulk update/delete body: a list of objects each with a UUID `id` (BulkOperationSerializer),
 * ITEMS_PER_TURN at a time, yielding to the event loop in between.
 * @throws ValidationError: one entry per item (`{}` for the good ones) when any is bad.
 */
async function bulkItems(
  body: unknown,
  maxBulk: number,
): Promise<Array<{ id: string; raw: Record<string, unknown> }>> {
  if (Array.isArray(body)) checkBulkSize(body, maxBulk);
  if (!Array.isArray(body)) {
    throw new ValidationError({
      non_field_errors: [
        `Expected a list of items but got type "${body === null ? "NoneType" : typeof body === "object" ? "dict" : typeof body}".`,
      ],
    });
  }
  const errs: unknown[] = [];
  let bad = false;
  const items: Array<{ id: string; raw: Record<string, unknown> }> = [];
  const check = (item: unknown): { id: string; raw: Record<string, unknown> } => {
    if (!item || typeof item !== "object" || Array.isArray(item)) {
      bad = true;
      errs.push({ non_field_errors: ["Invalid data. Expected a dictionary."] });
      return { id: "", raw: {} };
    }
    const raw = item as Record<string, unknown>;
    if (!("id" in raw)) {
      bad = true;
      errs.push({ id: ["This field is required."] });
      return { id: "", raw };
    }
    const id = typeof raw.id === "string" ? normalizeUuid(raw.id) : undefined;
    if (!id) {
      bad = true;
      errs.push({ id: ["Must be a valid UUID."] });
      return { id: "", raw };
    }
    errs.push({});
    return { id, raw };
  };
  for (const [i, item] of body.entries()) {
    if (i > 0 && i % ITEMS_PER_TURN === 0) await new Promise<void>((r) => setImmediate(r));
    items.push(check(item));
  }
  if (bad) throw new ValidationError(errs);
  return items;
}
