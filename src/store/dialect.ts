/**
 * The SQL dialects. This module (with sqlite-driver.ts and db.ts) is the only place that knows which engine
 * is in use; everything else asks the `Dialect` for the few things that differ.
 */
import { type RawBuilder, sql } from "kysely";
import type { Column } from "../registry/index.ts";

/** Engine capabilities and SQL snippets that differ between SQLite and PostgreSQL. */
export interface Dialect {
  readonly engine: "sqlite" | "postgres";
  /** SQL column type for a logical column type. */
  columnType(type: Column["type"]): string;
  /** Case-insensitive LIKE of `expr` against `pattern` (pattern already escaped with `\`). */
  ilike(expr: RawBuilder<unknown>, pattern: string): RawBuilder<boolean>;
  /** Case-insensitive equality. */
  iequals(expr: RawBuilder<unknown>, value: string): RawBuilder<boolean>;
  /** Regular-expression match (`caseInsensitive` for `ire`). */
  regex(expr: RawBuilder<unknown>, pattern: string, caseInsensitive: boolean): RawBuilder<boolean>;
  /** Text of a JSON object member: `data ->> key`. */
  jsonText(column: RawBuilder<unknown>, key: string): RawBuilder<unknown>;
  /** The n-th (1-based) bind placeholder in raw SQL text. */
  placeholder(n: number): string;
}

export const sqliteDialect: Dialect = {
  engine: "sqlite",
  columnType(type) {
    switch (type) {
      case "text":
      case "json":
        return "TEXT";
      case "int":
      case "bigint":
      case "bool":
        return "INTEGER";
      case "real":
        return "REAL";
    }
  },
  ilike: (expr, pattern) => sql<boolean>`lower(${expr}) LIKE lower(${pattern}) ESCAPE '\\'`,
  iequals: (expr, value) => sql<boolean>`lower(${expr}) = lower(${value})`,
  regex: (expr, pattern, ci) => sql<boolean>`regexp(${ci ? `(?i)${pattern}` : pattern}, ${expr})`,
  jsonText: (column, key) => sql`json_extract(${column}, ${`$."${key}"`})`,
  placeholder: () => "?",
};

export const postgresDialect: Dialect = {
  engine: "postgres",
  columnType(type) {
    switch (type) {
      case "text":
      case "json":
        return "TEXT";
      case "int":
        return "INTEGER";
      case "bigint":
        return "BIGINT";
      case "bool":
        return "BOOLEAN";
      case "real":
        return "DOUBLE PRECISION";
    }
  },
  ilike: (expr, pattern) => sql<boolean>`(${expr})::text ILIKE ${pattern} ESCAPE '\\'`,
  iequals: (expr, value) => sql<boolean>`lower((${expr})::text) = lower(${value})`,
  regex: (expr, pattern, ci) =>
    ci ? sql<boolean>`(${expr})::text ~* ${pattern}` : sql<boolean>`(${expr})::text ~ ${pattern}`,
  jsonText: (column, key) => sql`((${column})::jsonb ->> ${key})`,
  placeholder: (n) => `$${n}`,
};
