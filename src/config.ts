/**
 * Configuration: defaults < environment (`INVENTORY_*`) < command-line flags (applied by the CLI).
 */

import { type TargetPolicy, targetPolicyFromEnv } from "./net/targets.ts";

/** The resolved configuration of a server process. */
export interface Config {
  host: string;
  port: number;
  /** `sqlite:PATH` or `postgres://user@host:port/db`. */
  databaseUrl: string;
  /** A PostgreSQL streaming replica for reads (`--database-replica`, INVENTORY_DATABASE_REPLICA_URL). */
  databaseReplicaUrl: string | undefined;
  /** Default page size (Nautobot PAGINATE_COUNT). */
  paginateCount: number;
  /** Maximum page size (Nautobot MAX_PAGE_SIZE); 0 disables the maximum so `limit=0` returns all. */
  maxPageSize: number;
  /** Allow reads without a token (Nautobot LOGIN_REQUIRED=False). */
  anonymousRead: boolean;
  /** Honour X-Forwarded-Proto / X-Forwarded-Host when building absolute URLs. */
  trustProxy: boolean;
  /** Nautobot ENFORCE_GLOBAL_UNIQUE: reject duplicate prefixes/IPs in the global table. */
  enforceGlobalUnique: boolean;
  /** pino log level. */
  logLevel: string;
  /** Attempts per webhook delivery before it is marked failed (issue 4; default 5). */
  webhookMaxAttempts: number;
  /** Webhook targets non-superusers may use (issue 12; net/targets.ts). */
  webhookTargets: TargetPolicy;
  /**
   * Stored webhook request headers shown as `********` to users who may not change the webhook, beyond
   * `Authorization`, `Proxy-Authorization` and `Cookie` (INVENTORY_WEBHOOK_REDACT_HEADERS, comma-separated
   * names; issue 23).
   */
  webhookRedactHeaders: string[];
  /** Failed password checks (Basic and web login) per address and per username (service/login-limit.ts). */
  loginLimits: LoginLimits;
  /** Who may read `/metrics` and how long its database figures are cached (issue 23). */
  metrics: MetricsConfig;
  /** Items one bulk request (POST/PUT/PATCH/DELETE of a list) may carry (issue 12; default 1000). */
  maxBulk: number;
  /** Largest request body in bytes (default 16 MiB; 413 beyond). */
  bodyLimit: number;
  /** Milliseconds a request may take to arrive whole (default 60 s). */
  requestTimeoutMs: number;
  /** The change feed's stream and retention (issue 26). */
  changeFeed: ChangeFeedConfig;
}

/** The change feed's stream and retention (issue 26; http/routes/changes.ts). */
export interface ChangeFeedConfig {
  /** Concurrent streams one API process serves (INVENTORY_FEED_MAX_STREAMS, default 100; 503 past it). */
  maxStreams: number;
  /** Milliseconds between heartbeat comments on an idle stream (INVENTORY_FEED_HEARTBEAT_MS, default 15000). */
  heartbeatMs: number;
  /**
   * Bytes a stream may have waiting unsent to its client (INVENTORY_FEED_STREAM_BUFFER, default 1 MiB):
   * past it the stream waits for the client, and a client that does not take them within
   * `drainTimeoutMs` is disconnected (it resumes from its last event id).
   */
  streamBufferBytes: number;
  /** Milliseconds a slow client has to take its buffered events (INVENTORY_FEED_DRAIN_TIMEOUT_MS, default 30000). */
  drainTimeoutMs: number;
  /** Milliseconds between polls for new changes where no wake-up arrives (SQLite; INVENTORY_FEED_POLL_MS, default 50). */
  pollMs: number;
  /** Days of change log kept (INVENTORY_CHANGELOG_RETENTION_DAYS, decimals allowed; 0, the default, keeps all). */
  retentionDays: number;
  /** Milliseconds between retention purges of one API process (INVENTORY_CHANGELOG_PURGE_INTERVAL_MS, default 60000). */
  purgeIntervalMs: number;
  /**
   * Days of history kept for `as_of` reads, diffs and revert (INVENTORY_HISTORY_RETENTION_DAYS, decimals
   * allowed; 0, the default, keeps all; issue 27). Independent of the change log's retention.
   */
  historyRetentionDays: number;
}

/** The change feed's settings from the environment. */
export function changeFeedFromEnv(env: NodeJS.ProcessEnv = process.env): ChangeFeedConfig {
  return {
    maxStreams: Math.max(0, int(env.INVENTORY_FEED_MAX_STREAMS, 100)),
    heartbeatMs: Math.max(100, int(env.INVENTORY_FEED_HEARTBEAT_MS, 15_000)),
    streamBufferBytes: Math.max(16_384, int(env.INVENTORY_FEED_STREAM_BUFFER, 1024 * 1024)),
    drainTimeoutMs: Math.max(100, int(env.INVENTORY_FEED_DRAIN_TIMEOUT_MS, 30_000)),
    pollMs: Math.max(5, int(env.INVENTORY_FEED_POLL_MS, 50)),
    retentionDays: Math.max(0, int(env.INVENTORY_CHANGELOG_RETENTION_DAYS, 0)),
    purgeIntervalMs: Math.max(100, int(env.INVENTORY_CHANGELOG_PURGE_INTERVAL_MS, 60_000)),
    historyRetentionDays: Math.max(0, int(env.INVENTORY_HISTORY_RETENTION_DAYS, 0)),
  };
}

const bool = (v: string | undefined, d: boolean) =>
  v === undefined ? d : ["1", "true", "yes", "on"].includes(v.toLowerCase());
const int = (v: string | undefined, d: number) =>
  v === undefined || v === "" || Number.isNaN(Number(v)) ? d : Number(v);

/** Defaults overlaid with the environment. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.INVENTORY_HOST ?? "127.0.0.1",
    port: int(env.INVENTORY_PORT, 8080),
    databaseUrl: env.INVENTORY_DATABASE_URL ?? "sqlite:./inventory.sqlite3",
    databaseReplicaUrl: env.INVENTORY_DATABASE_REPLICA_URL || undefined,
    paginateCount: int(env.INVENTORY_PAGINATE_COUNT, 50),
    maxPageSize: int(env.INVENTORY_MAX_PAGE_SIZE, 1000),
    anonymousRead: bool(env.INVENTORY_ANONYMOUS_READ, false),
    trustProxy: bool(env.INVENTORY_TRUST_PROXY, false),
    enforceGlobalUnique: bool(env.INVENTORY_ENFORCE_GLOBAL_UNIQUE, false),
    logLevel: env.INVENTORY_LOG_LEVEL ?? "info",
    webhookMaxAttempts: Math.max(1, int(env.INVENTORY_WEBHOOK_MAX_ATTEMPTS, 5)),
    webhookTargets: targetPolicyFromEnv(env),
    webhookRedactHeaders: (env.INVENTORY_WEBHOOK_REDACT_HEADERS ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean),
    loginLimits: loginLimitsFromEnv(env),
    metrics: metricsFromEnv(env),
    maxBulk: Math.max(1, int(env.INVENTORY_MAX_BULK, 1000)),
    bodyLimit: Math.max(1024, int(env.INVENTORY_BODY_LIMIT, 16 * 1024 * 1024)),
    requestTimeoutMs: Math.max(1, int(env.INVENTORY_REQUEST_TIMEOUT, 60)) * 1000,
    changeFeed: changeFeedFromEnv(env),
  };
}

/**
 * Limits of every password check (service/login-limit.ts): `INVENTORY_LOGIN_MAX_FAILURES` (default 10)
 * failures per client address per `INVENTORY_LOGIN_WINDOW` seconds (default 300) before 429; past as many
 * failures of one username its checks wait `INVENTORY_LOGIN_DELAY_BASE` ms (default 250), doubling per
 * failure, at most `INVENTORY_LOGIN_DELAY_MAX` ms (default 4000).
 */
export interface LoginLimits {
  maxFailures: number;
  windowMs: number;
  delayBaseMs?: number;
  delayMaxMs?: number;
}

/** Limits from the environment. */
export function loginLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): LoginLimits {
  const num = (v: string | undefined, d: number) => (v && Number(v) > 0 ? Number(v) : d);
  return {
    maxFailures: num(env.INVENTORY_LOGIN_MAX_FAILURES, 10),
    windowMs: num(env.INVENTORY_LOGIN_WINDOW, 300) * 1000,
    delayBaseMs: num(env.INVENTORY_LOGIN_DELAY_BASE, 250),
    delayMaxMs: num(env.INVENTORY_LOGIN_DELAY_MAX, 4000),
  };
}

/**
 * `GET /metrics` (issue 23; http/routes/metrics.ts). `INVENTORY_METRICS`: `on` (default: with
 * `INVENTORY_METRICS_TOKEN` set, only `Authorization: Bearer <token>`; without, only clients on a loopback
 * address), `public` (anyone, as before issue 23) or `off` (404). Figures read from the database are cached
 * for `INVENTORY_METRICS_CACHE` seconds (default 15) and refreshed off the request path.
 */
export interface MetricsConfig {
  mode: "on" | "public" | "off";
  token: string | undefined;
  cacheMs: number;
}

/** The metrics settings from the environment (an unknown `INVENTORY_METRICS` value is `on`). */
export function metricsFromEnv(env: NodeJS.ProcessEnv = process.env): MetricsConfig {
  const v = (env.INVENTORY_METRICS ?? "on").trim().toLowerCase();
  const mode = v === "public" ? "public" : ["off", "false", "0", "no"].includes(v) ? "off" : "on";
  const cache = Number(env.INVENTORY_METRICS_CACHE);
  return {
    mode,
    token: env.INVENTORY_METRICS_TOKEN || undefined,
    cacheMs: (env.INVENTORY_METRICS_CACHE && cache >= 0 ? cache : 15) * 1000,
  };
}
