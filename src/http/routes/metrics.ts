/**
 * `GET /metrics` (issue 13): Prometheus metrics through prom-client. Per process: requests by route, method
 * and status, a latency histogram, Node's own metrics and the PostgreSQL pool. From the database at scrape
 * time (so any process answers the same): outbox depth, age of the oldest due delivery, deliveries by
 * state, live webhook workers. Under `serve --workers N` every process's figures are aggregated by the
 * primary. Needs no token, as Nautobot's `/metrics`; it carries no inventory data.
 */

import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { makeCtx } from "../../service/context.ts";
import { liveWorkers, outboxStats } from "../../service/outbox.ts";
import type { HttpKit } from "../kit.ts";

/**
 * Install the metrics, the request hook that counts (on the root instance, so it sees every route) and the
 * route. Called directly by `buildApp`, not registered as an encapsulated plugin.
 */
export function installMetrics(app: FastifyInstance, kit: HttpKit): void {
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
  const ctx = () => makeCtx({ store: kit.store, reg: kit.reg, settings: kit.settings });
  // One read of the outbox per scrape, shared by the three gauges that report it.
  let scrape: { at: number; stats: ReturnType<typeof outboxStats> } | undefined;
  const stats = () => {
    if (!scrape || Date.now() - scrape.at > 500) scrape = { at: Date.now(), stats: outboxStats(ctx()) };
    return scrape.stats;
  };
  new Gauge({
    name: "inventory_outbox_depth",
    aggregator: "first",
    help: "Webhook deliveries not finished yet (queued, sending or waiting to retry).",
    registers: [registry],
    async collect() {
      this.set((await stats()).depth);
    },
  });
  new Gauge({
    name: "inventory_outbox_oldest_due_seconds",
    aggregator: "first",
    help: "Seconds since the oldest due webhook delivery became due (0 when none is waiting).",
    registers: [registry],
    async collect() {
      this.set((await stats()).oldestDueSeconds);
    },
  });
  new Gauge({
    name: "inventory_webhook_deliveries",
    aggregator: "first",
    help: "Webhook deliveries in the outbox, by state (succeeded and failed are outcomes).",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      for (const [state, n] of Object.entries((await stats()).byState)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: "inventory_webhook_workers",
    aggregator: "first",
    help: "Webhook workers that reported in the last minute.",
    registers: [registry],
    async collect() {
      this.set(await liveWorkers(ctx()));
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
  app.get("/metrics", async (_req, reply) => {
    const all = cluster.isWorker ? await clusterMetrics().catch(() => undefined) : undefined;
    return reply.header("Content-Type", registry.contentType).send(all ?? (await registry.metrics()));
  });
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
