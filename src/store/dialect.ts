/**
 * The SQL dialects. This module (with sqlite-driver.ts and db.ts) is the only place that knows which engine
 * is in use; everything else asks the `Dialect` for the few things that differ.
 */
import { CompiledQuery, type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import pg from "pg";
import type { Column } from "../registry/index.ts";
import { StaleTokenError } from "./errors.ts";
import { literals, substitute } from "./pg-prepared.ts";

/** One row to insert (no `id`: `values` carries it) or to update (`id` of the row, columns in `values`). */
export interface RowWrite {
  table: string;
  values: Record<string, unknown>;
  id?: string;
}

/**
 * A statement queued as is with the writes: a check (`Dialect.assertToken`) whose result nobody reads, or a
 * read (`Dialect.prefetch`) handed its result (`settle`) or the error of the query that carried it (`fail`).
 */
export interface QueuedStatement {
  /** The statement and its values (which can be written in as literals: `inlined`). */
  sql: string;
  parameters: readonly unknown[];
  settle?: (result: unknown) => void;
  fail?: (error: unknown) => void;
}

/** What a PostgreSQL transaction's connection keeps until its next statement (db.ts `batchedWrites`). */
export type Queued = RowWrite | QueuedStatement;

/**
 * The text PostgreSQL's token check fails with (`Dialect.assertToken`): an integer cast of this text and the
 * key, so the failure is an ordinary error that aborts the transaction (22P02) and names the key.
 */
export const STALE_TOKEN_TEXT = "inventory stale token ";

/** The text that marks a queued write for the PostgreSQL connection wrapper (db.ts); its one parameter is the `Queued` item. */
export const QUEUED_WRITE = "/*inventory:queued-write*/ SELECT $1";

/** Quote an identifier (table or column name from the registry) for raw SQL on both engines. */
export function quoteId(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The text of a parameterised statement with its values written in as literals, or undefined if one cannot be. */
export function inlined(text: string, values: unknown): string | undefined {
  if (!Array.isArray(values)) return text;
  const lits = literals(values);
  return lits && substitute(text, lits);
}

/** Write a row now, with Kysely. */
async function writeNow(db: Kysely<any> | Transaction<any>, w: RowWrite): Promise<void> {
  if (w.id === undefined) await db.insertInto(w.table).values(w.values).execute();
  else await db.updateTable(w.table).set(w.values).where("id", "=", w.id).execute();
}

/** Run a statement now (`Dialect.queueStatement` where nothing can be queued). */
async function runNow(db: Kysely<any> | Transaction<any>, query: CompiledQuery): Promise<void> {
  await db.executeQuery(query);
}

/** Read a query's rows now (`Dialect.prefetch` where nothing can be queued). */
async function readNow(db: Kysely<any> | Transaction<any>, query: CompiledQuery) {
  const { rows } = await db.executeQuery(query);
  return () => Promise.resolve(rows as unknown[]);
}

/** Insert rows now, 200 per statement. */
async function insertInChunks(
  db: Kysely<any> | Transaction<any>,
  table: string,
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 200))
      .execute();
}

/** Whether every value survives a JSON round trip unchanged (text, finite numbers, booleans, null). */
function jsonSafe(values: Record<string, unknown>): boolean {
  for (const v of Object.values(values)) {
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number" && Number.isFinite(v)) continue;
    return false;
  }
  return true;
}

/** Rows `queueInserts` queues at most on PostgreSQL; more are inserted at once (200 per statement). */
const QUEUED_INSERTS_MAX = 20;

/** What `Dialect.claim` got. */
export interface Claimed {
  claimed: number[];
  tried: number;
  firstFree: number;
  vetoed: boolean;
}

/** The index (0-based) of the first of `keys` not in `taken`. */
function firstUntaken(keys: readonly string[], taken: ReadonlySet<string>): number {
  let i = 0;
  while (i < keys.length && taken.has(keys[i]!)) i++;
  return i;
}

/** The elements of a PostgreSQL array's text form whose elements need no quoting (`{a,b}`; `""` for ""). */
function textArray(text: string): string[] {
  const inner = text.slice(1, -1);
  return inner ? inner.split(",").map((e) => (e === '""' ? "" : e)) : [];
}

/** Engine capabilities and SQL snippets that differ between SQLite and PostgreSQL. */
export interface Dialect {
  readonly engine: "sqlite" | "postgres";
  /**
   * Whether a read-modify-write must lock the rows it reads (`SELECT … FOR UPDATE`): PostgreSQL, where
   * writers run concurrently; not SQLite, whose write transactions are serialised (BEGIN IMMEDIATE).
   */
  readonly rowLocks: boolean;
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
  /** `expr` as a JSON text value: a quoted, escaped string, or `null` for NULL (SQLite `json_quote`). */
  jsonQuote(expr: RawBuilder<unknown>): RawBuilder<string>;
  /**
   * Aggregate: the texts `expr` of a group joined with `separator` (NULL for no row), in the order of
   * `orderBy` when given, else in the order the rows reach the aggregate (a sorted subquery's order on both
   * engines, though neither documents it: callers that rely on it check). SQLite `group_concat`,
   * PostgreSQL `string_agg`.
   */
  joinedText(
    expr: RawBuilder<unknown>,
    separator: string,
    orderBy?: RawBuilder<unknown>,
  ): RawBuilder<string | null>;
  /**
   * Text `expr` as bytes to write to a socket as they are: SQLite its UTF-8 bytes (`CAST(... AS BLOB)`: a
   * Uint8Array, no JS string decoded and encoded again). Undefined on PostgreSQL, whose driver hands over
   * text only: there one 1.5 MB string per feed page cost the process more (large-object garbage
   * collection) than the page's 1,000 row strings, so the feed joins rows in the process.
   */
  wireText?: (expr: RawBuilder<unknown>) => RawBuilder<Uint8Array>;
  /** The n-th (1-based) bind placeholder in raw SQL text. */
  placeholder(n: number): string;
  /** Row-lock clause of a claiming SELECT on table alias `alias` (PostgreSQL `FOR UPDATE OF a SKIP LOCKED`; "" on SQLite, which serialises writers). */
  skipLocked(alias: string): string;
  /** SQL that signals `channel` to other processes at commit (PostgreSQL NOTIFY), or undefined. */
  notifySql(channel: string): string | undefined;
  /** DDL creating a named sequence, or undefined when the engine emulates it (SQLite). */
  sequenceDdl(name: string): string | undefined;
  /**
   * Take `count` increasing values of a named sequence inside the caller's transaction.
   * @returns the values, ascending.
   */
  nextValues(db: Kysely<any> | Transaction<any>, name: string, count: number): Promise<number[]>;
  /**
   * Serialise a critical section across processes until the caller's transaction ends: PostgreSQL
   * `pg_advisory_xact_lock` on a hash of `name`; nothing on SQLite, whose write transactions already hold
   * the database's single write lock from their first statement (BEGIN IMMEDIATE).
   */
  transactionLock(db: Kysely<any> | Transaction<any>, name: string): Promise<void>;
  /**
   * Write one row in a bulk write: insert `values` into `table`, or with `id` update those columns of that
   * row. SQLite writes at once. PostgreSQL inside a transaction queues the write on the transaction's
   * connection; the connection sends its queued writes before its next statement, consecutive ones of the
   * same shape merged into one statement (db.ts `batchedWrites`), so a bulk of 1,000 rows costs one round
   * trip instead of 1,000. Every later statement of the transaction sees the row either way; an error of a
   * queued write (a unique index) is raised by that next statement and fails the transaction.
   */
  queueWrite(db: Kysely<any> | Transaction<any>, write: RowWrite): Promise<void>;
  /**
   * Run a statement whose result nobody reads (a DELETE), queued as `queueWrite` queues rows: PostgreSQL in
   * a transaction sends it with the next statement when its values can be written in; otherwise now.
   */
  queueStatement(db: Kysely<any> | Transaction<any>, query: CompiledQuery): Promise<void>;
  /**
   * Run statements whose results nobody reads, in order (a transaction's history, issue 27): SQLite now
   * (each a cached prepared statement when its text repeats); PostgreSQL each queued (`queueStatement`),
   * so they go out with the transaction's next statement.
   */
  queueStatements(db: Kysely<any> | Transaction<any>, queries: readonly CompiledQuery[]): Promise<void>;
  /**
   * `ids` as one bound value at placeholder `n` (1-based) and the SQL selecting them back, one row each in
   * column `v` (an `IN (…)` operand or a derived table): one statement text for any number of ids.
   * SQLite: a JSON array through `json_each`. PostgreSQL: a `text[]` through `unnest`, whose row estimate
   * follows the array (a `jsonb_array_elements_text` subquery is estimated at 100 rows, and an
   * `INSERT … SELECT … WHERE id IN (…)` of one id then scanned the whole table: 3 ms of database CPU per
   * write). @throws Error for an id that is not a UUID or a content-type key.
   */
  idList(ids: readonly string[], n: number): { sql: string; value: string };
  /**
   * Fail the caller's transaction with `StaleTokenError` unless the `inventory_meta` row `key` reads `value`.
   * SQLite reads the row now. PostgreSQL queues the check (`queueWrite`), so it goes out with the
   * transaction's first statement (with its BEGIN: no round trip of its own) and, when it fails, aborts the
   * transaction, so nothing the transaction did afterwards can commit.
   */
  assertToken(db: Kysely<any> | Transaction<any>, key: string, value: string): Promise<void>;
  /**
   * Read `query`'s rows with the transaction's next statement instead of in a round trip of its own.
   * Resolves, once the read is queued, to a function giving its rows: call it after issuing that next
   * statement (called before, it sends the read by itself). PostgreSQL in a transaction, for a query whose
   * values can be written in as literals, queues the read (`queueWrite`); otherwise it is read now.
   * @throws (from the function) the error of the query that carried the read, or an Error when the
   *   transaction ended before the read was sent.
   */
  prefetch(db: Kysely<any> | Transaction<any>, query: CompiledQuery): Promise<() => Promise<unknown[]>>;
  /**
   * Insert `rows` into `table` (a transaction's change log): SQLite in statements of up to 200 rows;
   * PostgreSQL queued (`queueWrite`), so a few go out with the transaction's next statement (often its
   * COMMIT), and more than 20 as SQLite does.
   */
  queueInserts(
    db: Kysely<any> | Transaction<any>,
    table: string,
    rows: readonly Record<string, unknown>[],
  ): Promise<void>;
  /**
   * Claim up to `want` candidates, in order, for the caller's transaction, so that no other transaction can
   * take them until it ends, and tell which are free. `keys` names the candidates (their claim keys, never
   * ""); `taken` is a query answering the keys (column `k`) of candidates already taken, and "" to veto the
   * claim (the caller's premise no longer holds). It runs twice: in the claiming statement, which skips
   * taken candidates, and after it, in a statement of its own that sees every commit made before the
   * claims, so a candidate taken by a transaction that committed meanwhile is not handed out.
   * PostgreSQL: `pg_try_advisory_xact_lock` on each key's hash, candidates another transaction holds
   * skipped; both statements in one round trip, the claimed keys passed on in a transaction-local setting.
   * SQLite, whose write transactions are serialised: the first `want` untaken candidates.
   * @returns `claimed`: indexes (0-based, ascending) of the claimed candidates that are free; `tried`: how
   *   many candidates, from the first, were tried (the others may be tried again); `firstFree`: the index
   *   of the first candidate not taken at the second check (`keys.length` when all are); `vetoed`: `taken`
   *   answered "" (nothing is handed out; what was claimed stays claimed until the transaction ends)
   */
  claim(
    db: Kysely<any> | Transaction<any>,
    keys: readonly string[],
    want: number,
    taken: CompiledQuery,
  ): Promise<Claimed>;
  /**
   * `claim` sent with the transaction's next statement instead of in a round trip of its own (PostgreSQL;
   * SQLite claims at once). Resolves, once queued, to a function giving what `claim` gives: call it after
   * issuing that next statement (called before, it sends the claim by itself).
   * @throws (from the function) the error of the query that carried the claim
   */
  claimAhead(
    db: Kysely<any> | Transaction<any>,
    keys: readonly string[],
    want: number,
    taken: CompiledQuery,
  ): Promise<() => Promise<Claimed>>;
  /**
   * ORDER BY expressions for one term, with NULLs where PostgreSQL puts them by default (last ascending,
   * first descending) or first when `nullsFirst`: SQLite, which sorts NULLs the other way, gets an
   * `(x IS NULL)` term before the value.
   */
  orderBy(ref: string, desc: boolean, nullable: boolean, nullsFirst: boolean): RawBuilder<unknown>[];
  /**
   * Number the rows `ids` of `table` (in that order) in `column` from the named `sequence`, in commit order
   * (issue 26, the change sequence): values are taken at commit under one lock, so a transaction that
   * commits later always gets higher values, and every lower value is visible once a higher one is.
   * PostgreSQL queues `pg_advisory_xact_lock(lock)`, one UPDATE taking the values with nextval/setval and
   * `NOTIFY channel`, which go out with the transaction's next statement (its COMMIT): the lock is held from
   * that statement to the end of the commit, without a round trip in between. SQLite, whose writers are
   * serialised, takes the values from its counter row and updates at once. `ids` must be UUID texts.
   * Resolves to an SQL expression of the transaction's commit number (its highest value; with `always`
   * and no `ids`, one number of its own) that later statements of the transaction may use (PostgreSQL: a
   * transaction-local setting, SQLite: the number written in), or undefined when nothing was numbered.
   */
  stampCommitOrder(
    db: Kysely<any> | Transaction<any>,
    stamp: {
      table: string;
      column: string;
      ids: readonly string[];
      sequence: string;
      lock: string;
      channel: string;
      /** Take a number for the transaction even when `ids` is empty (it wrote history, issue 27). */
      always?: boolean;
    },
  ): Promise<string | undefined>;
}

/**
 * `ids` (UUIDs, or content-type keys such as `dcim.device`) as SQL string literals, for statement text.
 * @throws Error for anything else (nothing that needs quoting is ever written in).
 */
export function idLiterals(ids: readonly string[]): string[] {
  return ids.map((id) => {
    if (!/^[0-9A-Za-z._-]{1,64}$/.test(id)) throw new Error(`not an id: ${id}`);
    return `'${id}'`;
  });
}

/** `"alias"."column"` from `alias.column`. */
const qref = (ref: string) => sql.ref(ref);

export const sqliteDialect: Dialect = {
  engine: "sqlite",
  rowLocks: false,
  orderBy(ref, desc, nullable, nullsFirst) {
    const dir = sql.raw(desc ? "DESC" : "ASC");
    if (!nullable) return [sql`${qref(ref)} ${dir}`];
    const nullsAtEnd = !desc && !nullsFirst;
    return [sql`(${qref(ref)} IS NULL) ${sql.raw(nullsAtEnd ? "ASC" : "DESC")}`, sql`${qref(ref)} ${dir}`];
  },
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
      case "version":
        return "INTEGER NOT NULL DEFAULT 1";
    }
  },
  // ulower (sqlite-driver.ts) folds case for all of Unicode, as PostgreSQL's ILIKE does; SQLite's lower()
  // and LIKE fold ASCII only.
  ilike: (expr, pattern) => sql<boolean>`ulower(${expr}) LIKE ulower(${pattern}) ESCAPE '\\'`,
  iequals: (expr, value) => sql<boolean>`ulower(${expr}) = ulower(${value})`,
  regex: (expr, pattern, ci) => sql<boolean>`regexp(${ci ? `(?i)${pattern}` : pattern}, ${expr})`,
  jsonText: (column, key) => sql`json_extract(${column}, ${`$."${key}"`})`,
  jsonQuote: (expr) => sql<string>`json_quote(${expr})`,
  joinedText: (expr, separator, orderBy) =>
    sql<
      string | null
    >`group_concat(${expr}, ${sql.lit(separator)}${orderBy ? sql` ORDER BY ${orderBy}` : sql``})`,
  wireText: (expr) => sql<Uint8Array>`CAST(${expr} AS BLOB)`,
  placeholder: () => "?",
  skipLocked: () => "",
  notifySql: () => undefined,
  sequenceDdl: () => undefined,
  async nextValues(db, name, count) {
    // Writers are serialised on SQLite, so a counter row in inventory_meta is exact and cheap.
    const r = await db.executeQuery<{ value: string | number }>(
      CompiledQuery.raw(
        `INSERT INTO inventory_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = CAST(inventory_meta.value AS INTEGER) + ? RETURNING value`,
        [`seq:${name}`, String(count), count],
      ),
    );
    const last = Number(r.rows[0]!.value);
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  },
  async transactionLock() {},
  queueWrite: writeNow,
  queueStatement: runNow,
  async queueStatements(db, queries) {
    for (const q of queries) await runNow(db, q);
  },
  idList: (ids) => {
    idLiterals(ids);
    return { sql: "SELECT value AS v FROM json_each(?)", value: JSON.stringify(ids) };
  },
  prefetch: readNow,
  async assertToken(db, key, value) {
    const row = await db
      .selectFrom("inventory_meta")
      .select("value")
      .where("key", "=", key)
      .executeTakeFirst();
    if (row?.value !== value) throw new StaleTokenError(key);
  },
  queueInserts: insertInChunks,
  async claim(db, keys, want, taken) {
    const t = new Set((await db.executeQuery<{ k: unknown }>(taken)).rows.map((r) => String(r.k)));
    const firstFree = firstUntaken(keys, t);
    if (t.has("")) return { claimed: [], tried: 0, firstFree, vetoed: true };
    const claimed: number[] = [];
    let tried = 0;
    for (; tried < keys.length && claimed.length < want; tried++)
      if (!t.has(keys[tried]!)) claimed.push(tried);
    return { claimed, tried, firstFree, vetoed: false };
  },
  async claimAhead(db, keys, want, taken) {
    const r = await this.claim(db, keys, want, taken); // writers are serialised: nothing to send ahead
    return () => Promise.resolve(r);
  },
  async stampCommitOrder(db, { table, column, ids, sequence, always }) {
    if (!ids.length) return always ? String((await this.nextValues(db, sequence, 1))[0]) : undefined;
    const [first] = await this.nextValues(db, sequence, ids.length);
    const list = idLiterals(ids);
    for (let i = 0; i < list.length; i += 500) {
      const part = list.slice(i, i + 500);
      const when = part.map((l, j) => `WHEN ${l} THEN ${first! + i + j}`).join(" ");
      await db.executeQuery(
        CompiledQuery.raw(
          `UPDATE "${table}" SET "${column}" = CASE "id" ${when} END WHERE "id" IN (${part.join(",")})`,
          [],
        ),
      );
    }
    return String(first! + ids.length - 1);
  },
};

export const postgresDialect: Dialect = {
  engine: "postgres",
  rowLocks: true,
  orderBy(ref, desc, nullable, nullsFirst) {
    const dir = desc ? "DESC" : "ASC";
    return [sql`${qref(ref)} ${sql.raw(nullable && nullsFirst && !desc ? `${dir} NULLS FIRST` : dir)}`];
  },
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
      case "version":
        return "INTEGER NOT NULL DEFAULT 1";
    }
  },
  ilike: (expr, pattern) => sql<boolean>`(${expr})::text ILIKE ${pattern} ESCAPE '\\'`,
  iequals: (expr, value) => sql<boolean>`lower((${expr})::text) = lower(${value})`,
  regex: (expr, pattern, ci) =>
    ci ? sql<boolean>`(${expr})::text ~* ${pattern}` : sql<boolean>`(${expr})::text ~ ${pattern}`,
  jsonText: (column, key) => sql`((${column})::jsonb ->> ${key})`,
  jsonQuote: (expr) => sql<string>`coalesce(to_json((${expr})::text)::text, 'null')`,
  joinedText: (expr, separator, orderBy) =>
    sql<
      string | null
    >`string_agg((${expr})::text, ${sql.lit(separator)}${orderBy ? sql` ORDER BY ${orderBy}` : sql``})`,
  placeholder: (n) => `$${n}`,
  skipLocked: (alias) => ` FOR UPDATE OF ${alias} SKIP LOCKED`,
  notifySql: (channel) => `NOTIFY "${channel.replace(/"/g, "")}"`,
  sequenceDdl: (name) => `CREATE SEQUENCE IF NOT EXISTS "${name.replace(/"/g, "")}"`,
  async nextValues(db, name, count) {
    const r = await db.executeQuery<{ v: string | number }>(
      CompiledQuery.raw(`SELECT nextval($1) AS v FROM generate_series(1, $2)`, [name, count]),
    );
    return r.rows.map((x) => Number(x.v)).sort((a, b) => a - b);
  },
  async transactionLock(db, name) {
    await db.executeQuery(CompiledQuery.raw(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [name]));
  },
  async queueWrite(db, w) {
    // Outside a transaction the next statement may run on another pooled connection: write now.
    if (!db.isTransaction || !jsonSafe(w.values)) return writeNow(db, w);
    // The write itself is the parameter (a copy: the caller may reuse its objects); it never reaches the driver.
    await db.executeQuery(CompiledQuery.raw(QUEUED_WRITE, [{ ...w, values: { ...w.values } }]));
  },
  async assertToken(db, key, value) {
    // The coalesce keeps the cast from being folded, and failing, when the statement is planned.
    const check = `SELECT CASE WHEN (SELECT value FROM inventory_meta WHERE key = $1) IS DISTINCT FROM $2 THEN CAST(${pg.escapeLiteral(STALE_TOKEN_TEXT)} || $1::text || coalesce((SELECT '' FROM inventory_meta WHERE key = $1), '') AS integer) END`;
    if (!db.isTransaction) throw new Error("assertToken: in a transaction only");
    await this.queueStatement(db, CompiledQuery.raw(check, [key, value]));
  },
  async queueStatement(db, query) {
    if (!db.isTransaction || inlined(query.sql, query.parameters) === undefined) return runNow(db, query);
    const item: QueuedStatement = { sql: query.sql, parameters: query.parameters };
    await db.executeQuery(CompiledQuery.raw(QUEUED_WRITE, [item]));
  },
  async queueStatements(db, queries) {
    for (const q of queries) await this.queueStatement(db, q);
  },
  idList: (ids, n) => {
    idLiterals(ids);
    return { sql: `SELECT unnest($${n}::text[]) AS v`, value: `{${ids.join(",")}}` };
  },
  async prefetch(db, query) {
    if (!db.isTransaction || inlined(query.sql, query.parameters) === undefined) return readNow(db, query);
    let settled = false;
    const { promise: rows, resolve, reject } = Promise.withResolvers<unknown[]>();
    rows.catch(() => {}); // nobody may ask for the rows of a transaction that failed
    const item: QueuedStatement = {
      sql: query.sql,
      parameters: query.parameters,
      settle: (r) => {
        settled = true;
        resolve((r as { rows?: unknown[] } | undefined)?.rows ?? []);
      },
      fail: (e) => {
        settled = true;
        reject(e);
      },
    };
    await db.executeQuery(CompiledQuery.raw(QUEUED_WRITE, [item]));
    return async () => {
      if (!settled) await db.executeQuery(CompiledQuery.raw("SELECT 1", [])); // sends what is kept
      return rows;
    };
  },
  async queueInserts(db, table, rows) {
    // Many rows go out now as multi-row INSERTs with bound values: measured on a bulk PATCH of 1,000
    // objects, a change log of 1,000 rows was 30 ms slower through one JSON literal (its object data
    // written in, escaped and parsed again) than in five bound statements.
    if (rows.length > QUEUED_INSERTS_MAX) return insertInChunks(db, table, rows);
    for (const values of rows) await this.queueWrite(db, { table, values });
  },
  async claim(db, keys, want, taken) {
    if (!keys.length || want <= 0) return NOTHING_CLAIMED;
    const { claims, recheck, result } = pgClaim(db, keys, want, taken);
    // The claims queued, so that the recheck goes out with them, after them: one round trip.
    await this.queueStatement(db, claims);
    const r = await db.executeQuery<{ c: string; t: string }>(recheck);
    return result(r.rows[0]!);
  },
  async stampCommitOrder(db, { table, column, ids, sequence, lock, channel, always }) {
    if (!ids.length && !always) return undefined;
    const n = ids.length;
    const values = idLiterals(ids)
      .map((l, i) => `(${l}, ${i + 1})`)
      .join(",");
    const seqName = pg.escapeLiteral(sequence);
    // The lock first, in a statement of its own, so that nextval runs only once it is held; the values
    // are reserved in one step (setval past nextval) inside a CTE, evaluated once, which also keeps the
    // transaction's highest number in a transaction-local setting for its history rows (issue 27).
    for (const text of [
      `SELECT pg_advisory_xact_lock(hashtextextended(${pg.escapeLiteral(lock)}, 0))`,
      n
        ? `WITH b AS MATERIALIZED (SELECT setval(${seqName}, nextval(${seqName}) + ${n - 1}) - ${n} AS base), c AS MATERIALIZED (SELECT set_config('inventory.commit_seq', (b.base + ${n})::text, true) AS v FROM b) UPDATE "${table}" o SET "${column}" = b.base + u.i FROM b, c, (VALUES ${values}) AS u(id, i) WHERE o."id" = u.id`
        : `SELECT set_config('inventory.commit_seq', nextval(${seqName})::text, true)`,
      ...(n ? [this.notifySql(channel)!] : []),
    ])
      await this.queueStatement(db, CompiledQuery.raw(text, []));
    return "current_setting('inventory.commit_seq')::bigint";
  },
  async claimAhead(db, keys, want, taken) {
    if (!keys.length || want <= 0) return () => Promise.resolve(NOTHING_CLAIMED);
    const { claims, recheck, result } = pgClaim(db, keys, want, taken);
    await this.queueStatement(db, claims);
    const rows = await this.prefetch(db, recheck);
    return async () => result((await rows())[0] as { c: string; t: string });
  },
};

/** What a claim with no candidates or nothing wanted gets. */
const NOTHING_CLAIMED: Claimed = { claimed: [], tried: 0, firstFree: 0, vetoed: false };

/**
 * PostgreSQL's two statements of `Dialect.claim`, and the reading of the recheck's row: the claims (a
 * function scan is read in array order and LIMIT stops it; CASE keeps taken candidates from being locked;
 * the subqueries run once; the LIMIT written in, so the statement is prepared), which pass the claimed
 * indexes on in a transaction-local setting, then what is taken, in a statement of its own that runs after
 * the claims. @throws Error outside a transaction or for a `taken` whose values cannot be written in
 */
function pgClaim(
  db: Kysely<any> | Transaction<any>,
  keys: readonly string[],
  want: number,
  taken: CompiledQuery,
) {
  if (inlined(taken.sql, taken.parameters) === undefined || !db.isTransaction)
    throw new Error("claim: taken must be inlinable, in a transaction");
  const n = taken.parameters.length;
  const claims = `WITH t AS MATERIALIZED (${taken.sql}) SELECT set_config('inventory.claimed', coalesce((SELECT array_agg(c.i) FROM (SELECT k.i FROM unnest($${n + 1}::text[]) WITH ORDINALITY AS k(key, i) WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.k = '') AND CASE WHEN k.key IN (SELECT t.k FROM t) THEN false ELSE pg_try_advisory_xact_lock(hashtextextended(k.key, 0)) END LIMIT ${Math.floor(want)}) c), '{}')::text, true)`;
  const array = `{${keys.map((k) => `"${k.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
  const recheck = `SELECT current_setting('inventory.claimed') AS c, coalesce((SELECT array_agg(t.k) FROM (${taken.sql}) t), '{}')::text AS t`;
  return {
    claims: CompiledQuery.raw(claims, [...taken.parameters, array]),
    recheck: CompiledQuery.raw(recheck, [...taken.parameters]),
    result(row: { c: string; t: string }): Claimed {
      const now = new Set(textArray(row.t));
      const got = textArray(row.c).map((i) => Number(i) - 1);
      got.sort((a, b) => a - b);
      const tried = got.length < want ? keys.length : got.at(-1)! + 1;
      const firstFree = firstUntaken(keys, now);
      return { claimed: got.filter((i) => !now.has(keys[i]!)), tried, firstFree, vetoed: now.has("") };
    },
  };
}
