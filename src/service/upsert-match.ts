/**
 * Matching of upsert items to stored objects by natural key (issue 28; service/upsert.ts drives it): the
 * conditions an item's key gives, the match of one item (one query), and the set-wise match of a chunk of
 * items (one query per chunk, the matched rows' records and tags loaded set-wise, the pairing done in memory).
 */
import { IpParseError, ipKey, parseCidr } from "../net/ip.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { ErrorBag, ValidationError } from "./errors.ts";
import { noteExisting, resolveRef } from "./input.ts";
import { chunks, type Row, toRecords } from "./rows.ts";

/**
 * References resolved by this upsert's matching, by target model and JSON of the given value: many items
 * name the same device or site. Valid while nothing is written, so cleared after each create and update.
 */
export type Refs = Map<string, string>;

/** Items matched together (service/upsert.ts handles a batch in chunks of this many). */
export const MATCH_CHUNK = 500;

/**
 * Most OR terms (one per key, two for a cable's two orders) in one match query: SQLite parses `a OR b OR …`
 * as a tree as deep as its terms and refuses one deeper than 1,000 (SQLITE_MAX_EXPR_DEPTH), so a chunk may
 * take two or three queries.
 */
const QUERY_TERMS = 400;

/** One equality (or IS NULL) condition of a natural-key match, on a column. */
interface Cond {
  column: string;
  value: string | number | boolean | null;
}

/** An item's natural key as column conditions, and the item with its key references as ids. */
interface Key {
  conds: Cond[];
  /** The conditions with a cable's two ends swapped (a key of exactly two generic references), if so. */
  swapped: Cond[] | undefined;
  /** The two generic-reference fields of such a key. */
  ends: readonly string[] | undefined;
  body: Row;
}

/** A matched (or not) item: the stored row if any, and the item with its key references as ids. */
export interface Match {
  stored: Row | undefined;
  body: Row;
}

/** A match made set-wise, with the stored record and tag ids read with it (undefined: no row matched). */
export interface Prematched extends Match {
  before: Row | undefined;
  tags: string[] | undefined;
  /** The item's key as text (equal for items naming the same object). */
  key: string;
}

/**
 * The key conditions of `item`, or undefined when it cannot match anything (a generic reference with an
 * unknown type or a missing side: the write's own messages follow). A key field the item does not give
 * matches NULL; FK values may be ids or nested attribute dicts (natural keys of the target, resolved by
 * `resolveRef` as any write's references are), and so may a generic reference's `<x>_id` (with `<x>_type`);
 * IP addresses match by host and family (any mask), prefixes by network and length.
 * @throws ValidationError naming the field of an unresolvable reference or value
 */
async function keyOf(ctx: Ctx, model: Model, item: Row, refs: Refs): Promise<Key | undefined> {
  const errors = new ErrorBag();
  const body: Row = { ...item };
  const conds: Cond[] = [];
  /** The id a reference names (memoised for attribute dicts, which `body` then carries as the id). */
  const resolve = async (target: Model, v: unknown, field: string): Promise<string | undefined> => {
    const memo = typeof v === "object" ? `${target.key}\u0000${JSON.stringify(v)}` : undefined;
    const ref = (memo && refs.get(memo)) ?? (await resolveRef(ctx, target, v, field, errors));
    if (ref !== undefined && memo) {
      refs.set(memo, ref);
      body[field] = ref;
    }
    if (ref !== undefined) noteExisting(ctx, target, ref);
    return ref;
  };
  for (const name of model.naturalKeyFields) {
    const fd = model.fields[name]!;
    const v = item[name] ?? null;
    if (fd.kind === "fk") {
      if (v === null) conds.push({ column: `${name}_id`, value: null });
      else {
        const ref = await resolve(ctx.reg.get(fd.to), v, name);
        if (ref !== undefined) conds.push({ column: `${name}_id`, value: ref });
      }
    } else if (fd.kind === "gfk") {
      const type = item[`${name}_type`] ?? null;
      const ref = item[`${name}_id`] ?? null;
      if (typeof type !== "string" || !ctx.reg.resolveAllowed(fd.allowed).includes(type) || ref === null)
        return undefined;
      const id = await resolve(ctx.reg.get(type), ref, `${name}_id`);
      if (id === undefined) continue;
      conds.push({ column: `${name}_type`, value: type }, { column: `${name}_id`, value: id });
    } else if (fd.kind === "ip") {
      if (v === null) {
        conds.push({ column: name, value: null });
        continue;
      }
      try {
        const c = parseCidr(v);
        conds.push({ column: `${name}_family`, value: c.family });
        if (fd.mode === "host") conds.push({ column: `${name}_host`, value: ipKey(c.family, c.hostInt) });
        else
          conds.push(
            { column: `${name}_start`, value: ipKey(c.family, c.start) },
            { column: `${name}_len`, value: c.prefixLength },
          );
      } catch (e) {
        if (!(e instanceof IpParseError)) throw e;
        errors.add(name, e.message);
      }
    } else if (v === null) conds.push({ column: name, value: null });
    else {
      const value = scalar(fd.kind, v);
      if (value === undefined) errors.add(name, `Not a valid natural-key value for a ${fd.kind} field.`);
      else conds.push({ column: name, value });
    }
  }
  errors.throwIfAny();
  const key = model.naturalKeyFields;
  const ends = key.length === 2 && key.every((f) => model.fields[f]?.kind === "gfk") ? key : undefined;
  // The other order of the two ends: each condition on one end's columns put on the other's.
  const swapped = ends
    ? conds.map((c) => ({
        ...c,
        column: c.column.startsWith(`${ends[0]}_`)
          ? `${ends[1]}${c.column.slice(ends[0]!.length)}`
          : `${ends[0]}${c.column.slice(ends[1]!.length)}`,
      }))
    : undefined;
  return { conds, swapped, ends, body };
}

/**
 * The stored row (locked until commit on PostgreSQL) whose natural key equals the item's, if any, and the
 * item with its natural-key references replaced by the ids they resolved to (`keyOf`). A key of exactly two
 * generic references (a cable's ends) matches them in either order.
 * @throws ValidationError naming the field of an unresolvable reference or value, or several matches
 */
export async function match(ctx: Ctx, model: Model, item: Row, refs: Refs): Promise<Match> {
  const key = await keyOf(ctx, model, item, refs);
  if (!key) return { stored: undefined, body: item };
  const rows = await select(ctx, model, [key]);
  if (rows.length > 1) throw several(model);
  return settle(key, rows[0]);
}

/**
 * Match a chunk of items set-wise: one query for all their keys (per QUERY_TERMS OR terms), the matched rows'
 * records (`toRecords`: one query per many-to-many field) and, when any item gives tags, their tag ids;
 * rows are paired with items in memory. An item whose key cannot be computed now (an unresolvable
 * reference, a bad value), that several rows match, or any item when a returned row pairs with no item,
 * gets undefined: `match` then handles it when its turn comes, with its own messages.
 * @returns one entry per item, in order
 */
export async function matchMany(
  ctx: Ctx,
  model: Model,
  items: readonly unknown[],
  refs: Refs,
): Promise<(Prematched | undefined)[]> {
  const keys: (Key | undefined | null)[] = [];
  for (const item of items) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) keys.push(null);
    else
      try {
        keys.push(await keyOf(ctx, model, item as Row, refs));
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        keys.push(null); // left to `match`, which reports it as the item's error
      }
  }
  const usable = keys.filter((k): k is Key => !!k);
  const rows: Row[] = [];
  const per = usable.some((k) => k.swapped) ? QUERY_TERMS / 2 : QUERY_TERMS;
  for (const part of chunks(usable, per)) rows.push(...(await select(ctx, model, part)));
  // Rows by the text of their key columns, per distinct set of key columns.
  const indexes = new Map<string, Map<string, Row[]>>();
  const claimed = new Set<Row>();
  const candidates = (conds: Cond[]): Row[] => {
    const cols = conds.map((c) => c.column);
    const sig = cols.join("\u0001");
    let index = indexes.get(sig);
    if (!index) {
      index = new Map();
      for (const r of rows) {
        const k = cols.map((c) => norm(r[c])).join("\u0001");
        index.set(k, [...(index.get(k) ?? []), r]);
      }
      indexes.set(sig, index);
    }
    return index.get(conds.map((c) => norm(c.value)).join("\u0001")) ?? [];
  };
  const found: (Row[] | undefined)[] = keys.map((k) => {
    if (!k) return undefined;
    const hits = new Set([...candidates(k.conds), ...(k.swapped ? candidates(k.swapped) : [])]);
    for (const r of hits) claimed.add(r);
    return [...hits];
  });
  // A row no item accounts for means the database compared differently (a collation): trust it, per item.
  if (rows.some((r) => !claimed.has(r))) return items.map(() => undefined);
  const matched = found.flatMap((f) => (f?.length === 1 ? f : []));
  const records = await toRecords(ctx, model, matched);
  const tags = items.some((i) => i && typeof i === "object" && "tags" in i)
    ? await tagsOfMany(
        ctx,
        model,
        matched.map((r) => String(r.id)),
      )
    : undefined;
  return keys.map((k, i) => {
    const hits = found[i];
    if (!k || !hits || hits.length > 1) return undefined;
    const m = settle(k, hits[0]);
    const id = m.stored ? String(m.stored.id) : undefined;
    return {
      ...m,
      before: id ? records.get(id) : undefined,
      tags: id && tags ? (tags.get(id) ?? []) : undefined,
      key: k.conds.map((c) => `${c.column}=${norm(c.value)}`).join("\u0001"),
    };
  });
}

/** The rows matching any of `keys` (in either order for cables), locked until commit on PostgreSQL. */
async function select(ctx: Ctx, model: Model, keys: readonly Key[]): Promise<Row[]> {
  let q = ctx.db
    .selectFrom(model.table)
    .selectAll()
    .where((eb) => {
      const all = (list: Cond[]) =>
        eb.and(list.map((c) => (c.value === null ? eb(c.column, "is", null) : eb(c.column, "=", c.value))));
      return eb.or(keys.flatMap((k) => (k.swapped ? [all(k.conds), all(k.swapped)] : [all(k.conds)])));
    });
  if (keys.length === 1) q = q.limit(2);
  if (ctx.store.dialect.rowLocks) q = q.forUpdate();
  return (await q.execute()) as Row[];
}

/** The match of a key: a cable matched the other way round gets its ends swapped to the stored ones'. */
function settle(key: Key, stored: Row | undefined): Match {
  const { ends, conds, body } = key;
  if (stored && ends) {
    const given = conds.find((c) => c.column === `${ends[0]}_id`)?.value;
    if (given !== undefined && stored[`${ends[0]}_id`] !== given)
      for (const side of ["_type", "_id"]) {
        const [x, y] = [`${ends[0]}${side}`, `${ends[1]}${side}`];
        [body[x], body[y]] = [body[y], body[x]];
      }
  }
  return { stored, body };
}

/** The 400 of a key that several stored objects have (models whose key Nautobot 1.6 does not enforce). */
function several(model: Model): ValidationError {
  return new ValidationError({
    non_field_errors: [
      `Several ${model.plural ?? `${model.verbose}s`} match the natural key (${model.naturalKeyFields.join(", ")}): give their id instead of upserting.`,
    ],
  });
}

/** A column value as comparable text: NULL, booleans as 0/1 (SQLite stores them so), the rest as text. */
function norm(v: unknown): string {
  return v === undefined || v === null ? "\u0000" : v === true ? "1" : v === false ? "0" : String(v);
}

/**
 * A natural-key value as its column holds it (integers and booleans checked, so a bad value is a 400, not a
 * database error), or undefined when it is not one.
 */
function scalar(kind: string, v: unknown): string | number | boolean | undefined {
  if (kind === "int")
    return typeof v === "number" && Number.isInteger(v)
      ? v
      : typeof v === "string" && /^-?\d{1,15}$/.test(v)
        ? Number(v)
        : undefined;
  if (kind === "bool") return typeof v === "boolean" ? v : undefined;
  return typeof v === "string" || typeof v === "number" ? String(v) : undefined;
}

/** The ids of the tags on one object. */
export async function tagsOf(ctx: Ctx, model: Model, id: string): Promise<string[]> {
  return (await tagsOfMany(ctx, model, [id])).get(id) ?? [];
}

/** The tag ids of each of `ids` (one query per CHUNK ids). */
async function tagsOfMany(ctx: Ctx, model: Model, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const part of chunks([...new Set(ids)])) {
    const rows = await ctx.db
      .selectFrom("extras_taggeditem")
      .select(["object_id", "tag_id"])
      .where("content_type", "=", model.key)
      .where("object_id", "in", part)
      .execute();
    for (const r of rows)
      out.set(String(r.object_id), [...(out.get(String(r.object_id)) ?? []), String(r.tag_id)]);
  }
  return out;
}
