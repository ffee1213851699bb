/**
 * The one place where errors become HTTP responses (Nautobot/DRF shapes, nautobot-api-core.md §7).
 * Database constraint violations that slip past validation (concurrent writers) are answered as 400s;
 * anything else unknown is a logged 500 with an opaque body.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { AppError } from "../service/errors.ts";
import { DatabaseUnavailableError, StatementTimeoutError } from "../store/errors.ts";

/** Map any thrown value to a status and JSON body. */
export function mapError(
  err: unknown,
  log: FastifyBaseLogger,
): { status: number; body: unknown; headers?: Record<string, string> } {
  if (err instanceof DatabaseUnavailableError) {
    return {
      status: 503,
      body: { detail: "Service temporarily unavailable, please try again later." },
      headers: { "Retry-After": String(err.retryAfter) },
    };
  }
  if (err instanceof StatementTimeoutError) {
    return { status: 503, body: { detail: err.message }, headers: { "Retry-After": "5" } };
  }
  if (err instanceof AppError) {
    return {
      status: err.status,
      body: err.body !== undefined ? err.body : { detail: err.message },
      ...(err.headers ? { headers: err.headers } : {}),
    };
  }
  const e = err as { code?: string; message?: string; statusCode?: number; errcode?: number };
  const msg = String(e?.message ?? "");
  if (e?.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return { status: 415, body: { detail: msg } };
  if (e?.code === "FST_ERR_CTP_BODY_TOO_LARGE")
    return { status: 413, body: { detail: "Request body too large." } };
  if (e?.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return { status: e.statusCode, body: { detail: msg } };
  if (e?.code === "2201B") {
    // A pattern RE2 accepts but PostgreSQL's engine refuses (filters are checked with RE2 first).
    return { status: 400, body: { detail: `Invalid regular expression: ${msg}` } };
  }
  if (e?.code === "23505" || /UNIQUE constraint failed/.test(msg)) {
    return {
      status: 400,
      body: { __all__: ["An object with these unique values already exists (concurrent write)."] },
    };
  }
  if (e?.code === "57014") {
    // statement_timeout (PostgreSQL); SQLite's deadline arrives as StatementTimeoutError.
    return {
      status: 503,
      body: { detail: "The database query took too long and was cancelled." },
      headers: { "Retry-After": "5" },
    };
  }
  if (isConnectionLoss(e, msg)) {
    return {
      status: 503,
      body: { detail: "Service temporarily unavailable, please try again later." },
      headers: { "Retry-After": "5" },
    };
  }
  if (/database is locked|SQLITE_BUSY/.test(msg) || e?.code === "40001" || e?.code === "40P01") {
    return { status: 503, body: { detail: "Service temporarily unavailable, please try again later." } };
  }
  const id = randomUUID();
  log.error({ err, errorId: id }, "unhandled error");
  return { status: 500, body: { error: `Internal error ${id}`, exception: "ServerError" } };
}

/**
 * A lost or refused database connection (PostgreSQL down or restarting): SQLSTATE classes 08 and 57P0x,
 * socket errors, and node-postgres' own messages. Answered 503 with Retry-After; the pool reconnects by
 * itself on the next request (issue 12).
 */
function isConnectionLoss(e: { code?: string } | undefined, msg: string): boolean {
  const code = String(e?.code ?? "");
  return (
    /^08/.test(code) ||
    /^57P0[1-3]$/.test(code) ||
    ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"].includes(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
      msg,
    )
  );
}
