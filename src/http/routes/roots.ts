/**
 * The API root, the app roots, `/api/status/`, the API documentation (Swagger UI from its npm package, no
 * CDN; the document derived from the registry) and the small fixed endpoints pynautobot asks for
 * (nautobot-api-core.md §1).
 */
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { sql } from "kysely";
import YAML from "yaml";
import { APPS } from "../../registry/index.ts";
import { AppError, NotFoundError } from "../../service/errors.ts";
import { liveWorkers, outboxStats } from "../../service/outbox.ts";
import type { HttpKit } from "../kit.ts";
import { openapiDocument } from "../openapi.ts";
import { API_VERSIONS, VERSION } from "../versions.ts";

/** How long `/health/` waits for the database before reporting it unavailable, in milliseconds. */
const HEALTH_TIMEOUT_MS = 5000;

/** Root, status, documentation and app-root routes. */
export async function rootRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  // ---- roots ------------------------------------------------------------------------------------
  app.get("/api/", async (req, reply) => {
    const b = kit.baseUrl(req);
    const body: Record<string, string> = {};
    for (const a of [
      "circuits",
      "dcim",
      "extras",
      "graphql",
      "ipam",
      "plugins",
      "status",
      "tenancy",
      "users",
      "virtualization",
    ]) {
      body[a] = `${b}/api/${a}/`;
    }
    // Extensions (issue 26), after Nautobot's keys: the change feed and its stream.
    body["changes-feed"] = `${b}/api/extras/object-changes/feed/`;
    body["changes-stream"] = `${b}/api/extras/object-changes/stream/`;
    reply.header("Allow", "GET, HEAD, OPTIONS");
    return kit.send(req, reply, 200, body);
  });

  // Counts, versions and worker state are not inventory: a login even with anonymous reads (issue 23).
  app.get("/api/status/", { config: { loginRequired: true } }, async (req, reply) => {
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
      const m = kit.reg.get(key);
      const r: any = await kit.store.db
        .selectFrom(m.table)
        .select((eb: any) => eb.fn.countAll().as("n"))
        .executeTakeFirst();
      counts[key] = Number(r?.n ?? 0);
    }
    // Nautobot's keys in its order (django-version … celery-workers-running), then ours. There is no Django
    // or Python here: their versions are null and `node-version` names our runtime. `installed-apps` holds
    // the Nautobot apps this server serves, under Nautobot's names, without versions (as Nautobot lists
    // its own apps); Django's and the libraries' entries are not ours to claim.
    return kit.send(req, reply, 200, {
      "django-version": null,
      "installed-apps": Object.fromEntries(
        APPS.filter((a) => a !== "plugins").map((a) => [`nautobot.${a}`, null]),
      ),
      "nautobot-version": "1.6.32",
      plugins: {},
      "python-version": null,
      "rq-workers-running": 0,
      // Nautobot counts Celery workers; ours are the webhook workers (in `serve` or `inventory worker`).
      "celery-workers-running": await liveWorkers(kit.ctxFor(req)),
      "inventory-version": VERSION,
      "node-version": process.versions.node,
      "database-engine": kit.store.dialect.engine,
      "api-versions": API_VERSIONS,
      counts,
      // Ours (issue 13): the database as this process sees it, and the webhook outbox.
      database: {
        engine: kit.store.dialect.engine,
        pool: kit.store.poolStats() ?? null,
        replica: kit.store.replica
          ? { "lag-seconds": await kit.store.replica.lagSeconds().catch(() => null) }
          : null,
      },
      "webhook-outbox": await (async () => {
        const o = await outboxStats(kit.ctxFor(req));
        return { depth: o.depth, "oldest-due-seconds": Math.round(o.oldestDueSeconds), states: o.byState };
      })(),
    });
  });

  /**
   * Nautobot's `/health/` (django-health-check) as JSON: `{"<check>": "working"}`, 200 when every check
   * works, else 500 with `"unavailable: <reason>"` for the failing check. Ours has one check, the database
   * (`DatabaseBackend`, Nautobot's name: a `SELECT 1`, failing after HEALTH_TIMEOUT_MS); Nautobot's file
   * storage and Redis checks have nothing to check here. No login, as Nautobot. `/health` (no slash) stays
   * the liveness probe without a database (`http/app.ts`).
   */
  app.get("/health/", async (_req, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const database = await Promise.race([
      sql`SELECT 1`.execute(kit.store.db).then(() => "working"),
      new Promise<string>((resolve) => {
        timer = setTimeout(
          () => resolve("unavailable: Database error (no answer in time)"),
          HEALTH_TIMEOUT_MS,
        );
      }),
    ])
      .catch(() => "unavailable: Database error")
      .finally(() => clearTimeout(timer));
    return reply
      .code(database === "working" ? 200 : 500)
      .header("Content-Type", "application/json")
      .send(JSON.stringify({ DatabaseBackend: database }));
  });

  // openapiDocument builds the document once and only sets `servers` per call.
  const docFor = (req: FastifyRequest) => openapiDocument(kit.reg, kit.baseUrl(req));
  // Interactive documentation: Swagger UI from its npm package (no CDN) over the registry's document.
  await app.register(fastifySwagger, {
    mode: "static",
    specification: { document: openapiDocument(kit.reg, "") as any },
  });
  await app.register(fastifySwaggerUi, {
    routePrefix: "/api/docs",
    uiConfig: { docExpansion: "none", deepLinking: true },
    transformSpecification: (_doc: unknown, req: FastifyRequest) => docFor(req),
    transformSpecificationClone: false,
  });
  app.get("/api/swagger.json", async (req, reply) => kit.send(req, reply, 200, docFor(req)));
  app.get("/api/swagger.yaml", async (req, reply) =>
    reply
      .type("application/yaml; charset=utf-8")
      .send(YAML.stringify(docFor(req), { aliasDuplicateObjects: false })),
  );

  app.get("/api/plugins/", async (req, reply) =>
    kit.send(req, reply, 200, { "installed-plugins": `${kit.baseUrl(req)}/api/plugins/installed-plugins/` }),
  );
  app.get("/api/plugins/installed-plugins/", async (req, reply) => kit.send(req, reply, 200, []));
  app.get("/api/users/config/", async (req, reply) => kit.send(req, reply, 200, {}));

  app.all("/api/:app/", async (req, reply) => {
    const { app: appName } = req.params as { app: string };
    if (!(APPS as readonly string[]).includes(appName) || appName === "plugins") throw new NotFoundError();
    if (req.method !== "GET" && req.method !== "HEAD")
      throw new AppError(405, `Method "${req.method}" not allowed.`);
    const body: Record<string, string> = {};
    // Views beside the models (Nautobot's routers register them on the app root too).
    const extra: Record<string, string[]> = {
      users: ["config"],
      dcim: ["connected-device", "console-connections", "interface-connections", "power-connections"],
    };
    const entries = [...kit.reg.appModels(appName).map((m) => m.path), ...(extra[appName] ?? [])].sort();
    for (const p of entries) body[p] = `${kit.baseUrl(req)}/api/${appName}/${p}/`;
    return kit.send(req, reply, 200, body);
  });
}
