/**
 * What every route plugin shares: the store and registry, request-scoped service contexts, permission
 * checks, response rendering (JSON or the browsable HTML page) and query-string helpers. Built once by
 * `buildApp` and handed to each plugin as its `kit` option, so routes live in plugins per concern.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import { type Model, type Registry, registryAt } from "../registry/index.ts";
import { type Ctx, makeCtx, type ServiceSettings } from "../service/context.ts";
import { AppError, NotFoundError, PermissionDenied } from "../service/errors.ts";
import { ctxAt as historyCtx } from "../service/history-read.ts";
import { redactDeliveries } from "../service/outbox.ts";
import { type Action, mayDo } from "../service/permissions.ts";
import { getRow, type ListParams, plainLookup } from "../service/read.ts";
import { type RepresentOptions, represent } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import { readBack } from "../service/write.ts";
import type { Store } from "../store/db.ts";
import { renderHtml, wantsHtml } from "./browsable.ts";

/**
 * Rows a list page returns at most even when the maximum page size is disabled
 * (`INVENTORY_MAX_PAGE_SIZE=0`): `limit=0` then pages through everything in pages of this size, with `next`.
 */
export const HARD_PAGE_CEILING = 10_000;

const parsedQuery = new WeakMap<object, Map<string, string[]>>();

/** Query string → ordered multimap (parsed once per request when given the request). */
export function queryParams(url: string, req?: object): Map<string, string[]> {
  if (req) {
    const hit = parsedQuery.get(req);
    if (hit) return hit;
  }
  const i = url.indexOf("?");
  const out = new Map<string, string[]>();
  if (i >= 0)
    for (const [k, v] of new URLSearchParams(url.slice(i + 1))) out.set(k, [...(out.get(k) ?? []), v]);
  if (req) parsedQuery.set(req, out);
  return out;
}

/**
 * DRF `int()` semantics for limit/offset: surrounding spaces and `+` allowed, else undefined. Values beyond
 * 2^53 are clamped so they never reach SQL as an out-of-range integer (issue 12: `offset=2^63` was a 500).
 */
export function intParam(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  return /^[+-]?\d+$/.test(t) ? Math.min(Number(t), Number.MAX_SAFE_INTEGER) : undefined;
}

/** HTTP method → the permission action it needs (Nautobot TokenPermissions, nautobot-api-core.md §8.3). */
export const METHOD_ACTION: Record<string, Action | undefined> = {
  GET: "view",
  HEAD: "view",
  POST: "add",
  PUT: "change",
  PATCH: "change",
  DELETE: "delete",
};

/** The shared helpers of the route plugins. */
export interface HttpKit {
  store: Store;
  reg: Registry;
  config: Config;
  settings: ServiceSettings;
  /** `proto://host` of the request (forwarded headers only with `--trust-proxy`). */
  baseUrl(req: FastifyRequest): string;
  /** A service context for the request (cross-request read cache on GET/HEAD). */
  ctxFor(req: FastifyRequest): Ctx;
  /** A context reading the request's data at a point of history (issue 27), nothing shared. */
  ctxAt(req: FastifyRequest, point: number): Ctx;
  /** The registry as the request's API version shapes the models (`registryAt`). */
  regFor(req: FastifyRequest): Registry;
  /** A service context outside any request (no user, no permission restriction): start-up work. */
  systemCtx(): Ctx;
  /**
   * The object `id` of `model` as this user may read it with `p`'s filters (404 otherwise), and the context
   * to render it with. When the request's tokens were deferred (`req.tokensDeferred`, an object's detail on
   * PostgreSQL) and the read only asks whether the row exists, the tokens come in the row's statement
   * (`Store.rowWithTokens`: one round trip, one snapshot); otherwise they are read first.
   */
  rowFor(req: FastifyRequest, model: Model, id: string, p?: ListParams): Promise<{ ctx: Ctx; row: Row }>;
  /** Answer JSON, or the browsable HTML page when a browser asks. */
  send(req: FastifyRequest, reply: FastifyReply, status: number, body: unknown): FastifyReply;
  /** 403 unless the user may do `action` on `model` (anonymous reads only of inventory models). */
  need(req: FastifyRequest, model: Model, action: Action): void;
  /** `need` with the action of the request's method; writes to read-only models are left to their 405. */
  needForMethod(req: FastifyRequest, model: Model): void;
  /** Full representations of `ids`, in that order, as this user may read them. */
  renderIds(
    ctx: Ctx,
    model: Model,
    ids: string[],
    opts?: RepresentOptions,
  ): Promise<Array<Record<string, unknown>>>;
  /** What this user may read of rendered objects (receivers' answers only for who may change the webhook). */
  visible(
    ctx: Ctx,
    model: Model,
    objs: Array<Record<string, unknown>>,
  ): Promise<Array<Record<string, unknown>>>;
  /** `?brief=` given with a non-empty value. */
  isBrief(req: FastifyRequest): boolean;
  /** The page size of a list from its `limit` (default PAGINATE_COUNT, 0 = the maximum). */
  pageLimit(req: FastifyRequest): number;
  /** The `offset` of a list request (0 when absent or invalid). */
  pageOffset(req: FastifyRequest): number;
  /** A paginated body `{count, next, previous, results}` whose links keep the request's other parameters. */
  pageBody(
    req: FastifyRequest,
    ctx: Ctx,
    page: { count: number; limit: number; offset: number; results: unknown[] },
  ): Record<string, unknown>;
}

/**
 * The opt-in keys a GET asks for with `?include=` (repeated or comma-separated), e.g. `relationships` and
 * `computed_fields` (Nautobot 1.6 `OptInFieldsMixin`).
 */
export function includeParam(req: FastifyRequest): Set<string> {
  const out = new Set<string>();
  for (const v of queryParams(req.url, req).get("include") ?? [])
    for (const part of v.split(",")) if (part.trim()) out.add(part.trim());
  return out;
}

/** Build the kit for one app. */
export function makeKit(store: Store, reg: Registry, config: Config, settings: ServiceSettings): HttpKit {
  const baseUrl = (req: FastifyRequest) => {
    const proto = config.trustProxy
      ? String(req.headers["x-forwarded-proto"] ?? req.protocol)
          .split(",")[0]!
          .trim()
      : req.protocol;
    const host = config.trustProxy
      ? String(req.headers["x-forwarded-host"] ?? req.headers.host ?? "")
          .split(",")[0]!
          .trim()
      : String(req.headers.host ?? `${config.host}:${config.port}`);
    return `${proto}://${host}`;
  };
  const need = (req: FastifyRequest, model: Model, action: Action) => {
    // Anonymous reads (--anonymous-read) cover inventory models only (issue 12).
    if (!req.auth.actor && model.loginRequired)
      throw new AppError(403, "Authentication credentials were not provided.");
    if (model.readOnly && action !== "view") return;
    if (req.auth.actor && !mayDo(req.grants, model, action)) throw new PermissionDenied();
  };
  const visible = (ctx: Ctx, model: Model, objs: Array<Record<string, unknown>>) =>
    model.key === "extras.webhookdelivery" ? redactDeliveries(ctx, objs) : Promise.resolve(objs);
  const regFor = (req: FastifyRequest): Registry =>
    !req.apiVersion || req.apiVersion === reg.apiVersion ? reg : registryAt(req.apiVersion);
  const ctxFor = (req: FastifyRequest) =>
    makeCtx({
      store,
      reg: regFor(req),
      settings,
      baseUrl: baseUrl(req),
      actor: req.auth.actor,
      cached:
        req.asOfSeq === undefined &&
        (req.method === "GET" || req.method === "HEAD" || req.dataToken !== undefined),
      token: req.dataToken,
      definitionsToken: req.definitionsToken,
      assumedDefinitions: req.assumedDefinitions,
      db: req.readDb,
      grants: req.grants,
      restApi: true,
    });
  // A read at a point of history (issue 27): a context of its own, nothing shared with live reads.
  const ctxAt = (req: FastifyRequest, point: number) =>
    historyCtx(
      makeCtx({
        store,
        reg: regFor(req),
        settings,
        baseUrl: baseUrl(req),
        actor: req.auth.actor,
        grants: req.grants,
        restApi: true,
      }),
      point,
    );
  return {
    store,
    reg,
    config,
    settings,
    baseUrl,
    ctxFor,
    ctxAt,
    regFor,
    systemCtx: () => makeCtx({ store, reg, settings }),
    async rowFor(req, model, id, p) {
      if (req.tokensDeferred) {
        req.tokensDeferred = false;
        if (store.rowWithTokens && plainLookup(ctxFor(req), p)) {
          const { row, tokens } = await store.rowWithTokens(model.table, id);
          req.dataToken = tokens.data;
          req.definitionsToken = tokens.definitions;
          if (!row) throw new NotFoundError();
          return { ctx: ctxFor(req), row };
        }
        ({ data: req.dataToken, definitions: req.definitionsToken } = await store.freshTokens());
      }
      const ctx = ctxFor(req);
      return { ctx, row: await getRow(ctx, model, id, p) };
    },
    send(req, reply, status, body) {
      if (wantsHtml(req.headers.accept) && queryParams(req.url, req).get("format")?.[0] !== "json") {
        reply.code(status).header("Content-Type", "text/html; charset=utf-8");
        return reply.send(renderHtml(req.method, req.url, status, body));
      }
      reply.code(status).header("Content-Type", "application/json");
      return reply.send(req.indent ? JSON.stringify(body, null, req.indent) : JSON.stringify(body));
    },
    need,
    needForMethod(req, model) {
      const action = METHOD_ACTION[req.method];
      if (action) need(req, model, action);
      else if (!req.auth.actor && model.loginRequired)
        throw new AppError(403, "Authentication credentials were not provided.");
    },
    visible,
    async renderIds(ctx, model, ids, opts) {
      const ordered = await readBack(ctx, model, ids);
      const out = await visible(ctx, model, await represent(ctx, model, ordered, "full", opts));
      return out.map((o) => withTokenKey(ctx, model, o));
    },
    isBrief(req) {
      const b = queryParams(req.url, req).get("brief");
      return !!b && b.some((v) => v !== "");
    },
    pageOffset(req) {
      const raw = intParam(queryParams(req.url, req).get("offset")?.[0]);
      return raw !== undefined && raw > 0 ? raw : 0;
    },
    pageBody(req, ctx, { count, limit, offset, results }) {
      const all = queryParams(req.url, req);
      const link = (at: number | undefined) => {
        const p = new URLSearchParams();
        for (const [k, vs] of all) if (k !== "limit" && k !== "offset") for (const v of vs) p.append(k, v);
        p.append("limit", String(limit));
        if (at !== undefined) p.append("offset", String(at));
        return `${ctx.baseUrl}${req.url.split("?")[0]}?${p.toString()}`;
      };
      return {
        count,
        next: offset + limit < count ? link(offset + limit) : null,
        previous: offset > 0 ? link(offset - limit > 0 ? offset - limit : undefined) : null,
        results,
      };
    },
    pageLimit(req) {
      const limitRaw = intParam(queryParams(req.url, req).get("limit")?.[0]);
      const maxPage = config.maxPageSize
        ? Math.min(config.maxPageSize, HARD_PAGE_CEILING)
        : HARD_PAGE_CEILING;
      if (limitRaw !== undefined && limitRaw > 0) return Math.min(limitRaw, maxPage);
      if (limitRaw === 0) return maxPage;
      return Math.min(config.paginateCount, maxPage);
    },
  };
}

/** Tokens: the key is shown in clear only in the response that created it (stored hashed). */
export function withTokenKey(ctx: Ctx, model: Model, obj: Record<string, unknown>): Record<string, unknown> {
  if (model.key !== "users.token") return obj;
  const fresh = ctx.freshTokenKeys.get(obj.id as string);
  return { ...obj, key: fresh ?? null };
}
