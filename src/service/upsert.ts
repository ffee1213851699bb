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
 * Upsert `items` of `model` inside the caller's transaction (all or none: run it in `inTransaction`).
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

/** 400 unless every natural-key field of `model` can be matched (none: tokens, notes; generic FKs: cables). */
function unsupported(model: Model): void {
  const key = model.naturalKeyFields;
  const why = model.naturalKeyNote ? ` (${model.naturalKeyNote})` : "";
  if (!key.length)
    throw new AppError(400, `Upsert is not supported for ${model.plural ?? `${model.verbose}s`}${why}.`);
  const gfk = key.find((f) => model.fields[f]?.kind === "gfk");
  if (gfk)
    throw new AppError(
      400,
      `Upsert is not supported for ${model.plural ?? `${model.verbose}s`}: the natural-key field ${gfk} is a generic reference${why}.`,
    );
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

/**
 * The stored row (locked until commit on PostgreSQL) whose natural key equals the item's, if any, and the
 * item with its natural-key references replaced by the ids they resolved to. A key field the item does not
 * give matches NULL; FK values may be ids or nested attribute dicts (natural keys of the target, resolved by
 * `resolveRef` as any write's references are); IP addresses match by host and family (any mask), prefixes
 * by network and length.
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
  let q = ctx.db.selectFrom(model.table).selectAll();
  for (const name of model.naturalKeyFields) {
    const fd = model.fields[name]!;
    const v = item[name] ?? null;
    if (fd.kind === "fk") {
      if (v === null) q = q.where(`${name}_id`, "is", null);
      else {
        const memo = typeof v === "object" ? `${fd.to}\u0000${JSON.stringify(v)}` : undefined;
        const ref = (memo && refs.get(memo)) ?? (await resolveRef(ctx, ctx.reg.get(fd.to), v, name, errors));
        if (ref === undefined) continue;
        if (memo) {
          refs.set(memo, ref);
          body[name] = ref;
        }
        q = q.where(`${name}_id`, "=", ref);
      }
    } else if (fd.kind === "ip") {
      if (v === null) {
        q = q.where(name, "is", null);
        continue;
      }
      try {
        const c = parseCidr(v);
        q = q.where(`${name}_family`, "=", c.family);
        q =
          fd.mode === "host"
            ? q.where(`${name}_host`, "=", ipKey(c.family, c.hostInt))
            : q
                .where(`${name}_start`, "=", ipKey(c.family, c.start))
                .where(`${name}_len`, "=", c.prefixLength);
      } catch (e) {
        if (!(e instanceof IpParseError)) throw e;
        errors.add(name, e.message);
      }
    } else if (v === null) q = q.where(name, "is", null);
    else {
      const value = scalar(fd.kind, v);
      if (value === undefined) errors.add(name, `Not a valid natural-key value for a ${fd.kind} field.`);
      else q = q.where(name, "=", value);
    }
  }
  errors.throwIfAny();
  const rows = (await (ctx.store.dialect.rowLocks ? q.limit(2).forUpdate() : q.limit(2)).execute()) as Row[];
  if (rows.length > 1)
    throw new ValidationError({
      non_field_errors: [
        `Several ${model.plural ?? `${model.verbose}s`} match the natural key (${model.naturalKeyFields.join(", ")}): give their id instead of upserting.`,
      ],
    });
  return { stored: rows[0], body };
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
