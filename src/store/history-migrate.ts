/**
 * Migration steps of history (issue 27): the first version of objects that have none, and PostgreSQL's
 * as-of views. Run by store/migrate.ts after the tables exist and the built-in rows are seeded.
 */
import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Registry } from "../registry/index.ts";
import type { Store } from "./db.ts";
import {
  asOfViews,
  COMMIT_TABLE,
  HISTORY_SINCE_KEY,
  HISTORY_SUFFIX,
  linkHistories,
  VERSION_TABLE,
  versioned,
} from "./history-schema.ts";
import { storedTime } from "./values.ts";

/**
 * Give every object without a version (a database from before history; rows seeded or written outside the
 * service) its first version, as it is now, under one new number of the change sequence (0 on a database
 * that never used it), and record that number as where history begins (`history-since`) the first time. Under the change sequence's lock
 * (`lock`), so the number is above every committed transaction's. @returns the number, or undefined when
 * every object had a version.
 */
export async function backfillHistory(
  store: Store,
  reg: Registry,
  lock: () => Promise<void>,
  nextSeq: () => Promise<number>,
): Promise<number | undefined> {
  const db = store.db;
  await lock();
  const missing = [...reg.models.values()].filter(versioned);
  const unversioned = `NOT EXISTS (SELECT 1 FROM ${VERSION_TABLE} v WHERE v.object_id = t.id)`;
  const counts = await sql<{ k: string }>`${sql.raw(
    missing
      .map((m) => `SELECT '${m.key}' AS k FROM (SELECT 1 FROM "${m.table}" t WHERE ${unversioned} LIMIT 1) x`)
      .join(" UNION ALL "),
  )}`.execute(db);
  const todo = new Set(counts.rows.map((r) => r.k));
  const since = await sql<{
    value: unknown;
  }>`SELECT value FROM inventory_meta WHERE key = ${HISTORY_SINCE_KEY}`.execute(db);
  if (!todo.size) {
    if (!since.rows.length) {
      // A new, empty database: history begins at the next number (0 answers for the empty start).
      await sql`INSERT INTO inventory_meta (key, value) VALUES (${HISTORY_SINCE_KEY}, '0')`.execute(db);
    }
    return undefined;
  }
  // A database whose change sequence was never used (a new one): its first state is point 0, taking no
  // number, so the change sequence still starts at 1.
  const used = await sql<{ n: unknown }>`SELECT (SELECT count(*) FROM ${sql.table(COMMIT_TABLE)})
    + (SELECT count(*) FROM extras_objectchange WHERE seq IS NOT NULL) AS n`.execute(db);
  const seq = Number(used.rows[0]?.n) > 0 ? await nextSeq() : 0;
  const links = linkHistories(reg);
  for (const m of missing) {
    if (!todo.has(m.key)) continue;
    for (const l of links) {
      if (!l.models.some((o) => o.key === m.key)) continue;
      const lc = l.columns.map((c) => `l."${c}"`).join(", ");
      await sql
        .raw(
          `INSERT INTO "${l.table}${HISTORY_SUFFIX}" (${l.columns.map((c) => `"${c}"`).join(", ")}, "_seq") SELECT ${lc}, ${seq} FROM "${l.table}" l JOIN "${m.table}" t ON t.id = l."${l.owner}" WHERE ${unversioned}`,
        )
        .execute(db);
    }
    const cols = m.columns.map((c) => `"${c.name}"`).join(", ");
    const tcols = m.columns.map((c) => `t."${c.name}"`).join(", ");
    await sql
      .raw(
        `INSERT INTO "${m.table}${HISTORY_SUFFIX}" (${cols}, "_seq", "_deleted") SELECT ${tcols}, ${seq}, 0 FROM "${m.table}" t WHERE ${unversioned}`,
      )
      .execute(db);
    await sql
      .raw(
        `INSERT INTO ${VERSION_TABLE} (object_id, seq, deleted, content_type) SELECT t.id, ${seq}, 0, '${m.key}' FROM "${m.table}" t WHERE ${unversioned}`,
      )
      .execute(db);
  }
  await sql`INSERT INTO ${sql.table(COMMIT_TABLE)} (seq, time) VALUES (${seq}, ${storedTime()})`.execute(db);
  if (!since.rows.length)
    await sql`INSERT INTO inventory_meta (key, value) VALUES (${HISTORY_SINCE_KEY}, ${String(seq)})`.execute(
      db,
    );
  return seq;
}

/**
 * Move every history number up by `n` (with the change log's numbers, store/migrate.ts `backfillChangeSeq`,
 * when older changes are numbered below the numbered ones), so versions keep the numbers of their changes.
 */
export async function shiftHistory(db: Kysely<any>, reg: Registry, n: number): Promise<void> {
  const tables = [
    ...[...reg.models.values()].filter(versioned).map((m) => `${m.table}${HISTORY_SUFFIX}`),
    ...linkHistories(reg).map((l) => `${l.table}${HISTORY_SUFFIX}`),
  ];
  for (const t of tables) await sql.raw(`UPDATE "${t}" SET "_seq" = "_seq" + ${n}`).execute(db);
  await sql.raw(`UPDATE ${VERSION_TABLE} SET seq = seq + ${n}`).execute(db);
  await sql.raw(`UPDATE ${COMMIT_TABLE} SET seq = seq + ${n}`).execute(db);
  await sql`UPDATE inventory_meta SET value = CAST(CAST(value AS INTEGER) + ${n} AS TEXT)
    WHERE key = ${HISTORY_SINCE_KEY}`.execute(db);
}

/** `inventory_meta` row: a hash of the as-of views PostgreSQL has, so unchanged views are not rebuilt. */
const VIEWS_KEY = "history-views";

/** The schema of a PostgreSQL store's as-of views: `<schema>_asof`. */
export function asOfSchema(schema: string): string {
  return `${schema}_asof`;
}

/**
 * PostgreSQL: (re)create the as-of views in `<current schema>_asof` when the registry's views changed
 * (the point is the setting `inventory.as_of`). SQLite creates its TEMP views per connection (store/as-of.ts).
 */
export async function createAsOfViews(db: Kysely<any>, reg: Registry): Promise<void> {
  const r = await sql<{ s: string }>`SELECT current_schema() AS s`.execute(db);
  const base = r.rows[0]!.s;
  const target = asOfSchema(base);
  const q = (t: string) => `"${base}"."${t}"`;
  const views = asOfViews(reg, "current_setting('inventory.as_of')::bigint", q);
  const hash = createHash("sha256")
    .update(target)
    .update(JSON.stringify([...views]))
    .digest("hex");
  const had = await sql<{
    value: unknown;
  }>`SELECT value FROM inventory_meta WHERE key = ${VIEWS_KEY}`.execute(db);
  const exists = await sql<{
    n: unknown;
  }>`SELECT count(*) AS n FROM pg_namespace WHERE nspname = ${target}`.execute(db);
  if (had.rows[0]?.value === hash && Number(exists.rows[0]?.n) > 0) return;
  await sql.raw(`DROP SCHEMA IF EXISTS "${target}" CASCADE`).execute(db);
  await sql.raw(`CREATE SCHEMA "${target}"`).execute(db);
  for (const [name, select] of views)
    await sql.raw(`CREATE VIEW "${target}"."${name}" AS ${select}`).execute(db);
  await sql`INSERT INTO inventory_meta (key, value) VALUES (${VIEWS_KEY}, ${hash})
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`.execute(db);
}
