/**
 * A PostgreSQL streaming replica for reads (issue 13, `--database-replica`). The primary records, per user,
 * the WAL position after each of their writes (`inventory_meta` row `rw:<user id>`); a read goes to the
 * replica only when the replica has replayed past that position, so a client never reads older data than
 * it wrote, from any process. Everyone else reads from the replica whatever its lag.
 */
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import {
  type Db,
  DEFINITIONS_KEY,
  pgPoolSettings,
  StoreOpenError,
  TOKENS_SQL,
  type Tokens,
  tokensOf,
} from "./db.ts";

/** An open replica. */
export interface Replica {
  db: Kysely<any>;
  url: string;
  /**
   * The replica's tokens (its snapshot and definitions row, as `Store.freshTokens`) and whether it has replayed up to `mark` (a WAL position from
   * `writeMark`; true without one). Undefined when the replica cannot be reached (then read the primary).
   */
  state(mark: string | undefined): Promise<{ tokens: Tokens; caughtUp: boolean } | undefined>;
  /** Seconds since the last transaction the replica replayed (null when it has replayed none). */
  lagSeconds(): Promise<number | null>;
  close(): Promise<void>;
}

/** Open a replica at `url` (a `postgres://` URL; `?schema=` as for the primary). @throws StoreOpenError */
export async function openReplica(url: string): Promise<Replica> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new StoreOpenError(`the replica must be PostgreSQL: ${url}`);
  const { config, host } = pgPoolSettings(url, "replica");
  const pool = new pg.Pool(config);
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  try {
    const r = await pool.query("SELECT pg_is_in_recovery() AS standby");
    if (!r.rows[0]?.standby)
      process.stderr.write(`warning: ${host} is not a standby; reads go there anyway\n`);
  } catch (e) {
    await pool.end().catch(() => {});
    throw new StoreOpenError(`cannot connect to the replica at ${host}: ${(e as Error).message}`);
  }
  return {
    db: new Kysely<any>({ dialect: new PostgresDialect({ pool }) }),
    url,
    async state(mark) {
      try {
        const r = await pool.query(
          `SELECT t.*, ${mark ? "COALESCE(pg_last_wal_replay_lsn() >= $2::pg_lsn, true)" : "true"} AS ok FROM (${TOKENS_SQL}) t`,
          mark ? [DEFINITIONS_KEY, mark] : [DEFINITIONS_KEY],
        );
        return { tokens: tokensOf("replica", r.rows[0]), caughtUp: !!r.rows[0].ok };
      } catch {
        return undefined;
      }
    },
    async lagSeconds() {
      const r = await pool.query(
        "SELECT EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8 AS lag",
      );
      const lag = r.rows[0]?.lag;
      return lag === null || lag === undefined ? null : Math.max(0, Number(lag));
    },
    close: () => pool.end(),
  };
}

/**
 * Record on the primary the WAL position after a write by `userId` (read-your-writes across processes): the
 * insert position, which is past the write's commit record; the write position (`pg_current_wal_lsn`) may
 * not be yet with `synchronous_commit = off`, and a replica that replayed up to it missed the write.
 */
export async function markWrite(db: Db, userId: string): Promise<void> {
  await sql`INSERT INTO inventory_meta (key, value) VALUES (${`rw:${userId}`}, pg_current_wal_insert_lsn()::text)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`.execute(db);
}

/** The WAL position of `userId`'s last write, from the primary (undefined when they never wrote). */
export async function writeMark(db: Db, userId: string): Promise<string | undefined> {
  const r = await db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "=", `rw:${userId}`)
    .executeTakeFirst();
  return r?.value ? String(r.value) : undefined;
}
