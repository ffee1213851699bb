/**
 * CLI command implementations. Each receives parsed options, does its work through the service layer,
 * and throws an Error with a one-line message on failure (the entry point prints it and exits with 2).
 */
import { existsSync, rmSync } from "node:fs";
import closeWithGrace from "close-with-grace";
import pino from "pino";
import { type Config, configFromEnv } from "../config.ts";
import { VERSION } from "../http/app.ts";
import { registry } from "../registry/index.ts";
import { buildServer } from "../server.ts";
import { createToken, ensureSuperuser } from "../service/accounts.ts";
import { ensurePaths } from "../service/cable-paths.ts";
import { makeCtx } from "../service/context.ts";
import { ensureChoiceRows, ensureNullImages, ensureTagContentTypes } from "../service/upgrades.ts";
import { openStore, type Store, sqlitePath } from "../store/db.ts";
import { type MigrationSummary, migrate } from "../store/migrate.ts";
import { openReplica } from "../store/replica.ts";
import { backupSqliteFile } from "../store/sqlite-driver.ts";
import { startReceiver } from "../webhooks/receiver.ts";
import { WebhookWorker, workerSettingsFromEnv } from "../webhooks/worker.ts";
import { forkApiProcesses, isClusterChild, PRIMARY_GRACE_MS, serveChild } from "./cluster.ts";
import { exitWithParent } from "./lifecycle.ts";

export interface DbOpts {
  database?: string;
}

/** The file of a `sqlite:PATH` URL (undefined for PostgreSQL and `:memory:`). */
function sqliteFile(url: string): string | undefined {
  const path = sqlitePath(url);
  return path === ":memory:" ? undefined : path;
}

/** A SQLite file that must already hold a database (outside `migrate` and `serve`). @throws Error */
function mustExist(file: string, url: string): void {
  if (!existsSync(file))
    throw new Error(
      `no database at ${file}; check --database (or INVENTORY_DATABASE_URL), or create it with: inventory migrate --database ${url}`,
    );
}

/**
 * Open the database of a command. Only `migrate` and `serve` create a SQLite file; elsewhere a path with no
 * database behind it is a mistake (a typo would otherwise get a new empty database) and an error.
 */
export async function open(opts: DbOpts, create = false): Promise<Store> {
  return (await openAndMigrate(opts, create)).store;
}

/** `open`, also returning what the migration created. */
async function openAndMigrate(
  opts: DbOpts,
  create: boolean,
): Promise<{ store: Store; migration: MigrationSummary }> {
  const url = opts.database ?? configFromEnv().databaseUrl;
  const file = sqliteFile(url);
  if (!create && file) mustExist(file, url);
  const store = await openStore(url);
  const migration = await upgrade(store);
  return { store, migration };
}

/** Schema migration, then one-time data upgrades (cable paths of cables that predate stored paths). */
async function upgrade(store: Store): Promise<MigrationSummary> {
  const migration = await migrate(store, registry());
  const ctx = makeCtx({ store, reg: registry(), settings: { enforceGlobalUnique: false, changelog: false } });
  await ensurePaths(ctx);
  await ensureChoiceRows(ctx);
  await ensureNullImages(ctx);
  await ensureTagContentTypes(ctx);
  return migration;
}

/** `inventory migrate` */
export async function runMigrate(opts: DbOpts): Promise<void> {
  const { store, migration } = await openAndMigrate(opts, true);
  await store.close();
  const name = `database ${store.url.replace(/\/\/[^@]*@/, "//")}`;
  const { tablesCreated, columnsAdded } = migration;
  const what = [
    tablesCreated ? `created ${tablesCreated} table${tablesCreated === 1 ? "" : "s"}` : "",
    columnsAdded ? `added ${columnsAdded} column${columnsAdded === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  process.stdout.write(
    what.length ? `${name}: ${what.join(", ")}; schema is up to date\n` : `${name} is up to date\n`,
  );
}

/** `inventory backup --to FILE`: a consistent copy of a SQLite database, taken while it serves. */
export async function runBackup(opts: DbOpts & { to: string }): Promise<void> {
  const url = opts.database ?? configFromEnv().databaseUrl;
  const file = sqliteFile(url);
  if (!file)
    throw new Error("backup copies SQLite databases; for PostgreSQL use pg_dump (see docs/DEPLOYMENT.md)");
  mustExist(file, url);
  if (existsSync(opts.to)) throw new Error(`${opts.to} exists; choose a new file`);
  const pages = await backupSqliteFile(file, opts.to);
  process.stdout.write(`backed up ${file} to ${opts.to} (${pages} pages)\n`);
}

/** `inventory createsuperuser` */
export async function runCreateSuperuser(
  opts: DbOpts & { username: string; password: string },
): Promise<void> {
  const store = await open(opts);
  try {
    const { created } = await ensureSuperuser(store, opts.username, opts.password);
    process.stdout.write(`superuser ${opts.username} ${created ? "created" : "updated"}\n`);
  } finally {
    await store.close();
  }
}

/** `inventory token create`: prints the key alone on stdout. */
export async function runTokenCreate(
  opts: DbOpts & { username: string; key?: string; readOnly?: boolean },
): Promise<void> {
  if (opts.key !== undefined && !/^[0-9a-fA-F]{40}$/.test(opts.key))
    throw new Error("--key must be 40 hexadecimal digits");
  const store = await open(opts);
  try {
    const user = await store.db
      .selectFrom("users_user")
      .select("id")
      .where("username", "=", opts.username)
      .executeTakeFirst();
    if (!user) throw new Error(`no user named ${opts.username}`);
    const key = await createToken(store, user.id as string, {
      ...(opts.key ? { key: opts.key.toLowerCase() } : {}),
      writeEnabled: !opts.readOnly,
    });
    process.stdout.write(`${key}\n`);
  } finally {
    await store.close();
  }
}

/** Options of `inventory serve`. */
export interface ServeOpts extends DbOpts {
  host?: string;
  port?: string;
  anonymousRead?: boolean;
  trustProxy?: boolean;
  demo?: boolean;
  worker?: boolean;
  workers?: string;
  databaseReplica?: string;
}

/** The server configuration from the environment and `serve`'s flags. */
function serveConfig(opts: ServeOpts): Config {
  const config: Config = configFromEnv();
  if (opts.host) config.host = opts.host;
  if (opts.port) {
    if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535) throw new Error(`invalid --port ${opts.port}`);
    config.port = Number(opts.port);
  }
  if (opts.database) config.databaseUrl = opts.database;
  if (opts.databaseReplica) {
    config.databaseReplicaUrl = opts.databaseReplica;
    process.env.INVENTORY_DATABASE_REPLICA_URL = opts.databaseReplica; // for `--workers` children
  }
  if (opts.anonymousRead) config.anonymousRead = true;
  if (opts.trustProxy) config.trustProxy = true;
  return config;
}

/**
 * `inventory serve`: migrate, then serve. With `--workers N` (N > 1) this process migrates once, runs the
 * webhook worker and forks N API processes sharing the port (`node:cluster`, see cli/cluster.ts).
 */
export async function runServe(opts: ServeOpts): Promise<void> {
  const workers = opts.workers === undefined ? 1 : Number(opts.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new Error(`invalid --workers ${opts.workers} (1 to 64)`);
  const config = serveConfig(opts);
  if (isClusterChild()) return serveChild(config);
  const logger = pino({ level: config.logLevel });
  let demoToken: string | undefined;
  /** The temporary demo database, removed at shutdown (with its WAL files). */
  let demoFile: string | undefined;
  if (opts.demo) {
    const { prepareDemo } = await import("../importer/demo.ts");
    const demo = await prepareDemo(opts.database);
    config.databaseUrl = demo.databaseUrl;
    demoToken = demo.token;
    if (!opts.database) demoFile = sqliteFile(demo.databaseUrl);
  }
  const store = await openStore(config.databaseUrl);
  await upgrade(store);
  if (config.databaseReplicaUrl) await attachReplica(store, config.databaseReplicaUrl);
  const worker =
    opts.worker === false
      ? undefined
      : new WebhookWorker(store, workerSettingsFromEnv(process.env, VERSION), logger);
  let stopServing: () => Promise<void>;
  if (workers > 1) stopServing = await forkApiProcesses(workers, config.databaseUrl, logger);
  else {
    const app = await buildServer({ store, reg: registry(), config, logger });
    await app.listen({ host: config.host, port: config.port });
    stopServing = () => app.close();
  }
  worker?.start();
  // Signal handlers before the announcement: a SIGTERM right after "listening" is a clean shutdown.
  closeWithGrace({ delay: workers > 1 ? PRIMARY_GRACE_MS : 10000 }, async ({ err }) => {
    if (err) logger.error({ err }, "shutting down after error");
    await stopServing();
    await worker?.stop();
    await store.replica?.close();
    await store.close();
    if (demoFile) for (const suffix of ["", "-wal", "-shm"]) rmSync(`${demoFile}${suffix}`, { force: true });
  });
  exitWithParent(); // issue 24: stopped with the wrapper that started it (`npx inventory serve`)
  const where = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`;
  // The UI first (issue 10), then the API, then how to get a login.
  process.stdout.write(`web interface: ${where}/\n`);
  process.stdout.write(
    `inventory listening on ${where}/api/ (database ${config.databaseUrl.replace(/\/\/[^@]*@/, "//")}${workers > 1 ? `, ${workers} API processes` : ""})\n`,
  );
  if (demoToken)
    process.stdout.write(`demo data loaded; API token (user admin / password admin): ${demoToken}\n`);
  else {
    // The hint names the database this server uses, so following it never touches another one.
    const db = /\/\/[^/@]*:[^/@]*@/.test(config.databaseUrl)
      ? "--database <the same URL, with its password>"
      : `--database '${config.databaseUrl}'`;
    process.stdout.write(
      `log in (web and API): npx inventory createsuperuser --username admin --password admin ${db}; API token: npx inventory token create --username admin ${db}\n`,
    );
  }
}

/** Open the read replica of `--database-replica` and attach it to the store (PostgreSQL only). */
export async function attachReplica(store: Store, url: string): Promise<void> {
  if (store.dialect.engine !== "postgres")
    throw new Error("--database-replica needs a PostgreSQL --database");
  store.replica = await openReplica(url);
}

/** `inventory worker`: deliver webhooks from the outbox until SIGINT/SIGTERM. */
export async function runWorker(opts: DbOpts & { concurrency?: string }): Promise<void> {
  const config = configFromEnv();
  const store = await open(opts);
  const settings = workerSettingsFromEnv(process.env, VERSION);
  if (opts.concurrency !== undefined) {
    if (!/^\d+$/.test(opts.concurrency) || Number(opts.concurrency) < 1)
      throw new Error(`invalid --concurrency ${opts.concurrency}`);
    settings.concurrency = Number(opts.concurrency);
  }
  const logger = pino({ level: config.logLevel });
  const worker = new WebhookWorker(store, settings, logger);
  worker.start();
  process.stdout.write(
    `webhook worker ${worker.id} running (database ${store.url.replace(/\/\/[^@]*@/, "//")})\n`,
  );
  exitWithParent();
  closeWithGrace({ delay: settings.timeoutMs + 5000 }, async () => {
    await worker.stop();
    await store.close();
  });
}

/** `inventory webhook-receiver` */
export async function runWebhookReceiver(opts: {
  port: string;
  host: string;
  headers: boolean;
}): Promise<void> {
  if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535) throw new Error(`invalid --port ${opts.port}`);
  const server = await startReceiver({
    port: Number(opts.port),
    host: opts.host,
    headers: opts.headers !== false,
    out: process.stdout,
  });
  closeWithGrace({ delay: 1000 }, async () => {
    process.stdout.write("\nExiting...\n");
    server.close();
  });
}

/** `inventory import netbox FILE` */
export async function runImportNetbox(
  file: string,
  opts: DbOpts & { strict?: boolean; user?: string },
): Promise<void> {
  const { importNetbox } = await import("../importer/netbox/run.ts");
  const store = await open(opts);
  try {
    const ok = await importNetbox({
      store,
      reg: registry(),
      file,
      strict: !!opts.strict,
      out: process.stdout,
      ...(opts.user ? { user: opts.user } : {}),
    });
    if (!ok) process.exitCode = 1;
  } finally {
    await store.close();
  }
}
