/**
 * `inventory serve --workers N` (issue 13): N API processes on one port through `node:cluster`. The primary
 * migrates once, runs the webhook worker and forks the API processes; each child opens its own store (its
 * own PostgreSQL pool, or its own SQLite connection in WAL mode with the write-lock wait) and serves. A
 * child that dies is replaced; SIGTERM to the primary stops the children first.
 */
import cluster, { type Worker } from "node:cluster";
import closeWithGrace from "close-with-grace";
import pino from "pino";
import { AggregatorRegistry } from "prom-client";
import type { Config } from "../config.ts";
import { METRICS_REPLY, METRICS_REQUEST } from "../http/routes/metrics.ts";
import { registry } from "../registry/index.ts";
import { buildServer } from "../server.ts";
import { openStore } from "../store/db.ts";
import { attachReplica } from "./commands.ts";

const DB_ENV = "INVENTORY_CLUSTER_DATABASE_URL";

/** Whether this process is an API child of `serve --workers`. */
export function isClusterChild(): boolean {
  return cluster.isWorker && process.env[DB_ENV] !== undefined;
}

/** An API child: serve the primary's database (already migrated) until SIGTERM. */
export async function serveChild(config: Config): Promise<void> {
  config.databaseUrl = process.env[DB_ENV]!;
  const logger = pino({ level: config.logLevel });
  const store = await openStore(config.databaseUrl);
  if (config.databaseReplicaUrl) await attachReplica(store, config.databaseReplicaUrl);
  const app = await buildServer({ store, reg: registry(), config, logger });
  await app.listen({ host: config.host, port: config.port });
  closeWithGrace({ delay: 10000 }, async () => {
    await app.close();
    await store.replica?.close();
    await store.close();
  });
}

/**
 * Fork `n` API children and wait until each listens. Resolves to a function stopping them all (SIGTERM,
 * then their exit). Children that exit on their own are replaced after a short pause.
 */
export async function forkApiProcesses(
  n: number,
  databaseUrl: string,
  logger: pino.Logger,
): Promise<() => Promise<void>> {
  let stopping = false;
  const fork = (): Promise<Worker> =>
    new Promise((ready, failed) => {
      const w = cluster.fork({ [DB_ENV]: databaseUrl });
      const early = (code: number | null) =>
        failed(new Error(`an API process exited with code ${code} at start`));
      w.once("exit", early);
      w.once("listening", () => {
        w.off("exit", early);
        w.once("exit", (code, signal) => {
          if (stopping) return;
          logger.error({ pid: w.process.pid, code, signal }, "API process exited; starting another");
          setTimeout(() => void fork().catch((e) => logger.error({ err: e }, "cannot restart")), 500).unref();
        });
        ready(w);
      });
    });
  // Metrics of every API process, aggregated on request of the one a scrape reached (http/routes/metrics.ts).
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, m: { type?: string; id?: string }) => {
    if (m?.type !== METRICS_REQUEST) return;
    aggregator
      .clusterMetrics()
      .catch(() => "")
      .then((text) => worker.send({ type: METRICS_REPLY, id: m.id, text }));
  });
  await Promise.all(Array.from({ length: n }, fork));
  return async () => {
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    await Promise.all(
      alive.map(
        (w) =>
          new Promise<void>((done) => {
            w.once("exit", () => done());
            w.process.kill("SIGTERM");
          }),
      ),
    );
  };
}
