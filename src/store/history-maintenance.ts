/**
 * History retention and size (issue 27): pruning versions no point at or after a cut needs, and what the
 * history tables hold. Retention is its own setting, independent of the change log's purge.
 */
import { type Kysely, sql } from "kysely";
import type { Registry } from "../registry/index.ts";
import type { Store } from "./db.ts";
import {
  COMMIT_TABLE,
  HISTORY_SINCE_KEY,
  HISTORY_SUFFIX,
  linkHistories,
  VERSION_TABLE,
  versioned,
} from "./history-schema.ts";

/** What a prune removed. */
export interface PruneSummary {
  /** The new first point history answers for. */
  since: number;
  /** Version rows removed (models, links and the version index). */
  removed: number;
}

/**
 * Remove the versions superseded at or before `point` (the version current at `point` stays, so the state
 * at `point` and after still reads whole) and deletions at or before it, then make `point` where history
 * begins: reads before it are 400s. One transaction. Never moves `history-since` back.
 */
export async function pruneHistory(store: Store, reg: Registry, point: number): Promise<PruneSummary> {
  const work = async (db: Kysely<any>): Promise<PruneSummary> => {
    const since = await sql<{
      value: unknown;
    }>`SELECT value FROM inventory_meta WHERE key = ${HISTORY_SINCE_KEY}`.execute(db);
    const was = Number(since.rows[0]?.value ?? 0);
    if (point <= was) return { since: was, removed: 0 };
    let removed = 0;
    const run = async (text: string) => {
      const r = await sql.raw(text).execute(db);
      removed += Number(r.numAffectedRows ?? 0);
    };
    // Links first: they are superseded by their owner's versions, read from the version index.
    for (const l of linkHistories(reg)) {
      const t = `"${l.table}${HISTORY_SUFFIX}"`;
      await run(
        `DELETE FROM ${t} WHERE "_seq" < ${point} AND EXISTS (SELECT 1 FROM ${VERSION_TABLE} v WHERE v.object_id = ${t}."${l.owner}" AND v.seq > ${t}."_seq" AND v.seq <= ${point})`,
      );
    }
    for (const m of reg.models.values()) {
      if (!versioned(m)) continue;
      const t = `"${m.table}${HISTORY_SUFFIX}"`;
      await run(
        `DELETE FROM ${t} WHERE "_seq" < ${point} AND EXISTS (SELECT 1 FROM ${t} n WHERE n.id = ${t}.id AND n."_seq" > ${t}."_seq" AND n."_seq" <= ${point})`,
      );
      await run(`DELETE FROM ${t} WHERE "_deleted" = 1 AND "_seq" <= ${point}`);
    }
    const v = VERSION_TABLE;
    await run(
      `DELETE FROM ${v} WHERE seq < ${point} AND EXISTS (SELECT 1 FROM ${v} n WHERE n.object_id = ${v}.object_id AND n.seq > ${v}.seq AND n.seq <= ${point})`,
    );
    await run(`DELETE FROM ${v} WHERE deleted = 1 AND seq <= ${point}`);
    await run(`DELETE FROM ${COMMIT_TABLE} WHERE seq < ${point}`);
    await sql`INSERT INTO inventory_meta (key, value) VALUES (${HISTORY_SINCE_KEY}, ${String(point)})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`.execute(db);
    return { since: point, removed };
  };
  return store.db.isTransaction ? work(store.db) : store.db.transaction().execute(work);
}

/**
 * PostgreSQL: gather statistics (`ANALYZE`) of the history tables that changed by more than autovacuum's
 * default threshold (50 rows + 10 %) since they were last analyzed, by autovacuum or by this. Reads at a
 * point join history tables through views; planned without statistics (a server with autovacuum off, or
 * before it came round) a join of two of them ran as a nested loop over both, 16.7 s instead of a hash
 * join's few ms (seen: 25,000 interface versions × 650 devices). SQLite plans without statistics from the
 * keys and needs none. @returns the tables analyzed.
 */
export async function analyzeHistory(store: Store, reg: Registry): Promise<string[]> {
  if (store.dialect.engine !== "postgres") return [];
  const tables = [
    ...[...reg.models.values()].filter(versioned).map((m) => `${m.table}${HISTORY_SUFFIX}`),
    ...linkHistories(reg).map((l) => `${l.table}${HISTORY_SUFFIX}`),
    VERSION_TABLE,
    COMMIT_TABLE,
  ];
  const stale = await sql<{ t: string }>`SELECT relname AS t FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname = ANY(${tables})
      AND n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0)`.execute(store.db);
  const done: string[] = [];
  for (const { t } of stale.rows) {
    await sql`ANALYZE ${sql.table(t)}`.execute(store.db);
    done.push(t);
  }
  return done;
}

/** One history table's size. */
export interface TableSize {
  table: string;
  rows: number;
  /** Bytes on disk with indexes (SQLite `dbstat`, PostgreSQL `pg_total_relation_size`). */
  bytes: number;
}

/** The history tables' rows and bytes, largest first. */
export async function historySizes(store: Store, reg: Registry): Promise<TableSize[]> {
  const tables = [
    ...[...reg.models.values()].filter(versioned).map((m) => `${m.table}${HISTORY_SUFFIX}`),
    ...linkHistories(reg).map((l) => `${l.table}${HISTORY_SUFFIX}`),
    VERSION_TABLE,
    COMMIT_TABLE,
  ];
  const out: TableSize[] = [];
  for (const t of tables) {
    const rows = Number(
      (await sql<{ n: unknown }>`SELECT count(*) AS n FROM ${sql.table(t)}`.execute(store.db)).rows[0]?.n ??
        0,
    );
    const bytes =
      store.dialect.engine === "postgres"
        ? (await sql<{ b: unknown }>`SELECT pg_total_relation_size(${t}::regclass) AS b`.execute(store.db))
            .rows[0]?.b
        : (
            await sql<{
              b: unknown;
            }>`SELECT sum(pgsize) AS b FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ${t})`
              .execute(store.db)
              .catch(() => ({ rows: [{ b: 0 }] }))
          ).rows[0]?.b;
    out.push({ table: t, rows, bytes: Number(bytes ?? 0) });
  }
  return out.sort((a, b) => b.bytes - a.bytes || b.rows - a.rows);
}
