/**
 * Webhook replay (issue 26): re-send the events of the change log since a seq (or a time) to one webhook's
 * receiver, as new deliveries in seq order through the outbox (service/outbox.ts), for receivers that lost
 * data. Only changes the webhook would have sent (its content types and event flags) are replayed, whether
 * or not it was enabled then. One call queues at most `REPLAY_MAX` events, read in batches, so a request's
 * work and memory are bounded; the answer says where to continue.
 */
import { sql } from "kysely";
import { storedTime } from "../store/values.ts";
import type { Ctx } from "./context.ts";
import { NotFoundError, PermissionDenied, ValidationError } from "./errors.ts";
import {
  DEFAULT_MAX_ATTEMPTS,
  deliveryRow,
  insertDeliveries,
  type LoggedChange,
  QUEUED_KEY,
} from "./outbox.ts";
import { permits } from "./permissions.ts";
import { m2mPairs, type Row } from "./rows.ts";

/** Most events one replay call queues (the caller continues from `next`). */
export const REPLAY_MAX = 10_000;
/** Changes read per statement. */
const REPLAY_BATCH = 1000;

/** Where a replay starts: after a seq, or at a time (the first change at or after it). */
export type ReplayFrom = { after: number } | { since: string };

/** What a replay queued. */
export interface ReplayResult {
  /** Deliveries queued. */
  queued: number;
  /** The seq to pass as `after` to continue (the last change examined; unchanged when none). */
  next: number;
  /** Whether changes remain past `next` (REPLAY_MAX reached). */
  more: boolean;
}

/**
 * Parse a replay request body: `{"after": N}` (a non-negative integer) or `{"since": "<ISO 8601 time>"}`.
 * @throws ValidationError naming the field and the reason.
 */
export function parseReplayBody(body: unknown): ReplayFrom {
  const b = (body && typeof body === "object" && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  if (b.after !== undefined && b.since !== undefined)
    throw new ValidationError({ non_field_errors: ["Give either after or since, not both."] });
  if (b.after !== undefined) {
    const n = typeof b.after === "string" && /^\d+$/.test(b.after) ? Number(b.after) : b.after;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0)
      throw new ValidationError({ after: ["A non-negative integer (a change seq) is required."] });
    return { after: n };
  }
  if (b.since !== undefined) {
    const t = typeof b.since === "string" ? Date.parse(b.since) : Number.NaN;
    if (!Number.isFinite(t))
      throw new ValidationError({
        since: ["Datetime has wrong format. Use ISO 8601, e.g. 2026-01-01T00:00:00Z."],
      });
    return { since: storedTime(t) };
  }
  throw new ValidationError({ after: ["This field is required (or give since)."] });
}

/**
 * Queue the webhook's events since `from` as new deliveries, in seq order, in the caller's transaction.
 * Needs view (404 otherwise) and change (403) on that webhook.
 * @throws NotFoundError for an unknown or invisible webhook; PermissionDenied without change on it.
 */
export async function replayWebhook(ctx: Ctx, webhookId: string, from: ReplayFrom): Promise<ReplayResult> {
  const webhooks = ctx.reg.get("extras.webhook");
  const hook = await ctx.db
    .selectFrom("extras_webhook")
    .select(["id", "type_create", "type_update", "type_delete"])
    .where("id", "=", webhookId)
    .executeTakeFirst();
  if (!hook || !(await permits(ctx, webhooks, webhookId, "view"))) throw new NotFoundError();
  if (!(await permits(ctx, webhooks, webhookId, "change"))) throw new PermissionDenied();
  const types = (await m2mPairs(ctx, webhooks, "content_types", [webhookId])).map(([, t]) => t);
  const actions = (["create", "update", "delete"] as const).filter((a) => truthy(hook[`type_${a}`]));
  let after = "after" in from ? from.after : -1;
  let queued = 0;
  let more = false;
  if (!types.length || !actions.length) return { queued: 0, next: Math.max(0, after), more: false };
  const time = storedTime();
  const maxAttempts = ctx.settings.webhookMaxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  let examined = 0;
  while (examined < REPLAY_MAX) {
    const want = Math.min(REPLAY_BATCH, REPLAY_MAX - examined);
    const since = "since" in from && after < 0 ? sql`AND c.time >= ${from.since}` : sql``;
    const r =
      await sql<Row>`SELECT c.id, c.seq, c.action, c.changed_object_type, c.changed_object_id, c.request_id
      FROM extras_objectchange AS c
      WHERE c.seq > ${after} ${since} AND c.changed_object_type IN (${sql.join(types)})
        AND c.action IN (${sql.join(actions)})
      ORDER BY c.seq LIMIT ${want + 1}`.execute(ctx.db);
    const rows = r.rows.slice(0, want);
    const rowsOut: Row[] = rows.map((c) =>
      deliveryRow(
        webhookId,
        {
          objectChangeId: String(c.id),
          action: c.action as LoggedChange["action"],
          contentType: String(c.changed_object_type),
          objectId: String(c.changed_object_id),
        },
        String(c.request_id ?? ctx.requestId),
        time,
        maxAttempts,
      ),
    );
    queued += await insertDeliveries(ctx, rowsOut);
    examined += rows.length;
    if (rows.length) after = Number(rows[rows.length - 1]!.seq);
    if (r.rows.length <= want) {
      more = false;
      break;
    }
    more = true;
  }
  if (queued) ctx.memo.set(QUEUED_KEY, ((ctx.memo.get(QUEUED_KEY) as number) ?? 0) + queued);
  return { queued, next: Math.max(0, after), more };
}

const truthy = (v: unknown) => v === true || Number(v) === 1;
