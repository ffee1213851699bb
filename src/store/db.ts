/**
 * Opening a store: the Kysely instance over SQLite (node:sqlite) or PostgreSQL (pg), plus its dialect.
 *
 * URLs: `sqlite:PATH` (also `sqlite::memory:`) or `postgres://user@host:port/db` (`postgresql://` too).
 * A `?schema=NAME` query parameter on a PostgreSQL URL sets the search path (used by tests).
 */
import { randomUUID } from "node:crypto";
import { CompiledQuery, Kysely, PostgresDialect, type Transaction } from "kysely";
import pg from "pg";
import { registry } from "../registry/index.ts";
import { type AsOfReader, pgAsOfReader, sqliteAsOfReader } from "./as-of.ts";
import { type Dialect, postgresDialect, quoteId, sqliteDialect } from "./dialect.ts";
import { namedQueries, wrapPgClient } from "./pg-connection.ts";
import type { Replica } from "./replica.ts";
import { NodeSqliteDatabase, NodeSqliteDialect } from "./sqlite-driver.ts";
import { versionBump, versionedTables } from "./version-bump.ts";

/** Any Kysely handle: the database or a transaction. */
export type Db = Kysely<any> | Transaction<any>;

/** The cache tokens of a request (`Store.freshTokens`). */
export interface Tokens {
  data: string | undefined;
  definitions: string | undefined;
}

/** The `inventory_meta` key whose value changes whenever a definition changes (`Store.freshTokens`). */
export const DEFINITIONS_KEY = "definitions";

/**
 * The `inventory_meta` key whose value changes whenever an IP address is updated or deleted, i.e. whenever
 * an address may have become free (service/allocation.ts keeps where the next free address was under it).
 */
export const ADDRESS_SPACE_KEY = "address-space";

/**
 * `inventory_meta` rows `tagged:<model>`: the models that carry (or once carried) a tag, written by the
 * transaction that tags the first object of a model and recomputed by migrations, read with the definitions
 * (service/rows.ts `taggedModels`). TAGGED_COMPLETE marks the list as complete (a migrated database).
 */
export const TAGGED_PREFIX = "tagged:";
export const TAGGED_COMPLETE = "tagged-models";

/**
 * Rewrite the definitions token (a new random value) in the caller's transaction: every process's cached
 * definitions stop being used once it commits (`Store.freshTokens`).
 */
export async function newDefinitionsToken(db: Db): Promise<void> {
  await newToken(db, DEFINITIONS_KEY);
}

/** Rewrite the token row `key` of `inventory_meta` (a new random value) in the caller's transaction. */
export async function newToken(db: Db, key: string): Promise<void> {
  await db
    .insertInto("inventory_meta")
    .values({ key, value: randomUUID() })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value: (eb: any) => eb.ref("excluded.value") }))
    .execute();
}

/** An open database. */
export interface Store {
  db: Kysely<any>;
  dialect: Dialect;
  url: string;
  close(): Promise<void>;
  /**
   * A token that changes whenever committed data may have changed, or undefined when the engine cannot
   * tell cheaply (then nothing may be cached across requests). SQLite: this process's commit counter
   * plus `PRAGMA data_version` (which changes on commits of other connections and processes).
   */
  dataToken(): string | undefined;
  /**
   * The tokens of a request, read when it arrives (one statement on PostgreSQL):
   * - `data`: SQLite's `dataToken()`; on PostgreSQL the current transaction snapshot
   *   (`pg_current_snapshot()`: xmin, xmax and the in-progress transaction ids), which changes when any
   *   write transaction of any process or connection commits;
   * - `definitions`: the `inventory_meta` row `definitions` (DEFINITIONS_KEY), a random value rewritten by
   *   every transaction that changes a definition (statuses, custom fields, relationships, computed fields,
   *   config contexts, webhooks), so definitions can be cached while ordinary data changes.
   * Each is undefined when it cannot be read (then nothing is cached on its account).
   */
  freshTokens(): Promise<Tokens>;
  /**
   * PostgreSQL: the row of `table` whose id is `id` and the request's tokens (as `freshTokens`), read by one
   * statement, so in one round trip and from one snapshot; without a row, no tokens (undefined). Absent
   * where tokens cost nothing (SQLite).
   */
  rowWithTokens?(
    table: string,
    id: string,
  ): Promise<{ row: Record<string, unknown> | undefined; tokens: Tokens }>;
  /**
   * Whether `freshTokens` costs a round trip (PostgreSQL): a write then assumes the definitions token of
   * the shared memo and has its transaction check it (service/context.ts `Ctx.assumedDefinitions`).
   */
  assumeDefinitions: boolean;
  /** The streaming replica reads may go to (`--database-replica`), when one is configured. */
  replica?: Replica;
  /**
   * Read handles at points of history (issue 27, store/as-of.ts); undefined for an in-memory SQLite
   * database, which no second connection can open.
   */
  asOf?: AsOfReader;
  /** Connections of the PostgreSQL pool (open, idle, requests waiting); undefined on SQLite. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  /** Record a commit made through this store (bumps the data token). */
  committed(): void;
  /**
   * Call `onEvent` when any process signals `channel` (PostgreSQL LISTEN on a dedicated connection; signals
   * are sent with `dialect.notifySql` inside a transaction and arrive at its commit). Resolves to a stop
   * function, also when the database is unreachable: the connection is then opened in the background with
   * backoff (as after losing it) and `onEvent` is called once it is listening. SQLite has no cross-process
   * signal: the function is a no-op and callers poll.
   */
  listen(channel: string, onEvent: () => void): Promise<() => Promise<void>>;
}

/** Error for a URL we cannot use or a database we cannot reach (CLI exit code 2). */
export class StoreOpenError extends Error {
  override name = "StoreOpenError";
}

// int8 and numeric as JS numbers (ASNs fit in 2^53).
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

/** The file of a `sqlite:PATH` URL (`./inventory.sqlite3` when empty; `:memory:` as is), else undefined. */
export function sqlitePath(url: string): string | undefined {
  return url.startsWith("sqlite:") ? url.slice("sqlite:".length) || "./inventory.sqlite3" : undefined;
}

/** The plugins of every store's query builder: object versions raised by every UPDATE (version-bump.ts). */
function versionPlugins() {
  return [versionBump(versionedTables(registry()))];
}

/**
 * Open the database at `url` and check that it answers.
 * @throws StoreOpenError for a malformed URL or an unreachable database.
 */
export async function openStore(url: string): Promise<Store> {
  const path = sqlitePath(url);
  if (path !== undefined) {
    let database: NodeSqliteDatabase;
    try {
      database = new NodeSqliteDatabase(path);
    } catch (e) {
      throw new StoreOpenError(`cannot open SQLite database ${path}: ${(e as Error).message}`);
    }
    const db = new Kysely<any>({ dialect: new NodeSqliteDialect({ database }), plugins: versionPlugins() });
    let local = 0;
    const version = database.db.prepare("PRAGMA data_version");
    const dataToken = () => `${local}:${(version.get() as { data_version: number }).data_version}`;
    // Prepared on first use: the table does not exist before the first migration.
    let definitions: ReturnType<typeof database.db.prepare> | undefined;
    const definitionsToken = (): string | undefined => {
      try {
        definitions ??= database.db.prepare("SELECT value FROM inventory_meta WHERE key = ?");
        const row = definitions.get(DEFINITIONS_KEY) as { value?: unknown } | undefined;
        return row?.value === undefined ? undefined : String(row.value);
      } catch {
        return undefined;
      }
    };
    const asOf = path === ":memory:" ? undefined : sqliteAsOfReader(path);
    return {
      db,
      dialect: sqliteDialect,
      url,
      ...(asOf ? { asOf } : {}),
      close: async () => {
        await asOf?.close();
        await db.destroy();
      },
      dataToken,
      poolStats: () => undefined,
      freshTokens: async () => ({ data: dataToken(), definitions: definitionsToken() }),
      assumeDefinitions: false,
      committed: () => {
        local++;
      },
      listen: async () => async () => {},
    };
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const { config, schema, host, connectionString } = pgPoolSettings(url, "database");
    const pool = new pg.Pool(config);
    // A connection lost while checked out (PostgreSQL restarting) emits 'error' on its client: without a
    // listener that is an uncaught exception that ends the process (issue 12). Mark the client broken so it
    // is destroyed, not reused, when released; the request sees the error and answers 503.
    pool.on("error", () => {
      // idle client errors: pg-pool drops the client; the next query opens a new one
    });
    pool.on("connect", (client) => {
      client.on("error", () => {
        broken.add(client);
      });
    });
    try {
      const client = await pool.connect();
      try {
        if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, "")}"`);
      } catch (e) {
        // Processes opening a new schema at once race on pg_namespace's unique index: the loser's
        // CREATE … IF NOT EXISTS fails with 23505 although the schema now exists, which is what it wanted.
        if ((e as { code?: string }).code !== "23505" && (e as { code?: string }).code !== "42P06") throw e;
      } finally {
        // Released on failure too: pool.end() waits for checked-out clients, so a client kept out would
        // hang the process forever (seen in CI: three `migrate` processes on one fresh schema).
        client.release();
      }
    } catch (e) {
      await pool.end().catch(() => {});
      throw new StoreOpenError(`cannot connect to PostgreSQL at ${host}: ${(e as Error).message}`);
    }
    const broken = new WeakSet<pg.PoolClient>();
    /** Clients already wrapped, with the function dropping what their wrappers hold back. */
    const wrapped = new WeakMap<pg.PoolClient, () => void>();
    const prepare = process.env.INVENTORY_PG_PREPARE !== "0";
    /** The pool as Kysely sees it: a released client that lost its connection is destroyed. */
    const guarded = {
      async connect() {
        const client = await pool.connect();
        if (!wrapped.has(client)) {
          wrapped.set(client, wrapPgClient(client, prepare));
        }
        const release = client.release.bind(client);
        client.release = (err?: Error | boolean) => {
          wrapped.get(client)?.(); // what a transaction that never ended held back is dropped
          return release(err ?? (broken.has(client) ? true : undefined));
        };
        return client;
      },
      end: () => pool.end(),
    };
    const db = new Kysely<any>({
      dialect: new PostgresDialect({ pool: guarded as unknown as pg.Pool }),
      plugins: versionPlugins(),
    });
    const clientConfig = {
      connectionString,
      connectionTimeoutMillis: 5000,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    };
    const named = namedQueries(pool, prepare);
    // One query per request: a snapshot read before the request arrived could predate a commit it must see.
    const freshTokens = (): Promise<Tokens> =>
      named(TOKENS_SQL, [DEFINITIONS_KEY])
        .then((r) => tokensOf("pg", r.rows[0]))
        .catch(() => ({ data: undefined, definitions: undefined }));
    const asOf = pgAsOfReader(config, async () =>
      schema ? schema : String((await pool.query("SELECT current_schema() AS s")).rows[0].s),
    );
    return {
      db,
      dialect: postgresDialect,
      url,
      asOf,
      close: async () => {
        await asOf.close();
        await db.destroy();
      },
      dataToken: () => undefined,
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
      assumeDefinitions: true,
      freshTokens,
      async rowWithTokens(table, id) {
        const r = await named(
          `SELECT t.*, pg_current_snapshot()::text AS "${ROW_TOKEN_S}", (SELECT value FROM inventory_meta WHERE key = $2) AS "${ROW_TOKEN_D}" FROM ${quoteId(table)} t WHERE t.id = $1`,
          [id, DEFINITIONS_KEY],
        );
        const row = r.rows[0] as Record<string, unknown> | undefined;
        // No such row: the request ends in a 404 that reads nothing, so no tokens are read for it.
        if (!row) return { row, tokens: { data: undefined, definitions: undefined } };
        const tokens = tokensOf("pg", { s: row[ROW_TOKEN_S], d: row[ROW_TOKEN_D] });
        delete row[ROW_TOKEN_S];
        delete row[ROW_TOKEN_D];
        return { row, tokens };
      },
      committed: () => {},
      async listen(channel, onEvent) {
        // A dedicated connection; when it is lost (database restart) it is re-opened with backoff and the
        // caller is woken once, since notifications sent meanwhile are gone (issue 12).
        let stopped = false;
        let client: pg.Client | undefined;
        let retry: NodeJS.Timeout | undefined;
        const open = async (): Promise<void> => {
          const c = new pg.Client(clientConfig);
          c.on("notification", (n) => {
            if (n.channel === channel) onEvent();
          });
          const lost = () => {
            if (client !== c || stopped) return;
            client = undefined;
            c.end().catch(() => {});
            schedule(500);
          };
          c.on("error", lost);
          c.on("end", lost);
          client = c;
          await c.connect();
          await c.query(`LISTEN "${channel.replace(/"/g, "")}"`);
        };
        const schedule = (delay: number) => {
          if (stopped || retry) return;
          retry = setTimeout(async () => {
            retry = undefined;
            try {
              await open();
              onEvent();
            } catch {
              lose();
              schedule(Math.min(delay * 2, 10_000));
            }
          }, delay);
          retry.unref();
        };
        /** Drop a connection that failed to open (refused, or LISTEN failed on it). */
        const lose = () => {
          const c = client;
          client = undefined;
          c?.end().catch(() => {});
        };
        try {
          await open();
        } catch {
          // The database is unreachable now (an outage; a process started or first asked while it was
          // down): keep trying in the background, as after a lost connection, instead of failing the caller
          // for good (a rejected first LISTEN left a process's change streams failing until its restart).
          lose();
          schedule(500);
        }
        return async () => {
          stopped = true;
          if (retry) clearTimeout(retry);
          await client?.end().catch(() => {});
        };
      },
    };
  }
  throw new StoreOpenError(
    `unsupported database URL "${url}": use sqlite:PATH or postgres://user@host:port/db`,
  );
}

/**
 * The pool settings of a `postgres://` URL (the primary's or a replica's): `?schema=` becomes the search
 * path, every statement gets the time budget (issue 12: INVENTORY_STATEMENT_TIMEOUT seconds, default 30,
 * 0 = none; PostgreSQL cancels it with 57014, answered 503), and the pool holds INVENTORY_PG_POOL
 * connections. Prepared statements get PostgreSQL's default plan choice (`plan_cache_mode = auto`); those
 * with a LIMIT or OFFSET parameter are never prepared (pg-prepared.ts `customPlanOnly`). @throws StoreOpenError for a malformed URL
 */
export function pgPoolSettings(
  url: string,
  what: string,
): { config: pg.PoolConfig; schema: string | null; host: string; connectionString: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreOpenError(`malformed ${what} URL: ${url}`);
  }
  const schema = parsed.searchParams.get("schema");
  parsed.searchParams.delete("schema");
  const timeoutMs = Math.max(0, Number(process.env.INVENTORY_STATEMENT_TIMEOUT ?? 30) * 1000) || 0;
  const options = [
    ...(schema ? [`-c search_path=${schema}`] : []),
    ...(timeoutMs ? [`-c statement_timeout=${Math.round(timeoutMs)}`] : []),
  ].join(" ");
  return {
    config: {
      connectionString: parsed.toString(),
      max: Number(process.env.INVENTORY_PG_POOL ?? 10),
      connectionTimeoutMillis: 5000,
      options,
    },
    schema,
    host: parsed.host,
    connectionString: parsed.toString(),
  };
}

export { quoteId };

/**
 * Run precompiled SQL text through Kysely's connection handling (so it joins the current transaction),
 * skipping the query builder. For hot, fixed-shape queries; `sqlText` uses the dialect's placeholders.
 */
export async function rawRows(
  db: Db,
  sqlText: string,
  params: readonly unknown[],
): Promise<Record<string, any>[]> {
  const r = await db.executeQuery(CompiledQuery.raw(sqlText, [...params]));
  return r.rows as Record<string, any>[];
}

/**
 * The statement reading a PostgreSQL request's tokens (`Store.freshTokens`), on the primary or a replica:
 * the snapshot and the definitions row ($1 = DEFINITIONS_KEY), in one round trip.
 */
export const TOKENS_SQL =
  "SELECT pg_current_snapshot()::text AS s, (SELECT value FROM inventory_meta WHERE key = $1) AS d";

/** The columns `rowWithTokens` adds to a row for its tokens (no table has them). */
const ROW_TOKEN_S = "__inventory_snapshot";
const ROW_TOKEN_D = "__inventory_definitions";

/** Tokens from a TOKENS_SQL row, the data token prefixed by where it was read (`pg`, `replica`). */
export function tokensOf(where: string, row: { s?: unknown; d?: unknown } | undefined): Tokens {
  return {
    data: row?.s === undefined ? undefined : `${where}:${String(row.s)}`,
    definitions: row?.d === undefined || row.d === null ? undefined : String(row.d),
  };
}
