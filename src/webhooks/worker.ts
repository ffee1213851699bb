/**
 * The webhook worker (issue 4): claims due outbox rows with a lease, sends them, records every attempt.
 *
 * - Claim: one UPDATE … RETURNING marks up to `concurrency` due rows `sending` with a lease (owner, until);
 *   on PostgreSQL the candidate SELECT uses FOR UPDATE SKIP LOCKED, so several workers share the queue.
 *   Due = `queued`/`retry` whose `next_attempt_at` has come, or `sending` whose lease has ended (its worker
 *   died: the lost attempt is recorded and the row is taken over).
 * - Order: a row is claimed only when no earlier row (`seq`) of the same webhook and object is unfinished,
 *   so each object's changes reach a receiver in commit order.
 * - Held: rows of a disabled webhook stay queued until it is enabled again.
 * - Outcome: 2xx → `succeeded`; anything else → `retry` with exponential backoff and jitter, or `failed`
 *   after `max_attempts`. The finishing UPDATE is fenced on (lease owner, claim count), so a worker that lost
 *   its lease cannot overwrite the row's new owner.
 * Every request carries `X-Hook-Delivery: <delivery id>`; a repeat can only happen when an attempt was in
 * flight while its worker died, and receivers can drop it by that id.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { type TargetPolicy, targetPolicyFromEnv } from "../net/targets.ts";
import { UNFINISHED } from "../registry/models/extras.ts";
import { HEARTBEAT_MS, OUTBOX_CHANNEL, outboxSignal } from "../service/outbox.ts";
import { quoteId, rawRows, type Store } from "../store/db.ts";
import { parseJsonColumn, storedTime } from "../store/values.ts";
import { closeRenderers, type RenderBudget, renderBudgetFromEnv } from "../template/bounded.ts";
import { TemplateError } from "../template/jinja.ts";
import { buildContext, renderBody, renderHeaders, type StoredChange, signature } from "./payload.ts";
import { closeAgents, type OutgoingRequest, send } from "./send.ts";

/** Worker settings (units in the names). */
export interface WorkerSettings {
  /** Connect and response timeout of one request. Default 10 000. */
  timeoutMs: number;
  /** How long a claim is held before another worker may take the row over. Default 60 000. */
  leaseMs: number;
  /** First retry delay; each next one is 4× longer, ±20 % jitter. Default 45 000 (5 attempts ≈ 1 h). */
  retryBaseMs: number;
  /** Rows claimed and sent in parallel. Default 32. */
  concurrency: number;
  /** Polling interval when idle. Commits of this process (and, on PostgreSQL, of any process, by
   * LISTEN/NOTIFY) wake the worker at once. Default 1 000. */
  pollMs: number;
  /** `User-Agent` header. */
  userAgent: string;
  /** Time, output and memory budget of one template render (template/bounded.ts). */
  render: RenderBudget;
  /** Target policy for webhooks not saved by a superuser (net/targets.ts). */
  targets: TargetPolicy;
}

/** Defaults of `WorkerSettings` overlaid with `INVENTORY_WEBHOOK_*` (seconds). */
export function workerSettingsFromEnv(env: NodeJS.ProcessEnv, version: string): WorkerSettings {
  const sec = (v: string | undefined, d: number) =>
    v === undefined || v === "" || Number.isNaN(Number(v)) ? d : Math.round(Number(v) * 1000);
  const int = (v: string | undefined, d: number) =>
    v === undefined || v === "" || !/^\d+$/.test(v) ? d : Math.max(1, Number(v));
  return {
    timeoutMs: sec(env.INVENTORY_WEBHOOK_TIMEOUT, 10_000),
    leaseMs: sec(env.INVENTORY_WEBHOOK_LEASE, 60_000),
    retryBaseMs: sec(env.INVENTORY_WEBHOOK_RETRY_BASE, 45_000),
    concurrency: int(env.INVENTORY_WEBHOOK_CONCURRENCY, 32),
    pollMs: sec(env.INVENTORY_WEBHOOK_POLL, 1_000),
    userAgent: `inventory/${version} (webhook)`,
    render: renderBudgetFromEnv(env),
    targets: targetPolicyFromEnv(env),
  };
}

/** One entry of a delivery's `attempt_log`. */
export interface AttemptRecord {
  number: number;
  started: string;
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
  response: string;
  worker: string;
}

type Row = Record<string, any>;

const T = quoteId("extras_webhookdelivery");

/** A worker over one store. `start()` runs it until `stop()`. */
export class WebhookWorker {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Set by a signal that arrived while a batch was running, so the loop does not go to sleep. */
  private kicked = false;
  private readonly onQueued = () => {
    this.kicked = true;
    this.wake?.();
  };
  private unlisten: (() => Promise<void>) | undefined;

  private readonly store: Store;
  private readonly settings: WorkerSettings;
  private readonly log: Logger | undefined;

  constructor(store: Store, settings: WorkerSettings, log?: Logger) {
    this.store = store;
    this.settings = settings;
    this.log = log;
  }

  /** Start the claim/send loop in the background. */
  start(): void {
    if (this.running) return;
    this.running = true;
    outboxSignal.on("queued", this.onQueued);
    // Other processes' commits (PostgreSQL NOTIFY); SQLite workers poll.
    this.store
      .listen(OUTBOX_CHANNEL, this.onQueued)
      .then((stop) => {
        if (this.running) this.unlisten = stop;
        else void stop();
      })
      .catch((e) => this.log?.warn({ err: e }, "webhook worker: cannot LISTEN; polling only"));
    this.loop = this.run();
  }

  /** Stop after the current batch (in-flight requests finish and are recorded). */
  async stop(): Promise<void> {
    this.running = false;
    outboxSignal.off("queued", this.onQueued);
    await this.unlisten?.();
    this.unlisten = undefined;
    this.wake?.();
    await this.loop;
    await this.store.db
      .deleteFrom("inventory_meta")
      .where("key", "=", `worker:${this.id}`)
      .execute()
      .catch(() => {});
    await Promise.all([closeAgents(), closeRenderers()]);
  }

  /** When this worker last recorded that it is alive (ms since epoch). */
  private beatAt = 0;

  /**
   * Record that this worker runs (`inventory_meta` row `worker:<id>`, at most every HEARTBEAT_MS), so
   * `/api/status/` can count live workers where Nautobot counts Celery workers.
   */
  private async heartbeat(): Promise<void> {
    const now = Date.now();
    if (now - this.beatAt < HEARTBEAT_MS) return;
    this.beatAt = now;
    try {
      await this.store.db
        .insertInto("inventory_meta")
        .values({ key: `worker:${this.id}`, value: new Date(now).toISOString() })
        .onConflict((oc: any) => oc.column("key").doUpdateSet({ value: new Date(now).toISOString() }))
        .execute();
    } catch (e) {
      this.log?.warn({ err: e }, "webhook worker: heartbeat failed");
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      let n = 0;
      this.kicked = false;
      await this.heartbeat();
      try {
        n = await this.tick();
      } catch (e) {
        this.log?.error({ err: e }, "webhook worker: claim failed");
      }
      if (n === 0 && this.running && !this.kicked) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, this.settings.pollMs);
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** Claim one batch and deliver it. @returns the number of rows claimed. */
  async tick(): Promise<number> {
    const rows = await this.claim();
    if (!rows.length) return 0;
    const [hooks, changes] = await Promise.all([
      this.load(
        "extras_webhook",
        rows.map((r) => r.webhook_id),
      ),
      this.load(
        "extras_objectchange",
        rows.map((r) => r.object_change_id),
      ),
    ]);
    const finished = await Promise.all(
      rows.map((r) => this.deliver(r, hooks.get(r.webhook_id), changes.get(r.object_change_id))),
    );
    await this.record(finished);
    return rows.length;
  }

  private async claim(): Promise<Row[]> {
    const d = this.store.dialect;
    const now = storedTime();
    const until = storedTime(Date.now() + this.settings.leaseMs);
    const p = (i: number) => d.placeholder(i);
    const text = `UPDATE ${T} SET "state" = 'sending', "claims" = "claims" + 1, "lease_owner" = ${p(1)}, "lease_until" = ${p(2)}
      WHERE "id" IN (
        SELECT d."id" FROM ${T} d JOIN "extras_webhook" w ON w."id" = d."webhook_id"
        WHERE w."enabled" = ${p(3)} AND d.${UNFINISHED}
          AND ((d."state" IN ('queued', 'retry') AND d."next_attempt_at" <= ${p(4)})
               OR (d."state" = 'sending' AND d."lease_until" < ${p(5)}))
          AND NOT EXISTS (SELECT 1 FROM ${T} e WHERE e."webhook_id" = d."webhook_id"
               AND e."changed_object_id" = d."changed_object_id" AND e."changed_object_type" = d."changed_object_type"
               AND e."seq" < d."seq" AND e.${UNFINISHED})
        ORDER BY d."seq" LIMIT ${p(6)}${d.skipLocked("d")}
      ) RETURNING *`;
    const rows = await rawRows(this.store.db, text, [
      this.id,
      until,
      true,
      now,
      now,
      this.settings.concurrency,
    ]);
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  }

  private async load(table: string, ids: string[]): Promise<Map<string, Row>> {
    const uniq = [...new Set(ids)];
    const rows = await this.store.db.selectFrom(table).selectAll().where("id", "in", uniq).execute();
    return new Map(rows.map((r) => [r.id as string, r]));
  }

  /** Record a batch's outcomes in one transaction, each fenced on (lease owner, claim count). */
  private async record(finished: Array<{ row: Row; set: Row }>): Promise<void> {
    try {
      await this.store.db.transaction().execute(async (trx) => {
        for (const { row, set } of finished) {
          await trx
            .updateTable("extras_webhookdelivery")
            .set(set)
            .where("id", "=", row.id)
            .where("lease_owner", "=", this.id)
            .where("claims", "=", row.claims)
            .execute();
        }
      });
    } catch (e) {
      this.log?.error({ err: e }, "webhook worker: cannot record attempts");
    }
  }

  private async deliver(
    row: Row,
    hook: Row | undefined,
    change: Row | undefined,
  ): Promise<{ row: Row; set: Row }> {
    const log: AttemptRecord[] = parseJsonColumn(row.attempt_log) ?? [];
    let attempts = Number(row.attempts);
    // Claims beyond attempts + 1: an earlier worker died mid-attempt; its outcome is unknown.
    const lost = Number(row.claims) - 1 - attempts;
    for (let i = 0; i < lost; i++) {
      attempts++;
      log.push({
        number: attempts,
        started: String(row.last_attempt_at ?? row.created),
        duration_ms: null,
        status_code: null,
        error:
          "worker lost its lease during this attempt (crashed or stalled); the request may or may not have arrived",
        response: "",
        worker: String(row.lease_owner ?? ""),
      });
    }
    const started = storedTime();
    attempts++;
    let request: Record<string, unknown> | null = null;
    let status: number | null = null;
    let error: string | null = null;
    let durationMs: number | null = null;
    let response = "";
    if (lost > 0 && attempts > Number(row.max_attempts)) {
      attempts--;
      error = "attempt budget used up by lost attempts";
    } else if (!hook || !change) {
      error = !hook ? "webhook no longer exists" : "change record no longer exists";
    } else {
      try {
        const ctxChange: StoredChange = {
          action: change.action,
          contentType: change.changed_object_type,
          time: change.time,
          userName: change.user_name ?? null,
          hasUser: change.user_id !== null && change.user_id !== undefined,
          requestId: change.request_id,
          objectData: parseJsonColumn(change.object_data),
          prechangeData: parseJsonColumn(change.prechange_data),
        };
        const context = buildContext(ctxChange);
        const body = await renderBody(String(hook.body_template ?? ""), context, this.settings.render);
        const headers: Record<string, string> = {
          "Content-Type": String(hook.http_content_type || "application/json"),
          "User-Agent": this.settings.userAgent,
        };
        Object.assign(
          headers,
          await renderHeaders(String(hook.additional_headers ?? ""), context, this.settings.render),
        );
        headers["X-Hook-Delivery"] = String(row.id);
        // The change's place in the change sequence (issue 26), also on replayed deliveries.
        if (change.seq !== null && change.seq !== undefined) headers["X-Inventory-Seq"] = String(change.seq);
        if (hook.secret) headers["X-Hook-Signature"] = signature(String(hook.secret), body);
        const out: OutgoingRequest = {
          method: String(hook.http_method || "POST"),
          url: String(hook.payload_url),
          headers,
          body,
          sslVerification: !!hook.ssl_verification,
          caFilePath: hook.ca_file_path ? String(hook.ca_file_path) : null,
          ...(hook.trusted_target || this.settings.targets.allowPrivate
            ? {}
            : { restrictTo: this.settings.targets }),
        };
        request = {
          method: out.method,
          url: out.url,
          headers: {
            ...headers,
            ...(headers["X-Hook-Signature"] ? { "X-Hook-Signature": "<redacted>" } : {}),
          },
          body,
        };
        const res = await send(out, this.settings.timeoutMs);
        status = res.status;
        error = res.error;
        durationMs = res.durationMs;
        response = res.responseExcerpt;
        if (status !== null && (status < 200 || status > 299)) error = `HTTP ${status} (not 2xx)`;
      } catch (e) {
        error = e instanceof TemplateError ? e.message : `delivery failed: ${(e as Error).message}`;
      }
    }
    log.push({
      number: attempts,
      started,
      duration_ms: durationMs,
      status_code: status,
      error,
      response,
      worker: this.id,
    });
    const ok = error === null && status !== null && status >= 200 && status <= 299;
    const exhausted = attempts >= Number(row.max_attempts);
    const state = ok ? "succeeded" : exhausted ? "failed" : "retry";
    const finished = storedTime();
    const delay = this.settings.retryBaseMs * 4 ** Math.max(0, attempts - 1) * (0.8 + Math.random() * 0.4);
    const set: Row = {
      state,
      attempts,
      last_attempt_at: started,
      last_status_code: status,
      last_error: error ?? "",
      last_duration_ms: durationMs,
      request: request ? JSON.stringify(request) : row.request,
      attempt_log: JSON.stringify(log),
      next_attempt_at: state === "retry" ? storedTime(Date.now() + delay) : null,
      completed_at: state === "retry" ? null : finished,
      lease_owner: null,
      lease_until: null,
    };
    this.log?.info(
      {
        delivery: row.id,
        webhook: row.webhook_id,
        event: row.event,
        attempt: attempts,
        status,
        error,
        state,
      },
      "webhook delivery attempt",
    );
    return { row, set };
  }
}
