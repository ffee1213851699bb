/**
 * Reads at a point of history (issue 27): a Kysely handle whose tables are the as-of views of
 * store/history-schema.ts, so the live read code (filters, representations, counts) reads the state at the
 * point unchanged. Only the store knows how:
 *
 * - PostgreSQL: a pool of its own whose connections have the as-of schema first on their search path;
 *   each connection is told the point (`set_config('inventory.as_of', …)`) when a request's handle takes
 *   it, unless it already holds that point.
 * - SQLite: a connection of its own to the same file, where TEMP views with the live tables' names hide
 *   the main tables; the views read the point from the function `inventory_as_of()`, which answers the
 *   point of the request whose statement runs (statements run synchronously, the point set just before).
 *
 * Tables without history (the change log, cable paths, sessions, definitions of content types) read live.
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  type QueryResult,
  SqliteDialect,
  SqliteDriver,
} from "kysely";
import pg from "pg";
import { registry } from "../registry/index.ts";
import { asOfSchema } from "./history-migrate.ts";
import { asOfViews } from "./history-schema.ts";
import { loopTurn, NodeSqliteDatabase } from "./sqlite-driver.ts";

/** Opens handles at points of one store. */
export interface AsOfReader {
  /** A read-only handle whose reads see the state at `point` (a commit sequence number). */
  at(point: number): Kysely<any>;
  close(): Promise<void>;
}

/** The point `inventory_as_of()` answers on SQLite: that of the statement running now. */
let sqlitePoint = 0;

/** SQLite: the as-of connection to the file `path`, with its TEMP views. */
export function sqliteAsOfReader(path: string): AsOfReader {
  let database: NodeSqliteDatabase | undefined;
  const open = (): NodeSqliteDatabase => {
    if (database) return database;
    const d = new NodeSqliteDatabase(path);
    d.db.function("inventory_as_of", { deterministic: false }, () => sqlitePoint);
    for (const [name, select] of asOfViews(registry(), "inventory_as_of()", (t) => `main."${t}"`))
      d.db.exec(`CREATE TEMP VIEW IF NOT EXISTS "${name}" AS ${select}`);
    d.db.exec("PRAGMA query_only = 1");
    database = d;
    return d;
  };
  return {
    at(point) {
      const d = open();
      return new Kysely<any>({ dialect: new AsOfSqliteDialect({ database: d }, point) });
    },
    async close() {
      database?.close();
      database = undefined;
    },
  };
}

class AsOfSqliteDialect extends SqliteDialect {
  private readonly settings: { database: NodeSqliteDatabase };
  private readonly point: number;
  constructor(settings: { database: NodeSqliteDatabase }, point: number) {
    super(settings);
    this.settings = settings;
    this.point = point;
  }
  override createDriver() {
    return new AsOfSqliteDriver(this.settings, this.point);
  }
}

class AsOfSqliteDriver extends SqliteDriver {
  private readonly point: number;
  constructor(settings: { database: NodeSqliteDatabase }, point: number) {
    super(settings);
    this.point = point;
  }
  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    const point = this.point;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        await loopTurn();
        // Set just before the statement runs: node:sqlite runs it synchronously inside this call.
        sqlitePoint = point;
        return inner.executeQuery<R>(query);
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize: number) {
        sqlitePoint = point;
        yield* inner.streamQuery<R>(query, chunkSize);
      },
    };
  }
  override async beginTransaction(): Promise<void> {
    throw new Error("as-of reads are read-only");
  }
}

/** PostgreSQL: the as-of pool (`config` as the store's pool's, search path put in front of `schema`). */
export function pgAsOfReader(config: pg.PoolConfig, schema: () => Promise<string>): AsOfReader {
  let pool: Promise<pg.Pool> | undefined;
  const held = new WeakMap<pg.PoolClient, number>();
  const poolOf = () =>
    (pool ??= schema().then((base) => {
      const options =
        `${String(config.options ?? "").replace(/-c search_path=\S+/, "")} -c search_path=${asOfSchema(base)},${base}`.trim();
      const p = new pg.Pool({
        ...config,
        options,
        max: Math.max(2, Math.ceil(Number(config.max ?? 10) / 2)),
      });
      p.on("error", () => {});
      return p;
    }));
  return {
    at(point) {
      const facade = {
        async connect() {
          const client = await (await poolOf()).connect();
          if (held.get(client) !== point) {
            try {
              await client.query("SELECT set_config('inventory.as_of', $1, false)", [String(point)]);
            } catch (e) {
              client.release(true);
              throw e;
            }
            held.set(client, point);
          }
          return client;
        },
        end: async () => {},
      };
      return new Kysely<any>({ dialect: new PostgresDialect({ pool: facade as unknown as pg.Pool }) });
    },
    async close() {
      if (pool) await (await pool).end();
      pool = undefined;
    },
  };
}
