/**
 * Errors of the store layer that are not the caller's fault: the database is unreachable or busy, or a
 * statement ran past its time budget. The HTTP layer answers both with 503 and `Retry-After`
 * (http/errors.ts); the CLI prints them as one line.
 */

/**
 * The database cannot be reached or is not accepting work right now (PostgreSQL down or restarting, SQLite
 * write lock not obtained in time). Retrying later may succeed.
 */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  /** Seconds after which a retry is sensible (the `Retry-After` header). */
  readonly retryAfter: number;
  constructor(message: string, retryAfter = 5, options?: { cause?: unknown }) {
    super(message, options);
    this.retryAfter = retryAfter;
  }
}

/** A statement ran past its time budget and was cancelled (PostgreSQL `statement_timeout`, SQLite deadline). */
export class StatementTimeoutError extends Error {
  override name = "StatementTimeoutError";
  /** The budget that was exceeded, in seconds. */
  readonly seconds: number;
  constructor(seconds: number, options?: { cause?: unknown }) {
    super(`The database query took longer than ${seconds} s and was cancelled.`, options);
    this.seconds = seconds;
  }
}

/**
 * A transaction's token check failed (`Dialect.assertToken`): the token row no longer reads the value the
 * transaction assumed, so what it derived from that value may be out of date. The service layer runs the
 * transaction again with fresh definitions (service/write.ts `inTransaction`); never seen by clients.
 */
export class StaleTokenError extends Error {
  override name = "StaleTokenError";
  constructor(key: string) {
    super(`the inventory_meta token "${key}" changed`);
  }
}

/**
 * A prepared statement went stale in a transaction (PostgreSQL `0A000` "cached plan must not change
 * result type", after a schema change) or PostgreSQL refused to prepare one (store/pg-prepared.ts): the
 * connection prepares afresh, or writes that statement in, and the service layer runs the transaction again
 * (service/write.ts `inTransaction`); never seen by clients.
 */
export class StalePlanError extends Error {
  override name = "StalePlanError";
}
