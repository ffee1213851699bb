/**
 * Diffs between two points of history (issue 27): one object field by field (its full API representation
 * at each point: tags, custom fields and related objects' displays included), and every object of a model,
 * or of a request, that changed between two points. Representations come from the live code run at each
 * point (`ctxAt`), under the user's view restriction.
 */
import { sql } from "kysely";
import type { Model } from "../registry/index.ts";
import { COMMIT_TABLE, VERSION_TABLE } from "../store/history-schema.ts";
import type { Ctx } from "./context.ts";
import { AppError, NotFoundError } from "./errors.ts";
import { versioned } from "./history.ts";
import { commitsOfChanges, ctxAt } from "./history-read.ts";
import { getRow } from "./read.ts";
import { represent } from "./represent.ts";

/** What happened to an object between two points. */
export interface ObjectDiff {
  object_type: string;
  object_id: string;
  display: string | null;
  from_seq: number;
  to_seq: number;
  /** `created` (absent at from), `deleted` (absent at to), `updated`, `unchanged`, `absent` (neither). */
  action: "created" | "deleted" | "updated" | "unchanged" | "absent";
  /** The fields that differ: field → [value at from, value at to] (every field for created/deleted). */
  changes: Record<string, [unknown, unknown]>;
}

/** Fields every write changes, left out of diffs. */
const NOISE = new Set(["last_updated"]);

/** The object's full representation at `point`, or undefined when it did not exist (or is not visible). */
export async function objectAt(
  ctx: Ctx,
  model: Model,
  id: string,
  point: number,
): Promise<Record<string, unknown> | undefined> {
  const at = ctxAt(ctx, point);
  try {
    const row = await getRow(at, model, id);
    const [obj] = await represent(at, model, [row], "full");
    return obj;
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/** One object's diff between `from` and `to`. @throws AppError 400 for a model without history */
export async function objectDiff(
  ctx: Ctx,
  model: Model,
  id: string,
  from: number,
  to: number,
): Promise<ObjectDiff> {
  if (!versioned(model)) throw new AppError(400, `object_type: ${model.key} keeps no history.`);
  const [a, b] = [await objectAt(ctx, model, id, from), await objectAt(ctx, model, id, to)];
  const changes: Record<string, [unknown, unknown]> = {};
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  for (const k of keys) {
    if (NOISE.has(k)) continue;
    const [x, y] = [a?.[k] ?? null, b?.[k] ?? null];
    if (JSON.stringify(x) !== JSON.stringify(y)) changes[k] = [x, y];
  }
  const action =
    !a && !b
      ? "absent"
      : !a
        ? "created"
        : !b
          ? "deleted"
          : Object.keys(changes).length
            ? "updated"
            : "unchanged";
  const display = (b?.display ?? a?.display ?? null) as string | null;
  return { object_type: model.key, object_id: id, display, from_seq: from, to_seq: to, action, changes };
}

/** A page of changed objects. */
export interface ChangesPage {
  count: number;
  from_seq: number;
  to_seq: number;
  results: ObjectDiff[];
}

/**
 * Every object that changed between `from` and `to` (its versions numbered after `from` up to `to`), of one
 * model or of every model the user may view, or of one request (`requestId`: `from`/`to` are then the
 * points around it), as diffs, ordered by type and id, `limit` from `offset`.
 */
export async function changesBetween(
  ctx: Ctx,
  q: { type?: Model; requestId?: string; from?: number; to?: number; limit: number; offset: number },
  mayView: (m: Model) => boolean,
): Promise<ChangesPage> {
  let from = q.from;
  let to = q.to;
  let commits: number[] | undefined;
  if (q.requestId !== undefined) {
    const changes = await commitsOfChanges(ctx, { requestId: q.requestId });
    if (!changes.length) throw new AppError(404, "No recorded changes match.");
    commits = [...new Set(changes.map((c) => c.commit))];
    from = Math.min(...commits) - 1;
    to = Math.max(...commits);
  }
  if (from === undefined || to === undefined)
    throw new AppError(400, "from_seq and to_seq (or request_id) are required.");
  if (from > to) throw new AppError(400, "from_seq is after to_seq.");
  const types = [...ctx.reg.models.values()].filter(
    (m) => versioned(m) && (!q.type || m.key === q.type.key) && mayView(m),
  );
  if (!types.length) return { count: 0, from_seq: from, to_seq: to, results: [] };
  let base = ctx.db.selectFrom(`${VERSION_TABLE} as v`).where(
    "v.content_type",
    "in",
    types.map((m) => m.key),
  );
  base = commits
    ? base.where("v.seq", "in", commits)
    : base.where("v.seq", ">", from).where("v.seq", "<=", to);
  const count = Number(
    (await base.select(sql<number>`count(DISTINCT v.object_id)`.as("n")).executeTakeFirst())?.n ?? 0,
  );
  const rows = await base
    .select(["v.content_type", "v.object_id"])
    .distinct()
    .orderBy("v.content_type")
    .orderBy("v.object_id")
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  const results: ObjectDiff[] = [];
  for (const r of rows) {
    const m = ctx.reg.get(String(r.content_type));
    results.push(await objectDiff(ctx, m, String(r.object_id), from, to));
  }
  return { count, from_seq: from, to_seq: to, results };
}

/** The commit numbers of the history (for pickers): the newest `limit` commits up to `before`, with times. */
export async function commitsBefore(
  ctx: Ctx,
  before: number,
  limit: number,
): Promise<Array<{ seq: number; time: string }>> {
  const rows = await ctx.db
    .selectFrom(COMMIT_TABLE)
    .select(["seq", "time"])
    .where("seq", "<=", before)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), time: String(r.time) }));
}

/** One version of an object, for its history page. */
export interface ObjectVersion {
  seq: number;
  time: string | null;
  action: "created" | "updated" | "deleted";
  /** From the change log, when the version has an entry there (components from templates have none). */
  user: string | null;
  requestId: string | null;
}

/** The newest `limit` versions of one object, newest first. */
export async function objectVersions(ctx: Ctx, id: string, limit = 200): Promise<ObjectVersion[]> {
  const rows = await ctx.db
    .selectFrom(`${VERSION_TABLE} as v`)
    .leftJoin(`${COMMIT_TABLE} as c`, "c.seq", "v.seq")
    .select(["v.seq", "v.deleted", "c.time"])
    .where("v.object_id", "=", id)
    .orderBy("v.seq", "desc")
    .limit(limit + 1)
    .execute();
  const oc = ctx.reg.get("extras.objectchange").table;
  const logged = await ctx.db
    .selectFrom(`${oc} as o`)
    .select([
      "o.user_name",
      "o.request_id",
      sql<number>`(SELECT min(c.seq) FROM ${sql.table(COMMIT_TABLE)} c WHERE c.seq >= o.seq)`.as("commit"),
    ])
    .where("o.changed_object_id", "=", id)
    .where("o.seq", "is not", null)
    .execute();
  const byCommit = new Map(logged.map((l) => [Number(l.commit), l]));
  const out: ObjectVersion[] = [];
  for (let i = 0; i < Math.min(rows.length, limit); i++) {
    const r = rows[i]!;
    const older = rows[i + 1];
    const l = byCommit.get(Number(r.seq));
    out.push({
      seq: Number(r.seq),
      time: r.time === null || r.time === undefined ? null : String(r.time),
      action:
        Number(r.deleted) === 1 ? "deleted" : !older || Number(older.deleted) === 1 ? "created" : "updated",
      user: l ? String(l.user_name) : null,
      requestId: l ? String(l.request_id) : null,
    });
  }
  return out;
}
