/**
 * Representations: full, nested and brief JSON of stored rows (Nautobot 1.6 serializers, API 1.2).
 *
 * Related objects are loaded set-wise: for a page of rows, one query per relation (FK targets, status,
 * M2M, tags, counts, computed values), recursively for the nested representations of the targets, with a
 * per-request cache so that an object referenced by many rows is loaded and rendered once.
 *
 * Field order follows Nautobot: `id`, `display`, `url`, declared fields, `created`, `last_updated`,
 * `tags`, `custom_fields` (full); `display`, `id`, `url`, nested fields (nested).
 */

import { sql } from "kysely";
import { hasNotes, hasRelationships, type Model } from "../registry/index.ts";
import type { CountField, FieldDef, FkField } from "../registry/meta.ts";
import { rawRows } from "../store/db.ts";
import { joinTable } from "../store/ddl.ts";
import { loadComputed } from "./computed.ts";
import { type Ctx, modelAt } from "./context.ts";
import { computedFieldsFor, relationshipsFor } from "./object-extras.ts";
import {
  changeMark,
  chunks,
  customFieldKey,
  customFieldsFor,
  memoEntry,
  type Row,
  readBackMemo,
  rowsById,
  statusesById,
  taggedModels,
  throughMemo,
  unionAll,
  writtenHere,
  writtenSince,
} from "./rows.ts";

/** `full`, `nested`, or an explicit list of fields (slim serializers such as circuit terminations). */
export type Mode = "full" | "nested" | { fields: readonly string[] };

/** Options of a representation call. */
export interface RepresentOptions {
  /** Drop `config_context` (`?exclude=config_context`). */
  excludeConfigContext?: boolean;
  /**
   * Opt-in keys asked for with `?include=` (`computed_fields`, `relationships`). Undefined renders them
   * all: Nautobot prunes opt-in fields on GET only, so write responses and webhook payloads carry them
   * (Nautobot 1.6 `OptInFieldsMixin`).
   */
  include?: ReadonlySet<string>;
  /**
   * A create's response: Nautobot 1.6 serializes the saved instance, without the viewset queryset's
   * annotations, so count fields and computed fields with an `annotation` are left out or null.
   */
  created?: boolean;
  /**
   * Objects nested in another representation (`nestedFor`): Nautobot 1.6 reaches them through the
   * relation, without the viewset queryset's annotations, so count fields and computed fields with an
   * `annotation` are left out or null there (a region's `parent` has `_depth` but no `site_count`); a
   * top-level `?brief=` representation keeps them.
   */
  related?: boolean;
  /**
   * The web interface: FKs declared `asId` render as nested objects all the same, so pages link them and
   * forms pre-fill them (the REST wire keeps Nautobot's bare ids).
   */
  nestIds?: boolean;
  /**
   * Full forms limited to these keys (fields, `tags`, `custom_fields`, `created`, `last_updated`,
   * `notes_url`), besides `id`, `display` and `url`: a web list page renders its columns only, and what it
   * does not show (paths, counts, tags, other relations) is not loaded. Each kept key has its full form's
   * value. Ignored in nested and slim forms.
   */
  only?: ReadonlySet<string>;
}

type Obj = Record<string, unknown>;

/** Absolute (or relative when `baseUrl` is "") detail URL of an object. */
export function detailUrl(ctx: Ctx, model: Model, id: string): string {
  return `${ctx.baseUrl}/api/${model.app}/${model.path}/${id}/`;
}

const fieldCache = new WeakMap<Model, Map<string, Array<readonly [string, FieldDef]>>>();

/** The fields rendered in a mode (hidden and write-only fields never are); derived once per model and mode. */
function fieldsFor(model: Model, mode: Mode): Array<readonly [string, FieldDef]> {
  const key = mode === "full" || mode === "nested" ? mode : mode.fields.join(",");
  let byMode = fieldCache.get(model);
  if (!byMode) {
    byMode = new Map();
    fieldCache.set(model, byMode);
  }
  let list = byMode.get(key);
  if (!list) {
    if (mode === "full") list = model.fieldList.filter(([, d]) => !d.hidden && !d.writeOnly);
    else {
      const names = mode === "nested" ? model.nested : mode.fields;
      list = names.map((n) => [n, model.fields[n]!] as const).filter(([, d]) => d !== undefined);
    }
    byMode.set(key, list);
  }
  return list;
}

/**
 * Whether an FK renders as a bare id in this mode: always where declared `asId` (Nautobot 1.6's
 * `PrimaryKeyRelatedField`s: inventory item `parent`, device redundancy group `secrets_group`), in nested
 * forms for a component's `cable`.
 */
function fkAsId(name: string, fd: FkField, mode: Mode, opts: RepresentOptions): boolean {
  return (fd.asId === true && !opts.nestIds) || (mode !== "full" && name === "cable");
}

/** Nested representations of `ids` of a model, from the request cache or loaded set-wise. */
export async function nestedFor(
  ctx: Ctx,
  model: Model,
  ids: readonly unknown[],
  fields?: readonly string[],
): Promise<Map<string, Obj>> {
  const wanted = [...new Set(ids.filter((x): x is string => typeof x === "string"))];
  /** `wanted` in `form`, through the request's cache `key`. */
  const cached = (key: string, form: "nested" | { fields: [] }) => {
    let cache = ctx.nestedCache.get(key);
    if (!cache) {
      cache = new Map();
      ctx.nestedCache.set(key, cache);
    }
    return throughMemo(cache, wanted, async (missing) => {
      const rows = await rowsById(ctx, model, missing);
      return (await represent(ctx, model, [...rows.values()], form, { related: true })).map(
        (o): [string, Obj] => [o.id as string, o],
      );
    });
  };
  // Display-only form (id, url, display): cached like nested ones, breaks display cycles.
  if (fields && fields.length === 0) return cached(`${model.key}#display`, { fields: [] });
  if (fields) {
    const rows = await rowsById(ctx, model, wanted);
    const objs = await represent(ctx, model, [...rows.values()], { fields }, { related: true });
    return new Map(objs.map((o) => [o.id as string, o]));
  }
  return cached(model.key, "nested");
}

function renderScalar(fd: FieldDef, v: unknown, mode: Mode): unknown {
  if (fd.hashed) return null;
  switch (fd.kind) {
    case "str":
    case "text":
    case "slug":
    case "date":
    case "datetime":
    case "mac":
    case "ct":
    case "ip":
      return v ?? (fd.nullable ? null : fd.kind === "ip" ? null : "");
    case "int":
      return v ?? null;
    case "bool":
      return v === null || v === undefined ? (fd.nullable ? null : false) : !!v;
    case "decimal":
      return v === null || v === undefined ? null : Number(v).toFixed(fd.places);
    case "json":
      return v === null || v === undefined ? (fd.default ?? null) : JSON.parse(v as string);
    case "choice": {
      if (fd.plain || (fd.nestedAuto && mode !== "full")) return v ?? "";
      if (v === null || v === undefined || v === "") return null;
      const c = fd.choices.find(([val]) => val === v || String(val) === String(v));
      return { value: fd.int ? Number(v) : v, label: c ? c[1] : String(v) };
    }
    default:
      return v;
  }
}

/**
 * Render rows of a model. Rows are raw stored rows (column names). Returns objects in row order.
 */
export async function represent(
  ctx: Ctx,
  model: Model,
  rows: readonly Row[],
  mode: Mode,
  opts: RepresentOptions = {},
): Promise<Obj[]> {
  if (!rows.length) return [];
  model = modelAt(ctx, model);
  const only = mode === "full" ? opts.only : undefined;
  const fields = only ? fieldsFor(model, mode).filter(([n]) => only.has(n)) : fieldsFor(model, mode);
  /** Whether a key outside the declared fields (tags, custom fields, stamps…) is rendered. */
  const keeps = (key: string) => !only || only.has(key);
  const ids = rows.map((r) => r.id as string);
  const shown = new Set(fields.map(([n]) => n));
  const uses = (model.displayUses ?? []).filter(
    (n) => !shown.has(n) || mode !== "full" || model.fields[n]?.kind === "gfk",
  );

  // --- set-wise loads -------------------------------------------------------------------------
  const fkMaps = new Map<string, Map<string, Obj>>();
  const relFields = new Set<string>([...fields.map(([n]) => n), ...uses]);
  for (const name of relFields) {
    const fd = model.fields[name];
    if (fd?.kind === "gfk" && uses.includes(name)) {
      // A generic relation read by `display`: display-only forms of its targets, per content type.
      const byType = new Map<string, unknown[]>();
      for (const r of rows) {
        const t = r[`${name}_type`];
        if (t && r[`${name}_id`]) byType.set(t, [...(byType.get(t) ?? []), r[`${name}_id`]]);
      }
      const out = new Map<string, Obj>();
      for (const [t, tids] of byType) {
        const target = ctx.reg.models.get(t);
        if (!target) continue;
        for (const [id, o] of await nestedFor(ctx, target, tids, [])) out.set(`${t}:${id}`, o);
      }
      fkMaps.set(name, out);
      continue;
    }
    if (fd?.kind !== "fk") continue;
    if (shown.has(name) && fkAsId(name, fd, mode, opts) && !uses.includes(name)) continue;
    const target = ctx.reg.get(fd.to);
    const values = rows.map((r) => r[`${name}_id`]);
    // A relation read only by `display` gets the display-only form (no nested fields, no cycles).
    const displayOnly = !shown.has(name) || (fkAsId(name, fd, mode, opts) && uses.includes(name));
    fkMaps.set(name, await nestedFor(ctx, target, values, displayOnly ? [] : fd.nestedFields));
  }
  const needStatus = fields.some(([, d]) => d.kind === "status");
  const statuses = needStatus ? await statusesById(ctx) : undefined;

  const m2mMaps = new Map<string, Map<string, Obj[]>>();
  const ctsMaps = new Map<string, Map<string, string[]>>();
  const gfkMaps = new Map<string, Map<string, Obj>>();
  const countMaps = new Map<string, Map<string, number>>();
  const computed = new Map<string, unknown[]>();
  // Counts a response leaves out (see `RepresentOptions.created` and `related`) are not counted.
  const skipAnnotations = opts.related || (opts.created && mode === "full");
  const countFields = fields.filter(
    (f): f is [string, CountField] => f[1].kind === "count" && (!skipAnnotations || !!f[1].property),
  );
  if (countFields.length)
    for (const [k, v] of await countsFor(ctx, model, countFields, ids)) countMaps.set(k, v);
  for (const [name, fd] of fields) {
    if (fd.kind === "m2m") {
      const jt = joinTable(model, name);
      const links: Row[] = [];
      for (const part of chunks(ids)) {
        links.push(...(await ctx.db.selectFrom(jt).selectAll().where("source_id", "in", part).execute()));
      }
      const targets = await nestedFor(
        ctx,
        ctx.reg.get(fd.to),
        links.map((l) => l.target_id),
      );
      const byRow = new Map<string, Obj[]>();
      for (const l of links) {
        const t = targets.get(l.target_id);
        if (!t) continue;
        const list = byRow.get(l.source_id) ?? [];
        list.push(t);
        byRow.set(l.source_id, list);
      }
      for (const list of byRow.values())
        list.sort((a, b) => String(a.display).localeCompare(String(b.display)));
      m2mMaps.set(name, byRow);
    } else if (fd.kind === "cts") {
      const jt = joinTable(model, name);
      const byRow = new Map<string, string[]>();
      for (const part of chunks(ids)) {
        for (const l of await ctx.db.selectFrom(jt).selectAll().where("source_id", "in", part).execute()) {
          const list = byRow.get(l.source_id) ?? [];
          list.push(l.content_type);
          byRow.set(l.source_id, list);
        }
      }
      for (const list of byRow.values()) list.sort();
      ctsMaps.set(name, byRow);
    } else if (fd.kind === "gfk" && !fd.bare) {
      const byType = new Map<string, string[]>();
      for (const r of rows) {
        const t = r[`${name}_type`];
        const id = r[`${name}_id`];
        if (t && id) byType.set(t, [...(byType.get(t) ?? []), id]);
      }
      const out = new Map<string, Obj>();
      for (const [t, tids] of byType) {
        const target = ctx.reg.models.get(t);
        if (!target) continue;
        const objs = await nestedFor(ctx, target, tids);
        for (const [id, o] of objs) out.set(`${t}:${id}`, o);
      }
      gfkMaps.set(name, out);
    } else if (fd.kind === "computed") {
      if (fd.loader === "config_context" && opts.excludeConfigContext) continue;
      computed.set(name, await loadComputed(ctx, model, rows, name, fd, mode));
    }
  }

  let tagMap: Map<string, Obj[]> | undefined;
  if (mode === "full" && model.tags && keeps("tags")) tagMap = await tagsFor(ctx, model, ids);
  const cfDefs =
    mode === "full" && model.customFields && keeps("custom_fields")
      ? await customFieldsFor(ctx, model.key)
      : undefined;
  const full = mode === "full";
  const notes = full && hasNotes(model) && keeps("notes_url");
  const wants = (key: string) => full && keeps(key) && (!opts.include || opts.include.has(key));
  const withComputed = model.customFields && wants("computed_fields");
  const relMap =
    hasRelationships(model) && wants("relationships") ? await relationshipsFor(ctx, model, ids) : undefined;

  // --- assemble -------------------------------------------------------------------------------
  const out: Obj[] = [];
  rows.forEach((row, i) => {
    const rel: Obj = {};
    for (const [name, map] of fkMaps) {
      const fd = model.fields[name];
      const key = fd?.kind === "gfk" ? `${row[`${name}_type`]}:${row[`${name}_id`]}` : row[`${name}_id`];
      rel[name] = map.get(key) ?? null;
    }
    const obj: Obj = {};
    const display = displayOf(model, row, rel);
    const id = model.key === "extras.contenttype" ? Number(row.id) : row.id;
    if (mode === "full") {
      obj.id = id;
      obj.display = display;
      obj.url = detailUrl(ctx, model, row.id);
    } else {
      obj.display = display;
      obj.id = id;
      obj.url = detailUrl(ctx, model, row.id);
    }
    for (const [name, fd] of fields) {
      if ((opts.created && mode === "full") || opts.related) {
        const annotation =
          fd.kind === "count"
            ? fd.property
              ? undefined
              : "absent"
            : fd.kind === "computed"
              ? fd.annotation
              : undefined;
        if (annotation === "absent") continue;
        if (annotation === "null") {
          obj[name] = null;
          continue;
        }
      }
      switch (fd.kind) {
        case "fk":
          obj[name] = fkAsId(name, fd, mode, opts) ? (row[`${name}_id`] ?? null) : (rel[name] ?? null);
          break;
        case "status": {
          const st = row.status_id ? statuses?.get(row.status_id) : undefined;
          obj[name] = st ? { value: st.slug, label: st.name } : null;
          break;
        }
        case "m2m":
          obj[name] = m2mMaps.get(name)?.get(row.id) ?? [];
          break;
        case "cts":
          obj[name] = ctsMaps.get(name)?.get(row.id) ?? [];
          break;
        case "gfk": {
          const t = row[`${name}_type`] ?? null;
          const id = row[`${name}_id`] ?? null;
          // Nested forms follow Nautobot's nested serializers: the object alone, or the bare id.
          if (mode === "full" || fd.bare) {
            if (mode === "full") obj[`${name}_type`] = t;
            obj[`${name}_id`] = id;
          }
          if (fd.bare) break;
          obj[name] = t && id ? (gfkMaps.get(name)?.get(`${t}:${id}`) ?? null) : null;
          break;
        }
        case "count":
          obj[name] = countMaps.get(name)?.get(row.id) ?? 0;
          break;
        case "computed": {
          const vals = computed.get(name);
          if (vals) obj[name] = vals[i];
          break;
        }
        default:
          obj[name] = renderScalar(fd, row[name], mode);
      }
    }
    if (mode === "full") {
      if (model.changelog) {
        if (keeps("created")) obj.created = row.created ?? null;
        if (keeps("last_updated")) obj.last_updated = row.last_updated ?? null;
      }
      if (tagMap) obj.tags = tagMap.get(row.id) ?? [];
      if (notes) obj.notes_url = `${detailUrl(ctx, model, row.id)}notes/`;
      if (cfDefs) {
        const data = row._custom_field_data ? JSON.parse(row._custom_field_data) : {};
        const cf: Obj = {};
        for (const d of cfDefs) cf[customFieldKey(ctx, d)] = data[d.name] ?? null;
        obj.custom_fields = cf;
      }
      if (withComputed) obj.computed_fields = {};
      if (relMap) obj.relationships = relMap.get(row.id) ?? {};
      if (model.keyOrder) {
        out.push(reordered(obj, model.keyOrder));
        return;
      }
    } else if (mode !== "nested") {
      // Slim nested forms (an FK's `nestedFields`) may name the change-log stamps and the notes URL, as
      // Nautobot 1.6's FrontPortRearPortSerializer (`created`, `last_updated`) and
      // CircuitCircuitTerminationSerializer (and `notes_url`) do.
      for (const n of mode.fields) {
        if (n === "created" || n === "last_updated") obj[n] = row[n] ?? null;
        else if (n === "notes_url") obj.notes_url = `${detailUrl(ctx, model, row.id)}notes/`;
      }
    } else if (model.nestedKeyOrder) {
      out.push(reordered(obj, model.nestedKeyOrder));
      return;
    }
    out.push(obj);
  });
  if (withComputed) await computedFieldsFor(ctx, model, out);
  return out;
}

/** `obj` with `order`'s keys first (those present), then the rest in their order. */
function reordered(obj: Obj, order: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of order) if (k in obj) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[k] = v;
  return out;
}

/** The `display` string of a row. */
const fkNames = new WeakMap<Model, Array<readonly [string, string]>>();

function displayOf(model: Model, row: Row, rel: Obj): string {
  const d = model.display;
  if (typeof d === "function") {
    let fks = fkNames.get(model);
    if (!fks) {
      fks = model.fieldList.filter(([, fd]) => fd.kind === "fk").map(([n]) => [n, `${n}_id`] as const);
      fkNames.set(model, fks);
    }
    // A copy of the row with FK fields readable under their field names (target ids). A copy, not
    // `Object.create(row)`: making each freshly read row a prototype cost V8 ~6-12 ms per 1,000 rows.
    const rec: Row = { ...row };
    for (const [name, column] of fks) rec[name] = row[column] ?? null;
    return d(rec, rel);
  }
  const key = d ?? (model.fields.name ? "name" : undefined);
  return key ? String(row[key] ?? "") : String(row.id);
}

/** Tags of rows: nested tag objects (plus created/last_updated, as Nautobot's TagSerializerField). */
async function tagsFor(ctx: Ctx, model: Model, ids: string[]): Promise<Map<string, Obj[]>> {
  const tagModel = ctx.reg.get("extras.tag");
  const byRow = new Map<string, Obj[]>();
  // Whether the model carries any tag: from the list kept with the definitions (rows.ts taggedModels), else
  // an index probe once per data token. Untagged models skip the query.
  const taggedKey = `tagged:${model.key}`;
  const known = await taggedModels(ctx);
  let tagged = known ? known.has(model.key) : (ctx.memo.get(taggedKey) as boolean | undefined);
  if (tagged === undefined) {
    const d = ctx.store.dialect;
    const rows = await rawRows(
      ctx.db,
      `SELECT 1 AS x FROM extras_taggeditem WHERE content_type = ${d.placeholder(1)} LIMIT 1`,
      [model.key],
    );
    tagged = rows.length > 0;
    ctx.memo.set(taggedKey, tagged);
  }
  if (!tagged) return byRow;
  for (const part of chunks(ids)) {
    const d = ctx.store.dialect;
    const marks = part.map((_v, i) => d.placeholder(i + 2)).join(", ");
    const links = await rawRows(
      ctx.db,
      `SELECT ti.object_id, t.id, t.name, t.slug, t.color, t.created, t.last_updated FROM extras_taggeditem ti
       JOIN extras_tag t ON t.id = ti.tag_id WHERE ti.content_type = ${d.placeholder(1)} AND ti.object_id IN (${marks}) ORDER BY t.name`,
      [model.key, ...part],
    );
    for (const l of links) {
      const list = byRow.get(l.object_id) ?? [];
      list.push({
        display: l.name,
        id: l.id,
        url: detailUrl(ctx, tagModel, l.id),
        name: l.name,
        slug: l.slug,
        color: l.color,
        created: l.created,
        last_updated: l.last_updated,
      });
      byRow.set(l.object_id, list);
    }
  }
  return byRow;
}

/**
 * The count fields of rows (`device_count`…: rows of another model whose FK, generic FK or M2M points at
 * each row), set-wise: every field's counts of a chunk of ids in one statement (UNION ALL, each part tagged
 * with its field), so a page with ten count fields costs one query, not ten. Tree counts (`fd.tree`) add up
 * descendants (`addTreeCounts`). A write's response and its change-log snapshot count the same rows: counted
 * once (rows.ts readBackMemo). @returns field name → row id → count (ids without rows are absent or 0)
 */
async function countsFor(
  ctx: Ctx,
  model: Model,
  countFields: ReadonlyArray<[string, CountField]>,
  ids: readonly string[],
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  const phase = readBackMemo(ctx);
  const idList = [...ids].sort().join(",");
  const memoKey = (name: string) => `count|${model.key}|${name}|${idList}`;
  const todo: Array<[string, CountField]> = [];
  const zeros = () => new Map(ids.map((id): [string, number] => [id, 0]));
  const written = writtenHere(ctx, model);
  // Counts taken earlier in this write transaction (a pre-change snapshot) hold while it wrote no row of
  // the counted model since (an update of this object does not change what points at it).
  const mark = changeMark(ctx);
  const txCounts = mark === undefined ? undefined : transactionCounts(ctx);
  const earlier = (name: string, fd: CountField) => {
    const e = txCounts?.get(memoKey(name));
    return e && !writtenSince(ctx, e.mark, fd.model) ? e.counts : undefined;
  };
  // Objects created in this transaction have no rows of a model it did not write pointing at them.
  const none = (fd: CountField) =>
    written &&
    !written.models.has(fd.model) &&
    !ctx.reg.get(fd.model).readOnly &&
    ids.every((id) => written.created.has(id));
  for (const [name, fd] of countFields) {
    const kept = (phase?.get(memoKey(name)) as Map<string, number> | undefined) ?? earlier(name, fd);
    if (kept) out.set(name, kept);
    else if (none(fd)) out.set(name, zeros());
    else if (fd.tree && model.tree) {
      const counts = zeros();
      await addTreeCounts(ctx, model, counts, ctx.reg.get(fd.model), fd.via);
      out.set(name, counts);
    } else {
      out.set(name, new Map());
      todo.push([name, fd]);
    }
  }
  for (const part of todo.length ? chunks(ids) : []) {
    const queries = todo.map(([, fd], i) => {
      const src = ctx.reg.get(fd.model);
      const via = src.fields[fd.via];
      const tag = sql<number>`${sql.lit(i)}`.as("f");
      const n = (eb: any) => eb.fn.countAll().as("n");
      if (via?.kind === "m2m")
        return ctx.db
          .selectFrom(joinTable(src, fd.via))
          .select([tag, "target_id as k", n])
          .where("target_id", "in", part)
          .groupBy("target_id");
      const col = `${fd.via}_id`;
      let q = ctx.db
        .selectFrom(src.table)
        .select([tag, `${col} as k`, n])
        .where(col, "in", part);
      if (via?.kind === "gfk") q = q.where(`${fd.via}_type`, "=", model.key);
      return q.groupBy(col);
    });
    for (const r of await unionAll(queries).execute())
      out.get(todo[Number(r.f)]![0])!.set(String(r.k), Number(r.n));
  }
  for (const [name] of countFields) {
    phase?.set(memoKey(name), out.get(name)!);
    if (mark !== undefined) txCounts?.set(memoKey(name), { counts: out.get(name)!, mark });
  }
  return out;
}

/** Count fields read in the current write transaction: memo key → counts and the change mark they hold at. */
function transactionCounts(ctx: Ctx): Map<string, { counts: Map<string, number>; mark: number }> {
  return memoEntry(
    ctx,
    "transactionCounts",
    () => new Map<string, { counts: Map<string, number>; mark: number }>(),
  );
}

/**
 * Cumulative tree counts (Region.site_count counts sites of the region and its descendants):
 * direct counts of every node are summed up each node's ancestor chain. One query for the tree, one for
 * the direct counts.
 */
async function addTreeCounts(
  ctx: Ctx,
  model: Model,
  counts: Map<string, number>,
  src: Model,
  via: string,
): Promise<void> {
  const parentCol = `${model.tree}_id`;
  const nodes = await ctx.db.selectFrom(model.table).select(["id", parentCol]).execute();
  const parent = new Map(nodes.map((r) => [r.id as string, (r[parentCol] as string | null) ?? null]));
  const col = `${via}_id`;
  const direct = await ctx.db
    .selectFrom(src.table)
    .select([`${col} as k`, (eb: any) => eb.fn.countAll().as("n")])
    .where(col, "is not", null)
    .groupBy(col)
    .execute();
  const wanted = new Set(counts.keys());
  for (const id of wanted) counts.set(id, 0);
  for (const r of direct) {
    const n = Number(r.n);
    let node: string | null = r.k as string;
    let guard = 0;
    while (node && guard++ < 100) {
      if (wanted.has(node)) counts.set(node, (counts.get(node) ?? 0) + n);
      node = parent.get(node) ?? null;
    }
  }
}
