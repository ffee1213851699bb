/**
 * The PostgreSQL connection wrappers (installed once per pooled client by db.ts `openStore`): fewer round trips
 * per transaction without changing what any statement means.
 * - `preparedStatements`: parameterised statements run as named prepared statements.
 * - `mergedBegin`: BEGIN goes out with the transaction's first statement.
 * - `batchedWrites`: queued writes, checks and prefetched reads (dialect.ts `queueWrite`, `assertToken`,
 *   `prefetch`) go out with the transaction's next statement, in the same simple-protocol query.
 * Only the store layer knows about them.
 */
import type pg from "pg";
import { QUEUED_WRITE, type Queued, quoteId, STALE_TOKEN_TEXT } from "./dialect.ts";
import { StalePlanError, StaleTokenError } from "./errors.ts";
import { customPlanOnly, SqlPrepared, sendPrepares, statementName } from "./pg-prepared.ts";

/**
 * Install the wrappers on a pooled client (`prepare`: named prepared statements, see `preparedStatements`).
 * @returns a function dropping what a transaction that never ended held back (call it on release).
 */
export function wrapPgClient(client: pg.PoolClient, prepare: boolean): () => void {
  if (prepare) preparedStatements(client);
  const prepared = new SqlPrepared(prepare);
  sendPrepares(client, prepared);
  const dropBegin = mergedBegin(client, prepared);
  const dropWrites = batchedWrites(client, prepared);
  return () => {
    dropWrites();
    dropBegin();
  };
}

type Query = (text: unknown, values?: unknown, cb?: unknown) => unknown;

/** A result for a statement answered without the database. */
const FAKE = (command: string) => ({ command, rowCount: null, rows: [], fields: [] });
/** The result of a simple-protocol query: the last statement's (the driver gives one per statement). */
const lastResult = (r: unknown) => (Array.isArray(r) ? r.at(-1) : r);
/** The results of a simple-protocol query without its first statement's (a merged BEGIN). */
const afterFirst = (r: unknown) => (Array.isArray(r) ? (r.length === 2 ? r[1] : r.slice(1)) : r);
/** The results of a simple-protocol query, one per statement. */
const each = (r: unknown): unknown[] => (Array.isArray(r) ? r : [r]);

/**
 * BEGIN sent with the transaction's first statement, one round trip instead of two: the BEGIN is held back
 * and goes out with the next statement as one simple-protocol query (`BEGIN; <statement>`, its parameters
 * written in as quoted literals, which PostgreSQL types from their context exactly as untyped parameters).
 * A statement whose values cannot be written so (arrays, objects, text with NUL) gets its own BEGIN first;
 * a transaction ended before any statement sends nothing.
 * @returns a function dropping a held-back BEGIN (the client goes back to the pool).
 */
function mergedBegin(client: pg.PoolClient, prepared: SqlPrepared): () => void {
  const query = client.query.bind(client) as Query;
  let held: string | undefined;
  (client as unknown as { query: Query }).query = (text, values, cb) => {
    if (typeof text === "string" && /^\s*(begin|start transaction)\b/i.test(text) && !cb) {
      held = text;
      return Promise.resolve(FAKE("BEGIN"));
    }
    if (held === undefined) return cb ? query(text, values, cb) : query(text, values);
    const begin = held;
    held = undefined;
    if (cb || typeof text !== "string") {
      (query(begin) as Promise<unknown>).catch(() => {}); // queued ahead of the statement by the driver
      return cb ? query(text, values, cb) : query(text, values);
    }
    const end = /^\s*(commit|rollback)\b/i.exec(text);
    if (end) return Promise.resolve(FAKE(end[1]!.toUpperCase()));
    const statement = prepared.statement(text, values as unknown[] | undefined);
    if (statement === undefined) return (query(begin) as Promise<unknown>).then(() => query(text, values));
    // The statement's results without the BEGIN's (queued statements read theirs: `batchedWrites`).
    return (query(`${begin}; ${statement}`) as Promise<unknown>).then(afterFirst);
  };
  return () => {
    held = undefined;
  };
}

/**
 * Queued writes on a pooled client (dialect.ts `queueWrite`): a statement with the `QUEUED_WRITE` text is
 * not sent but kept; the kept writes go out in order with the client's next statement, in the same
 * simple-protocol query when that statement's values can be written in as literals (one round trip), each run
 * of consecutive writes to the same table with the same columns as one statement reading its rows from a
 * JSON literal typed by the table's row type (`writeStatements`, `json_populate_recordset`):
 * `INSERT INTO t (cols) SELECT cols FROM …` or `UPDATE t SET col = v.col … FROM … v WHERE t.id = v.id`;
 * a queued statement (`Dialect.assertToken`'s check, `Dialect.prefetch`'s read) goes out as is, in its
 * place, and is handed its result (or the error of the query that carried it).
 * A failed write fails the statement that triggered it; ROLLBACK drops what is kept and always runs.
 * A failed token check is raised as `StaleTokenError`.
 * @returns a function dropping the kept writes (the client goes back to the pool).
 */
function batchedWrites(client: pg.PoolClient, prepared: SqlPrepared): () => void {
  const raw = client.query.bind(client) as Query;
  let kept: Queued[] = [];
  let sending: Promise<unknown> | undefined;
  // The error of the last failed send of queued writes: a later statement of the aborted transaction
  // (25P02, e.g. after a caller ignored the first failure) reports it instead, so a unique violation
  // still maps to its 400.
  let failure: unknown;
  const query: Query = (text, values, cb) => {
    if (cb) return raw(text, values, cb);
    return (raw(text, values) as Promise<unknown>).catch((e: { code?: string; message?: string }) => {
      if (e?.code === "25P02" && failure) throw failure;
      // A failed token check (Dialect.assertToken) names its key after the marker text.
      const stale = e?.code === "22P02" ? e.message?.indexOf(STALE_TOKEN_TEXT) : -1;
      if (stale !== undefined && stale >= 0)
        throw new StaleTokenError(e.message!.slice(stale + STALE_TOKEN_TEXT.length).replace(/"$/, ""));
      // A schema change made a prepared statement's plan stale: prepare afresh, run the transaction again.
      if (e?.code === "0A000" && /cached plan/.test(e.message ?? "")) {
        prepared.reset();
        throw new StalePlanError(e.message ?? "");
      }
      throw e;
    });
  };
  /** Send `statements` (what was kept, then maybe the caller's): each queued statement gets its result. */
  const sendKept = (batch: readonly Queued[], statements: string): Promise<unknown> => {
    const parts = writeStatements(batch, prepared);
    return (
      query([...parts.map((x) => x.sql), statements].filter(Boolean).join("; ")) as Promise<unknown>
    ).then(
      (r) => {
        const results = each(r);
        for (const [i, x] of parts.entries()) x.settle?.(results[i]);
        return r;
      },
      (e) => {
        failure = e;
        for (const x of parts) x.fail?.(e);
        throw e;
      },
    );
  };
  /** Drop what is kept; a queued read waiting for its result gets `why`. */
  const drop = (why: string) => {
    for (const q of kept) if ("sql" in q) q.fail?.(new Error(why));
    kept = [];
  };
  const send: Query = (text, values, cb) => {
    if (text === QUEUED_WRITE) {
      kept.push((values as Queued[])[0]!);
      return Promise.resolve(FAKE("SELECT"));
    }
    const rollback = typeof text === "string" && /^\s*rollback/i.test(text);
    if (rollback) {
      drop("the transaction was rolled back before the statement was sent");
      failure = undefined;
    }
    if (kept.length) {
      const batch = kept;
      kept = [];
      // The writes and the statement that follows them in one round trip, when its values can be inlined.
      const statement =
        !sending && !cb && typeof text === "string"
          ? prepared.statement(text, values as unknown[] | undefined)
          : undefined;
      if (statement !== undefined) return sendKept(batch, statement).then(lastResult);
      const p = (sending ?? Promise.resolve()).then(() => sendKept(batch, ""));
      sending = p;
      const done = () => {
        if (sending === p) sending = undefined;
      };
      p.then(done, done);
    }
    // A query of several statements (Dialect.claim) answers with the last one's result.
    if (!sending)
      return cb ? query(text, values, cb) : (query(text, values) as Promise<unknown>).then(lastResult);
    const after = rollback ? sending.catch(() => {}) : sending;
    const result = after.then(() => query(text, values)).then(lastResult);
    if (!cb) return result;
    result.then(
      (r) => (cb as (e: unknown, r?: unknown) => void)(null, r),
      (e) => (cb as (e: unknown) => void)(e),
    );
    return undefined;
  };
  // PostgreSQL answers COMMIT in a failed transaction with ROLLBACK, not an error: a transaction whose
  // failure someone ignored must not be reported as written.
  (client as unknown as { query: Query }).query = (text, values, cb) => {
    const r = send(text, values, cb);
    if (cb || typeof text !== "string" || !/^\s*commit\b/i.test(text)) return r;
    return (r as Promise<{ command?: string } | undefined>).then((res) => {
      if (res?.command === "ROLLBACK")
        throw failure ?? new Error("COMMIT was answered ROLLBACK: the transaction had failed");
      return res;
    });
  };
  return () => {
    drop("the connection went back to the pool before the statement was sent");
    failure = undefined;
  };
}

/** A statement going out with the kept ones, and who is waiting for its result. */
interface Outgoing {
  sql: string;
  settle?: ((result: unknown) => void) | undefined;
  fail?: ((error: unknown) => void) | undefined;
}

/**
 * The statements that write `writes` in order: each run of consecutive writes to the same table with the
 * same columns is one statement reading its rows from a JSON literal typed by the table's row type (a run of
 * updates is cut where an id repeats, so the later update of a row still wins); a queued statement as is.
 */
function writeStatements(writes: readonly Queued[], prepared: SqlPrepared): Outgoing[] {
  const out: Outgoing[] = [];
  const statement = (text: string, values: readonly unknown[]) => {
    const sql = prepared.statement(text, values);
    if (sql === undefined) throw new Error("a queued statement's values cannot be written in");
    return sql;
  };
  let i = 0;
  while (i < writes.length) {
    const item = writes[i]!;
    if ("sql" in item) {
      out.push({ sql: statement(item.sql, item.parameters), settle: item.settle, fail: item.fail });
      i++;
      continue;
    }
    const first = item;
    const cols = Object.keys(first.values);
    const shape = `${first.id === undefined}|${first.table}|${cols.join(",")}`;
    const run: Array<Record<string, unknown>> = [];
    const ids = new Set<string>();
    for (; i < writes.length; i++) {
      const w = writes[i]!;
      if ("sql" in w) break;
      if (`${w.id === undefined}|${w.table}|${Object.keys(w.values).join(",")}` !== shape) break;
      if (w.id !== undefined) {
        if (ids.has(w.id)) break;
        ids.add(w.id);
      }
      run.push(w.id === undefined ? w.values : { ...w.values, id: w.id });
    }
    const t = quoteId(first.table);
    // The rows are one JSON value (JSON.stringify escapes control characters, so it never holds a NUL).
    const rows = `json_populate_recordset(NULL::${t}, $1::json)`;
    const list = cols.map(quoteId);
    const text =
      first.id === undefined
        ? `INSERT INTO ${t} (${list.join(", ")}) SELECT ${list.join(", ")} FROM ${rows}`
        : `UPDATE ${t} AS x SET ${list.map((c) => `${c} = v.${c}`).join(", ")} FROM ${rows} AS v WHERE x."id" = v."id"`;
    out.push({ sql: statement(text, [JSON.stringify(run)]) });
  }
  return out;
}

/**
 * Make a pooled client run parameterised statements as named prepared statements (PostgreSQL parses and
 * plans each distinct statement once per connection instead of on every request). The name is a hash of the
 * text; statements with many parameters (long `IN` lists) stay unnamed, so a connection keeps a bounded set,
 * and so do those with a LIMIT or OFFSET parameter, planned for their values every time (`customPlanOnly`).
 * A statement prepared before a schema change is re-run unnamed when PostgreSQL refuses the stale plan
 * (`0A000`). `INVENTORY_PG_PREPARE=0` turns this off (e.g. behind PgBouncer in transaction mode).
 */
function preparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
  // Text → name; "" for a text that stays unnamed (`customPlanOnly`), so it is tested once.
  const names = new Map<string, string>();
  (client as unknown as { query: unknown }).query = (text: unknown, values?: unknown, cb?: unknown) => {
    if (typeof text !== "string" || !Array.isArray(values) || values.length === 0 || values.length > 32 || cb)
      return cb ? query(text, values, cb) : query(text, values);
    let name = names.get(text);
    if (name === undefined) {
      name = customPlanOnly(text) ? "" : statementName("s", text);
      names.set(text, name);
    }
    if (!name) return query(text, values);
    return query({ name, text, values }).catch((e: { code?: string }) => {
      if (e?.code !== "0A000") throw e;
      names.set(text, `${name}x${Date.now()}`);
      return query(text, values);
    });
  };
}

/**
 * A function running one statement on `pool` (a connection of its own, none of the wrappers) as a named
 * statement, parsed once per connection and planned as pg-prepared.ts describes; unnamed when `prepare` is
 * false (INVENTORY_PG_PREPARE=0). A statement made stale by a schema change (`0A000`) runs again under a
 * new name. For the statements every read request sends (its tokens, or its object with the tokens).
 */
export function namedQueries(
  pool: pg.Pool,
  prepare: boolean,
): (text: string, values: unknown[]) => Promise<pg.QueryResult> {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = statementName("n", text);
      names.set(text, name);
    }
    return name;
  };
  return async (text, values) => {
    if (!prepare) return pool.query({ text, values });
    try {
      return await pool.query({ name: nameOf(text), text, values });
    } catch (e) {
      if ((e as { code?: string }).code !== "0A000") throw e;
      names.set(text, `${nameOf(text)}x${Date.now()}`);
      return pool.query({ name: nameOf(text), text, values });
    }
  };
}
