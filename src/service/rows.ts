/**
 * Row access shared by reads and writes: fetch rows by id set-wise, and convert between stored rows
 * (column names) and records (field names, the shape validation rules see).
 */
import { CompiledQuery } from "kysely";
import { type Model, versionBefore } from "../registry/index.ts";
import { quoteId, TAGGED_COMPLETE, TAGGED_PREFIX } from "../store/db.ts";
import { joinTable } from "../store/ddl.ts";
import { type Ctx, definitionsMemo } from "./context.ts";

export type Row = Record<string, any>;

const CHUNK = 2000;

/** Split a list for IN (...) clauses. */
export function chunks<T>(list: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Several SELECTs of one shape (at least one) as one statement (`UNION ALL`, in order): one round trip. */
export function unionAll<Q extends { unionAll(other: Q): Q }>(queries: readonly Q[]): Q {
  return queries.slice(1).reduce((all, q) => all.unionAll(q), queries[0]!);
}

/**
 * The objects of `ids` from `memo`, in the order of `ids` (ids with no object skipped); those not in it are
 * loaded first, set-wise, by `load` (id → object pairs), and kept in it.
 */
export async function throughMemo<T>(
  memo: Map<string, T>,
  ids: readonly string[],
  load: (missing: string[]) => Promise<Iterable<readonly [string, T]>>,
): Promise<Map<string, T>> {
  const missing = ids.filter((id) => !memo.has(id));
  if (missing.length) for (const [id, o] of await load(missing)) memo.set(id, o);
  const out = new Map<string, T>();
  for (const id of ids) {
    const o = memo.get(id);
    if (o) out.set(id, o);
  }
  return out;
}

/** The entry `key` of the context's memo, made by `make` on first use (per transaction inside one). */
export function memoEntry<T>(ctx: Ctx, key: string, make: () => T): T {
  let v = ctx.memo.get(key) as T | undefined;
  if (v === undefined) {
    v = make();
    ctx.memo.set(key, v);
  }
  return v;
}

/** The statement reading rows of `model` whose `column` is one of `part` (at most CHUNK values). */
function whereInQuery(ctx: Ctx, model: Model, column: string, part: readonly unknown[]) {
  const marks = part.map((_v, i) => ctx.store.dialect.placeholder(i + 1)).join(", ");
  return CompiledQuery.raw(`SELECT * FROM ${quoteId(model.table)} WHERE ${quoteId(column)} IN (${marks})`, [
    ...part,
  ]);
}

/** The distinct non-null values of a lookup and, when `keyed`, its memo key (else ""). */
function lookupKey(model: Model, column: string, values: readonly unknown[], keyed = true) {
  const uniq = [...new Set(values.filter((v) => v !== null && v !== undefined))];
  return { uniq, key: keyed ? `${model.table}|${column}|${uniq.map(String).sort().join(",")}` : "" };
}

/** Memo key of reads sent ahead (`prefetchRows`): lookup key → the function giving the rows. */
const PREFETCHED = "prefetched";

/**
 * Send the read of `rowsWhereIn(ctx, model, column, values)` with the transaction's next statement
 * (`Dialect.prefetch`), so that the next such `rowsWhereIn` in this transaction costs no round trip of its
 * own. At most one chunk of values; more are left to `rowsWhereIn`.
 */
export async function prefetchRows(
  ctx: Ctx,
  model: Model,
  column: string,
  values: readonly unknown[],
): Promise<void> {
  const { uniq, key } = lookupKey(model, column, values);
  if (!uniq.length || uniq.length > CHUNK) return;
  const rows = await ctx.store.dialect.prefetch(ctx.db, whereInQuery(ctx, model, column, uniq));
  memoEntry(ctx, PREFETCHED, () => new Map<string, () => Promise<unknown[]>>()).set(key, rows);
}

/**
 * Fetch rows of `model` whose `column` is in `values` (one query per 2000 values). `known`, when it answers,
 * gives the rows without a query (`selfReferences`); a read sent ahead (`prefetchRows`) answers once.
 */
export async function rowsWhereIn(
  ctx: Ctx,
  model: Model,
  column: string,
  values: readonly unknown[],
  known?: () => Row[] | undefined,
): Promise<Row[]> {
  const phase = readBackMemo(ctx);
  const prefetched = ctx.memo.get(PREFETCHED) as Map<string, () => Promise<Row[]>> | undefined;
  // The memo key (sorted values) is built only where a memo may answer: reads of many ids skip it.
  const { uniq, key } = lookupKey(model, column, values, !!phase || !!prefetched?.size);
  if (!uniq.length) return [];
  const kept = (phase?.get(key) as Row[] | undefined) ?? known?.();
  if (kept) {
    phase?.set(key, kept);
    return kept;
  }
  const ahead = prefetched?.get(key);
  const out: Row[] = [];
  if (ahead) {
    prefetched?.delete(key);
    out.push(...(await ahead()));
  } else
    for (const part of chunks(uniq))
      out.push(...((await ctx.db.executeQuery(whereInQuery(ctx, model, column, part))).rows as Row[]));
  phase?.set(key, out);
  return out;
}

/** Memo key of the read-back phase (`beginReadBack`): query → rows. */
const READ_BACK = "readBack";

/**
 * Start the read-back phase of a write transaction: its writes are done and it reads them back, to render
 * the response and then the change log's post-change snapshots. Until `endReadBack` (the next write),
 * `rowsWhereIn` answers a repeated query from memory, so the snapshots do not read again what the
 * response read (rows by id, reverse relations such as `nat_outside`). Rows are shared, never mutated.
 */
export function beginReadBack(ctx: Ctx): void {
  if (ctx.db !== ctx.store.db) ctx.memo.set(READ_BACK, new Map());
}

/**
 * The read-back phase's memo (query key → result), or undefined outside the phase: for reads that give the
 * same answer whatever the base URL (rows, counts), keyed by the caller.
 */
export function readBackMemo(ctx: Ctx): Map<string, unknown> | undefined {
  return ctx.memo.get(READ_BACK) as Map<string, unknown> | undefined;
}

/** End the read-back phase: a write follows, so nothing read before it may be reused. */
export function endReadBack(ctx: Ctx): void {
  ctx.memo.delete(READ_BACK);
}

/** Memo key of the changes written in the current transaction (service/write.ts `track`). */
const PENDING_KEY = "pendingChanges";
/** Memo flag: an afterWrite hook wrote rows the change list does not name (service/hooks.ts `runHook`). */
export const UNTRACKED_KEY = "untrackedWrites";

/** A change noted for the change log: what `changeList` holds (service/write.ts adds pre-change data). */
export interface NotedChange {
  model: Model;
  id: string;
  action: "create" | "update" | "delete";
  /**
   * False for rows Nautobot writes without signals (a device's components instantiated from its type's
   * templates by `bulk_create`): noted so the request knows what it wrote, never change-logged or webhooked.
   */
  logged?: false;
}

/** The change list of the current transaction, created empty on first use (service/write.ts `track`). */
export function changeList<C extends NotedChange = NotedChange>(ctx: Ctx): C[] {
  return memoEntry(ctx, PENDING_KEY, (): C[] => []);
}

/** The change list of the current transaction as it stands, undefined before its first change. */
function noted(ctx: Ctx): readonly NotedChange[] | undefined {
  return ctx.memo.get(PENDING_KEY) as NotedChange[] | undefined;
}

/** Take the change list of the current transaction away (service/write.ts `flushChanges`). */
export function takeChangeList<C extends NotedChange = NotedChange>(ctx: Ctx): C[] {
  const list = changeList<C>(ctx);
  ctx.memo.delete(PENDING_KEY);
  return list;
}

/**
 * The changes of the current transaction when every written row is in them: undefined outside a write or
 * when a hook wrote rows the list does not name (`UNTRACKED_KEY`).
 */
function completeChanges(ctx: Ctx): readonly NotedChange[] | undefined {
  const list = noted(ctx);
  return list && !ctx.memo.get(UNTRACKED_KEY) ? list : undefined;
}

/**
 * Where the current write transaction's change list stands (its length), to tell later what it wrote since
 * (`writtenSince`); undefined outside a write transaction.
 */
export function changeMark(ctx: Ctx): number | undefined {
  if (!ctx.db.isTransaction) return undefined;
  return noted(ctx)?.length ?? 0;
}

/**
 * Whether the current transaction may have written rows of `modelKey` since `mark` (`changeMark`): a change
 * of that model noted since, or a hook that wrote rows the list does not name.
 */
export function writtenSince(ctx: Ctx, mark: number, modelKey: string): boolean {
  if (ctx.memo.get(UNTRACKED_KEY)) return true;
  return (noted(ctx) ?? []).slice(mark).some((c) => c.model.key === modelKey);
}

/**
 * What the current transaction wrote, for counts that need no query: the ids of `model` it created and the
 * models it wrote rows of (its change list); undefined when a hook wrote rows the list does not name, or
 * outside a write. A row pointing at an object created in this transaction was written in it too, so a
 * model not written has no row pointing at it.
 */
export function writtenHere(
  ctx: Ctx,
  model: Model,
): { created: Set<string>; models: Set<string> } | undefined {
  const list = completeChanges(ctx);
  if (!list) return undefined;
  const created = new Set<string>();
  const models = new Set<string>();
  for (const c of list) {
    models.add(c.model.key);
    if (c.action === "create" && c.model.key === model.key) created.add(c.id);
  }
  return { created, models };
}

/**
 * The rows of `model` whose `via` points at one of `rows` (of the same model), known without a query when
 * this transaction's only writes of `model` are the creates of `rows`: a row pointing at an object created
 * in it was written in it, so it is one of `rows` (an IP address's `nat_outside` in the response to its
 * create). Undefined otherwise.
 */
export function selfReferences(ctx: Ctx, model: Model, rows: readonly Row[], via: string): Row[] | undefined {
  const list = completeChanges(ctx);
  if (!list) return undefined;
  const ids = new Set(rows.map((r) => String(r.id)));
  const created = new Set<string>();
  for (const c of list) {
    if (c.model.key !== model.key) continue;
    if (c.action !== "create" || !ids.has(c.id)) return undefined;
    created.add(c.id);
  }
  if (created.size !== ids.size) return undefined;
  return rows.filter((r) => r[via] !== null && r[via] !== undefined && ids.has(String(r[via])));
}

/** Fetch rows by id, as a map. */
export async function rowsById(ctx: Ctx, model: Model, ids: readonly unknown[]): Promise<Map<string, Row>> {
  const rows = await rowsWhereIn(ctx, model, "id", ids);
  return new Map(rows.map((r) => [r.id as string, r]));
}

/**
 * The models that carry (or once carried) a tag, from the `inventory_meta` rows `tagged:<model>` (store/db.ts
 * TAGGED_PREFIX), cached with the definitions: a model outside the set has no tags, so representing it
 * needs no tag query. Undefined when the list is not known to be complete (a database not yet migrated).
 */
export async function taggedModels(ctx: Ctx): Promise<ReadonlySet<string> | undefined> {
  const key = "taggedModels";
  const memo = definitionsMemo(ctx);
  if (memo.has(key)) return memo.get(key) as ReadonlySet<string> | undefined;
  const rows = await ctx.db
    .selectFrom("inventory_meta")
    .select("key")
    .where((eb: any) => eb.or([eb("key", "like", `${TAGGED_PREFIX}%`), eb("key", "=", TAGGED_COMPLETE)]))
    .execute();
  const keys = rows.map((r) => String(r.key));
  const set = keys.includes(TAGGED_COMPLETE)
    ? new Set(keys.filter((k) => k.startsWith(TAGGED_PREFIX)).map((k) => k.slice(TAGGED_PREFIX.length)))
    : undefined;
  memo.set(key, set);
  return set;
}

/** Status rows (id → row), loaded once per request. */
export async function statusesById(ctx: Ctx): Promise<Map<string, Row>> {
  const key = "statuses";
  const memo = definitionsMemo(ctx);
  let m = memo.get(key) as Map<string, Row> | undefined;
  if (!m) {
    const rows = await ctx.db.selectFrom("extras_status").selectAll().execute();
    m = new Map(rows.map((r) => [r.id as string, r]));
    memo.set(key, m);
  }
  return m;
}

/** Statuses enabled for a content type: slug → status row (Status.objects.get_for_model). */
export async function statusesFor(ctx: Ctx, modelKey: string): Promise<Map<string, Row>> {
  const key = `statuses:${modelKey}`;
  const memo = definitionsMemo(ctx);
  let m = memo.get(key) as Map<string, Row> | undefined;
  if (!m) {
    const rows = await ctx.db
      .selectFrom("extras_status as s")
      .innerJoin("extras_status_content_types as ct", "ct.source_id", "s.id")
      .selectAll("s")
      .where("ct.content_type", "=", modelKey)
      .orderBy("s.name")
      .execute();
    m = new Map(rows.map((r) => [r.slug as string, r]));
    memo.set(key, m);
  }
  return m;
}

/** A custom field definition as stored. */
export interface CustomFieldDef {
  id: string;
  name: string;
  /** The field's slug: the key of `custom_fields` dicts at API 1.4+ (`customFieldKey`). */
  slug: string;
  type: string;
  required: boolean;
  default: unknown;
  filter_logic: string;
  validation_minimum: number | null;
  validation_maximum: number | null;
  validation_regex: string;
  choices: string[];
}

/**
 * The key of a custom field in `custom_fields` dicts on the wire: its name at API 1.2 and 1.3, its slug from
 * 1.4 (nautobot-api-core.md §1.6, Nautobot 1.6 `nautobot/extras/api/customfields.py`). Stored data stays keyed
 * by name.
 */
export function customFieldKey(ctx: Ctx, def: CustomFieldDef): string {
  return versionBefore(ctx.reg.apiVersion, "1.4") ? def.name : def.slug;
}

/** Custom fields assigned to a content type, ordered by weight then name; once per request. */
export async function customFieldsFor(ctx: Ctx, modelKey: string): Promise<CustomFieldDef[]> {
  const key = `cf:${modelKey}`;
  const memo = definitionsMemo(ctx);
  let defs = memo.get(key) as CustomFieldDef[] | undefined;
  if (!defs) {
    const rows = await ctx.db
      .selectFrom("extras_customfield as c")
      .innerJoin("extras_customfield_content_types as ct", "ct.source_id", "c.id")
      .selectAll("c")
      .where("ct.content_type", "=", modelKey)
      .orderBy("c.weight")
      .orderBy("c.name")
      .execute();
    defs = rows.map((r) => ({
      id: r.id,
      name: r.name,
      slug: r.slug || r.name,
      type: r.type,
      required: !!r.required,
      default: r.default == null ? null : JSON.parse(r.default),
      filter_logic: r.filter_logic,
      validation_minimum: r.validation_minimum,
      validation_maximum: r.validation_maximum,
      validation_regex: r.validation_regex ?? "",
      choices: [] as string[],
    }));
    // Choices of selection fields: rows of custom-field choices, by weight then value (Nautobot 1.6).
    const select = defs.filter((d) => d.type === "select" || d.type === "multi-select");
    if (select.length) {
      const choices = await ctx.db
        .selectFrom("extras_customfieldchoice")
        .select(["field_id", "value"])
        .where(
          "field_id",
          "in",
          select.map((d) => d.id),
        )
        .orderBy("weight")
        .orderBy("value")
        .execute();
      for (const c of choices) select.find((d) => d.id === c.field_id)?.choices.push(c.value as string);
    }
    memo.set(key, defs);
  }
  return defs;
}

/** Convert a stored row to a record keyed by field name (FK → id, status → slug, json parsed). */
export async function toRecord(
  ctx: Ctx,
  model: Model,
  row: Row,
  /** Many-to-many values loaded set-wise (`toRecords`): field → row id → values. */
  links?: Map<string, Map<string, unknown[]>>,
): Promise<Row> {
  const rec: Row = { id: row.id };
  for (const [name, fd] of model.fieldList) {
    switch (fd.kind) {
      case "fk":
        rec[name] = row[`${name}_id`] ?? null;
        break;
      case "status": {
        const st = row.status_id ? (await statusesById(ctx)).get(row.status_id) : undefined;
        rec[name] = st ? st.slug : null;
        break;
      }
      case "gfk":
        rec[`${name}_type`] = row[`${name}_type`] ?? null;
        rec[`${name}_id`] = row[`${name}_id`] ?? null;
        break;
      case "json":
        rec[name] = row[name] == null ? null : JSON.parse(row[name]);
        break;
      case "bool":
        rec[name] = row[name] == null ? null : !!row[name];
        break;
      case "m2m":
      case "cts": {
        const known = links?.get(name);
        if (known) {
          rec[name] = known.get(row.id) ?? [];
          break;
        }
        rec[name] = (await m2mPairs(ctx, model, name, [row.id])).map(([, target]) => target);
        break;
      }
      case "count":
      case "computed":
        break;
      default:
        rec[name] = row[name] ?? null;
    }
  }
  if (model.customFields)
    rec.custom_fields = row._custom_field_data ? JSON.parse(row._custom_field_data) : {};
  return rec;
}

/**
 * Records of many rows, their many-to-many values loaded set-wise: one query per many-to-many field (in
 * slices of 500 ids) instead of one per row and field. @returns row id → record
 */
export async function toRecords(ctx: Ctx, model: Model, rows: Row[]): Promise<Map<string, Row>> {
  const links = new Map<string, Map<string, unknown[]>>();
  const ids = rows.map((r) => r.id as string);
  for (const [name, fd] of model.fieldList) {
    if (fd.kind !== "m2m" && fd.kind !== "cts") continue;
    const byRow = new Map<string, unknown[]>();
    for (const [source, target] of await m2mPairs(ctx, model, name, ids))
      byRow.set(source, [...(byRow.get(source) ?? []), target]);
    links.set(name, byRow);
  }
  const out = new Map<string, Row>();
  for (const r of rows) out.set(r.id as string, await toRecord(ctx, model, r, links));
  return out;
}

/** Load one record by id, or undefined. */
export async function getRecord(
  ctx: Ctx,
  model: Model,
  id: string | null | undefined,
): Promise<Row | undefined> {
  if (!id) return undefined;
  const row = await ctx.db.selectFrom(model.table).selectAll().where("id", "=", id).executeTakeFirst();
  return row ? toRecord(ctx, model, row) : undefined;
}

/** Column name of a field for equality conditions (FK → `<f>_id`). */
export function columnOf(model: Model, field: string): string {
  const fd = model.fields[field];
  if (!fd) return field;
  if (fd.kind === "fk") return `${field}_id`;
  if (fd.kind === "status") return "status_id";
  return field;
}

/** Find records matching equality conditions keyed by field name (status by slug, ip by text). */
export async function findRecords(
  ctx: Ctx,
  model: Model,
  where: Record<string, unknown>,
  limit = 1000,
): Promise<Row[]> {
  let q = ctx.db.selectFrom(model.table).selectAll();
  for (const [field, value] of Object.entries(where)) {
    const fd = model.fields[field];
    if (fd?.kind === "status") {
      const st = (await statusesFor(ctx, model.key)).get(String(value));
      q = q.where("status_id", "=", st ? st.id : "__none__");
      continue;
    }
    const col = field in model.fields ? columnOf(model, field) : field;
    q = value === null ? q.where(col, "is", null) : q.where(col, "=", value as any);
  }
  const rows = await q.limit(limit).execute();
  const out: Row[] = [];
  for (const r of rows) out.push(await toRecord(ctx, model, r));
  return out;
}

/**
 * The links of a many-to-many field for `ids`, from its join table, as (id given, id on the other side)
 * pairs: from the sources by default (a device's `tagged_vlans`; a content-types field gives content types),
 * or from the targets with `from: "target"` (a VLAN's tagged interfaces). One query per 2000 ids.
 */
export async function m2mPairs(
  ctx: Ctx,
  model: Model,
  field: string,
  ids: readonly string[],
  from: "source" | "target" = "source",
): Promise<Array<[string, string]>> {
  const targetColumn = model.fields[field]?.kind === "cts" ? "content_type" : "target_id";
  const [given, other] = from === "source" ? ["source_id", targetColumn] : [targetColumn, "source_id"];
  const out: Array<[string, string]> = [];
  for (const part of chunks([...new Set(ids)])) {
    const rows = await ctx.db
      .selectFrom(joinTable(model, field))
      .select([given, other])
      .where(given, "in", part)
      .execute();
    for (const r of rows) out.push([String(r[given]), String(r[other])]);
  }
  return out;
}

/** The (object id, tag id) pairs of objects of one model: one query per 2000 ids. */
export async function tagPairs(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const part of chunks([...new Set(ids)])) {
    const rows = await ctx.db
      .selectFrom("extras_taggeditem")
      .select(["object_id", "tag_id"])
      .where("content_type", "=", model.key)
      .where("object_id", "in", part)
      .execute();
    for (const r of rows) out.push([String(r.object_id), String(r.tag_id)]);
  }
  return out;
}
