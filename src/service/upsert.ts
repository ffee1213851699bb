/**
 * Upsert by natural key (issue 28, an extension: no Nautobot endpoint does this): each item of a write body
 * is matched to a stored object by its model's natural key (`Model.naturalKeyFields`, registry/index.ts
 * `naturalKeyOf`), then created, updated with the fields it gives (PATCH semantics), or left alone when it
 * would change nothing. Creates and updates go through the write path (`createObject`, `updateObject`:
 * validation, change log, webhook outbox, versions); an unchanged item writes nothing at all (no
 * `last_updated`, no version, no ObjectChange, no outbox row).
 */
import { IpParseError, ipKey, parseCidr } from "../net/ip.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, ErrorBag, PermissionDenied, ValidationError } from "./errors.ts";
import { parseWrite, resolveRef } from "./input.ts";
import { mayDo, permits } from "./permissions.ts";
import { type Row, toRecord } from "./rows.ts";
import { createObject, updateObject } from "./write.ts";

/** What an upsert did with one item. */
export type UpsertResult = "created" | "updated" | "unchanged";

/** One item's outcome: what was done and the object's id. */
export interface UpsertOutcome {
  result: UpsertResult;
  id: string;
}

/**
 * Upsert `items` of `model` inside the caller's transaction (all or none: run it in `inTransaction`), which
 * holds the model's upsert lock (`Dialect.transactionLock`) from before the first match until it ends, so
 * concurrent upserts of one model, in any process, run one after the other.
 * A matched item needs the `change` permission (also when unchanged), a new one `add`, as Nautobot checks
 * PATCH and POST; row-level constraints are checked by the write path, and for unchanged items here.
 * @returns one outcome per item, in order
 * @throws AppError 400 when the model has no natural key usable for matching (`naturalKeyNote` says why),
 *   405 for read-only models; ValidationError with one error dict per item (`{}` for good ones) when any
 *   item is invalid or its natural key matches several objects; PermissionDenied (403)
 */
export async function upsertObjects(ctx: Ctx, model: Model, items: unknown[]): Promise<UpsertOutcome[]> {
  if (model.readOnly) throw new AppError(405, 'Method "POST" not allowed.');
  unsupported(model);
  // Two upserts of one new key must not both miss the match and create (issue 28; IP addresses and
  // prefixes have no unique constraint to stop them): upserts of a model are serialised from before their
  // matching to commit (PostgreSQL advisory lock; SQLite's writers already are, from BEGIN IMMEDIATE).
  await ctx.store.dialect.transactionLock(ctx.db, `${UPSERT_LOCK}${model.table}`);
  const out: UpsertOutcome[] = [];
  const errs: unknown[] = [];
  let failed = false;
  const refs: Refs = new Map();
  for (const item of items) {
    try {
      out.push(await upsertOne(ctx, model, item, refs));
      errs.push({});
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      failed = true;
      errs.push(e.errors);
    }
  }
  if (failed) throw new ValidationError(errs);
  return out;
}

/** Prefix of the name of the lock serialising upserts of one model (its table's name follows). */
const UPSERT_LOCK = "inventory.upsert:";

/** 400 for a model without a natural key (rack reservations, notes, tokens). */
function unsupported(model: Model): void {
  const key = model.naturalKeyFields;
  const why = model.naturalKeyNote ? ` (${model.naturalKeyNote})` : "";
  if (!key.length)
    throw new AppError(400, `Upsert is not supported for ${model.plural ?? `${model.verbose}s`}${why}.`);
}

/**
 * References resolved by this upsert's matching, by target model and JSON of the given value: many items
 * name the same device or site. Valid while nothing is written, so cleared after each create and update.
 */
type Refs = Map<string, string>;

/** Upsert one item. @throws ValidationError (the item's errors), PermissionDenied */
async function upsertOne(ctx: Ctx, model: Model, item: unknown, refs: Refs): Promise<UpsertOutcome> {
  const found =
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? await match(ctx, model, item as Row, refs)
      : undefined;
  // The item with its natural-key references as the ids they resolved to (looked up once, not again).
  const body = found?.body ?? item;
  const stored = found?.stored;
  if (!stored) {
    if (ctx.grants && !mayDo(ctx.grants, model, "add")) throw new PermissionDenied();
    refs.clear();
    return { result: "created", id: await createObject(ctx, model, body) };
  }
  if (ctx.grants && !mayDo(ctx.grants, model, "change")) throw new PermissionDenied();
  const id = String(stored.id);
  const before = await toRecord(ctx, model, stored);
  const parsed = await parseWrite(ctx, model, body, before, true);
  parsed.errors.throwIfAny();
  const changed =
    "relationships" in (body as Row) ||
    differs(model, parsed.record, before) ||
    (parsed.tags !== undefined && !sameSet(parsed.tags, await tagsOf(ctx, model, id)));
  if (!changed) {
    if (ctx.grants && !(await permits(ctx, model, id, "change"))) throw new PermissionDenied();
    return { result: "unchanged", id };
  }
  refs.clear();
  await updateObject(ctx, model, id, body, true);
  return { result: "updated", id };
}

/** One equality (or IS NULL) condition of a natural-key match, on a column. */
interface Cond {
  column: string;
  value: string | number | boolean | null;
}

/**
 * The stored row (locked until commit on PostgreSQL) whose natural key equals the item's, if any, and the
 * item with its natural-key references replaced by the ids they resolved to. A key field the item does not
 * give matches NULL; FK values may be ids or nested attribute dicts (natural keys of the target, resolved by
 * `resolveRef` as any write's references are), and so may a generic reference's `<x>_id` (with `<x>_type`);
 * IP addresses match by host and family (any mask), prefixes by network and length. A key of exactly two
 * generic references (a cable's ends) matches them in either order.
 * @throws ValidationError naming the field of an unresolvable reference or value, or several matches
 */
async function match(
  ctx: Ctx,
  model: Model,
  item: Row,
  refs: Refs,
): Promise<{ stored: Row | undefined; body: Row }> {
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
      // An unknown type or a missing side is left to the write's own messages (the item is not matched).
      if (typeof type !== "string" || !ctx.reg.resolveAllowed(fd.allowed).includes(type) || ref === null)
        return { stored: undefined, body: item };
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
  let q = ctx.db
    .selectFrom(model.table)
    .selectAll()
    .where((eb) => {
      const all = (list: Cond[]) =>
        eb.and(list.map((c) => (c.value === null ? eb(c.column, "is", null) : eb(c.column, "=", c.value))));
      return swapped ? eb.or([all(conds), all(swapped)]) : all(conds);
    })
    .limit(2);
  if (ctx.store.dialect.rowLocks) q = q.forUpdate();
  const rows = (await q.execute()) as Row[];
  if (rows.length > 1)
    throw new ValidationError({
      non_field_errors: [
        `Several ${model.plural ?? `${model.verbose}s`} match the natural key (${key.join(", ")}): give their id instead of upserting.`,
      ],
    });
  const stored = rows[0];
  // Matched the other way round: the item's ends are swapped to the stored ones', so nothing changes ends.
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

/** Whether a parsed record would change the stored record: field by field, many-to-many values as sets. */
function differs(model: Model, record: Row, before: Row): boolean {
  for (const [name, fd] of model.fieldList) {
    if (fd.kind === "count" || fd.kind === "computed") continue;
    if (fd.kind === "gfk") {
      for (const k of [`${name}_type`, `${name}_id`])
        if (canonical(record[k]) !== canonical(before[k])) return true;
      continue;
    }
    if (fd.kind === "m2m" || fd.kind === "cts") {
      if (!sameSet((record[name] as unknown[]) ?? [], (before[name] as unknown[]) ?? [])) return true;
      continue;
    }
    if (canonical(record[name]) !== canonical(before[name])) return true;
  }
  return model.customFields
    ? canonical(record.custom_fields ?? {}) !== canonical(before.custom_fields ?? {})
    : false;
}

/** A value as comparable text: objects with sorted keys, scalars as the write path compares columns. */
function canonical(v: unknown): string {
  if (v === undefined || v === null) return "null";
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (typeof v === "object")
    return `{${Object.keys(v as Row)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Row)[k])}`)
      .join(",")}}`;
  return JSON.stringify(String(v));
}

/** Two lists hold the same values, whatever their order. */
function sameSet(a: readonly unknown[], b: readonly unknown[]): boolean {
  const sa = new Set(a.map(String));
  const sb = new Set(b.map(String));
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/** The ids of the tags on one object. */
async function tagsOf(ctx: Ctx, model: Model, id: string): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom("extras_taggeditem")
    .select("tag_id")
    .where("content_type", "=", model.key)
    .where("object_id", "=", id)
    .execute();
  return rows.map((r) => String(r.tag_id));
}
