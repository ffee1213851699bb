/**
 * DDL derived from the registry: tables, join tables and indexes, per dialect.
 *
 * Relations are enforced by the service layer (on-delete rules need the change log and 409 messages), so
 * tables carry indexes on every reference column but no FOREIGN KEY constraints. Single-field `unique`
 * becomes a unique index; multi-field rules are checked by the service (their NULL semantics differ
 * per rule) and get a plain index.
 */
import { createHash } from "node:crypto";
import type { Model, Registry } from "../registry/index.ts";
import type { UniqueTogether } from "../registry/meta.ts";
import type { Dialect } from "./dialect.ts";
import { orderColumns, orderPlan } from "./ordering.ts";

/** One table to create: name, columns (name → SQL type), primary key. */
export interface TableSpec {
  name: string;
  columns: Array<[string, string]>;
  primaryKey: string[];
  /**
   * SQLite: store the rows in the primary key's b-tree (`WITHOUT ROWID`), one b-tree to write instead of a
   * table and its key index (history tables, issue 27: fewer pages per commit). PostgreSQL ignores it.
   */
  clustered?: boolean;
}

/** One index to create. */
export interface IndexSpec {
  name: string;
  table: string;
  columns: string[];
  unique?: boolean;
  /** SQL expressions indexed instead of `columns` (already quoted), e.g. `COALESCE("tenant_id", '')`. */
  exprs?: string[];
  /** Partial index predicate (SQL). */
  where?: string;
}

/**
 * The unique index enforcing a model's together-uniqueness rule in the database (issue 12: concurrent
 * writers both passing the service's check). It has the service's semantics: a row with a skipped NULL (or
 * a blank text value) is not indexed; NULL in a `nullMatches` field is indexed as ''. Deterministic name,
 * so a violation can be mapped back to the rule's message (service/uniqueness.ts).
 */
export function uniqueIndexFor(m: Model, u: UniqueTogether): IndexSpec {
  const matchNull = new Set(u.skipNulls === false ? u.fields : (u.nullMatches ?? []));
  const exprs: string[] = [];
  const conds: string[] = [];
  for (const f of u.fields) {
    const fd = m.fields[f];
    const col = `"${fd?.kind === "fk" ? `${f}_id` : f}"`;
    const text = fd?.kind === "str" || fd?.kind === "slug" || fd?.kind === "text";
    if (matchNull.has(f)) exprs.push(`COALESCE(${col}, '')`);
    else {
      exprs.push(col);
      conds.push(`${col} IS NOT NULL`);
      if (text) conds.push(`${col} <> ''`);
    }
  }
  for (const f of u.whereNull ?? []) {
    const fd = m.fields[f];
    conds.push(`"${fd?.kind === "fk" ? `${f}_id` : f}" IS NULL`);
  }
  const hash = createHash("sha256")
    .update(`${m.table}:${u.fields.join(",")}${u.whereNull ? `|null:${u.whereNull.join(",")}` : ""}`)
    .digest("hex")
    .slice(0, 10);
  return {
    name: `ux_${m.table.slice(0, 40)}_${hash}`,
    table: m.table,
    columns: [],
    exprs,
    unique: true,
    ...(conds.length ? { where: conds.join(" AND ") } : {}),
  };
}

/** Join table name of an M2M or content-types field. */
export function joinTable(model: Model, field: string): string {
  const fd = model.fields[field];
  if (fd?.kind === "m2m" && fd.through) return fd.through;
  return `${model.table}_${field}`;
}

/** Tables and indexes for every model of the registry, plus the shared tables (tags, outbox-ready). */
export function schemaFor(reg: Registry, dialect: Dialect): { tables: TableSpec[]; indexes: IndexSpec[] } {
  const tables: TableSpec[] = [];
  const indexes: IndexSpec[] = [];
  const ix = (table: string, columns: string[], unique = false) =>
    indexes.push({ name: `ix_${table}_${columns.join("_")}`.slice(0, 60), table, columns, unique });
  for (const m of reg.models.values()) {
    tables.push({
      name: m.table,
      columns: m.columns.map((c) => [c.name, dialect.columnType(c.type)]),
      primaryKey: ["id"],
    });
    for (const [name, fd] of m.fieldList) {
      switch (fd.kind) {
        case "fk":
          ix(m.table, [`${name}_id`]);
          break;
        case "status":
          ix(m.table, ["status_id"]);
          break;
        case "gfk":
          ix(m.table, [`${name}_type`, `${name}_id`]);
          break;
        case "ip":
          ix(m.table, [`${name}_family`, `${name}_start`]);
          ix(m.table, [`${name}_family`, `${name}_end`]);
          if (fd.mode === "host") ix(m.table, [`${name}_family`, `${name}_host`]);
          ix(m.table, [name]);
          break;
        case "m2m":
        case "cts": {
          const jt = joinTable(m, name);
          tables.push({
            name: jt,
            columns: [
              ["source_id", "TEXT NOT NULL"],
              [fd.kind === "m2m" ? "target_id" : "content_type", "TEXT NOT NULL"],
            ],
            primaryKey: ["source_id", fd.kind === "m2m" ? "target_id" : "content_type"],
          });
          ix(jt, [fd.kind === "m2m" ? "target_id" : "content_type"]);
          break;
        }
        case "str":
          if (fd.natural) ix(m.table, [`${name}_nat`]);
          if (fd.unique) ix(m.table, [name], true);
          break;
        case "slug":
          if (fd.unique) ix(m.table, [name], true);
          break;
        default:
          break;
      }
    }
    for (const u of m.uniqueTogether ?? []) {
      const cols = u.fields.map((fname) => {
        const fd = m.fields[fname];
        return fd?.kind === "fk" ? `${fname}_id` : fname;
      });
      ix(m.table, cols);
      indexes.push(uniqueIndexFor(m, u));
    }
    if (m.changelog) ix(m.table, ["last_updated"]);
    for (const spec of m.indexes ?? []) {
      if (!("where" in spec)) ix(m.table, [...spec]);
      else {
        const name = `ix_${m.table}_${spec.columns.join("_")}`.slice(0, 60 - spec.name.length - 1);
        indexes.push({
          name: `${name}_${spec.name}`,
          table: m.table,
          columns: [...spec.columns],
          where: spec.where,
        });
      }
    }
    const order = orderColumns(m).map(([c]) => c);
    if (order.length > 1) ix(m.table, order);
    // SQLite sorts NULLs first; lists order nullable columns with an `(x IS NULL)` term (PostgreSQL's
    // order), so the index that serves the list order has that expression too.
    if (dialect.engine === "sqlite") {
      const nullable = new Set(
        orderPlan(m, (k) => reg.get(k))
          .terms.filter((t) => t.nullable && t.ref.startsWith("t."))
          .map((t) => t.ref.slice(2)),
      );
      if (order.some((c) => nullable.has(c)))
        indexes.push({
          name: `ixo_${m.table}`.slice(0, 60),
          table: m.table,
          columns: [],
          exprs: order.flatMap((c) => (nullable.has(c) ? [`("${c}" IS NULL)`, `"${c}"`] : [`"${c}"`])),
          unique: false,
        });
    }
  }
  tables.push({
    name: "extras_taggeditem",
    columns: [
      ["content_type", "TEXT NOT NULL"],
      ["object_id", "TEXT NOT NULL"],
      ["tag_id", "TEXT NOT NULL"],
    ],
    primaryKey: ["content_type", "object_id", "tag_id"],
  });
  ix("extras_taggeditem", ["tag_id"]);
  ix("extras_taggeditem", ["object_id"]);
  tables.push({
    name: "inventory_meta",
    columns: [
      ["key", "TEXT NOT NULL"],
      ["value", "TEXT"],
    ],
    primaryKey: ["key"],
  });
  // Web UI sessions (service/sessions.ts), shared by every process on the database.
  tables.push({
    name: "ui_session",
    columns: [
      ["sid", "TEXT NOT NULL"],
      ["data", "TEXT NOT NULL"],
      ["expires", "TEXT NOT NULL"],
    ],
    primaryKey: ["sid"],
  });
  ix("ui_session", ["expires"]);
  // Per-user web interface preferences (service/ui-preferences.ts; Nautobot keeps them in the user's
  // `config_data`, which its 1.6 UserSerializer does not expose): one JSON value per user and key.
  tables.push({
    name: "ui_preference",
    columns: [
      ["user_id", "TEXT NOT NULL"],
      ["key", "TEXT NOT NULL"],
      ["value", "TEXT NOT NULL"],
    ],
    primaryKey: ["user_id", "key"],
  });
  // Cable paths (service/cable-paths.ts; Nautobot dcim.CablePath): one row per origin, and its nodes.
  tables.push({
    name: "dcim_cablepath",
    columns: [
      ["id", "TEXT NOT NULL"],
      ["origin_type", "TEXT NOT NULL"],
      ["origin_id", "TEXT NOT NULL"],
      ["destination_type", "TEXT"],
      ["destination_id", "TEXT"],
      ["path", "TEXT NOT NULL"],
      ["is_active", "INTEGER NOT NULL"],
      ["is_split", "INTEGER NOT NULL"],
    ],
    primaryKey: ["id"],
  });
  ix("dcim_cablepath", ["origin_id"], true);
  ix("dcim_cablepath", ["destination_id"]);
  tables.push({
    name: "dcim_cablepath_node",
    columns: [
      ["path_id", "TEXT NOT NULL"],
      ["position", "INTEGER NOT NULL"],
      ["node_type", "TEXT NOT NULL"],
      ["node_id", "TEXT NOT NULL"],
    ],
    primaryKey: ["path_id", "position"],
  });
  ix("dcim_cablepath_node", ["node_id"]);
  return { tables, indexes };
}

/** CREATE TABLE text (`engine` decides whether `clustered` applies). */
export function createTableSql(t: TableSpec, engine: "sqlite" | "postgres"): string {
  const cols = t.columns.map(([n, type]) => `"${n}" ${type}`).join(", ");
  const tail = t.clustered && engine === "sqlite" ? " WITHOUT ROWID" : "";
  return `CREATE TABLE IF NOT EXISTS "${t.name}" (${cols}, PRIMARY KEY (${t.primaryKey.map((c) => `"${c}"`).join(", ")}))${tail}`;
}

/** CREATE INDEX text. */
export function createIndexSql(i: IndexSpec): string {
  const cols = i.exprs ?? i.columns.map((c) => `"${c}"`);
  return `CREATE ${i.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS "${i.name}" ON "${i.table}" (${cols.join(", ")})${i.where ? ` WHERE ${i.where}` : ""}`;
}
