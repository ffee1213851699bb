/**
 * Dynamic-group membership (Nautobot 1.6 `DynamicGroup.get_group_queryset`): a group selects the objects of
 * its content type that match its `filter` (the model's REST filters, compiled by our filter compiler) and,
 * when it has child groups, the combination of their selections in weight order — `union` ORs a child in,
 * `intersection` ANDs it, `difference` removes it. An empty filter selects every object. Everything is one
 * SQL condition, so members are listed and counted like any filtered list.
 */
import { sql } from "kysely";
import { type Cond, compileFilters } from "../query/filters.ts";
import type { Ctx } from "./context.ts";
import { ValidationError } from "./errors.ts";
import { listRows, listRowsWhereIn } from "./read.ts";
import type { Row } from "./rows.ts";
import { filterParams } from "./validators.ts";

const TRUE = sql<boolean>`1 = 1`;

/** The SQL condition (alias `t`) selecting a group's members; `seen` stops loops of child groups. */
async function groupCondition(ctx: Ctx, group: Row, seen: Set<string>): Promise<Cond> {
  const model = ctx.reg.get(String(group.content_type));
  const filter = typeof group.filter === "string" ? JSON.parse(group.filter) : (group.filter ?? {});
  const { cond, errors } = await compileFilters(
    { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model },
    filterParams(filter as Record<string, unknown>),
    new Set(),
  );
  if (Object.keys(errors).length) throw new ValidationError({ filter: Object.values(errors).flat() });
  const own = cond ?? TRUE;
  if (seen.has(group.id)) return own;
  seen.add(group.id);
  const children = await ctx.db
    .selectFrom("extras_dynamicgroupmembership as m")
    .innerJoin("extras_dynamicgroup as g", "g.id", "m.group_id")
    .select(["m.operator", "g.id", "g.content_type", "g.filter"])
    .where("m.parent_group_id", "=", group.id)
    .orderBy("m.weight")
    .execute();
  let combined: Cond | undefined;
  for (const child of children) {
    const next = await groupCondition(ctx, child, seen);
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
 * @throws ValidationError when a stored filter no longer compiles.
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
 * whole set of ids. Groups whose stored filter no longer compiles are skipped.
 */
export async function groupsContaining(
  ctx: Ctx,
  modelKey: string,
  ids: readonly string[],
): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  const { rows: groups } = await listRows(ctx, ctx.reg.get("extras.dynamicgroup"), {
    params: new Map([["content_type", [modelKey]]]),
    limit: undefined,
    offset: 0,
  });
  const model = ctx.reg.get(modelKey);
  for (const group of groups) {
    const extra = await groupCondition(ctx, group, new Set()).catch(() => undefined);
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
