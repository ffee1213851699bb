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
  if (e?.code === "23505" || /UNIQUE constraint failed/.test(msg)) {
    return {
      status: 400,
      body: { __all__: ["An object with these unique values already exists (concurrent write)."] },
    };
  }
  if (/database is locked|SQLITE_BUSY/.test(msg) || e?.code === "40001" || e?.code === "40P01") {
    return { status: 503, body: { detail: "Service temporarily unavailable, please try again later." } };
  }
  const id = randomUUID();
  log.error({ err, errorId: id }, "unhandled error");
  return { status: 500, body: { error: `Internal error ${id}`, exception: "ServerError" } };
}
