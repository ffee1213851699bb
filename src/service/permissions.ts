/**
 * Object permissions as Nautobot 1.6 (nautobot-api-core.md §8.3–8.4; issue 5): a user may perform an
 * action (view, add, change, delete) on a model when an enabled ObjectPermission assigned to the user,
 * directly or through a group, lists the model's content type and the action. Its `constraints` restrict
 * which objects: null, `{}` or `[]` means all; an object is an AND of filters in the API's own query
 * language (the same compiler as list filters, e.g. `{"site": "ams1", "status": ["active", "planned"]}`);
 * a list of objects is their OR. `"$user"` stands for the requesting user (its username, or its id for
 * parameters ending in `_id`). Superusers bypass everything.
 */
import { sql } from "kysely";
import { filterSizeErrors } from "../query/filter-input.ts";
import { anyOf, type Cond, compileFilters } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import { joinTable } from "../store/ddl.ts";
import { parseJsonColumn } from "../store/values.ts";
import type { Actor, Ctx } from "./context.ts";
import { m2mPairs } from "./rows.ts";

/** A permission action. */
export type Action = "view" | "add" | "change" | "delete";

/** One constraint set: query parameter → values (OR within a parameter, AND across parameters). */
type ConstraintSet = Map<string, string[]>;

/** What a (non-superuser) user holds: `app.model:action` → constraint sets, or "all" when unrestricted. */
export interface Grants {
  user: Actor;
  rules: Map<string, ConstraintSet[] | "all">;
}

/**
 * A permission's stored `constraints` as constraint sets, `"$user"` replaced by the user. A set beyond the
 * size bounds of client filters (query/filter-input.ts; checked when the permission is saved, so only a
 * row stored before that check) is dropped: it matches nothing, as a constraint that does not compile.
 */
function toSets(constraints: unknown, actor: Actor): ConstraintSet[] | "all" {
  if (constraints === null || constraints === undefined) return "all";
  const list = Array.isArray(constraints) ? constraints : [constraints];
  if (!list.length) return "all";
  const sets: ConstraintSet[] = [];
  for (const item of list) {
    if (!item || typeof item !== "object" || Array.isArray(item)) continue;
    const entries = Object.entries(item as Record<string, unknown>);
    if (!entries.length) return "all";
    const set: ConstraintSet = new Map();
    for (const [k, v] of entries) {
      const vals = (Array.isArray(v) ? v : [v]).map((x) =>
        x === "$user" ? (k.endsWith("_id") ? actor.id : actor.username) : String(x),
      );
      set.set(k, vals);
    }
    if (!Object.keys(filterSizeErrors(set, new Set())).length) sets.push(set);
  }
  return sets;
}

/** Load the grants of a user (3 queries). Returns undefined for superusers (no restriction). */
export async function loadGrants(ctx: Ctx, actor: Actor): Promise<Grants | undefined> {
  if (actor.isSuperuser) return undefined;
  const pm = ctx.reg.get("users.objectpermission");
  const um = ctx.reg.get("users.user");
  const groups = (
    await ctx.db
      .selectFrom(joinTable(um, "groups"))
      .select("target_id")
      .where("source_id", "=", actor.id)
      .execute()
  ).map((r) => r.target_id as string);
  const viaUser = ctx.db
    .selectFrom(joinTable(pm, "users"))
    .select("source_id")
    .where("target_id", "=", actor.id);
  const viaGroup = ctx.db
    .selectFrom(joinTable(pm, "groups"))
    .select("source_id")
    .where("target_id", "in", groups.length ? groups : ["__none__"]);
  const perms = await ctx.db
    .selectFrom(pm.table)
    .select(["id", "actions", "constraints"])
    .where("enabled", "=", true)
    .where((eb) => eb.or([eb("id", "in", viaUser), eb("id", "in", viaGroup)]))
    .execute();
  const rules = new Map<string, ConstraintSet[] | "all">();
  if (perms.length) {
    const types = await m2mPairs(
      ctx,
      pm,
      "object_types",
      perms.map((p) => p.id as string),
    );
    for (const p of perms) {
      const actions = parseJsonColumn(p.actions);
      const sets = toSets(parseJsonColumn(p.constraints), actor);
      for (const [permId, type] of types) {
        if (permId !== p.id) continue;
        for (const a of Array.isArray(actions) ? actions : []) {
          const key = `${type}:${a}`;
          const prev = rules.get(key);
          if (prev === "all" || sets === "all") rules.set(key, "all");
          else rules.set(key, [...(prev ?? []), ...sets]);
        }
      }
    }
  }
  return { user: actor, rules };
}

/** Model-level check: does the user hold `action` on `model` at all? (superusers: undefined grants → yes) */
export function mayDo(grants: Grants | undefined, model: Model, action: Action): boolean {
  return !grants || grants.rules.has(`${model.key}:${action}`);
}

/**
 * The row restriction of `action` on `model` for table alias `t`: undefined = unrestricted; a condition
 * otherwise (`1 = 0` when the user holds no such permission). A constraint that does not compile (unknown
 * filter, bad value) matches nothing. A model with `viewThrough` is further restricted to rows whose target
 * the user may view (one `IN (subquery)`).
 */
export async function restriction(ctx: Ctx, model: Model, action: Action): Promise<Cond | undefined> {
  const grants = ctx.grants;
  if (!grants) return undefined;
  const own = await ownRestriction(ctx, model, action);
  const through = model.viewThrough ? model.fields[model.viewThrough] : undefined;
  if (through?.kind !== "fk" || (own && isNothing(own))) return own;
  // `viewThrough`: only rows whose target the user may view (a delivery with its webhook; issue 23). The
  // subquery's alias `t` shadows the outer one, so the target's own restriction compiles unchanged.
  const target = ctx.reg.get(through.to);
  const seen = await restriction(ctx, target, "view");
  if (!seen) return own;
  const visible = sql<boolean>`${sql.ref(`t.${model.viewThrough}_id`)} in (${ctx.db
    .selectFrom(`${target.table} as t`)
    .select("t.id")
    .where(seen)})`;
  return own ? sql<boolean>`(${own}) and (${visible})` : visible;
}

const NOTHING = sql<boolean>`1 = 0`;
const isNothing = (c: Cond) => c === NOTHING;

/** The restriction of the user's own `action` rules on `model` (without `viewThrough`). */
async function ownRestriction(ctx: Ctx, model: Model, action: Action): Promise<Cond | undefined> {
  const grants = ctx.grants;
  if (!grants) return undefined;
  const rule = grants.rules.get(`${model.key}:${action}`);
  if (rule === undefined) return NOTHING;
  if (rule === "all") return undefined;
  const conds: Cond[] = [];
  for (const set of rule) {
    const { cond, errors } = await compileFilters(
      { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model },
      set,
      new Set(),
    );
    if (Object.keys(errors).length) continue;
    conds.push(cond ?? sql<boolean>`1 = 1`);
  }
  return anyOf(conds);
}

/** Does the object `id` fall inside the user's `action` constraints (read in the caller's transaction)? */
export async function permits(ctx: Ctx, model: Model, id: string, action: Action): Promise<boolean> {
  const cond = await restriction(ctx, model, action);
  if (!cond) return true;
  const row = await ctx.db
    .selectFrom(`${model.table} as t`)
    .select("t.id")
    .where("t.id", "=", id)
    .where(cond)
    .executeTakeFirst();
  return !!row;
}
