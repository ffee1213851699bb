/**
 * The HTTP application: body parsing, authentication, API versions, error mapping and security headers for
 * every route, then the route plugins per concern (`routes/`: roots and documentation, the generic model
 * endpoints, allocation, webhook retries). Behaviour follows the seed (Endpoints, Authentication, Errors,
 * Limits) and Nautobot 1.6 at API version 1.2 (nautobot-api-core.md).
 */

import Fastify, { type FastifyInstance, LogController } from "fastify";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Registry } from "../registry/index.ts";
import { knownDefinitionsToken, makeCtx } from "../service/context.ts";
import { AppError, PermissionDenied } from "../service/errors.ts";
import { LoginLimiter } from "../service/login-limit.ts";
import { type Grants, loadGrants } from "../service/permissions.ts";
import { actorFromSessionCookie } from "../service/sessions.ts";
import type { Store } from "../store/db.ts";
import { markWrite, writeMark } from "../store/replica.ts";
import { asOfRequest } from "./as-of.ts";
import { type Auth, authenticate, clearTokenCache } from "./auth.ts";
import { registerRequestDeadline } from "./deadline.ts";
import { mapError } from "./errors.ts";
import { pythonJsonError } from "./json-error.ts";
import { makeKit, queryParams } from "./kit.ts";
import { allocationRoutes } from "./routes/allocation.ts";
import { cablePathRoutes } from "./routes/cable-paths.ts";
import { changeRoutes } from "./routes/changes.ts";
import { deliveryRoutes } from "./routes/deliveries.ts";
import { elevationRoutes } from "./routes/elevation.ts";
import { historyRoutes } from "./routes/history.ts";
import { installMetrics } from "./routes/metrics.ts";
import { modelRoutes } from "./routes/models.ts";
import { objectActionRoutes } from "./routes/object-actions.ts";
import { rootRoutes } from "./routes/roots.ts";
import { upsertRoutes } from "./routes/upsert.ts";
import { registerSecurityHeaders } from "./security.ts";
import { API_VERSIONS, DEFAULT_API_VERSION } from "./versions.ts";

export { LoginLimiter } from "../service/login-limit.ts";
export { HARD_PAGE_CEILING } from "./kit.ts";
export { API_VERSIONS, DEFAULT_API_VERSION, VERSION } from "./versions.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
/**
 * The path of one object's detail (`/api/<app>/<model>/<id>/`, routes/models.ts) or of its trace or paths
 * (routes/cable-paths.ts): routes that read that object first, with `kit.rowFor`.
 */
const DETAIL = /^\/api\/[^/]+\/[^/]+\/[^/]+\/(?:trace\/|paths\/)?$/;

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route needs a login even with anonymous reads enabled (GraphQL, `/api/status/`; issue 23). */
    loginRequired?: boolean;
    /** The route reads history at `as_of`/`as_of_seq` (http/as-of.ts; issue 27). */
    asOf?: boolean;
  }
  interface FastifyRequest {
    auth: Auth;
    /** Object permissions of a non-superuser (undefined: superuser or anonymous). */
    grants: Grants | undefined;
    apiVersion: string;
    indent: number;
    startNs: bigint;
    /** The data token read at arrival (GET/HEAD): the key of the cross-request read cache. */
    dataToken: string | undefined;
    /** The definitions token read when the request arrived (`Store.freshTokens`). */
    definitionsToken: string | undefined;
    /** A write's assumed definitions token instead (service/context.ts `Ctx.assumedDefinitions`). */
    assumedDefinitions: string | undefined;
    /** The tokens are read later, with the object the request reads first (`HttpKit.rowFor`). */
    tokensDeferred: boolean | undefined;
    /** The replica's database when this read goes there (`--database-replica`). */
    readDb: Kysely<any> | undefined;
    /** The point of history this read reflects (`as_of`/`as_of_seq`, http/as-of.ts). */
    asOfSeq: number | undefined;
  }
}

/** Dependencies of the app. */
export interface AppDeps {
  store: Store;
  reg: Registry;
  config: Config;
  logger?: Logger | false;
  /** The limiter of every password check, shared with the web login (a new one when not given). */
  loginLimiter?: LoginLimiter;
}

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
  const loginLimiter = deps.loginLimiter ?? new LoginLimiter(config.loginLimits);
  const settings = {
    enforceGlobalUnique: config.enforceGlobalUnique,
    webhookTargets: config.webhookTargets,
    webhookRedactHeaders: config.webhookRedactHeaders,
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
      // Python's wording of the first error, as Nautobot's DRF parser reports it (json-error.ts).
      done(
        new AppError(400, `JSON parse error - ${pythonJsonError(text) ?? (e as Error).message}`),
        undefined,
      );
    }
  });

  const kit = makeKit(store, reg, config, settings);
  const send = kit.send;

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
    // The web interface's session also opens the browsable API, for reading only: a session carries no
    // CSRF token here, so writes still need a token (as DRF's SessionAuthentication would need CSRF).
    if (!req.auth.actor && !req.headers.authorization && SAFE.has(req.method) && req.headers.cookie) {
      const actor = await actorFromSessionCookie(store, req.headers.cookie);
      if (actor) req.auth = { actor, writeEnabled: false };
    }
    // Reads (and GraphQL, which only reads) take the data token now, before anything is read. With a
    // replica they go there, unless it has not yet replayed this user's last write (read-your-writes).
    // Writes take only the definitions token (their data is read inside their transaction); where reading it
    // costs a round trip they assume the one this process last read, which their transaction checks.
    if (await asOfRequest(req, reply, { store, reg, settings })) {
      // A read at a point of history: its own handle, nothing shared with live reads.
    } else if (
      (req.method === "GET" || req.method === "HEAD") &&
      store.rowWithTokens &&
      !store.replica &&
      DETAIL.test(path)
    ) {
      // One object's detail, trace or paths: the route reads the tokens with the object (`kit.rowFor`).
      req.tokensDeferred = true;
    } else if (SAFE.has(req.method) || path === "/api/graphql/") {
      const replica = store.replica;
      const state = replica
        ? await replica.state(req.auth.actor ? await writeMark(store.db, req.auth.actor.id) : undefined)
        : undefined;
      if (replica && state?.caughtUp) {
        req.readDb = replica.db;
        req.dataToken = state.tokens.data;
        req.definitionsToken = state.tokens.definitions;
      } else ({ data: req.dataToken, definitions: req.definitionsToken } = await store.freshTokens());
    } else if (req.auth.actor) {
      const known = store.assumeDefinitions ? knownDefinitionsToken(store) : undefined;
      if (known !== undefined) req.assumedDefinitions = known;
      else req.definitionsToken = (await store.freshTokens()).definitions;
    }
    req.grants =
      req.auth.actor && !req.auth.actor.isSuperuser
        ? await loadGrants(makeCtx({ store, reg, settings }), req.auth.actor)
        : undefined;
    if (path.endsWith("/")) {
      if (!req.auth.actor) {
        // Anonymous reads (--anonymous-read) cover the inventory models' routes only: a route that reads
        // more (GraphQL, /api/status/) says `config: { loginRequired: true }` (issue 23).
        const anonymous = config.anonymousRead && (req.method === "GET" || req.method === "HEAD");
        if (!anonymous || req.routeOptions.config?.loginRequired) {
          throw new AppError(403, "Authentication credentials were not provided.");
        }
      } else if (!SAFE.has(req.method) && !req.auth.writeEnabled && path !== "/api/graphql/") {
        // A GraphQL POST only reads: a read-only token may send it (Nautobot's view needs IsAuthenticated).
        throw new PermissionDenied();
      }
    }
  });

  // With a replica: record where this user's write left the primary's WAL, before the client can read.
  app.addHook("onSend", async (req, reply, payload) => {
    const reads = SAFE.has(req.method) || req.url.split("?")[0] === "/api/graphql/";
    if (store.replica && !reads && req.auth?.actor && reply.statusCode < 400)
      await markWrite(store.db, req.auth.actor.id);
    return payload;
  });

  app.addHook("onResponse", async (req, reply) => {
    // Token and user writes: the API's, and the web profile's (`/user/…`, issue 25: a deleted token stops
    // working at once in this process).
    if (!SAFE.has(req.method) && (req.url.startsWith("/api/users/") || req.url.startsWith("/user/")))
      clearTokenCache();
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

  // Liveness probe and the benchmark's framework floor: no auth, no database. Nautobot's `/health/`, which
  // checks the database, is in routes/roots.ts.
  app.get("/health", async (_req, reply) =>
    reply.header("Content-Type", "application/json").send('{"status":"ok"}'),
  );

  installMetrics(app, kit);
  await app.register(rootRoutes, { kit });
  await app.register(deliveryRoutes, { kit });
  await app.register(allocationRoutes, { kit });
  await app.register(cablePathRoutes, { kit });
  await app.register(objectActionRoutes, { kit });
  await app.register(changeRoutes, { kit });
  await app.register(elevationRoutes, { kit });
  await app.register(upsertRoutes, { kit });
  await app.register(historyRoutes, { kit });
  await app.register(modelRoutes, { kit });

  return app;
}
