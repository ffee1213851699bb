/**
 * `GET /metrics` (issue 13): Prometheus metrics through prom-client. Per process: requests by route, method
 * and status, a latency histogram, Node's own metrics and the PostgreSQL pool. From the database (so any
 * process answers the same): outbox depth, age of the oldest due delivery, deliveries by state, live
 * webhook workers. Under `serve --workers N` every process's figures are aggregated by the primary.
 *
 * Issue 23: who may scrape is configured (`Config.metrics`: a Bearer token, loopback clients only, public,
 * or off), and the database figures are cached: read at most once per `INVENTORY_METRICS_CACHE` seconds,
 * in the background (a scrape answers with the figures it has and, when they are older, starts one
 * refresh; only the first scrape of a process waits for a read). `inventory_metrics_db_reads_total` counts
 * those reads and `inventory_metrics_db_age_seconds` tells how old the served figures are.
 */

import cluster from "node:cluster";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { MetricsConfig } from "../../config.ts";
import { makeCtx } from "../../service/context.ts";
import { liveWorkers, type OutboxStats, outboxStats } from "../../service/outbox.ts";
import type { HttpKit } from "../kit.ts";

/** The database figures of a scrape, with the time (ms since the epoch) they were read. */
interface DbFigures {
  at: number;
  stats: OutboxStats;
  workers: number;
}

/**
 * Install the metrics, the request hook that counts (on the root instance, so it sees every route) and the
 * route. Called directly by `buildApp`, not registered as an encapsulated plugin. Nothing is installed when
 * `config.metrics.mode` is `off` (`/metrics` is then a 404).
 */
export function installMetrics(app: FastifyInstance, kit: HttpKit): void {
  const settings = kit.config.metrics;
  if (settings.mode === "off") return;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "inventory_" });
  const requests = new Counter({
    name: "inventory_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status code.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "inventory_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route pattern and method.",
    labelNames: ["route", "method"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const reads = new Counter({
    name: "inventory_metrics_db_reads_total",
    help: "Reads of the database figures below (at most one per INVENTORY_METRICS_CACHE seconds).",
    registers: [registry],
    // Reported after this scrape's own read, if it had to wait for one (the first scrape).
    async collect() {
      await current();
    },
  });
  const ctx = () => makeCtx({ store: kit.store, reg: kit.reg, settings: kit.settings });
  let figures: DbFigures | undefined;
  let refreshing: Promise<void> | undefined;
  // One read at a time, whatever the number of scrapes; a failed read keeps the older figures.
  const refresh = () =>
    (refreshing ??= (async () => {
      try {
        const c = ctx();
        const [stats, workers] = await Promise.all([outboxStats(c), liveWorkers(c)]);
        figures = { at: Date.now(), stats, workers };
        reads.inc();
      } catch (err) {
        app.log.warn({ err }, "metrics: reading the database figures failed");
      } finally {
        refreshing = undefined;
      }
    })());
  /** The cached figures; a refresh starts, unawaited, when they are older than the cache period. */
  const current = async (): Promise<DbFigures | undefined> => {
    if (!figures) await refresh();
    else if (Date.now() - figures.at >= settings.cacheMs) void refresh();
    return figures;
  };
  new Gauge({
    name: "inventory_metrics_db_age_seconds",
    aggregator: "max",
    help: "Age of the database figures served (they are cached for INVENTORY_METRICS_CACHE seconds).",
    registers: [registry],
    async collect() {
      const f = await current();
      if (f) this.set((Date.now() - f.at) / 1000);
    },
  });
  new Gauge({
    name: "inventory_outbox_depth",
    aggregator: "first",
    help: "Webhook deliveries not finished yet (queued, sending or waiting to retry).",
    registers: [registry],
    async collect() {
      const f = await current();
      if (f) this.set(f.stats.depth);
    },
  });
  new Gauge({
    name: "inventory_outbox_oldest_due_seconds",
    aggregator: "first",
    help: "Seconds since the oldest due webhook delivery became due (0 when none is waiting).",
    registers: [registry],
    async collect() {
      const f = await current();
      if (f) this.set(f.stats.oldestDueSeconds);
    },
  });
  new Gauge({
    name: "inventory_webhook_deliveries",
    aggregator: "first",
    help: "Webhook deliveries in the outbox, by state (succeeded and failed are outcomes).",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      const f = await current();
      for (const [state, n] of Object.entries(f?.stats.byState ?? {})) this.set({ state }, n);
    },
  });
  new Gauge({
    name: "inventory_webhook_workers",
    aggregator: "first",
    help: "Webhook workers that reported in the last minute.",
    registers: [registry],
    async collect() {
      const f = await current();
      if (f) this.set(f.workers);
    },
  });
  new Gauge({
    name: "inventory_db_pool_connections",
    help: "PostgreSQL pool connections of this process, by state (total, idle, waiting requests).",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const p = kit.store.poolStats();
      if (!p) return;
      this.set({ state: "total" }, p.total);
      this.set({ state: "idle" }, p.idle);
      this.set({ state: "waiting" }, p.waiting);
    },
  });

  app.addHook("onResponse", async (req: FastifyRequest, reply: FastifyReply) => {
    const route = req.routeOptions?.url ?? "unmatched";
    const seconds = Number(process.hrtime.bigint() - req.startNs) / 1e9;
    requests.inc({ route, method: req.method, status: String(reply.statusCode) });
    latency.observe({ route, method: req.method }, seconds);
  });

  // Under `serve --workers N` a scrape reaches one API process: it asks the primary for every process's
  // metrics, aggregated (prom-client AggregatorRegistry; database-wide gauges taken once).
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries([registry]);
    new AggregatorRegistry();
  }
  app.get("/metrics", async (req, reply) => {
    const refused = refusal(settings, req);
    if (refused) {
      if (refused.status === 401) reply.header("WWW-Authenticate", 'Bearer realm="metrics"');
      return kit.send(req, reply, refused.status, { detail: refused.detail });
    }
    const all = cluster.isWorker ? await clusterMetrics().catch(() => undefined) : undefined;
    return reply.header("Content-Type", registry.contentType).send(all ?? (await registry.metrics()));
  });
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** Whether `ip` is a loopback address (127.0.0.0/8, ::1, or either mapped into IPv6). */
function loopback(ip: string): boolean {
  const v4 = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  return v4.startsWith("127.") || ip === "::1";
}

/**
 * Why `req` may not read the metrics, or undefined when it may: with a token, 401 unless it sends
 * `Authorization: Bearer <token>` (compared in constant time); without one (mode `on`), 403 unless the
 * client address (`req.ip`, the forwarded one under `--trust-proxy`) is loopback; `public` lets anyone.
 */
function refusal(
  settings: MetricsConfig,
  req: FastifyRequest,
): { status: number; detail: string } | undefined {
  if (settings.mode === "public") return undefined;
  if (settings.token !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ""));
    if (m && timingSafeEqual(sha256(m[1]!), sha256(settings.token))) return undefined;
    return { status: 401, detail: "Metrics need Authorization: Bearer <INVENTORY_METRICS_TOKEN>." };
  }
  if (loopback(req.ip)) return undefined;
  return {
    status: 403,
    detail:
      "Metrics are served to loopback clients only; set INVENTORY_METRICS_TOKEN (or INVENTORY_METRICS=public).",
  };
}

/** Message types between an API process and the primary of `serve --workers` (cli/cluster.ts). */
export const METRICS_REQUEST = "inventory:metrics";
export const METRICS_REPLY = "inventory:metrics:reply";

/** Ask the primary for the aggregated metrics of every API process (3 s at most). */
function clusterMetrics(): Promise<string | undefined> {
  if (!process.send) return Promise.resolve(undefined);
  const id = randomUUID();
  return new Promise((done) => {
    const timer = setTimeout(() => finish(undefined), 3000);
    const onMessage = (m: { type?: string; id?: string; text?: string }) => {
      if (m?.type === METRICS_REPLY && m.id === id) finish(m.text || undefined);
    };
    const finish = (text: string | undefined) => {
      clearTimeout(timer);
      process.off("message", onMessage);
      done(text);
    };
    process.on("message", onMessage);
    process.send?.({ type: METRICS_REQUEST, id });
  });
}
