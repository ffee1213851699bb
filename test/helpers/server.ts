/**
 * Test helper: a real server on a real database. The engine comes from TEST_DB (`sqlite`, the default,
 * or `postgres`, using TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test with a fresh schema per
 * server). Each server gets a superuser `admin` and a write token; `close()` drops everything.
 * Servers of test files under test/hostile/ are watched by the latency guard (health-guard.ts): `close()`
 * fails when `/health` was ever slower than its threshold while the server ran.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { type Config, configFromEnv } from "../../src/config.ts";
import { registry } from "../../src/registry/index.ts";
import { buildServer } from "../../src/server.ts";
import { createToken, ensureSuperuser } from "../../src/service/accounts.ts";
import { openStore, type Store } from "../../src/store/db.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openReplica } from "../../src/store/replica.ts";
import { WebhookWorker, type WorkerSettings, workerSettingsFromEnv } from "../../src/webhooks/worker.ts";
import {
  assertGuardMayStart,
  assertHealthy,
  type HealthReport,
  healthGuardWanted,
  startHealthGuard,
} from "./health-guard.ts";

export const ENGINE = (process.env.TEST_DB ?? "sqlite") as "sqlite" | "postgres";

/** A running test server. */
export interface TestServer {
  url: string;
  token: string;
  store: Store;
  /** The database URL (for child processes such as `inventory worker`). */
  databaseUrl: string;
  /** The in-process webhook worker, when started with `worker`. */
  worker: WebhookWorker | undefined;
  /** fetch relative to the server with the admin token and JSON headers. */
  api(
    path: string,
    init?: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * Stop the server and drop its database.
   * @throws Error after cleaning up, when the health guard was on and `/health` was too slow at some point.
   */
  close(): Promise<void>;
  /** What the health guard has seen so far, final after `close()` (undefined when the guard is off). */
  health?: HealthReport;
}

/**
 * The URL of a fresh, empty database of `engine` (a new PostgreSQL schema, or a new SQLite file named with
 * `label`) and the function that removes it.
 */
export function freshDatabase(
  engine: "sqlite" | "postgres",
  label: string,
): { url: string; cleanup: () => Promise<void> } {
  if (engine === "postgres") {
    const schema = `t_${randomBytes(6).toString("hex")}`;
    const base = process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    return {
      url: `${base}${base.includes("?") ? "&" : "?"}schema=${schema}`,
      cleanup: async () => {
        const admin = await openStore(base);
        await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(admin.db);
        await sql.raw(`DROP SCHEMA IF EXISTS "${schema}_asof" CASCADE`).execute(admin.db);
        await admin.close();
      },
    };
  }
  const file = join(tmpdir(), `inventory-${label}-${randomUUID()}.sqlite3`);
  return {
    url: `sqlite:${file}`,
    cleanup: async () => {
      for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
    },
  };
}

/** Start a server on a fresh database (of `opts.engine`, default TEST_DB). */
export async function startServer(
  overrides: Partial<Config> = {},
  opts: {
    worker?: Partial<WorkerSettings>;
    engine?: "sqlite" | "postgres";
    /** Serve this existing database (a second process's view of another server's data); kept at close. */
    databaseUrl?: string;
    /** Poll `/health` while the server runs and fail `close()` when too slow (default: under test/hostile/). */
    healthGuard?: boolean;
    /**
     * The guard's floor in ms instead of 200, for a test whose load is many large pages at once (each within
     * the bound, together not): say why where it is used.
     */
    healthFloorMs?: number;
  } = {},
): Promise<TestServer> {
  const guarded = opts.healthGuard ?? healthGuardWanted();
  if (guarded) assertGuardMayStart(opts.healthFloorMs);
  let url: string;
  let cleanup: () => Promise<void> = async () => {};
  if (opts.databaseUrl) url = opts.databaseUrl;
  else ({ url, cleanup } = freshDatabase(opts.engine ?? ENGINE, "test"));
  const store = await openStore(url);
  const reg = registry();
  await migrate(store, reg);
  const { id: userId } = await ensureSuperuser(store, "admin", "admin");
  const token = await createToken(store, userId);
  const config = { ...configFromEnv({}), databaseUrl: url, ...overrides };
  if (config.databaseReplicaUrl) store.replica = await openReplica(config.databaseReplicaUrl);
  const app = await buildServer({
    store,
    reg,
    config,
    logger: process.env.TEST_LOG ? (await import("pino")).default({ level: "error" }) : false,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const base = `http://127.0.0.1:${port}`;
  let worker: WebhookWorker | undefined;
  if (opts.worker) {
    worker = new WebhookWorker(store, { ...workerSettingsFromEnv({}, "test"), ...opts.worker });
    worker.start();
  }
  const guard = guarded ? await startHealthGuard(base, opts.healthFloorMs) : undefined;
  const server: TestServer = {
    health: guard?.report,
    url: base,
    token,
    store,
    databaseUrl: url,
    worker,
    async api(path, init = {}) {
      const headers: Record<string, string> = { Accept: "application/json", ...(init.headers ?? {}) };
      const tok = init.token === undefined ? token : init.token;
      if (tok) headers.Authorization = `Token ${tok}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        headers["Content-Type"] ??= "application/json";
        body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      }
      const res = await fetch(path.startsWith("http") ? path : `${base}${path}`, {
        method: init.method ?? "GET",
        headers,
        body,
        redirect: "manual",
      });
      const text = await res.text();
      let parsed: any = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      if (guard) await guard.stop();
      await app.close();
      await worker?.stop();
      await store.replica?.close();
      await store.close();
      await cleanup();
      if (server.health) {
        if (process.env.INVENTORY_TEST_HEALTH_REPORT)
          process.stderr.write(`health guard ${process.argv[1]}: ${JSON.stringify(server.health)}\n`);
        assertHealthy(server.health, `server ${base}`);
      }
    },
  };
  return server;
}
