/**
 * The lookup table: suffix → SQL operator and the field kinds it applies to (seed, Filtering rule 5;
 * nautobot-api-core.md §9.3). Lookups are rows here, not branches in the compiler.
 */
import { type RawBuilder, sql } from "kysely";
import type { FieldDef } from "../registry/meta.ts";
import type { Dialect } from "../store/dialect.ts";

/** Value family of a filterable field: decides which lookups apply and how values are coerced. */
export type LookupKind = "string" | "number" | "date" | "bool" | "choice" | "uuid";

export interface Lookup {
  /** Semantic operator. */
  op: "eq" | "lt" | "lte" | "gt" | "gte" | "ic" | "isw" | "iew" | "ie" | "re" | "ire" | "isnull";
  /** Negated form (`n`, `nic`, ...). */
  negate: boolean;
  /** Field kinds the lookup is generated for. */
  kinds: readonly LookupKind[];
  /** The value is used as text, not coerced to the field kind. */
  text?: boolean;
  /** Condition for one value. */
  sql(column: RawBuilder<unknown>, value: unknown, dialect: Dialect): RawBuilder<boolean>;
}

const esc = (v: unknown) => String(v).replace(/[\\%_]/g, (c) => `\\${c}`);
const STR: LookupKind[] = ["string", "uuid"];
const ALL: LookupKind[] = ["string", "number", "date", "bool", "choice", "uuid"];
const NUM: LookupKind[] = ["number", "date"];

const eq = (c: RawBuilder<unknown>, v: unknown) => sql<boolean>`${c} = ${v}`;

/** Suffix ("" for the bare filter) → lookup. */
export const LOOKUPS: Record<string, Lookup> = {
  "": { op: "eq", negate: false, kinds: ALL, sql: eq },
  n: { op: "eq", negate: true, kinds: ["string", "number", "date", "choice", "uuid"], sql: eq },
  lt: { op: "lt", negate: false, kinds: NUM, sql: (c, v) => sql<boolean>`${c} < ${v}` },
  lte: { op: "lte", negate: false, kinds: NUM, sql: (c, v) => sql<boolean>`${c} <= ${v}` },
  gt: { op: "gt", negate: false, kinds: NUM, sql: (c, v) => sql<boolean>`${c} > ${v}` },
  gte: { op: "gte", negate: false, kinds: NUM, sql: (c, v) => sql<boolean>`${c} >= ${v}` },
  ic: { op: "ic", negate: false, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `%${esc(v)}%`) },
  nic: { op: "ic", negate: true, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `%${esc(v)}%`) },
  isw: { op: "isw", negate: false, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `${esc(v)}%`) },
  nisw: { op: "isw", negate: true, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `${esc(v)}%`) },
  iew: { op: "iew", negate: false, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `%${esc(v)}`) },
  niew: { op: "iew", negate: true, kinds: STR, text: true, sql: (c, v, d) => d.ilike(c, `%${esc(v)}`) },
  ie: { op: "ie", negate: false, kinds: STR, text: true, sql: (c, v, d) => d.iequals(c, String(v)) },
  nie: { op: "ie", negate: true, kinds: STR, text: true, sql: (c, v, d) => d.iequals(c, String(v)) },
  /** `__isnull=true|false` (Django `isnull`; issue 5). The value is a boolean, not the field's kind. */
  isnull: {
    op: "isnull",
    negate: false,
    kinds: ALL,
    text: true,
    sql: (c, v) => (v ? sql<boolean>`${c} IS NULL` : sql<boolean>`${c} IS NOT NULL`),
  },
  re: {
    op: "re",
    negate: false,
    kinds: ["string", "uuid"],
    text: true,
    sql: (c, v, d) => d.regex(c, String(v), false),
  },
  nre: {
    op: "re",
    negate: true,
    kinds: ["string", "uuid"],
    text: true,
    sql: (c, v, d) => d.regex(c, String(v), false),
  },
  ire: {
    op: "ire",
    negate: false,
    kinds: ["string", "uuid"],
    text: true,
    sql: (c, v, d) => d.regex(c, String(v), true),
  },
  nire: {
    op: "ire",
    negate: true,
    kinds: ["string", "uuid"],
    text: true,
    sql: (c, v, d) => d.regex(c, String(v), true),
  },
};

/** The lookup kind of a field, or undefined when the field gets no automatic field filter. */
export function lookupKindOf(fd: FieldDef): LookupKind | undefined {
  switch (fd.kind) {
    case "str":
    case "text":
    case "slug":
    case "mac":
    case "ct":
      return "string";
    case "int":
    case "decimal":
      return "number";
    case "date":
    case "datetime":
      return "date";
    case "bool":
      return "bool";
    case "choice":
      return "choice";
    default:
      return undefined;
  }
}
