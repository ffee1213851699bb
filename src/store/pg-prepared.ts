/**
 * SQL-level prepared statements for the statements PostgreSQL gets inside simple-protocol queries
 * (pg-connection.ts: a merged BEGIN's statement, queued writes, checks and reads, and the statement that
 * carries them). Such a query cannot use the extended protocol's named statements, so each of its statements
 * used to be parsed and analysed again on every request. Replaying the claim and recheck of
 * `POST …/available-ips/` on one connection, PostgreSQL's CPU went from 680 µs written in as literals to
 * 350 µs as EXECUTE of prepared statements planned each time, and 200 µs with kept generic plans.
 *
 * A parameterised statement becomes `EXECUTE name(values)`, its values written in as literals (which
 * PostgreSQL coerces to the parameter types exactly as it types untyped protocol parameters). The first use
 * on a connection sends `PREPARE name AS text` in a query of its own just before (`sendPrepares`): one more
 * round trip, once per statement and connection. A prepared statement outlives a rolled-back transaction.
 *
 * Plans: PostgreSQL plans a prepared statement for its values five times, then keeps one generic plan if
 * that is estimated no dearer (`plan_cache_mode = auto`). Planning is most of what a lookup by id costs it:
 * the detail read's statement took 180 µs of its CPU planned each time and 64 µs with the kept plan. A generic
 * plan does not know a list's LIMIT, and picked full ordered scans for lists in the benchmark, so statements
 * with a LIMIT or OFFSET parameter are never prepared (`customPlanOnly`): they are planned for their values
 * every time, as unnamed protocol statements or written in.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { StalePlanError } from "./errors.ts";

/** Statements a connection prepares at most; later ones are written in as literals. */
const MAX_STATEMENTS = 1000;
/** Values a prepared statement takes at most (long `IN` lists stay literal, as `preparedStatements` does). */
const MAX_PARAMS = 32;
/** Statements PREPARE accepts. */
const PREPARABLE = /^\s*(select|insert|update|delete|with|values)\b/i;

/**
 * Whether a statement must be planned for its values every time: it has a LIMIT or OFFSET parameter, whose
 * value a generic plan cannot know (lists; see the module comment).
 */
export function customPlanOnly(text: string): boolean {
  return /\b(limit|offset)\s+\$\d/i.test(text);
}

/** Values as SQL literals, or undefined when one cannot be written in (arrays, objects, text with NUL). */
export function literals(values: readonly unknown[]): string[] | undefined {
  const out: string[] = [];
  for (const v of values) {
    if (v === null || v === undefined) out.push("NULL");
    else if (typeof v === "boolean") out.push(v ? "'true'" : "'false'");
    else if (typeof v === "number" && Number.isFinite(v)) out.push(`'${v}'`);
    // A NUL would end the statement text early (the simple protocol sends C strings).
    else if (typeof v === "string" && !v.includes("\u0000")) out.push(escapeLiteral(v));
    else return undefined;
  }
  return out;
}

/**
 * `text` as a PostgreSQL string constant (untyped, as `pg.escapeLiteral`'s `'...'`): quoted as is when it
 * holds no quote or backslash, else dollar-quoted (`$q$text$q$`, with a tag that `text` does not contain),
 * which needs no escaping at all. pg.escapeLiteral's character-by-character concatenation held the event
 * loop for hundreds of milliseconds, mostly in GC, for the megabytes of JSON of a bulk write of long texts,
 * and doubling each quote of a text full of them costs as much in any form (issue 23: no request may hold
 * the event loop). The leading space keeps the constant apart from a preceding identifier
 * (PostgreSQL manual, 4.1.2.4 Dollar-Quoted String Constants).
 */
export function escapeLiteral(text: string): string {
  if (!text.includes("'") && !text.includes("\\")) return `'${text}'`;
  let tag = "$q$";
  for (let n = 0; text.includes(tag) || text.endsWith(tag.slice(0, -1)); n++) tag = `$q${n}$`;
  return ` ${tag}${text}${tag}`;
}

/**
 * The name of a prepared statement for `text`: `prefix` and a hash of the text. The prefixes keep apart the
 * connection's protocol statements (`s`), SQL-level ones (`q`) and the pool's (`n`).
 */
export function statementName(prefix: string, text: string): string {
  return `${prefix}${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
}

/** `text` with its `$n` parameters replaced by `lits`. */
export function substitute(text: string, lits: readonly string[]): string {
  if (!lits.length) return text;
  return text.replace(/\$(\d+)(?!\d)/g, (m, n: string) => lits[Number(n) - 1] ?? m);
}

/** PREPAREs taken to be sent, and what to do once they were. */
export interface PendingPrepares {
  sql: string;
  /** Call with the query's error, or without when it succeeded. */
  settle(error?: unknown): void;
}

/** One connection's SQL-level prepared statements (see the module comment). */
export class SqlPrepared {
  /** Statement text → name, prepared or about to be. */
  private readonly names = new Map<string, string>();
  private pending: Array<{ text: string; name: string }> = [];
  /** Texts whose PREPARE failed: written in from now on. */
  private readonly refused = new Set<string>();
  /** Bumped by `reset`: names of earlier generations may still exist on the connection. */
  private generation = 0;

  private readonly enabled: boolean;

  /** @param enabled false (INVENTORY_PG_PREPARE=0, e.g. behind PgBouncer in transaction mode): always literal. */
  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /**
   * `text` with `values` as one statement of a simple-protocol query: `EXECUTE` of its prepared statement
   * (a PREPARE is then pending until the next query: `takePending`), or the text with the values written in.
   * @returns undefined when a value cannot be written in
   */
  statement(text: string, values: readonly unknown[] | undefined): string | undefined {
    const lits = literals(values ?? []);
    if (lits === undefined) return undefined;
    const known = this.names.get(text); // passed the checks below when it was named
    if (known) return `EXECUTE ${known}(${lits.join(", ")})`;
    if (
      !this.enabled ||
      !lits.length ||
      lits.length > MAX_PARAMS ||
      this.refused.has(text) ||
      !PREPARABLE.test(text) ||
      customPlanOnly(text)
    )
      return substitute(text, lits);
    if (this.names.size >= MAX_STATEMENTS) return substitute(text, lits);
    const name = `${statementName("q", text)}g${this.generation}`;
    this.names.set(text, name);
    this.pending.push({ text, name });
    return `EXECUTE ${name}(${lits.join(", ")})`;
  }

  /**
   * The PREPAREs not sent yet, as one query to send before the next one, or undefined. When it fails in an
   * aborted transaction (25P02) none ran and they are asked for again later; on any other failure their
   * texts are written in from now on (some may exist, unused).
   */
  takePending(): PendingPrepares | undefined {
    if (!this.pending.length) return undefined;
    const batch = this.pending;
    this.pending = [];
    return {
      sql: batch.map((p) => `PREPARE ${p.name} AS ${p.text}`).join("; "),
      settle: (error) => {
        if (!error) return;
        for (const p of batch) {
          if (this.names.get(p.text) === p.name) this.names.delete(p.text);
          if ((error as { code?: string }).code !== "25P02") this.refused.add(p.text);
        }
      },
    };
  }

  /**
   * Forget every prepared statement (a schema change made one's plan stale, `0A000`): each is prepared again,
   * under a new name, on its next use; the old ones stay on the connection, unused.
   */
  reset(): void {
    this.names.clear();
    this.pending = [];
    this.generation++;
  }
}

type Query = (text: unknown, values?: unknown, cb?: unknown) => unknown;

/**
 * Send a connection's pending PREPAREs (`SqlPrepared.takePending`) in a query of their own before its next
 * query. When PostgreSQL refuses one, the caller gets `StalePlanError` (the service layer runs the
 * transaction again, and the statement is then written in). Installed below the wrappers that write statements.
 */
export function sendPrepares(client: pg.PoolClient, prepared: SqlPrepared): void {
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (text, values, cb) => {
    const pending = cb ? undefined : prepared.takePending();
    if (!pending) return cb ? query(text, values, cb) : query(text, values);
    const ready = (query(pending.sql) as Promise<unknown>).then(
      () => pending.settle(),
      (e: { code?: string; message?: string }) => {
        pending.settle(e);
        // Refused (the statement's parameters cannot be typed alone, say): its transaction runs again, written in.
        if (e?.code && e.code !== "25P02") throw new StalePlanError(`PREPARE failed: ${e.message}`);
        throw e;
      },
    );
    const main = query(text, values) as Promise<unknown>; // queued right behind it by the driver
    return ready.then(
      () => main,
      (e) => {
        main.catch(() => {});
        throw e;
      },
    );
  };
}
