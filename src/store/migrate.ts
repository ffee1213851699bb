/**
 * Migrations: bring a database up to the registry's schema, then seed the built-in rows.
 *
 * The schema is derived from the registry: missing tables, columns and indexes are created (additive
 * changes need no hand-written migration). Seeds are idempotent: content types and Nautobot's default
 * statuses with the content types each applies to (nautobot-models.md §2.1). Processes starting at once
 * migrate one after the other, so only the first changes anything: on PostgreSQL the run holds an advisory
 * lock of its schema on one pinned connection; on SQLite it is one write transaction (`BEGIN IMMEDIATE`), waiting up to
 * 120 s for another process's.
 */

import { randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { APP_LABELS, type Registry, registry } from "../registry/index.ts";
import {
  ADDRESS_SPACE_KEY,
  newDefinitionsToken,
  newToken,
  type Store,
  TAGGED_COMPLETE,
  TAGGED_PREFIX,
} from "./db.ts";
import { createIndexSql, createTableSql, schemaFor } from "./ddl.ts";
import { DEFAULT_STATUSES } from "./default-statuses.ts";
import { backfillHistory, createAsOfViews, shiftHistory } from "./history-migrate.ts";
import { historySchema } from "./history-schema.ts";
import { lockWait, setLockWait } from "./sqlite-driver.ts";

/** First half of the migration's advisory lock key (the second: the schema's name hashed). */
const MIGRATION_LOCK = 727274;

/** Named sequences (the webhook outbox's commit order; the change sequence, issue 26). */
export const SEQUENCES = ["inventory_outbox_seq", "inventory_change_seq"] as const;
/** The change sequence (issue 26) and the lock under which its numbers are taken (service/change-feed.ts). */
export const CHANGE_SEQUENCE = "inventory_change_seq";
export const CHANGE_SEQUENCE_LOCK = "inventory-change-seq";
/** `inventory_meta` row holding the highest purged change seq (service/change-feed.ts). */
export const CHANGES_PURGED_KEY = "change-feed-purged-through";

async function existingColumns(store: Store, table: string): Promise<Set<string> | undefined> {
  if (store.dialect.engine === "sqlite") {
    const r = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(store.db);
    return r.rows.length ? new Set(r.rows.map((x) => x.name)) : undefined;
  }
  const r = await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table}`.execute(store.db);
  return r.rows.length ? new Set(r.rows.map((x) => x.column_name)) : undefined;
}

/** What one migration changed: tables created and columns added (0 and 0: the schema was up to date). */
export interface MigrationSummary {
  tablesCreated: number;
  columnsAdded: number;
}

/**
 * Migrate the store to the registry's schema and seed built-in rows; says what it created.
 *
 * On PostgreSQL the migrating session has no statement budget (`SET statement_timeout = 0`, reset to the
 * connection's INVENTORY_STATEMENT_TIMEOUT afterwards): a schema change is one-off and may wait for other
 * sessions, another process migrating or a request holding a table, longer than a request may take (issue
 * 24: a `migrate` waiting for another test server's lock was cancelled at 30 s on a busy machine). The
 * advisory lock is per schema (`current_schema()`), so databases in different schemas of one PostgreSQL
 * database, which share no table, never wait for each other's migration.
 */
export async function migrate(store: Store, reg: Registry): Promise<MigrationSummary> {
  if (store.dialect.engine === "postgres")
    return store.db.connection().execute(async (conn) => {
      await sql`SET statement_timeout = 0`.execute(conn);
      try {
        await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK}, hashtext(coalesce(current_schema(), '')))`.execute(
          conn,
        );
        try {
          return await migrateWith({ ...store, db: conn as Kysely<any> }, reg);
        } finally {
          await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK}, hashtext(coalesce(current_schema(), '')))`.execute(
            conn,
          );
        }
      } finally {
        await sql`RESET statement_timeout`.execute(conn);
      }
    });
  const before = lockWait();
  setLockWait(120_000);
  try {
    return await store.db
      .transaction()
      .execute((trx) => migrateWith({ ...store, db: trx as Kysely<any> }, reg));
  } finally {
    setLockWait(before);
  }
}

/** The migration itself, on a store whose `db` is the locked connection or transaction. */
async function migrateWith(store: Store, reg: Registry): Promise<MigrationSummary> {
  const done: MigrationSummary = { tablesCreated: 0, columnsAdded: 0 };
  const live = schemaFor(reg, store.dialect);
  const history = historySchema(reg, store.dialect);
  const tables = [...live.tables, ...history.tables];
  const indexes = [...live.indexes, ...history.indexes];
  for (const t of tables) {
    const have = await existingColumns(store, t.name);
    if (!have) {
      await sql.raw(createTableSql(t, store.dialect.engine)).execute(store.db);
      done.tablesCreated++;
      continue;
    }
    for (const [col, type] of t.columns) {
      if (!have.has(col)) {
        await sql.raw(`ALTER TABLE "${t.name}" ADD COLUMN "${col}" ${type}`).execute(store.db);
        done.columnsAdded++;
      }
    }
  }
  for (const i of indexes) {
    try {
      await sql.raw(createIndexSql(i)).execute(store.db);
    } catch (e) {
      // Rows that already break a uniqueness rule (written before the rule was enforced by the
      // database): keep the service's check, say so, and carry on (issue 12).
      if (!i.unique) throw e;
      process.stderr.write(
        `migrate: ${i.table} has rows that break a uniqueness rule (${(i.exprs ?? i.columns).join(", ")}); index ${i.name} not created: ${(e as Error).message}\n`,
      );
    }
  }
  for (const name of SEQUENCES) {
    const ddl = store.dialect.sequenceDdl(name);
    if (ddl) await sql.raw(ddl).execute(store.db);
  }
  await seed(store, reg);
  await backfillChangeSeq(store);
  await inTransaction(store, (db) =>
    backfillHistory(
      { ...store, db },
      reg,
      () => store.dialect.transactionLock(db, CHANGE_SEQUENCE_LOCK),
      async () => (await store.dialect.nextValues(db, CHANGE_SEQUENCE, 1))[0]!,
    ),
  );
  if (store.dialect.engine === "postgres") await createAsOfViews(store.db, reg);
  // Which models carry tags (service/rows.ts taggedModels), recomputed from the tagged items; the marker row
  // tells readers the list is complete.
  await sql`INSERT INTO inventory_meta (key, value) SELECT DISTINCT ${TAGGED_PREFIX} || content_type, '1' FROM extras_taggeditem WHERE true ON CONFLICT (key) DO NOTHING`.execute(
    store.db,
  );
  await sql`INSERT INTO inventory_meta (key, value) VALUES (${TAGGED_COMPLETE}, '1') ON CONFLICT (key) DO NOTHING`.execute(
    store.db,
  );
  // Seeds may have added statuses, and a new release may read definitions differently: cached ones go;
  // so do the allocation hints (rows edited by hand in SQL are taken into account after a migrate).
  await newDefinitionsToken(store.db);
  await newToken(store.db, ADDRESS_SPACE_KEY);
  return done;
}

/**
 * Number the changes recorded before the change sequence existed (issue 26: `seq` NULL), in time order then
 * id, below every numbered change, so that the feed from the start replays the whole history. Idempotent:
 * a database with no unnumbered change is left as it is. Under the change sequence's lock (PostgreSQL: the
 * transaction lock stampers take at commit; SQLite: the migration's write transaction), in one transaction.
 *
 * - No numbered change yet (an upgrade from a release before the sequence): the next n numbers of the
 *   sequence, so the history is 1..n on a fresh sequence and new changes follow it.
 * - Numbered changes from `min` up with room below (min > n): min - n .. min - 1.
 * - No room (a database that ran a release with the sequence; its numbers start at 1): every numbered
 *   change, the purged position and the sequence move up by n first, then the history takes the room
 *   freed. A consumer's position taken before the upgrade then points n changes early: it sees up to n
 *   changes again, never misses one.
 * @returns how many changes were numbered.
 */
export async function backfillChangeSeq(store: Store): Promise<number> {
  const work = async (db: Kysely<any>): Promise<number> => {
    await store.dialect.transactionLock(db, CHANGE_SEQUENCE_LOCK);
    const r = await sql<{
      n: unknown;
      m: unknown;
    }>`SELECT (SELECT count(*) FROM extras_objectchange WHERE seq IS NULL) AS n,
      (SELECT min(seq) FROM extras_objectchange) AS m`.execute(db);
    const n = Number(r.rows[0]!.n);
    if (!n) return 0;
    const min = r.rows[0]!.m === null || r.rows[0]!.m === undefined ? null : Number(r.rows[0]!.m);
    const reserve = async (): Promise<number> => {
      if (store.dialect.engine === "sqlite")
        return (await store.dialect.nextValues(db, CHANGE_SEQUENCE, n))[0]!;
      const b = await sql<{
        base: unknown;
      }>`SELECT setval(${CHANGE_SEQUENCE}::regclass, nextval(${CHANGE_SEQUENCE}::regclass) + ${n - 1}) - ${n - 1} AS base`.execute(
        db,
      );
      return Number(b.rows[0]!.base);
    };
    let base: number;
    if (min === null) base = await reserve();
    else if (min > n) base = min - n;
    else {
      await reserve();
      await sql`UPDATE extras_objectchange SET seq = seq + ${n} WHERE seq IS NOT NULL`.execute(db);
      await shiftHistory(db, registry(), n);
      await sql`UPDATE inventory_meta SET value = CAST(CAST(value AS INTEGER) + ${n} AS TEXT)
        WHERE key = ${CHANGES_PURGED_KEY}`.execute(db);
      base = min;
    }
    await sql`UPDATE extras_objectchange SET seq = h.s FROM (SELECT id,
        ${base - 1} + row_number() OVER (ORDER BY time, id) AS s FROM extras_objectchange WHERE seq IS NULL) AS h
      WHERE extras_objectchange.id = h.id`.execute(db);
    return n;
  };
  return store.db.isTransaction ? work(store.db) : store.db.transaction().execute(work);
}

/** Run `work` in the store's transaction, or in a new one when the store's `db` is not one. */
function inTransaction<T>(store: Store, work: (db: Kysely<any>) => Promise<T>): Promise<T> {
  return store.db.isTransaction ? work(store.db) : store.db.transaction().execute(work);
}

async function seed(store: Store, reg: Registry): Promise<void> {
  const db = store.db;
  // Content types: one row per model, integer-like ids from the registry.
  const existing = new Map(
    (await db.selectFrom("extras_contenttype").select(["id", "app_label", "model"]).execute()).map((r) => [
      r.id as string,
      `${r.app_label}.${r.model}`,
    ]),
  );
  // Ids follow the sorted model list, so a new model shifts the ids after it: rewrite rows that moved.
  for (const m of reg.models.values()) {
    const had = existing.get(String(m.ctId));
    if (had === undefined || had === m.key) continue;
    await db
      .updateTable("extras_contenttype")
      .set({ app_label: m.app, model: m.name, display_name: `${APP_LABELS[m.app] ?? m.app} | ${m.verbose}` })
      .where("id", "=", String(m.ctId))
      .execute();
  }
  const rows = [...reg.models.values()]
    .filter((m) => !existing.has(String(m.ctId)))
    .map((m) => ({
      id: String(m.ctId),
      app_label: m.app,
      model: m.name,
      display_name: `${APP_LABELS[m.app] ?? m.app} | ${m.verbose}`,
    }));
  if (rows.length) await db.insertInto("extras_contenttype").values(rows).execute();

  const seeded = await db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "=", "default_statuses")
    .executeTakeFirst();
  if (seeded) return;
  const now = new Date().toISOString();
  const inOne = async (work: (trx: Kysely<any>) => Promise<void>) =>
    db.isTransaction ? work(db as Kysely<any>) : db.transaction().execute(work);
  await inOne(async (trx) => {
    for (const s of DEFAULT_STATUSES) {
      const found = await trx
        .selectFrom("extras_status")
        .select("id")
        .where("slug", "=", s.slug)
        .executeTakeFirst();
      const id = (found?.id as string | undefined) ?? randomUUID();
      if (!found) {
        await trx
          .insertInto("extras_status")
          .values({
            id,
            name: s.name,
            slug: s.slug,
            color: s.color,
            description: s.description,
            _custom_field_data: "{}",
            created: now.slice(0, 10),
            last_updated: now,
          })
          .execute();
      }
      for (const ct of s.contentTypes) {
        if (!reg.models.has(ct)) continue;
        await trx
          .insertInto("extras_status_content_types")
          .values({ source_id: id, content_type: ct })
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    }
    await trx.insertInto("inventory_meta").values({ key: "default_statuses", value: now }).execute();
  });
}
