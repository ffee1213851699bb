/**
 * Adapter from `node:sqlite` (DatabaseSync) to the better-sqlite3-like interface Kysely's SqliteDialect
 * expects. Adds a prepared-statement cache and binds booleans as 0/1 (node:sqlite rejects booleans).
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from "kysely";
import { DatabaseUnavailableError, StatementTimeoutError } from "./errors.ts";
import { RegexDeadlineError, regexTest } from "./regex.ts";

const CACHE_SIZE = 500;

/**
 * Statement time budget on SQLite (issue 12). node:sqlite has no progress handler, so the budget is
 * enforced where a statement can spend unbounded time per row: our SQL functions (`regexp`, `ulower`)
 * check the deadline of the statement running on this thread and abort it past its budget, which
 * surfaces as StatementTimeoutError. Statements run one at a time (synchronously), so one deadline holds.
 */
let deadline = Number.POSITIVE_INFINITY;
let budgetMs = 0;
const DEADLINE_MARK = "inventory: statement deadline passed";

/** Set the per-statement budget in milliseconds (0 = none); `INVENTORY_STATEMENT_TIMEOUT` seconds by default. */
export function setStatementBudget(ms: number): void {
  budgetMs = ms;
}
setStatementBudget(Number(process.env.INVENTORY_STATEMENT_TIMEOUT ?? 30) * 1000);

function checkDeadline(): void {
  if (Date.now() > deadline) throw new Error(DEADLINE_MARK);
}

/** Run one synchronous statement step under the budget; a deadline abort becomes StatementTimeoutError. */
function timed<T>(run: () => T): T {
  deadline = budgetMs > 0 ? Date.now() + budgetMs : Number.POSITIVE_INFINITY;
  try {
    return run();
  } catch (e) {
    if (String((e as Error).message).includes(DEADLINE_MARK))
      throw new StatementTimeoutError(budgetMs / 1000, { cause: e });
    throw e;
  } finally {
    deadline = Number.POSITIVE_INFINITY;
  }
}

function bind(params: ReadonlyArray<unknown>): any[] {
  return params.map((p) => (p === true ? 1 : p === false ? 0 : p === undefined ? null : p));
}

class Statement implements SqliteStatement {
  readonly reader: boolean;
  private readonly stmt: StatementSync;
  constructor(stmt: StatementSync) {
    this.stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return timed(() => this.stmt.all(...bind(parameters)));
  }
  run(parameters: ReadonlyArray<unknown>) {
    const r = timed(() => this.stmt.run(...bind(parameters)));
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.stmt.iterate(...bind(parameters)) as IterableIterator<unknown>;
  }
}

/** A node:sqlite database wrapped for Kysely. */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly db: DatabaseSync;
  private readonly cache = new Map<string, Statement>();

  /** Open `path` (`:memory:` allowed) with WAL, foreign keys off (the service enforces relations). */
  constructor(path: string) {
    this.db = new DatabaseSync(path);
    // Switching a new database to WAL takes its lock: processes opening it at once wait for each other
    // (up to 10 s, once at startup) instead of failing with "database is locked" (seen in the test suite).
    this.db.exec("PRAGMA busy_timeout = 10000");
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = NORMAL");
    // A short synchronous wait only: waiting for the write lock happens asynchronously in
    // beginTransaction (issue 12: one process's long write must not freeze another's event loop).
    this.db.exec(`PRAGMA busy_timeout = ${SYNC_BUSY_MS}`);
    this.db.exec("PRAGMA cache_size = -65536");
    this.db.exec("PRAGMA temp_store = MEMORY");
    this.db.function("ulower", { deterministic: true }, (value) => {
      checkDeadline();
      return value === null || value === undefined ? null : String(value).toLowerCase();
    });
    // RE2 (linear time): a pattern cannot make a statement backtrack (issue 12).
    this.db.function("regexp", { deterministic: true }, (pattern, value) => {
      checkDeadline();
      if (value === null || value === undefined) return 0;
      let p = String(pattern);
      const ci = p.startsWith("(?i)");
      if (ci) p = p.slice(4);
      // A long search runs off-thread under the statement's deadline (issue 23).
      try {
        return regexTest(p, String(value), ci, deadline) ? 1 : 0;
      } catch (e) {
        if (e instanceof RegexDeadlineError) throw new Error(DEADLINE_MARK);
        throw e;
      }
    });
  }

  prepare(sqlText: string): SqliteStatement {
    let s = this.cache.get(sqlText);
    if (!s) {
      s = new Statement(this.db.prepare(sqlText));
      if (this.cache.size >= CACHE_SIZE) {
        const first = this.cache.keys().next().value;
        if (first !== undefined) this.cache.delete(first);
      }
      this.cache.set(sqlText, s);
    }
    return s;
  }

  close(): void {
    this.cache.clear();
    this.db.close();
  }
}

/**
 * Longest time (ms) statements run back to back, with the code between them, may hold the event loop
 * before the next one waits for a turn of it. node:sqlite runs each statement synchronously and awaiting
 * its result yields to microtasks only, so without this a request of thousands of statements (a 40,000-id
 * bulk selection, a migration) held the loop for seconds and `/health` with it (issue 23: no request may
 * freeze the service). One statement is not split: its time is bounded by the statement budget.
 */
export const LOOP_SLICE_MS = 20;
let heldSince: number | undefined;

/**
 * Called before each statement: starts timing the current event-loop turn, or, when this turn has held
 * the loop for LOOP_SLICE_MS, resolves only after `setImmediate` (timers, I/O and other requests run).
 */
export async function loopTurn(): Promise<void> {
  const now = performance.now();
  if (heldSince === undefined) {
    heldSince = now;
    setImmediate(() => {
      heldSince = undefined;
    });
    return;
  }
  if (now - heldSince >= LOOP_SLICE_MS) await new Promise<void>((r) => setImmediate(r));
}

/** Milliseconds a statement may wait synchronously for a lock (outside BEGIN IMMEDIATE). */
const SYNC_BUSY_MS = 100;

/**
 * How long a write transaction waits for the write lock held by another process before it gives up with
 * DatabaseUnavailableError (503): `INVENTORY_SQLITE_LOCK_WAIT` seconds, default 10.
 */
let lockWaitMs = Math.max(0, Number(process.env.INVENTORY_SQLITE_LOCK_WAIT ?? 10) * 1000);

/** How long write transactions wait for the write lock (milliseconds). */
export function lockWait(): number {
  return lockWaitMs;
}

/** Set how long write transactions wait for the write lock (milliseconds). */
export function setLockWait(ms: number): void {
  lockWaitMs = ms;
}

const isBusy = (e: unknown) => /SQLITE_BUSY|database is locked/i.test(String((e as Error)?.message ?? e));

/**
 * Kysely's SQLite driver with write transactions that take the write lock up front (`BEGIN IMMEDIATE`, so a
 * transaction that reads before it writes never fails when another process committed meanwhile) and wait
 * for it asynchronously: the BEGIN is tried without a busy timeout and retried after short, jittered,
 * growing sleeps, so the event loop keeps serving while another process holds the lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  private readonly database: NodeSqliteDatabase;
  private yielding: DatabaseConnection | undefined;
  constructor(config: SqliteDialectConfig & { database: NodeSqliteDatabase }) {
    super(config);
    this.database = config.database;
  }
  /** The one connection, wrapped so that its statements give the event loop a turn (`loopTurn`). */
  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.yielding) return this.yielding;
    const inner = await super.acquireConnection();
    const wrapped: DatabaseConnection = {
      async executeQuery<R>(query: CompiledQuery) {
        await loopTurn();
        return inner.executeQuery<R>(query);
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize: number) {
        for await (const chunk of inner.streamQuery<R>(query, chunkSize)) {
          yield chunk;
          await loopTurn();
        }
      },
    };
    this.yielding = wrapped;
    return wrapped;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const end = Date.now() + lockWaitMs;
    this.database.db.exec("PRAGMA busy_timeout = 0");
    try {
      for (let delay = 2; ; delay = Math.min(delay * 2, 100)) {
        try {
          await connection.executeQuery(CompiledQuery.raw("begin immediate"));
          return;
        } catch (e) {
          if (!isBusy(e)) throw e;
          if (Date.now() >= end)
            throw new DatabaseUnavailableError("The database is busy with another process's write.", 2, {
              cause: e,
            });
          await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
        }
      }
    } finally {
      this.database.db.exec(`PRAGMA busy_timeout = ${SYNC_BUSY_MS}`);
    }
  }
}

/** Kysely dialect over a NodeSqliteDatabase with ImmediateSqliteDriver. */
export class NodeSqliteDialect extends SqliteDialect {
  private readonly config: SqliteDialectConfig & { database: NodeSqliteDatabase };
  constructor(config: SqliteDialectConfig & { database: NodeSqliteDatabase }) {
    super(config);
    this.config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }
}

/**
 * Copy a live SQLite database to `dest` with SQLite's online backup API (`node:sqlite` `backup`): a
 * consistent copy while other processes keep reading and writing. Resolves to the number of pages copied.
 */
export async function backupSqliteFile(path: string, dest: string): Promise<number> {
  const { backup, DatabaseSync } = await import("node:sqlite");
  const source = new DatabaseSync(path, { readOnly: true });
  try {
    return await backup(source, dest, { rate: 1000 });
  } finally {
    source.close();
  }
}
