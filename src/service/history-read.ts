/**
 * Reading versions back (issue 27): contexts at a point, version rows and their links, the objects a
 * transaction or request changed, and an object's version turned back into a write body (for revert).
 * Everything reads through the store's as-of handles (store/as-of.ts), so the views give the same rows a
 * read at the point gives.
 */
import { sql } from "kysely";
import type { Model } from "../registry/index.ts";
import { joinTable } from "../store/ddl.ts";
import { COMMIT_TABLE, HISTORY_SUFFIX, VERSION_TABLE } from "../store/history-schema.ts";
import { parseJsonColumn } from "../store/values.ts";
import { type Ctx, modelAt } from "./context.ts";
import { AsOfError } from "./history.ts";
import { chunks } from "./rows.ts";

/** A row as stored (live columns). */
export type Row = Record<string, unknown>;

/** Ids per statement. */
const CHUNK = 500;

/** A context whose reads see the state at `point`, with nothing shared with `ctx`'s memos. */
export function ctxAt(ctx: Ctx, point: number): Ctx {
  if (!ctx.store.asOf) throw new AsOfError("History reads need a database file, not an in-memory database.");
  return {
    ...ctx,
    db: ctx.store.asOf.at(point),
    memo: new Map(),
    nestedCache: new Map(),
    defs: { map: new Map() },
  };
}

/**
 * The rows of `ids` of `model` as they were at `point` (undefined: live, in `ctx`'s transaction); absent:
 * the object did not exist then.
 */
export async function rowsAt(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
  point: number | undefined,
): Promise<Map<string, Row>> {
  const at = point === undefined ? ctx : ctxAt(ctx, point);
  const out = new Map<string, Row>();
  for (const part of chunks(ids, CHUNK)) {
    const rows = await at.db.selectFrom(model.table).selectAll().where("id", "in", part).execute();
    for (const r of rows) out.set(String(r.id), r as Row);
  }
  return out;
}

/**
 * The link values of `ids` at `point` (undefined: live): field name (M2M and content-type fields, and `tags`) → owner id →
 * target ids or content-type keys.
 */
export async function linksAt(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
  point: number | undefined,
): Promise<Map<string, Map<string, string[]>>> {
  const at = point === undefined ? ctx : ctxAt(ctx, point);
  const out = new Map<string, Map<string, string[]>>();
  const add = (field: string, owner: string, value: string) => {
    const f = out.get(field) ?? new Map<string, string[]>();
    out.set(field, f);
    f.set(owner, [...(f.get(owner) ?? []), value]);
  };
  for (const part of chunks(ids, CHUNK)) {
    for (const [name, fd] of model.fieldList) {
      if (fd.kind !== "m2m" && fd.kind !== "cts") continue;
      const col = fd.kind === "m2m" ? "target_id" : "content_type";
      const rows = await at.db
        .selectFrom(joinTable(model, name))
        .select(["source_id", `${col} as v`])
        .where("source_id", "in", part)
        .orderBy(col)
        .execute();
      for (const r of rows) add(name, String(r.source_id), String(r.v));
    }
    if (model.tags) {
      const rows = await at.db
        .selectFrom("extras_taggeditem")
        .select(["object_id", "tag_id"])
        .where("object_id", "in", part)
        .orderBy("tag_id")
        .execute();
      for (const r of rows) add("tags", String(r.object_id), String(r.tag_id));
    }
  }
  return out;
}

/**
 * The write body that makes an object what `row` (with `links`) says: every writable field of the request's
 * API version, FKs by id, statuses by slug (`statuses`: id → slug at the row's point, `statusSlugs`), generic FKs as their `_type`/`_id` pair, M2M
 * and content-type fields and tags as lists, custom fields as the stored dict. Read-only and derived fields
 * (cable ends, counts, created/last_updated) are left to the write.
 */
export function bodyOf(
  ctx: Ctx,
  model: Model,
  row: Row,
  links: Map<string, Map<string, string[]>>,
  statuses: ReadonlyMap<string, string>,
): Row {
  const m = modelAt(ctx, model);
  const id = String(row.id);
  const body: Row = {};
  for (const [name, fd] of m.fieldList) {
    if (fd.readOnly || fd.kind === "count" || fd.kind === "computed") continue;
    switch (fd.kind) {
      case "fk":
        body[name] = row[`${name}_id`] ?? null;
        break;
      case "status":
        body[name] = row.status_id ? (statuses.get(String(row.status_id)) ?? null) : null;
        break;
      case "gfk":
        body[`${name}_type`] = row[`${name}_type`] ?? null;
        body[`${name}_id`] = row[`${name}_id`] ?? null;
        break;
      case "m2m":
      case "cts":
        body[name] = links.get(name)?.get(id) ?? [];
        break;
      case "json":
        body[name] = parseJsonColumn(row[name]);
        break;
      case "bool":
        body[name] = row[name] === null || row[name] === undefined ? null : Boolean(row[name]);
        break;
      default:
        body[name] = row[name] ?? null;
    }
  }
  if (m.tags) body.tags = links.get("tags")?.get(id) ?? [];
  if (m.customFields) body.custom_fields = parseJsonColumn(row._custom_field_data) ?? {};
  return body;
}

/** Every status's slug by id, at `point` (undefined: live, in `ctx`'s transaction): one query. */
export async function statusSlugs(ctx: Ctx, point: number | undefined): Promise<Map<string, string>> {
  const rows = await (point === undefined ? ctx : ctxAt(ctx, point)).db
    .selectFrom("extras_status")
    .select(["id", "slug"])
    .execute();
  return new Map(rows.map((r) => [String(r.id), String(r.slug)]));
}

/** One version of an object. */
export interface VersionRef {
  contentType: string;
  id: string;
  seq: number;
  deleted: boolean;
}

/** The versions the transactions numbered `commits` wrote. */
export async function versionsOf(ctx: Ctx, commits: readonly number[]): Promise<VersionRef[]> {
  const out: VersionRef[] = [];
  for (const part of chunks(commits, CHUNK)) {
    const rows = await ctx.db
      .selectFrom(VERSION_TABLE)
      .select(["object_id", "seq", "deleted", "content_type"])
      .where("seq", "in", part)
      .execute();
    for (const r of rows)
      out.push({
        contentType: String(r.content_type),
        id: String(r.object_id),
        seq: Number(r.seq),
        deleted: Number(r.deleted) === 1,
      });
  }
  return out;
}

/**
 * The commit numbers of the transactions that wrote the change-log entries matching `where` (a request's,
 * or a set of entries): each entry's transaction is the first commit at or after its seq.
 */
export async function commitsOfChanges(
  ctx: Ctx,
  where: { requestId: string } | { changeIds: readonly string[] },
): Promise<Array<{ changeId: string; objectId: string; type: string; commit: number }>> {
  const oc = ctx.reg.get("extras.objectchange").table;
  let q = ctx.db
    .selectFrom(`${oc} as o`)
    .select([
      "o.id as id",
      "o.changed_object_id as object_id",
      "o.changed_object_type as type",
      sql<number>`(SELECT min(c.seq) FROM ${sql.table(COMMIT_TABLE)} c WHERE c.seq >= o.seq)`.as("commit"),
    ])
    .where("o.seq", "is not", null);
  q =
    "requestId" in where
      ? q.where("o.request_id", "=", where.requestId)
      : q.where("o.id", "in", [...where.changeIds]);
  const rows = await q.execute();
  return rows
    .filter((r) => r.commit !== null && r.commit !== undefined)
    .map((r) => ({
      changeId: String(r.id),
      objectId: String(r.object_id),
      type: String(r.type),
      commit: Number(r.commit),
    }));
}

/** The latest version number of each of `ids` (absent: no version): one query per 500 ids. */
export async function latestVersions(ctx: Ctx, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const part of chunks(ids, CHUNK)) {
    const rows = await ctx.db
      .selectFrom(VERSION_TABLE)
      .select(["object_id", sql<number>`max(seq)`.as("seq")])
      .where("object_id", "in", part)
      .groupBy("object_id")
      .execute();
    for (const r of rows) out.set(String(r.object_id), Number(r.seq));
  }
  return out;
}

/**
 * Since when an object has had, without a break, the values its version at `point` has in `columns` (a
 * reference's columns): the oldest commit number of that unbroken run of its versions. A revert breaking a
 * cycle of references defers the one set last (service/revert.ts). One query.
 */
export async function unchangedSince(
  ctx: Ctx,
  model: Model,
  id: string,
  point: number,
  columns: readonly string[],
): Promise<number> {
  const rows = (await ctx.db
    .selectFrom(`${model.table}${HISTORY_SUFFIX}`)
    .select([...columns, "_seq", "_deleted"])
    .where("id", "=", id)
    .where("_seq", "<=", point)
    .orderBy("_seq", "desc")
    .execute()) as Row[];
  const target = rows[0];
  if (!target) return 0;
  let since = Number(target._seq);
  for (const r of rows.slice(1)) {
    if (Number(r._deleted) === 1 || columns.some((c) => r[c] !== target[c])) break;
    since = Number(r._seq);
  }
  return since;
}
