/**
 * History tables and as-of views, derived from the registry (issue 27: the network as it was).
 *
 * Every versioned model (`Model.versioned`: change-logged ones and relationship associations) has a history table `<table>__hist` with the live table's
 * columns (all nullable) plus `_seq` (the commit sequence number of the transaction that wrote the version,
 * service/history.ts) and `_deleted` (1: the object was deleted by that transaction; only `id` is set). A
 * version is current from its `_seq` until the object's next version. Join tables of M2M and content-type
 * fields, and tagged items, have `<table>__hist` with their columns plus `_seq`: the owner's rows as they were
 * when the owner's version was written (an owner version with no rows says "none"). `inventory_version` lists
 * every version of every object (`object_id`, `seq`, `deleted`, `content_type`), so the link rows of an owner of any model
 * know when they were superseded; `inventory_commit` has one row per transaction that wrote versions (`seq`,
 * `time`), which turns a time into a sequence number.
 *
 * As-of views have the live tables' names and columns and read the versions current at the point
 * `inventory.as_of` (a sequence number): a version with `_seq <= point` and no later version of its object
 * at or before the point, not a deletion. Reads at a point run the live read code against those views
 * (store/as-of.ts): PostgreSQL keeps them in a schema of their own (`<schema>_asof`) put first on the search
 * path; SQLite creates them as TEMP views of a connection of their own, where they hide the main tables.
 */
import type { Model, Registry } from "../registry/index.ts";
import { type IndexSpec, joinTable, type TableSpec } from "./ddl.ts";
import type { Dialect } from "./dialect.ts";

/** Suffix of history tables. */
export const HISTORY_SUFFIX = "__hist";
/** Every version of every object: `object_id`, `seq`, `deleted`, `content_type` (`dcim.device`). */
export const VERSION_TABLE = "inventory_version";
/** One row per transaction that wrote versions: `seq`, `time`. */
export const COMMIT_TABLE = "inventory_commit";
/** `inventory_meta` row: the first point history answers for (its first backfill). */
export const HISTORY_SINCE_KEY = "history-since";

/** Whether a model keeps history (every change-logged model, and `ModelDef.history` ones). */
export function versioned(m: Model): boolean {
  return m.versioned;
}

/** A link table's history: its name, the owner column and the other columns. */
export interface LinkHistory {
  table: string;
  owner: string;
  columns: string[];
  /** Models whose objects own rows of it (tagged items: every tagged model). */
  models: Model[];
  /** SQL types of columns that are not `TEXT NOT NULL`. */
  types?: Record<string, string>;
  /** The history table's primary key, when not the owner, `_seq` and every other column. */
  key?: string[];
}

const linkMemo = new WeakMap<Registry, LinkHistory[]>();

/**
 * The link tables with history: M2M and content-type join tables of versioned models, and tagged items.
 * Computed once per registry.
 */
export function linkHistories(reg: Registry): LinkHistory[] {
  let memo = linkMemo.get(reg);
  if (!memo) {
    memo = deriveLinkHistories(reg);
    linkMemo.set(reg, memo);
  }
  return memo;
}

function deriveLinkHistories(reg: Registry): LinkHistory[] {
  const out: LinkHistory[] = [];
  const tagged: Model[] = [];
  for (const m of reg.models.values()) {
    if (!versioned(m)) continue;
    if (m.tags) tagged.push(m);
    for (const [name, fd] of m.fieldList) {
      if (fd.kind !== "m2m" && fd.kind !== "cts") continue;
      out.push({
        table: joinTable(m, name),
        owner: "source_id",
        columns: ["source_id", fd.kind === "m2m" ? "target_id" : "content_type"],
        models: [m],
      });
    }
  }
  out.push({
    table: "extras_taggeditem",
    owner: "object_id",
    columns: ["content_type", "object_id", "tag_id"],
    models: tagged,
  });
  // Cable paths (service/cable-paths.ts): one per origin, rewritten whenever it is traced again, which
  // gives the origin a new version (`noteSideEffects`), so its connected endpoint reads right at a point.
  out.push({
    table: "dcim_cablepath",
    owner: "origin_id",
    columns: [
      "id",
      "origin_type",
      "origin_id",
      "destination_type",
      "destination_id",
      "path",
      "is_active",
      "is_split",
    ],
    key: ["origin_id", "_seq", "id"],
    models: [...reg.models.values()].filter(
      (m) => versioned(m) && ("cable" in m.fields || "connected_endpoint" in m.fields),
    ),
    types: {
      destination_type: "TEXT",
      destination_id: "TEXT",
      is_active: "INTEGER NOT NULL",
      is_split: "INTEGER NOT NULL",
    },
  });
  return out;
}

/** History tables and their indexes (created and extended by store/migrate.ts with the live ones). */
export function historySchema(
  reg: Registry,
  dialect: Dialect,
): { tables: TableSpec[]; indexes: IndexSpec[] } {
  const seqType = dialect.columnType("bigint");
  const tables: TableSpec[] = [];
  const indexes: IndexSpec[] = [];
  for (const m of reg.models.values()) {
    if (!versioned(m)) continue;
    const name = `${m.table}${HISTORY_SUFFIX}`;
    tables.push({
      name,
      columns: [
        ...m.columns.map((c): [string, string] => [
          c.name,
          c.name === "id" ? "TEXT NOT NULL" : dialect.columnType(c.type === "version" ? "int" : c.type),
        ]),
        ["_seq", `${seqType} NOT NULL`],
        ["_deleted", "INTEGER NOT NULL"],
      ],
      primaryKey: ["id", "_seq"],
      clustered: true,
    });
  }
  for (const l of linkHistories(reg)) {
    const name = `${l.table}${HISTORY_SUFFIX}`;
    tables.push({
      name,
      columns: [
        ...l.columns.map((c): [string, string] => [c, l.types?.[c] ?? "TEXT NOT NULL"]),
        ["_seq", `${seqType} NOT NULL`],
      ],
      primaryKey: l.key ?? [l.owner, "_seq", ...l.columns.filter((c) => c !== l.owner)],
      clustered: true,
    });
  }
  tables.push({
    name: VERSION_TABLE,
    columns: [
      ["object_id", "TEXT NOT NULL"],
      ["seq", `${seqType} NOT NULL`],
      ["deleted", "INTEGER NOT NULL"],
      ["content_type", "TEXT"],
    ],
    primaryKey: ["object_id", "seq"],
    clustered: true,
  });
  indexes.push({ name: `ix_${VERSION_TABLE}_seq`, table: VERSION_TABLE, columns: ["seq"] });
  tables.push({
    name: COMMIT_TABLE,
    columns: [
      ["seq", `${seqType} NOT NULL`],
      ["time", "TEXT NOT NULL"],
    ],
    primaryKey: ["seq"],
  });
  indexes.push({ name: `ix_${COMMIT_TABLE}_time`, table: COMMIT_TABLE, columns: ["time"] });
  return { tables, indexes };
}

/**
 * The SELECT of each as-of view: live table name → query over the history tables, reading the point from
 * `point` (SQL: `current_setting('inventory.as_of')::bigint` on PostgreSQL, `inventory_as_of()` on SQLite)
 * and naming history tables through `q` (schema-qualified where the view lives elsewhere).
 */
export function asOfViews(reg: Registry, point: string, q: (table: string) => string): Map<string, string> {
  const views = new Map<string, string>();
  for (const m of reg.models.values()) {
    if (!versioned(m)) continue;
    const h = q(`${m.table}${HISTORY_SUFFIX}`);
    const cols = m.columns.map((c) => `h."${c.name}"`).join(", ");
    views.set(
      m.table,
      `SELECT ${cols} FROM ${h} h WHERE h._seq <= ${point} AND h._deleted = 0 AND NOT EXISTS (SELECT 1 FROM ${h} n WHERE n.id = h.id AND n._seq > h._seq AND n._seq <= ${point})`,
    );
  }
  const v = q(VERSION_TABLE);
  for (const l of linkHistories(reg)) {
    const cols = l.columns.map((c) => `j."${c}"`).join(", ");
    views.set(
      l.table,
      `SELECT ${cols} FROM ${q(`${l.table}${HISTORY_SUFFIX}`)} j WHERE j._seq <= ${point} AND NOT EXISTS (SELECT 1 FROM ${v} v WHERE v.object_id = j."${l.owner}" AND v.seq > j._seq AND v.seq <= ${point})`,
    );
  }
  return views;
}
