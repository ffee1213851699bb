/**
 * Adapter from `node:sqlite` (DatabaseSync) to the better-sqlite3-like interface Kysely's SqliteDialect
 * expects. Adds a prepared-statement cache and binds booleans as 0/1 (node:sqlite rejects booleans).
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { SqliteDatabase, SqliteStatement } from "kysely";

const CACHE_SIZE = 500;

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
    return this.stmt.all(...bind(parameters));
  }
  run(parameters: ReadonlyArray<unknown>) {
    const r = this.stmt.run(...bind(parameters));
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
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = NORMAL");
    this.db.exec("PRAGMA busy_timeout = 5000");
    this.db.exec("PRAGMA cache_size = -65536");
    this.db.exec("PRAGMA temp_store = MEMORY");
    this.db.function("ulower", { deterministic: true }, (value) =>
      value === null || value === undefined ? null : String(value).toLowerCase(),
    );
    this.db.function("regexp", { deterministic: true }, (pattern, value) => {
      if (value === null || value === undefined) return 0;
      let p = String(pattern);
      let flags = "u";
      if (p.startsWith("(?i)")) {
        p = p.slice(4);
        flags = "iu";
      }
      try {
        return new RegExp(p, flags).test(String(value)) ? 1 : 0;
      } catch {
        return 0;
      }
    });
  }

  prepare(sqlText: string): SqliteStatement {
    // Write transactions take the write lock up front, so a transaction that reads before it writes
    // never fails with SQLITE_BUSY when another process (a webhook worker) committed meanwhile.
    if (sqlText === "begin") sqlText = "begin immediate";
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
