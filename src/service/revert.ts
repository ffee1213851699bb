/**
 * Revert (issue 27): put objects back as they were, as new validated changes with their own change log,
 * webhooks and sequence numbers. What is reverted:
 *
 * - a request (every version its transactions wrote, change-logged or not: components created from
 *   templates, rows a delete set to null), back to the state just before its first transaction;
 * - a set of change-log entries, each object back to just before its entry's transaction;
 * - one object, back to a point.
 *
 * The plan: per object, create (it existed at the target and is gone), update (it exists and differs) or
 * delete (it did not exist at the target). Conflicts: an object changed since the reverted transaction
 * (`changed since`), and whatever the writes refuse (a name or address now taken, a parent deleted, a
 * cable end now occupied: the validators' own messages). The plan is always carried out inside one
 * transaction through `createObject`/`updateObject`/`deleteObjects`; a dry run, or a revert with conflicts,
 * rolls it back, so the answer is exactly what applying would do.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, PermissionDenied, ValidationError } from "./errors.ts";
import { versioned } from "./history.ts";
import {
  bodyOf,
  commitsOfChanges,
  latestVersions,
  linksAt,
  type Row,
  rowsAt,
  statusSlugs,
  unchangedSince,
  versionsOf,
} from "./history-read.ts";
import { mayDo } from "./permissions.ts";
import { createObject, deleteObjects, inTransaction, updateObject } from "./write.ts";

/** What to revert. */
export type RevertTarget =
  | { requestId: string }
  | { changeIds: readonly string[] }
  | { object: { type: string; id: string }; point: number };

/** One step of the plan. */
export interface PlanItem {
  action: "create" | "update" | "delete";
  object_type: string;
  object_id: string;
}

/** Something that keeps the revert from applying. */
export interface Conflict {
  object_type: string;
  object_id: string;
  reason: string;
  detail?: unknown;
}

/** The answer: the plan, its conflicts, whether it was applied. */
export interface RevertResult {
  dry_run: boolean;
  applied: boolean;
  plan: PlanItem[];
  conflicts: Conflict[];
}

/** Most objects one revert may touch. */
export const REVERT_MAX_OBJECTS = 10_000;

/** An object to put back: its model, the point whose version it takes, and the newest version it may have. */
interface Goal {
  model: Model;
  id: string;
  point: number;
  /** The object's versions after this number are changes since the reverted transaction (conflicts). */
  until: number | undefined;
}

/** Raised inside the transaction to roll it back with the result. */
class Rollback extends Error {
  readonly result: RevertResult;
  constructor(result: RevertResult) {
    super("revert rolled back");
    this.result = result;
  }
}

/** The objects a target reverts and the point each goes back to. @throws AppError 404/400 */
async function goalsOf(ctx: Ctx, target: RevertTarget): Promise<Goal[]> {
  const goals = new Map<string, Goal>();
  const add = (type: string, id: string, point: number, until: number | undefined) => {
    const model = ctx.reg.models.get(type);
    if (!model || !versioned(model)) return;
    const had = goals.get(id);
    goals.set(id, {
      model,
      id,
      point: had ? Math.min(had.point, point) : point,
      until: had?.until === undefined || until === undefined ? until : Math.max(had.until, until),
    });
  };
  if ("object" in target) {
    add(target.object.type, target.object.id, target.point, undefined);
    if (!goals.size) throw new AppError(400, `object_type: ${target.object.type} keeps no history.`);
    return [...goals.values()];
  }
  const changes = await commitsOfChanges(ctx, target);
  if (!changes.length) throw new AppError(404, "No recorded changes match.");
  if ("requestId" in target) {
    const commits = [...new Set(changes.map((c) => c.commit))];
    const first = Math.min(...commits);
    for (const v of await versionsOf(ctx, commits)) add(v.contentType, v.id, first - 1, v.seq);
  } else for (const c of changes) add(c.type, c.objectId, c.commit - 1, c.commit);
  if (goals.size > REVERT_MAX_OBJECTS)
    throw new AppError(
      400,
      `The revert touches ${goals.size} objects; at most ${REVERT_MAX_OBJECTS} at once.`,
    );
  return [...goals.values()];
}

/** Writable FK-like references of a body (field, target id): what a create must wait for. */
function references(model: Model, body: Row): Array<{ field: string; id: string; optional: boolean }> {
  const out: Array<{ field: string; id: string; optional: boolean }> = [];
  for (const [name, fd] of model.fieldList) {
    if (fd.kind === "fk" && typeof body[name] === "string")
      out.push({ field: name, id: body[name] as string, optional: !fd.required });
    else if (fd.kind === "gfk" && typeof body[`${name}_id`] === "string")
      out.push({ field: name, id: body[`${name}_id`] as string, optional: !fd.required });
    else if (fd.kind === "m2m" && Array.isArray(body[name]))
      for (const t of body[name] as string[]) out.push({ field: name, id: t, optional: true });
  }
  return out;
}

/** Blank a deferred reference in a body (the field then gets its value in a second pass). */
function withoutField(model: Model, body: Row, field: string): Row {
  const fd = model.fields[field];
  const out = { ...body };
  if (fd?.kind === "gfk") {
    out[`${field}_type`] = null;
    out[`${field}_id`] = null;
  } else if (fd?.kind === "m2m") out[field] = [];
  else out[field] = null;
  return out;
}

/**
 * Plan, check and carry out a revert in one transaction; roll it back for a dry run or when anything
 * conflicts. @throws PermissionDenied when the user may not make one of the planned changes; AppError for
 * an unknown request or change (404) or a target that cannot be reverted (400)
 */
export async function revert(ctx: Ctx, target: RevertTarget, dryRun: boolean): Promise<RevertResult> {
  try {
    return await inTransaction(ctx, async (tctx) => {
      // Not a REST write: the serializers' quirks (defaults on write, refused nulls) do not apply to
      // putting a version back; components come from history, not from templates.
      const w: Ctx = { ...tctx, skipTemplates: true, restApi: false };
      const result = await applyRevert(w, await goalsOf(w, target), dryRun);
      if (dryRun || result.conflicts.length) throw new Rollback(result);
      return result;
    });
  } catch (e) {
    if (e instanceof Rollback) return e.result;
    throw e;
  }
}

async function applyRevert(ctx: Ctx, goals: Goal[], dryRun: boolean): Promise<RevertResult> {
  const plan: PlanItem[] = [];
  const conflicts: Conflict[] = [];
  const conflict = (g: Goal, reason: string, detail?: unknown) =>
    conflicts.push({
      object_type: g.model.key,
      object_id: g.id,
      reason,
      ...(detail === undefined ? {} : { detail }),
    });
  const latest = await latestVersions(
    ctx,
    goals.map((g) => g.id),
  );
  for (const g of goals) {
    const now = latest.get(g.id);
    if (g.until !== undefined && now !== undefined && now > g.until) conflict(g, "changed since");
  }
  // Targets and live rows, model by model and point by point, set-wise.
  const wanted = new Map<
    string,
    { goal: Goal; row: Row | undefined; body: Row | undefined; live: boolean }
  >();
  const groups = new Map<string, Goal[]>();
  for (const g of goals) {
    const k = `${g.model.key}@${g.point}`;
    groups.set(k, [...(groups.get(k) ?? []), g]);
  }
  // Statuses by id, per point (few rows; one query per point).
  const slugs = new Map<number | undefined, Map<string, string>>();
  const slugsAt = async (point: number | undefined) => {
    let m = slugs.get(point);
    if (!m) {
      m = await statusSlugs(ctx, point);
      slugs.set(point, m);
    }
    return m;
  };
  for (const list of groups.values()) {
    const { model, point } = list[0]!;
    const thenSlugs = await slugsAt(point);
    const nowSlugs = await slugsAt(undefined);
    const ids = list.map((g) => g.id);
    const rows = await rowsAt(ctx, model, ids, point);
    const links = await linksAt(ctx, model, ids, point);
    const liveRows = await rowsAt(ctx, model, ids, undefined);
    const liveLinks = await linksAt(ctx, model, ids, undefined);
    for (const g of list) {
      const row = rows.get(g.id);
      const body = row ? bodyOf(ctx, model, row, links, thenSlugs) : undefined;
      const now = liveRows.get(g.id);
      // An object already as it was needs nothing.
      if (
        body &&
        now &&
        JSON.stringify(bodyOf(ctx, model, now, liveLinks, nowSlugs)) === JSON.stringify(body)
      )
        continue;
      wanted.set(g.id, { goal: g, row, body, live: !!now });
    }
  }
  const creates = [...wanted.values()].filter((x) => x.row && !x.live);
  const updates = [...wanted.values()].filter((x) => x.row && x.live);
  const deletes = [...wanted.values()].filter((x) => !x.row && x.live);
  // A revert writes objects the user may not see in lists it was given: it needs the permission on every
  // planned model and action without object constraints.
  const need = (m: Model, action: "add" | "change" | "delete") => {
    if (!mayDo(ctx.grants, m, action) || (ctx.grants && ctx.grants.rules.get(`${m.key}:${action}`) !== "all"))
      throw new PermissionDenied();
  };
  for (const x of creates) need(x.goal.model, "add");
  for (const x of updates) need(x.goal.model, "change");
  for (const x of deletes) need(x.goal.model, "delete");
  const attempt = async (g: Goal, write: () => Promise<unknown>) => {
    try {
      await write();
      return true;
    } catch (e) {
      if (e instanceof ValidationError || (e instanceof AppError && e.status < 500 && e.status !== 403)) {
        conflict(g, "refused", e instanceof ValidationError ? e.body : e.message);
        return false;
      }
      throw e;
    }
  };
  // Creates in dependency order: an object after those it references; a cycle is broken at an optional
  // reference, which is written in a second pass.
  const sinceMemo = new Map<string, number>();
  const setSince = async (g: Goal, field: string): Promise<number> => {
    const k = `${g.id}:${field}`;
    let v = sinceMemo.get(k);
    if (v === undefined) {
      const fd = g.model.fields[field];
      const columns =
        fd?.kind === "gfk" ? [`${field}_type`, `${field}_id`] : fd?.kind === "fk" ? [`${field}_id`] : [];
      // M2M links are not in the object's own row: taken as set from the start.
      v = columns.length ? await unchangedSince(ctx, g.model, g.id, g.point, columns) : 0;
      sinceMemo.set(k, v);
    }
    return v;
  };
  const pending = new Map(creates.map((x) => [x.goal.id, x]));
  const later: Array<{ x: (typeof creates)[number]; fields: string[] }> = [];
  while (pending.size) {
    let progressed = false;
    for (const x of [...pending.values()]) {
      const waits = references(x.goal.model, x.body!).filter((r) => pending.has(r.id) && r.id !== x.goal.id);
      if (waits.length) continue;
      pending.delete(x.goal.id);
      progressed = true;
      plan.push({ action: "create", object_type: x.goal.model.key, object_id: x.goal.id });
      await attempt(x.goal, () =>
        createObject(ctx, x.goal.model, { ...x.body, id: x.goal.id }, { keepId: true }),
      );
    }
    if (progressed) continue;
    // A cycle: write an object whose references to pending objects are all optional without them; of
    // those, the one whose deferred references were set last, as the writes that once made the objects
    // were valid in their order: a device's primary IP was set after the IP address was assigned to its
    // interface (deferring the IP's interface instead would give the device a primary IP not assigned to
    // it). Then by id, so the plan does not depend on the order rows come in.
    const waiting = (x: (typeof creates)[number]) =>
      references(x.goal.model, x.body!).filter((r) => pending.has(r.id) && r.id !== x.goal.id);
    const scored: Array<{ p: (typeof creates)[number]; since: number }> = [];
    for (const p of pending.values()) {
      const refs = waiting(p);
      if (!refs.every((r) => r.optional)) continue;
      let since = Number.MAX_SAFE_INTEGER;
      for (const field of new Set(refs.map((r) => r.field)))
        since = Math.min(since, await setSince(p.goal, field));
      scored.push({ p, since });
    }
    scored.sort((a, b) => b.since - a.since || (a.p.goal.id < b.p.goal.id ? -1 : 1));
    const x = scored[0]?.p;
    if (!x) {
      for (const p of pending.values())
        conflict(p.goal, "refused", "It needs an object the revert cannot restore first.");
      break;
    }
    const refs = waiting(x);
    const fields = [...new Set(refs.map((r) => r.field))];
    let body = x.body!;
    for (const f of fields) body = withoutField(x.goal.model, body, f);
    pending.delete(x.goal.id);
    plan.push({ action: "create", object_type: x.goal.model.key, object_id: x.goal.id });
    if (
      await attempt(x.goal, () =>
        createObject(ctx, x.goal.model, { ...body, id: x.goal.id }, { keepId: true }),
      )
    )
      later.push({ x, fields });
  }
  for (const { x, fields } of later) {
    const patch: Row = {};
    for (const f of fields) {
      const fd = x.goal.model.fields[f];
      if (fd?.kind === "gfk") {
        patch[`${f}_type`] = x.body![`${f}_type`];
        patch[`${f}_id`] = x.body![`${f}_id`];
      } else patch[f] = x.body![f];
    }
    await attempt(x.goal, () => updateObject(ctx, x.goal.model, x.goal.id, patch, true));
  }
  for (const x of updates) {
    plan.push({ action: "update", object_type: x.goal.model.key, object_id: x.goal.id });
    await attempt(x.goal, () => updateObject(ctx, x.goal.model, x.goal.id, x.body!, false));
  }
  // Deletes last, in rounds: one an object still protects waits for the next round; one may already have
  // gone with another (a cascade).
  for (const x of deletes)
    plan.push({ action: "delete", object_type: x.goal.model.key, object_id: x.goal.id });
  let left = deletes;
  while (left.length) {
    const failed: typeof deletes = [];
    for (const x of left) {
      const still = await ctx.db
        .selectFrom(x.goal.model.table)
        .select("id")
        .where("id", "=", x.goal.id)
        .executeTakeFirst();
      if (!still) continue;
      try {
        await deleteObjects(ctx, x.goal.model, [x.goal.id]);
      } catch (e) {
        if (!(e instanceof AppError) || e.status !== 409) throw e;
        failed.push(x);
      }
    }
    if (failed.length === left.length) {
      for (const x of failed) conflict(x.goal, "refused", "Other objects still protect it.");
      break;
    }
    left = failed;
  }
  return { dry_run: dryRun, applied: !dryRun && !conflicts.length, plan, conflicts };
}
