/**
 * Dynamic-group membership (Nautobot 1.6 `DynamicGroup.get_group_queryset`): a group selects the objects of
 * its content type that match its `filter` (the model's REST filters, compiled by our filter compiler) and,
 * when it has child groups, the combination of their selections in weight order — `union` ORs a child in,
 * `intersection` ANDs it, `difference` removes it. An empty filter selects every object. Everything is one
 * SQL condition, so members are listed and counted like any filtered list.
 */
import { sql } from "kysely";
import { type FilterErrors, filterObjectParams, filterSizeErrors } from "../query/filter-input.ts";
import { type Cond, compileFilters } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { ValidationError } from "./errors.ts";
import { listRows, listRowsWhereIn } from "./read.ts";
import type { Row } from "./rows.ts";

const TRUE = sql<boolean>`1 = 1`;

/**
 * A group filter (object or JSON text) compiled for `model` by the list's filter compiler, with the same
 * rules and bounds as query parameters plus the value shapes of `filterObjectParams`. Nothing is read but
 * the related objects the filter names (to resolve them to ids); the member query is not run.
 * @returns the condition (undefined: no condition) and errors keyed by filter name.
 */
async function compileGroupFilter(
  ctx: Ctx,
  model: Model,
  filter: unknown,
): Promise<{ cond: Cond | undefined; errors: FilterErrors }> {
  const { params, errors: shape } = filterObjectParams(filter);
  if (shape.filter) return { cond: undefined, errors: shape };
  // Client input, stored: the bounds of client filters at each save and each member read (issue 23).
  const size = filterSizeErrors(params, new Set());
  if (Object.keys(size).length) return { cond: undefined, errors: { ...shape, ...size } };
  const { cond, errors } = await compileFilters(
    { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model },
    params,
    new Set(),
  );
  return { cond, errors: { ...shape, ...errors } };
}

/**
 * Why a dynamic group's `filter` is not usable for `model` (issue 23: checked when the group is saved, so
 * a member read never meets it): filter name → messages (`filter` → "Filter must be a dict" when it is no
 * object); empty when it is.
 */
export async function groupFilterErrors(ctx: Ctx, model: Model, filter: unknown): Promise<FilterErrors> {
  return (await compileGroupFilter(ctx, model, filter)).errors;
}

/** The SQL condition (alias `t`) selecting a group's members; `seen` stops loops of child groups. */
async function groupCondition(ctx: Ctx, group: Row, seen: Set<string>, top = true): Promise<Cond> {
  const model = ctx.reg.models.get(String(group.content_type));
  const { cond, errors } = model
    ? await compileGroupFilter(ctx, model, group.filter)
    : { cond: undefined, errors: { content_type: [`Invalid content type: ${group.content_type}`] } };
  if (Object.keys(errors).length) {
    // A filter stored before it was checked (or a related object since deleted): a 400 naming the group's
    // filter, never a 500 (issue 23).
    const where = top ? "" : `child group ${group.name}: `;
    const messages = Object.entries(errors).flatMap(([k, ms]) =>
      ms.map((m) => (k === "filter" ? `${where}${m}` : `${where}${k}: ${m}`)),
    );
    throw new ValidationError({ filter: messages });
  }
  const own = cond ?? TRUE;
  if (seen.has(group.id)) return own;
  seen.add(group.id);
  const children = await ctx.db
    .selectFrom("extras_dynamicgroupmembership as m")
    .innerJoin("extras_dynamicgroup as g", "g.id", "m.group_id")
    .select(["m.operator", "g.id", "g.name", "g.content_type", "g.filter"])
    .where("m.parent_group_id", "=", group.id)
    .orderBy("m.weight")
    .execute();
  let combined: Cond | undefined;
  for (const child of children) {
    const next = await groupCondition(ctx, child, seen, false);
    if (child.operator === "union") combined = combined ? sql<boolean>`((${combined}) OR (${next}))` : next;
    else if (child.operator === "intersection")
      combined = combined ? sql<boolean>`((${combined}) AND (${next}))` : next;
    else combined = sql<boolean>`((${combined ?? TRUE}) AND NOT (${next}))`;
  }
  return combined ? sql<boolean>`((${own}) AND (${combined}))` : own;
}

/**
 * A page of a group's members (raw rows of its content type, in the model's order) and their count,
 * restricted to what the user may view.
 * @throws ValidationError (400 `{"filter": ["<name>: <reason>"]}`) when a stored filter (its own or a child
 *   group's) is not usable: saved before it was checked, or naming a related object since deleted.
 */
export async function groupMembers(
  ctx: Ctx,
  group: Row,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: Row[] }> {
  const model = ctx.reg.get(String(group.content_type));
  const extra = await groupCondition(ctx, group, new Set());
  return listRows(ctx, model, { params: new Map(), limit: page.limit, offset: page.offset, extra });
}

/**
 * The dynamic groups (raw rows, by name) each of `ids` belongs to, among the groups of `modelKey` the user
 * may view (Nautobot's `dynamic_groups` property): one query for the groups, then one per group for the
 * whole set of ids. Groups whose stored filter is not usable are skipped; database errors (a statement past
 * its budget) are not.
 */
export async function groupsContaining(
  ctx: Ctx,
  modelKey: string,
  ids: readonly string[],
): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  const dg = ctx.reg.get("extras.dynamicgroup");
  // The filter takes only the types dynamic groups may be of (a 400 for any other, as Nautobot's).
  if (
    !ctx.reg
      .resolveAllowed((dg.fields.content_type as { allowed: string[] | string }).allowed)
      .includes(modelKey)
  )
    return out;
  const { rows: groups } = await listRows(ctx, dg, {
    params: new Map([["content_type", [modelKey]]]),
    limit: undefined,
    offset: 0,
  });
  const model = ctx.reg.get(modelKey);
  for (const group of groups) {
    const extra = await groupCondition(ctx, group, new Set()).catch((e: unknown) => {
      if (e instanceof ValidationError) return undefined;
      throw e;
    });
    if (!extra) continue;
    const members = await listRowsWhereIn(ctx, model, "id", ids, {
      params: new Map(),
      limit: undefined,
      offset: 0,
      extra,
    });
    for (const m of members) out.set(String(m.id), [...(out.get(String(m.id)) ?? []), group]);
  }
  return out;
}
