/**
 * The webhook outbox (issue 4): delivery rows written in the same transaction as the change and its
 * ObjectChange, so a change is reported exactly when it commits (Nautobot enqueues before commit and
 * reports rolled-back writes, nautobot-webhooks.md W1/W2). Workers (src/webhooks) claim and send them.
 *
 * One row per (change × matching enabled webhook): a webhook matches when it is enabled, the object's
 * content type is among its `content_types` and its `type_<action>` flag is set (seed, Events).
 * `seq` (a database sequence) orders the rows of one object in commit order.
 */

import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { sql } from "kysely";
import { storedTime } from "../store/values.ts";
import { type Ctx, definitionsMemo } from "./context.ts";
import { AppError, NotFoundError, PermissionDenied } from "./errors.ts";
import { permits, restriction } from "./permissions.ts";
import { chunks, m2mPairs, type Row } from "./rows.ts";

/** Emits `queued` after a commit that queued deliveries (wakes in-process workers). */
export const outboxSignal = new EventEmitter();
outboxSignal.setMaxListeners(100);

/** Channel other processes' workers listen on (PostgreSQL NOTIFY at commit). */
export const OUTBOX_CHANNEL = "inventory_outbox";

/** Default number of attempts of one delivery (issue 4: 5 attempts over about an hour). */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** One logged change that may fan out to deliveries. */
export interface LoggedChange {
  objectChangeId: string;
  action: "create" | "update" | "delete";
  contentType: string;
  objectId: string;
}

const EVENT = { create: "created", update: "updated", delete: "deleted" } as const;
const FLAG = { create: "type_create", update: "type_update", delete: "type_delete" } as const;

/** Enabled webhooks by the content types they watch; a definition, memoised with the definitions. */
async function enabledHooksByType(ctx: Ctx): Promise<Map<string, Row[]>> {
  const memo = definitionsMemo(ctx);
  let byType = memo.get("webhooksByType") as Map<string, Row[]> | undefined;
  if (byType) return byType;
  byType = new Map();
  const hooks = await ctx.db
    .selectFrom("extras_webhook")
    .select(["id", "type_create", "type_update", "type_delete"])
    .where("enabled", "=", true)
    .execute();
  if (hooks.length) {
    const links = await m2mPairs(
      ctx,
      ctx.reg.get("extras.webhook"),
      "content_types",
      hooks.map((h) => h.id as string),
    );
    const hookById = new Map(hooks.map((h) => [h.id as string, h]));
    for (const [hookId, type] of links) {
      const h = hookById.get(hookId);
      if (h) byType.set(type, [...(byType.get(type) ?? []), h]);
    }
  }
  memo.set("webhooksByType", byType);
  return byType;
}

/**
 * Write the delivery rows of `changes` inside the caller's transaction.
 * @returns the number of rows queued.
 */
export async function enqueueDeliveries(ctx: Ctx, changes: LoggedChange[], time: string): Promise<number> {
  if (!changes.length) return 0;
  const byType = await enabledHooksByType(ctx);
  if (!byType.size) return 0;
  const rows: Row[] = [];
  const maxAttempts = ctx.settings.webhookMaxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  for (const c of changes) {
    for (const h of byType.get(c.contentType) ?? []) {
      if (!h[FLAG[c.action]]) continue;
      rows.push(deliveryRow(String(h.id), c, ctx.requestId, time, maxAttempts));
    }
  }
  return insertDeliveries(ctx, rows);
}

/** A new queued delivery row of `change` to webhook `webhookId`, due at `time` (without its `seq`). */
export function deliveryRow(
  webhookId: string,
  c: LoggedChange,
  requestId: string,
  time: string,
  maxAttempts: number,
): Row {
  return {
    id: randomUUID(),
    webhook_id: webhookId,
    object_change_id: c.objectChangeId,
    event: EVENT[c.action],
    changed_object_type: c.contentType,
    changed_object_id: c.objectId,
    request_id: requestId,
    state: "queued",
    attempts: 0,
    max_attempts: maxAttempts,
    created: time,
    next_attempt_at: time,
    last_attempt_at: null,
    completed_at: null,
    last_status_code: null,
    last_error: "",
    last_duration_ms: null,
    request: null,
    attempt_log: "[]",
    claims: 0,
    lease_owner: null,
    lease_until: null,
  };
}

/**
 * Insert delivery rows in the caller's transaction, in the given order (outbox `seq` ascending, which is
 * the order a worker sends one object's deliveries to one webhook), and signal workers at commit.
 * @returns the number of rows queued.
 */
export async function insertDeliveries(ctx: Ctx, rows: Row[]): Promise<number> {
  if (!rows.length) return 0;
  const seqs = await ctx.store.dialect.nextValues(ctx.db, "inventory_outbox_seq", rows.length);
  rows.forEach((r, i) => {
    r.seq = seqs[i];
  });
  for (const part of chunks(rows, 200))
    await ctx.db.insertInto("extras_webhookdelivery").values(part).execute();
  await notify(ctx);
  return rows.length;
}

/**
 * Retry failed deliveries by hand: one (`deliveryId`) or every failed one of a webhook (`webhookId`).
 * Each gets a fresh budget of attempts and is due now.
 * @returns the number of deliveries queued again.
 * @throws NotFoundError for an unknown id; AppError 409 when the delivery has neither failed nor waits to retry.
 */
export async function retryDeliveries(
  ctx: Ctx,
  target: { deliveryId: string } | { webhookId: string },
): Promise<number> {
  const now = storedTime();
  const budget = ctx.settings.webhookMaxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const webhooks = ctx.reg.get("extras.webhook");
  // The same row restriction as the detail endpoints (issue 12): an object outside the user's view
  // constraints is a 404; retrying needs `change` on that very webhook (403 otherwise).
  const mayChange = async (webhookId: string) => {
    if (!(await permits(ctx, webhooks, webhookId, "view"))) throw new NotFoundError();
    if (!(await permits(ctx, webhooks, webhookId, "change"))) throw new PermissionDenied();
  };
  let q = ctx.db.selectFrom("extras_webhookdelivery").select(["id", "state", "attempts", "webhook_id"]);
  if ("deliveryId" in target) {
    q = q.where("id", "=", target.deliveryId);
  } else {
    const hook = await ctx.db
      .selectFrom("extras_webhook")
      .select("id")
      .where("id", "=", target.webhookId)
      .executeTakeFirst();
    if (!hook) throw new NotFoundError();
    await mayChange(target.webhookId);
    q = q.where("webhook_id", "=", target.webhookId).where("state", "=", "failed");
  }
  const rows = await q.execute();
  if ("deliveryId" in target) {
    if (
      !rows.length ||
      !(await permits(ctx, ctx.reg.get("extras.webhookdelivery"), target.deliveryId, "view"))
    )
      throw new NotFoundError();
    await mayChange(String(rows[0]!.webhook_id));
    // A failed delivery gets a fresh attempt budget; one waiting in backoff ("retry") is sent now.
    if (rows[0]!.state !== "failed" && rows[0]!.state !== "retry")
      throw new AppError(
        409,
        `Only failed deliveries or deliveries waiting to retry can be retried; this one is ${rows[0]!.state}.`,
      );
  }
  for (const r of rows) {
    const failed = r.state === "failed";
    await ctx.db
      .updateTable("extras_webhookdelivery")
      .set({
        state: "queued",
        next_attempt_at: now,
        completed_at: null,
        ...(failed ? { max_attempts: Number(r.attempts) + budget } : {}),
      })
      .where("id", "=", r.id)
      .where("state", "=", String(r.state))
      .execute();
  }
  if (rows.length) await notify(ctx);
  if (rows.length) ctx.memo.set(QUEUED_KEY, ((ctx.memo.get(QUEUED_KEY) as number) ?? 0) + rows.length);
  return rows.length;
}

/** Signal workers in other processes at commit (once per transaction). */
async function notify(ctx: Ctx): Promise<void> {
  const text = ctx.store.dialect.notifySql(OUTBOX_CHANNEL);
  if (!text || ctx.memo.has("outboxNotified")) return;
  ctx.memo.set("outboxNotified", true);
  await sql.raw(text).execute(ctx.db);
}

/** Memo key counting deliveries queued in the current transaction (read by `inTransaction`). */
export const QUEUED_KEY = "deliveriesQueued";

/** Request headers that carry receiver credentials, redacted in the delivery log (issue 23; lower case). */
export const CREDENTIAL_HEADERS: readonly string[] = ["authorization", "proxy-authorization", "cookie"];

/** What a redacted header value reads. */
export const REDACTED = "********";

/**
 * Hide what only who may change a webhook may read, in delivery representations (issues 12 and 23):
 * the receivers' answers (`attempt_log[].response` blanked, "SSRF with read-back") and the stored request
 * headers that carry credentials (`request.headers` values replaced by `REDACTED`): `Authorization`,
 * `Proxy-Authorization`, `Cookie`, the configured `settings.webhookRedactHeaders`
 * (INVENTORY_WEBHOOK_REDACT_HEADERS), and any header whose value holds the webhook's secret. Names compare
 * case-insensitively. Superusers, system contexts and users who may change the webhook see everything.
 * `webhook` is the webhook's id or its nested representation. One query for the whole page.
 */
export async function redactDeliveries(
  ctx: Ctx,
  objs: Array<Record<string, unknown>>,
): Promise<Array<Record<string, unknown>>> {
  if (!ctx.grants || !objs.length) return objs;
  const hookId = (o: Record<string, unknown>) =>
    String((o.webhook as { id?: string } | null | undefined)?.id ?? o.webhook ?? "");
  const ids = [...new Set(objs.map(hookId).filter(Boolean))];
  const cond = await restriction(ctx, ctx.reg.get("extras.webhook"), "change");
  const rows = await ctx.db
    .selectFrom("extras_webhook as t")
    .select([
      "t.id",
      "t.secret",
      (cond ? sql<number>`case when ${cond} then 1 else 0 end` : sql<number>`1`).as("may"),
    ])
    .where("t.id", "in", ids.length ? ids : [""])
    .execute();
  const allowed = new Set(rows.filter((r) => truthy(r.may)).map((r) => String(r.id)));
  const secrets = new Map(rows.map((r) => [String(r.id), String(r.secret ?? "")]));
  const names = new Set(
    [...CREDENTIAL_HEADERS, ...(ctx.settings.webhookRedactHeaders ?? [])].map((n) => n.toLowerCase()),
  );
  return objs.map((o) => {
    if (allowed.has(hookId(o))) return o;
    const out = { ...o };
    if (Array.isArray(o.attempt_log))
      out.attempt_log = (o.attempt_log as Array<Record<string, unknown>>).map((a) => ({
        ...a,
        response: "",
      }));
    const request = (typeof o.request === "string" ? parseJson(o.request) : o.request) as
      | { headers?: Record<string, unknown> }
      | null
      | undefined;
    if (request && typeof request === "object" && request.headers && typeof request.headers === "object") {
      const secret = secrets.get(hookId(o)) ?? "";
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) =>
          names.has(k.toLowerCase()) || (secret && String(v).includes(secret)) ? [k, REDACTED] : [k, v],
        ),
      );
      out.request = { ...request, headers };
    }
    return out;
  });
}

const truthy = (v: unknown) => Number(v) === 1;
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

/** How often a webhook worker records that it is alive (`inventory_meta` row `worker:<id>`). */
export const HEARTBEAT_MS = 10_000;
/** A worker record older than this no longer counts as running. */
export const WORKER_STALE_MS = 60_000;

/**
 * Webhook workers that recorded a heartbeat within WORKER_STALE_MS (any process), for `/api/status/`
 * where Nautobot reports `celery-workers-running`.
 */
export async function liveWorkers(ctx: Ctx): Promise<number> {
  const since = new Date(Date.now() - WORKER_STALE_MS).toISOString();
  const rows = await ctx.db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "like", "worker:%")
    .execute();
  return rows.filter((r) => String(r.value) >= since).length;
}

/** The outbox at a glance: deliveries per state, how many are waiting, and how long the oldest due one has. */
export interface OutboxStats {
  byState: Record<string, number>;
  /** Deliveries not yet finished (`queued`, `sending`, `retry`). */
  depth: number;
  /** Seconds since the oldest due delivery (queued or retry, its time come) became due; 0 when none. */
  oldestDueSeconds: number;
}

/** Outbox statistics for `/api/status/` and `/metrics` (two small queries). */
export async function outboxStats(ctx: Ctx): Promise<OutboxStats> {
  const rows = await ctx.db
    .selectFrom("extras_webhookdelivery")
    .select(["state", (eb: any) => eb.fn.countAll().as("n")])
    .groupBy("state")
    .execute();
  const state = ctx.reg.get("extras.webhookdelivery").fields.state;
  const byState: Record<string, number> = Object.fromEntries(
    (state?.kind === "choice" ? state.choices : []).map(([v]) => [String(v), 0]),
  );
  for (const r of rows) byState[String(r.state)] = Number(r.n);
  const now = new Date().toISOString();
  const oldest = await ctx.db
    .selectFrom("extras_webhookdelivery")
    .select((eb: any) => eb.fn.min("next_attempt_at").as("due"))
    .where("state", "in", ["queued", "retry"])
    .where("next_attempt_at", "<=", now)
    .executeTakeFirst();
  const first = (oldest as { due?: unknown } | undefined)?.due;
  const due = first ? Date.parse(String(first)) : Number.NaN;
  return {
    byState,
    depth: (byState.queued ?? 0) + (byState.sending ?? 0) + (byState.retry ?? 0),
    oldestDueSeconds: Number.isFinite(due) ? Math.max(0, (Date.now() - due) / 1000) : 0,
  };
}
