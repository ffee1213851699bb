/**
 * The HTTP application: Fastify routes for the API root, app roots, status, and the generic list/detail
 * endpoints of every registered model (no per-model handlers). Behaviour follows the seed (Endpoints,
 * Authentication, Errors, Limits) and Nautobot 1.6 at API version 1.2 (nautobot-api-core.md).
 */
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Logger } from "pino";
import YAML from "yaml";
import type { Config } from "../config.ts";
import { normalizeUuid, RESERVED_PARAMS } from "../query/filters.ts";
import { APPS, type Model, type Registry } from "../registry/index.ts";
import { type Ctx, makeCtx } from "../service/context.ts";
import { AppError, NotFoundError, PermissionDenied, ValidationError } from "../service/errors.ts";
import { redactResponses, retryDeliveries } from "../service/outbox.ts";
import { type Action, type Grants, loadGrants, mayDo } from "../service/permissions.ts";
import { getRow, listRows } from "../service/read.ts";
import { detailUrl, represent } from "../service/represent.ts";
import {
  createMany,
  createObject,
  deleteObjects,
  inTransaction,
  snapshots,
  updateObject,
} from "../service/write.ts";
import type { Store } from "../store/db.ts";
import { type Auth, authenticate, clearTokenCache } from "./auth.ts";
import { renderHtml, wantsHtml } from "./browsable.ts";
import { registerRequestDeadline } from "./deadline.ts";
import { mapError } from "./errors.ts";
import { LoginLimiter } from "./login-limit.ts";
import { openapiDocument } from "./openapi.ts";
import { optionsFor } from "./options.ts";
import { registerSecurityHeaders } from "./security.ts";

/** API versions accepted (Nautobot 1.6: 1.2 … 1.6); responses are always the 1.2 shapes. */
export const API_VERSIONS = ["1.2", "1.3", "1.4", "1.5", "1.6"];
export const DEFAULT_API_VERSION = "1.2";
export const VERSION = "0.1.0";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

declare module "fastify" {
  interface FastifyRequest {
    auth: Auth;
    /** Object permissions of a non-superuser (undefined: superuser or anonymous). */
    grants: Grants | undefined;
    apiVersion: string;
    indent: number;
    startNs: bigint;
  }
}

/** Dependencies of the app. */
export interface AppDeps {
  store: Store;
  reg: Registry;
  config: Config;
  logger?: Logger | false;
}

const parsedQuery = new WeakMap<object, Map<string, string[]>>();

/** Query string → ordered multimap (parsed once per request when given the request). */
function queryParams(url: string, req?: object): Map<string, string[]> {
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
function intParam(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  return /^[+-]?\d+$/.test(t) ? Math.min(Number(t), Number.MAX_SAFE_INTEGER) : undefined;
}

/**
 * Rows a list page returns at most even when the maximum page size is disabled
 * (`INVENTORY_MAX_PAGE_SIZE=0`): `limit=0` then pages through everything in pages of this size, with `next`.
 */
export const HARD_PAGE_CEILING = 10_000;

/** Deepest JSON nesting a request body may have (issue 12: 5,000 levels were a 500). */
const MAX_JSON_DEPTH = 64;

/** Whether parsed JSON nests deeper than `max` levels (iterative, so it cannot overflow the stack itself). */
function tooDeep(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== "object") continue;
    if (d > max) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d + 1]);
  }
  return false;
}

/** Build the Fastify app. Call `listen` on it to serve. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { store, reg, config } = deps;
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : {}),
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
  }) as unknown as FastifyInstance;

  await registerSecurityHeaders(app);
  registerRequestDeadline(app, config.requestTimeoutMs);
  const loginLimiter = new LoginLimiter(config.loginLimits);
  const settings = {
    enforceGlobalUnique: config.enforceGlobalUnique,
    webhookTargets: config.webhookTargets,
    changelog: true,
    webhookMaxAttempts: config.webhookMaxAttempts,
  };

  // Bodies: JSON only (415 otherwise), DRF's parse error text, `application/json;` tolerated.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (req, body, done) => {
    const type = String(req.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    const text = String(body ?? "");
    if (type && type !== "application/json") {
      done(
        new AppError(415, `Unsupported media type "${String(req.headers["content-type"])}" in request.`),
        undefined,
      );
      return;
    }
    if (text.trim() === "") {
      done(null, {});
      return;
    }
    try {
      const parsed = JSON.parse(text);
      if (tooDeep(parsed, MAX_JSON_DEPTH)) {
        done(new AppError(400, `JSON parse error - nesting deeper than ${MAX_JSON_DEPTH} levels`), undefined);
        return;
      }
      done(null, parsed);
    } catch (e) {
      done(new AppError(400, `JSON parse error - ${(e as Error).message}`), undefined);
    }
  });

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

  const ctxFor = (req: FastifyRequest): Ctx =>
    makeCtx({
      store,
      reg,
      settings,
      baseUrl: baseUrl(req),
      actor: req.auth.actor,
      cached: req.method === "GET" || req.method === "HEAD",
      grants: req.grants,
    });

  /**
   * Model-level permission for the request's method (Nautobot TokenPermissions, nautobot-api-core.md §8.3):
   * 403 without it. Writes to read-only models are left to their 405.
   */
  const needForMethod = (req: FastifyRequest, model: Model) => {
    // Anonymous reads (--anonymous-read) cover inventory models only (issue 12).
    if (!req.auth.actor && model.loginRequired)
      throw new AppError(403, "Authentication credentials were not provided.");
    const action = METHOD_ACTION[req.method];
    if (!action || (model.readOnly && action !== "view")) return;
    if (req.auth.actor && !mayDo(req.grants, model, action)) throw new PermissionDenied();
  };
  const METHOD_ACTION: Record<string, Action | undefined> = {
    GET: "view",
    HEAD: "view",
    POST: "add",
    PUT: "change",
    PATCH: "change",
    DELETE: "delete",
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

  const send = (req: FastifyRequest, reply: FastifyReply, status: number, body: unknown) => {
    if (wantsHtml(req.headers.accept) && queryParams(req.url, req).get("format")?.[0] !== "json") {
      reply.code(status).header("Content-Type", "text/html; charset=utf-8");
      return reply.send(renderHtml(req.method, req.url, status, body));
    }
    reply.code(status).header("Content-Type", "application/json");
    return reply.send(req.indent ? JSON.stringify(body, null, req.indent) : JSON.stringify(body));
  };

  app.setErrorHandler((err, req, reply) => {
    const { status, body, headers } = mapError(err, req.log);
    if (headers) reply.headers(headers);
    if (!req.apiVersion) req.apiVersion = DEFAULT_API_VERSION;
    return send(req, reply, status, body);
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0]!;
    if (!path.endsWith("/")) {
      const withSlash = `${path}/`;
      const found =
        app.findRoute({ method: "GET", url: withSlash }) ||
        app.findRoute({ method: "GET", url: "/api/:app/:model/:id/" });
      if (found && withSlash.startsWith("/api/")) {
        const q = req.url.slice(path.length);
        return reply.code(302).header("Location", `${withSlash}${q}`).send();
      }
    }
    return send(req, reply, 404, { detail: "Not found." });
  });

  app.addHook("onRequest", async (req, reply) => {
    req.startNs = process.hrtime.bigint();
    reply.header("Vary", "Accept");
    const accept = String(req.headers.accept ?? "");
    const m = /indent=(\d+)/.exec(accept);
    req.indent = m ? Math.min(Number(m[1]), 8) : 0;
    const hv = /version=([\d.]+)/.exec(accept)?.[1];
    const qv = queryParams(req.url, req).get("api_version")?.[0];
    req.apiVersion = DEFAULT_API_VERSION;
    if (hv && qv && hv !== qv)
      throw new AppError(400, 'Version mismatch between "Accept" header and query parameter.');
    if (hv && !API_VERSIONS.includes(hv)) {
      throw new AppError(
        406,
        `Invalid version in "Accept" header. Supported versions are ${API_VERSIONS.join(", ")}`,
      );
    }
    if (qv && !API_VERSIONS.includes(qv)) {
      throw new AppError(
        404,
        `Invalid version in query parameter. Supported versions are ${API_VERSIONS.join(", ")}`,
      );
    }
    req.apiVersion = hv ?? qv ?? DEFAULT_API_VERSION;
    reply.header("API-Version", req.apiVersion);
    const path = req.url.split("?")[0]!;
    if (path === "/api/docs/" && queryParams(req.url, req).get("format")?.[0] === "openapi") {
      reply.code(302).header("Location", "/api/swagger.json").send();
      return reply;
    }
    // Documentation holds no data: readable without a token, as a browser opens it.
    if (!path.startsWith("/api/") || path.startsWith("/api/docs") || path.startsWith("/api/swagger.")) {
      req.auth = { actor: undefined, writeEnabled: false };
      return;
    }
    const basic = path === "/api/users/tokens/" ? { limiter: loginLimiter, ip: req.ip } : undefined;
    req.auth = await authenticate(store, req.headers.authorization, basic);
    req.grants =
      req.auth.actor && !req.auth.actor.isSuperuser
        ? await loadGrants(makeCtx({ store, reg, settings }), req.auth.actor)
        : undefined;
    if (path.endsWith("/")) {
      if (!req.auth.actor) {
        if (!(config.anonymousRead && (req.method === "GET" || req.method === "HEAD"))) {
          throw new AppError(403, "Authentication credentials were not provided.");
        }
      } else if (!SAFE.has(req.method) && !req.auth.writeEnabled) {
        throw new PermissionDenied();
      }
    }
  });

  app.addHook("onResponse", async (req, reply) => {
    if (!SAFE.has(req.method) && req.url.startsWith("/api/users/")) clearTokenCache();
    const ms = Number(process.hrtime.bigint() - req.startNs) / 1e6;
    req.log.info(
      {
        method: req.method,
        url: req.url,
        status: reply.statusCode,
        ms: Math.round(ms * 100) / 100,
        user: req.auth?.actor?.username,
      },
      "request",
    );
  });

  // Liveness probe and the benchmark's framework floor: no auth, no database. `/health/` is Nautobot's URL.
  for (const url of ["/health", "/health/"])
    app.get(url, async (_req, reply) =>
      reply.header("Content-Type", "application/json").send('{"status":"ok"}'),
    );

  // ---- roots ------------------------------------------------------------------------------------
  app.get("/api/", async (req, reply) => {
    const b = baseUrl(req);
    const body: Record<string, string> = {};
    for (const a of [
      "circuits",
      "dcim",
      "extras",
      "ipam",
      "plugins",
      "status",
      "tenancy",
      "users",
      "virtualization",
    ]) {
      body[a] = `${b}/api/${a}/`;
    }
    reply.header("Allow", "GET, HEAD, OPTIONS");
    return send(req, reply, 200, body);
  });

  app.get("/api/status/", async (req, reply) => {
    const counts: Record<string, number> = {};
    for (const key of [
      "dcim.site",
      "dcim.rack",
      "dcim.device",
      "dcim.interface",
      "ipam.prefix",
      "ipam.ipaddress",
      "ipam.vlan",
      "circuits.circuit",
      "virtualization.virtualmachine",
    ]) {
      const m = reg.get(key);
      const r: any = await store.db
        .selectFrom(m.table)
        .select((eb: any) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      counts[key] = Number(r?.n ?? 0);
    }
    return send(req, reply, 200, {
      "inventory-version": VERSION,
      "nautobot-version": "1.6.32",
      "node-version": process.versions.node,
      "database-engine": store.dialect.engine,
      "installed-apps": {},
      plugins: {},
      "rq-workers-running": 0,
      "celery-workers-running": 0,
      "api-versions": API_VERSIONS,
      counts,
    });
  });

  // openapiDocument builds the document once and only sets `servers` per call.
  const docFor = (req: FastifyRequest) => openapiDocument(reg, baseUrl(req));
  // Interactive documentation: Swagger UI from its npm package (no CDN) over the registry's document.
  await app.register(fastifySwagger, {
    mode: "static",
    specification: { document: openapiDocument(reg, "") as any },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: "/api/docs",
    uiConfig: { docExpansion: "none", deepLinking: true },
    transformSpecification: (_doc: unknown, req: FastifyRequest) => docFor(req),
    transformSpecificationClone: false,
  });
  app.get("/api/swagger.json", async (req, reply) => send(req, reply, 200, docFor(req)));
  app.get("/api/swagger.yaml", async (req, reply) =>
    reply
      .type("application/yaml; charset=utf-8")
      .send(YAML.stringify(docFor(req), { aliasDuplicateObjects: false })),
  );

  app.get("/api/plugins/", async (req, reply) =>
    send(req, reply, 200, { "installed-plugins": `${baseUrl(req)}/api/plugins/installed-plugins/` }),
  );
  app.get("/api/plugins/installed-plugins/", async (req, reply) => send(req, reply, 200, []));
  app.get("/api/users/config/", async (req, reply) => send(req, reply, 200, {}));

  app.all("/api/:app/", async (req, reply) => {
    const { app: appName } = req.params as { app: string };
    if (!(APPS as readonly string[]).includes(appName) || appName === "plugins") throw new NotFoundError();
    if (req.method !== "GET" && req.method !== "HEAD")
      throw new AppError(405, `Method "${req.method}" not allowed.`);
    const body: Record<string, string> = {};
    const extra = appName === "users" ? ["config"] : [];
    const entries = [...reg.appModels(appName).map((m) => m.path), ...extra].sort();
    for (const p of entries) body[p] = `${baseUrl(req)}/api/${appName}/${p}/`;
    return send(req, reply, 200, body);
  });

  // ---- webhook deliveries: retry by hand (issue 4) -------------------------------------------------
  /** Retrying is changing a webhook's deliveries: it needs `change` on webhooks (403 otherwise). */
  const needWebhookChange = (req: FastifyRequest) => {
    if (req.auth.actor && !mayDo(req.grants, reg.get("extras.webhook"), "change"))
      throw new PermissionDenied();
  };
  app.post("/api/extras/webhook-deliveries/:id/retry/", async (req, reply) => {
    needWebhookChange(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = ctxFor(req);
    await inTransaction(ctx, (t) => retryDeliveries(t, { deliveryId: id }));
    const [obj] = await renderIds(ctx, reg.get("extras.webhookdelivery"), [id]);
    return send(req, reply, 200, obj);
  });
  app.post("/api/extras/webhooks/:id/retry-failed/", async (req, reply) => {
    needWebhookChange(req);
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const ctx = ctxFor(req);
    const retried = await inTransaction(ctx, (t) => retryDeliveries(t, { webhookId: id }));
    return send(req, reply, 200, { retried });
  });

  // ---- generic model endpoints -------------------------------------------------------------------
  const modelOf = (req: FastifyRequest): Model => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = reg.byUrl(a, model);
    if (!m) throw new NotFoundError();
    return m;
  };

  const listParams = (req: FastifyRequest, model: Model) => {
    const params = queryParams(req.url, req);
    const ignore = new Set(RESERVED_PARAMS);
    if (model.configContext) ignore.add("exclude");
    return { params, ignore };
  };

  const ownerOf = (req: FastifyRequest, model: Model): [string, string] | undefined =>
    model.key === "users.token" ? ["user_id", req.auth.actor?.id ?? "__anonymous__"] : undefined;

  const renderOpts = (req: FastifyRequest, model: Model) => {
    const ex = queryParams(req.url, req).get("exclude") ?? [];
    return { excludeConfigContext: !!model.configContext && ex.some((v) => v.includes("config_context")) };
  };

  const isBrief = (req: FastifyRequest) => {
    const b = queryParams(req.url, req).get("brief");
    return !!b && b.some((v) => v !== "");
  };

  /** What this user may read of rendered objects: receivers' answers only for who may change the webhook. */
  const visible = (ctx: Ctx, model: Model, objs: Array<Record<string, unknown>>) =>
    model.key === "extras.webhookdelivery" ? redactResponses(ctx, objs) : Promise.resolve(objs);

  const renderIds = async (ctx: Ctx, model: Model, ids: string[]) => {
    const rows = await ctx.db
      .selectFrom(model.table)
      .selectAll()
      .where("id", "in", ids.length ? ids : ["__none__"])
      .execute();
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    const ordered = ids.map((i) => byId.get(i)).filter((r): r is NonNullable<typeof r> => !!r);
    const out = await visible(ctx, model, await represent(ctx, model, ordered, "full"));
    return out.map((o) => withTokenKey(ctx, model, o));
  };

  const grantsOf = (req: FastifyRequest, model: Model) => ({
    post: mayDo(req.grants, model, "add"),
    put: mayDo(req.grants, model, "change"),
  });

  const LIST_ALLOW = "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS";
  const DETAIL_ALLOW = "GET, PUT, PATCH, DELETE, HEAD, OPTIONS";
  const RO_ALLOW = "GET, HEAD, OPTIONS";

  app.all("/api/:app/:model/", async (req, reply) => {
    const model = modelOf(req);
    reply.header("Allow", allowFor(req, model, model.readOnly ? RO_ALLOW : LIST_ALLOW));
    const ctx = ctxFor(req);
    const method = req.method;
    needForMethod(req, model);
    if (method === "GET" || method === "HEAD") {
      const { params, ignore } = listParams(req, model);
      const limitRaw = intParam(params.get("limit")?.[0]);
      const maxPage = config.maxPageSize
        ? Math.min(config.maxPageSize, HARD_PAGE_CEILING)
        : HARD_PAGE_CEILING;
      let limit: number = config.paginateCount;
      if (limitRaw !== undefined && limitRaw > 0) limit = Math.min(limitRaw, maxPage);
      else if (limitRaw === 0) limit = maxPage;
      const offsetRaw = intParam(params.get("offset")?.[0]);
      const offset = offsetRaw !== undefined && offsetRaw > 0 ? offsetRaw : 0;
      const { count, rows } = await listRows(ctx, model, {
        params,
        ignore,
        limit,
        offset,
        ...(ownerOf(req, model) ? { ownerColumn: ownerOf(req, model)! } : {}),
      });
      const results = await visible(
        ctx,
        model,
        await represent(ctx, model, rows, isBrief(req) ? "nested" : "full", renderOpts(req, model)),
      );
      const pageUrl = (newOffset: number | undefined) => {
        const p = new URLSearchParams();
        const entries: Array<[string, string]> = [];
        for (const [k, vs] of params)
          if (k !== "limit" && k !== "offset") for (const v of vs) entries.push([k, v]);
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
      return send(req, reply, 200, {
        count,
        next,
        previous,
        results: results.map((o) => withTokenKey(ctx, model, o)),
      });
    }
    if (method === "OPTIONS")
      return send(req, reply, 200, await optionsFor(ctx, model, "list", req.auth, grantsOf(req, model)));
    if (model.readOnly) throw new AppError(405, `Method "${method}" not allowed.`);
    if (method === "POST") {
      const body = req.body;
      if (Array.isArray(body)) {
        checkBulkSize(body, config.maxBulk);
        const ids = await inTransaction(ctx, (t) => createMany(t, model, body));
        return send(req, reply, 201, await renderIds(ctx, model, ids));
      }
      const id = await inTransaction(ctx, (t) => createObject(t, model, body));
      const [obj] = await renderIds(ctx, model, [id]);
      reply.header("Location", detailUrl(ctx, model, id));
      if (model.key === "dcim.device" && isBrief(req)) {
        const [n] = await represent(
          ctx,
          model,
          await ctx.db.selectFrom(model.table).selectAll().where("id", "=", id).execute(),
          "nested",
        );
        return send(req, reply, 201, n);
      }
      return send(req, reply, 201, obj);
    }
    if (method === "PUT" || method === "PATCH" || method === "DELETE") {
      const items = bulkItems(req.body, config.maxBulk);
      const owner = ownerOf(req, model);
      /** The listed objects this user may act on; any other id is a 400 naming it (issue 5). */
      const select = async (t: Ctx): Promise<Set<string>> => {
        // In slices of 500 ids, so no statement exceeds the engines' bind-variable limits.
        const found = new Set<string>();
        const ids = items.map((i) => i.id);
        for (let at = 0; at < ids.length; at += 500) {
          const { rows } = await listRows(t, model, {
            params: new Map([["id", ids.slice(at, at + 500)]]),
            limit: undefined,
            offset: 0,
            action: method === "DELETE" ? "delete" : "change",
            ...(owner ? { ownerColumn: owner } : {}),
          });
          for (const r of rows) found.add(r.id as string);
        }
        if (items.some((i) => !found.has(i.id))) {
          throw new ValidationError(
            items.map((i) => (found.has(i.id) ? {} : { id: [`Object with id ${i.id} does not exist.`] })),
          );
        }
        return found;
      };
      if (method === "DELETE") {
        await inTransaction(ctx, async (t) => {
          const found = await select(t);
          if (found.size) await deleteObjects(t, model, [...found]);
        });
        return reply.code(204).send();
      }
      const ids = await inTransaction(ctx, async (t) => {
        const found = await select(t);
        const done: string[] = [];
        const taken = await snapshots(t, model, [...found]);
        for (const item of items) {
          if (!found.has(item.id)) continue;
          const { id: _id, ...data } = item.raw;
          await updateObject(t, model, item.id, data, method === "PATCH", taken);
          done.push(item.id);
        }
        return done;
      });
      return send(req, reply, 200, await renderIds(ctx, model, ids));
    }
    throw new AppError(405, `Method "${method}" not allowed.`);
  });

  app.all("/api/:app/:model/:id/", async (req, reply) => {
    const model = modelOf(req);
    reply.header("Allow", allowFor(req, model, model.readOnly ? RO_ALLOW : DETAIL_ALLOW));
    const ctx = ctxFor(req);
    needForMethod(req, model);
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
      const row = await getRow(ctx, model, id, listP);
      const [obj] = await visible(
        ctx,
        model,
        await represent(ctx, model, [row], isBrief(req) ? "nested" : "full", renderOpts(req, model)),
      );
      return send(req, reply, 200, withTokenKey(ctx, model, obj!));
    }
    if (method === "OPTIONS")
      return send(req, reply, 200, await optionsFor(ctx, model, "detail", req.auth, grantsOf(req, model)));
    if (model.readOnly) throw new AppError(405, `Method "${method}" not allowed.`);
    await getRow(ctx, model, id, { ...listP, action: method === "DELETE" ? "delete" : "change" });
    if (method === "PUT" || method === "PATCH") {
      await inTransaction(ctx, (t) => updateObject(t, model, id, req.body, method === "PATCH"));
      const [obj] = await renderIds(ctx, model, [id]);
      return send(req, reply, 200, obj);
    }
    if (method === "DELETE") {
      await inTransaction(ctx, (t) => deleteObjects(t, model, [id]));
      return reply.code(204).send();
    }
    throw new AppError(405, `Method "${method}" not allowed.`);
  });

  return app;
}

/** Refuse a bulk body of more than `max` items (issue 12), before any work is done. */
function checkBulkSize(items: unknown[], max: number): void {
  if (items.length > max)
    throw new ValidationError({
      non_field_errors: [
        `Too many items in one request: ${items.length} (the maximum is ${max}; INVENTORY_MAX_BULK).`,
      ],
    });
}

/** Validate a bulk update/delete body: a list of objects each with a UUID `id` (BulkOperationSerializer). */
function bulkItems(body: unknown, maxBulk: number): Array<{ id: string; raw: Record<string, unknown> }> {
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
  const items = body.map((item) => {
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
  });
  if (bad) throw new ValidationError(errs);
  return items;
}

/** Tokens: the key is shown in clear only in the response that created it (stored hashed). */
function withTokenKey(ctx: Ctx, model: Model, obj: Record<string, unknown>): Record<string, unknown> {
  if (model.key !== "users.token") return obj;
  const fresh = ctx.freshTokenKeys.get(obj.id as string);
  return { ...obj, key: fresh ?? null };
}
