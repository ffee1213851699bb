/**
 * `inventory serve --workers N` (issue 13): N API processes on one port through `node:cluster`. The primary
 * migrates once, runs the webhook worker and forks the API processes; each child opens its own store (its
 * own PostgreSQL pool, or its own SQLite connection in WAL mode with the write-lock wait) and serves. A
 * child that dies is replaced; SIGTERM to the primary stops the children first (issue 24: it waits for each
 * to finish its requests and exit, and kills what is left at its deadline, so nothing outlives it).
 *
 * Connections are accepted by the children themselves from the shared listening socket
 * (`cluster.SCHED_NONE`), not handed out by the primary (issue 23): under node's round-robin scheduling the
 * primary accepts each connection and passes it to a child over IPC, keeping its own copy of the socket open
 * until the child acknowledges it (`RoundRobinHandle.handoff` in node's lib/internal/cluster); a child
 * SIGKILLed before acknowledging never does, so that client hung until its own timeout. Now a dead child's
 * connections close with it (the client sees a reset at once) and the backlog goes to the others.
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

/** Time an API child has after SIGTERM to finish its requests and close (ms). */
export const CHILD_GRACE_MS = 10_000;
/**
 * Time the primary gives its children to exit after forwarding SIGTERM (ms), after which it SIGKILLs them;
 * longer than their own grace. The primary's own shutdown deadline must be longer still.
 */
export const CHILDREN_STOP_MS = CHILD_GRACE_MS + 2_000;
/** The shutdown deadline of a `serve --workers` primary (ms): its children's, then its own clean-up. */
export const PRIMARY_GRACE_MS = CHILDREN_STOP_MS + 5_000;

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
  // A second SIGTERM (the primary forwards one that the whole process group also got) changes nothing: the
  // primary enforces the deadline.
  closeWithGrace({ delay: CHILD_GRACE_MS, onSecondSignal: () => {} }, async () => {
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
  const restarts = new Set<NodeJS.Timeout>();
  // Must precede the first fork (read by cluster.setupPrimary); see the module comment.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Whatever way this process ends (a deadline, a second signal, an error), its children end with it.
  process.once("exit", () => {
    for (const w of Object.values(cluster.workers ?? {})) if (w && !w.isDead()) w.process.kill("SIGKILL");
  });
  /** Fork a replacement after `ms`; one that fails to start is tried again, at most every 10 s. */
  const restart = (ms: number): void => {
    const t = setTimeout(() => {
      restarts.delete(t);
      if (stopping) return;
      fork().catch((e) => {
        if (stopping) return;
        logger.error({ err: e }, "cannot restart; trying again");
        restart(Math.min(ms * 2, 10_000));
      });
    }, ms);
    restarts.add(t);
    t.unref();
  };
  const fork = (): Promise<Worker> =>
    new Promise((ready, failed) => {
      const w = cluster.fork({ [DB_ENV]: databaseUrl });
      const early = (code: number | null, signal: string | null) =>
        failed(new Error(`an API process exited at start (${signal ?? `code ${code}`})`));
      w.once("exit", early);
      w.once("listening", () => {
        w.off("exit", early);
        w.once("exit", (code, signal) => {
          if (stopping) return;
          logger.error({ pid: w.process.pid, code, signal }, "API process exited; starting another");
          restart(500);
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
    for (const t of restarts) clearTimeout(t);
    restarts.clear();
    // Every child, including one still starting; each is waited for until CHILDREN_STOP_MS, then killed.
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    await Promise.all(
      alive.map(
        (w) =>
          new Promise<void>((done) => {
            const kill = setTimeout(() => {
              logger.warn({ pid: w.process.pid }, "API process still running at the deadline; killing it");
              w.process.kill("SIGKILL");
            }, CHILDREN_STOP_MS);
            w.process.once("exit", () => {
              clearTimeout(kill);
              done();
            });
            if (w.process.exitCode !== null || w.process.signalCode !== null) {
              clearTimeout(kill);
              done();
            } else w.process.kill("SIGTERM");
          }),
      ),
    );
  };
}
