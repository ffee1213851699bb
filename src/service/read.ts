/**
 * Reads: filtered, ordered, paginated lists and single objects of any registered model.
 *
 * Order is the model's declared ordering plus `id` as a tiebreaker, so offset paging never skips or
 * repeats rows (issue 2, Pagination). The count query uses the same WHERE without ORDER BY, and is
 * skipped when the first page is shorter than the limit.
 */
import { type SelectQueryBuilder, sql } from "kysely";
import { filterSizeErrors } from "../query/filter-input.ts";
import { type Cond, compileFilters, RESERVED_PARAMS } from "../query/filters.ts";
import { type Model, VERSION_COLUMN } from "../registry/index.ts";
import { orderPlan } from "../store/ordering.ts";
import type { Ctx } from "./context.ts";
import { NotFoundError, ValidationError } from "./errors.ts";
import { type Action, restriction } from "./permissions.ts";
import { chunks, type Row, rowsWhereIn } from "./rows.ts";

/** Parameters of a list call. */
export interface ListParams {
  params: ReadonlyMap<string, string[]>;
  limit: number | undefined;
  offset: number;
  /** Extra ignored parameter names (e.g. `exclude` on devices/VMs). */
  ignore?: ReadonlySet<string>;
  /** Restrict to rows owned by a user (tokens). */
  ownerColumn?: [string, string];
  /** Permission action whose constraints restrict the rows (default `view`). */
  action?: Action;
  /** An extra condition on the rows (alias `t`), built by the service (e.g. `connectedOnly`). */
  extra?: Cond;
  /** Ordering entries replacing the model's (`name`, `-site`: the web UI's sortable columns). */
  ordering?: readonly string[];
  /** Never run the count query (GraphQL lists carry no count). */
  skipCount?: boolean;
  /**
   * No ORDER BY: the rows in the engine's scan order, so which rows fill a limited page is arbitrary. A bounded
   * search (the web forms' typeahead lookups, `ui/typeahead.ts`) then stops at its first `limit` matches
   * without sorting them or walking an index in key order: a search of 10,000 devices by name that finds
   * one device reads the table once in storage order (SQLite: ~11 -> ~5 ms of CPU). Ignores `ordering`.
   */
  unordered?: boolean;
}

/**
 * `params`, client filter parameters (a REST query string; a web-interface list, export, search or lookup
 * query; a CSV-import reference),
 * checked against the size bounds of client filter input (query/filter-input.ts `filterSizeErrors`: 1,000
 * characters per value, 16,384 in all; issue 23) where they enter; `ignore`d names (paging, format) are
 * not counted. The service's own lookups (ids of a bulk request, related objects) are not bounded.
 * @returns `params`. @throws ValidationError naming each parameter beyond a bound
 */
export function boundedFilters<P extends ReadonlyMap<string, readonly string[]>>(
  params: P,
  ignore: ReadonlySet<string> = RESERVED_PARAMS,
): P {
  const errors = filterSizeErrors(params, ignore);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return params;
}

async function filtered(ctx: Ctx, model: Model, p: ListParams): Promise<SelectQueryBuilder<any, any, any>> {
  const { cond, errors } = await compileFilters(
    { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model },
    p.params,
    p.ignore ?? RESERVED_PARAMS,
  );
  if (Object.keys(errors).length) throw new ValidationError(errors);
  let q = ctx.db.selectFrom(`${model.table} as t`);
  if (cond) q = q.where(cond);
  if (p.ownerColumn) q = q.where(`t.${p.ownerColumn[0]}`, "=", p.ownerColumn[1]);
  if (p.extra) q = q.where(p.extra);
  const allowed = await restriction(ctx, model, p.action ?? "view");
  if (allowed) q = q.where(allowed);
  return q;
}

/**
 * `q` ordered by the model's ordering (or `ordering`), through related objects' own ordering (Django
 * Meta.ordering) with the joins that needs, NULLs as PostgreSQL orders them.
 */
function inOrder(
  ctx: Ctx,
  model: Model,
  q: SelectQueryBuilder<any, any, any>,
  ordering?: readonly string[],
): SelectQueryBuilder<any, any, any> {
  const plan = orderPlan(ordering ? { ...model, ordering } : model, (k) => ctx.reg.get(k));
  for (const j of plan.joins)
    q = j.left
      ? q.leftJoin(`${j.table} as ${j.alias}`, `${j.alias}.id`, j.on)
      : q.innerJoin(`${j.table} as ${j.alias}`, `${j.alias}.id`, j.on);
  for (const tm of plan.terms)
    for (const e of ctx.store.dialect.orderBy(tm.ref, tm.desc, tm.nullable, tm.nullsFirst)) q = q.orderBy(e);
  return q;
}

/** The total count of a list whose page has `got` rows: counted only when the page does not tell. */
async function countOf(base: SelectQueryBuilder<any, any, any>, p: ListParams, got: number): Promise<number> {
  if (p.skipCount || (p.offset === 0 && (p.limit === undefined || got < p.limit))) return got;
  const r = await base.select(sql<number>`count(*)`.as("n")).executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** A page of rows and the total count. `limit` undefined means all rows. */
export async function listRows(
  ctx: Ctx,
  model: Model,
  p: ListParams,
): Promise<{ count: number; rows: Row[] }> {
  const base = await filtered(ctx, model, p);
  let q = p.unordered ? base.selectAll("t") : inOrder(ctx, model, base.selectAll("t"), p.ordering);
  if (p.limit !== undefined) q = q.limit(p.limit);
  if (p.offset) q = q.offset(p.offset);
  const rows = await q.execute();
  return { count: await countOf(base, p, rows.length), rows };
}

/**
 * The ids and versions (`VERSION_COLUMN`) of the page `listRows(ctx, model, p)` would return, and the same
 * count, without reading the rows' other columns: what a list page's ETag is computed from (issue 26,
 * `If-None-Match`), so revalidating an unchanged page never loads nor renders its objects.
 */
export async function listVersions(
  ctx: Ctx,
  model: Model,
  p: ListParams,
): Promise<{ count: number; rows: Row[] }> {
  const base = await filtered(ctx, model, p);
  let q = inOrder(ctx, model, base.select(["t.id", `t.${VERSION_COLUMN}`]), p.ordering);
  if (p.limit !== undefined) q = q.limit(p.limit);
  if (p.offset) q = q.offset(p.offset);
  const rows = await q.execute();
  return { count: await countOf(base, p, rows.length), rows };
}

/**
 * Rows of `model` whose `column` is one of `values`, honouring `p`'s filters, owner column and the user's
 * restriction of `p.action` (default `view`), in the model's order: the set-wise load behind GraphQL's
 * nested fields and a bulk request's ids (one query per 2000 values, never one per parent; the store's
 * by-id read `rowsWhereIn` when nothing restricts the rows). `column` is a stored column (`id`, `device_id`).
 */
export async function listRowsWhereIn(
  ctx: Ctx,
  model: Model,
  column: string,
  values: readonly string[],
  p?: ListParams,
): Promise<Row[]> {
  const uniq = [...new Set(values.filter((v) => v !== null && v !== undefined))];
  if (!uniq.length) return [];
  const plain =
    !ctx.grants &&
    (!p ||
      (!p.extra &&
        !p.ownerColumn &&
        ![...p.params.keys()].some((k) => !(p.ignore ?? RESERVED_PARAMS).has(k))));
  if (plain && column === "id") return rowsWhereIn(ctx, model, column, uniq);
  const base = inOrder(
    ctx,
    model,
    (await filtered(ctx, model, p ?? { params: new Map(), limit: undefined, offset: 0 })).selectAll("t"),
  );
  const out: Row[] = [];
  for (const part of chunks(uniq)) out.push(...(await base.where(`t.${column}`, "in", part).execute()));
  return out;
}

/**
 * Whether more than `n` rows of `model` are visible to `ctx` (with `p`'s filters, none by default), by a
 * bounded `LIMIT n+1` scan without ordering: cheap on large tables where `count(*)` or an ordered page is not.
 * Used by the web interface to decide between a select of related objects and a text box.
 */
export async function hasMoreThan(ctx: Ctx, model: Model, n: number, p?: ListParams): Promise<boolean> {
  const base = await filtered(ctx, model, p ?? { params: new Map(), limit: undefined, offset: 0 });
  const rows = await base
    .select("t.id")
    .limit(n + 1)
    .execute();
  return rows.length > n;
}

/**
 * Whether `getRow(ctx, model, id, p)` only asks whether the row exists: no object permissions to apply, no
 * filter parameters, no owner column.
 */
export function plainLookup(ctx: Ctx, p?: ListParams): boolean {
  return (
    !ctx.grants &&
    (!p || (![...p.params.keys()].some((k) => !(p.ignore ?? RESERVED_PARAMS).has(k)) && !p.ownerColumn))
  );
}

/** One row by id, honouring filters (Nautobot applies filters to detail routes too). @throws NotFoundError */
export async function getRow(ctx: Ctx, model: Model, id: string, p?: ListParams): Promise<Row> {
  if (plainLookup(ctx, p)) {
    const [row] = await rowsWhereIn(ctx, model, "id", [id]);
    if (!row) throw new NotFoundError();
    return row;
  }
  const q = await filtered(ctx, model, p ?? { params: new Map(), limit: 1, offset: 0 });
  const row = await q.selectAll("t").where("t.id", "=", id).executeTakeFirst();
  if (!row) throw new NotFoundError();
  return row;
}
