/**
 * Upsert by natural key (issue 28, an extension: no Nautobot endpoint does this): each item of a write body
 * is matched to a stored object by its model's natural key (`Model.naturalKeyFields`, registry/index.ts
 * `naturalKeyOf`), then created, updated with the fields it gives (PATCH semantics), or left alone when it
 * would change nothing. Creates and updates go through the write path (`createObject`, `updateObject`:
 * validation, change log, webhook outbox, versions); an unchanged item writes nothing at all (no
 * `last_updated`, no version, no ObjectChange, no outbox row).
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, PermissionDenied, ValidationError } from "./errors.ts";
import { parseWrite } from "./input.ts";
import { mayDo, permits } from "./permissions.ts";
import { type Row, toRecord } from "./rows.ts";
import {
  MATCH_CHUNK,
  type Match,
  match,
  matchMany,
  type Prematched,
  type Refs,
  tagsOf,
} from "./upsert-match.ts";
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
  const state: Batch = { written: new Set(), keys: new Set(), dirty: false };
  // Each chunk is matched set-wise before its items are handled one by one in order (`usable` says when
  // a prematch still holds after this batch's own writes).
  for (let start = 0; start < items.length; start += MATCH_CHUNK) {
    const chunk = items.slice(start, start + MATCH_CHUNK);
    const pre = await matchMany(ctx, model, chunk, refs);
    state.keys.clear();
    state.dirty = false;
    for (const [i, item] of chunk.entries()) {
      try {
        out.push(await upsertOne(ctx, model, item, refs, usable(model, pre[i], state), state));
        errs.push({});
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        failed = true;
        errs.push(e.errors);
      }
    }
  }
  if (failed) throw new ValidationError(errs);
  return out;
}

/** What this upsert wrote, for telling whether a prematch still holds. */
interface Batch {
  /** Ids of the objects created or updated so far. */
  written: Set<string>;
  /** Keys of the current chunk's items handled so far. */
  keys: Set<string>;
  /** Something was written since the current chunk was matched. */
  dirty: boolean;
}

/**
 * A chunk's prematch of an item, if it still holds: always while nothing was written since the chunk was
 * matched; after a write, not for a model with an after-write hook (it may change other rows), a key an
 * earlier item of the chunk gave (that item may have created it), a matched object written since, or a key
 * that references the model itself (a location's parent created earlier in the batch). The item is then
 * matched on its own (`match`), as it would be alone.
 */
function usable(model: Model, pre: Prematched | undefined, state: Batch): Prematched | undefined {
  if (!pre) return undefined;
  const seen = state.keys.has(pre.key);
  state.keys.add(pre.key);
  if (!state.dirty) return pre;
  if (model.afterWrite || seen) return undefined;
  if (pre.stored && state.written.has(String(pre.stored.id))) return undefined;
  const selfRef = model.naturalKeyFields.some((f) => {
    const fd = model.fields[f];
    return fd?.kind === "fk" && fd.to === model.key;
  });
  return selfRef ? undefined : pre;
}

/** Prefix of the name of the lock serialising upserts of one model (its table's name follows). */
const UPSERT_LOCK = "inventory.upsert:";

/** 400 for a model without a natural key (rack reservations, notes, tokens). */
export function unsupported(model: Model): void {
  const key = model.naturalKeyFields;
  const why = model.naturalKeyNote ? ` (${model.naturalKeyNote})` : "";
  if (!key.length)
    throw new AppError(400, `Upsert is not supported for ${model.plural ?? `${model.verbose}s`}${why}.`);
}

/**
 * Upsert one item, with its prematch (`matchMany`) when it still holds, else matched here.
 * @throws ValidationError (the item's errors), PermissionDenied
 */
async function upsertOne(
  ctx: Ctx,
  model: Model,
  item: unknown,
  refs: Refs,
  pre: Prematched | undefined,
  state: Batch,
): Promise<UpsertOutcome> {
  const found: Match | undefined =
    pre ??
    (item !== null && typeof item === "object" && !Array.isArray(item)
      ? await match(ctx, model, item as Row, refs)
      : undefined);
  // The item with its natural-key references as the ids they resolved to (looked up once, not again).
  const body = found?.body ?? item;
  const stored = found?.stored;
  if (!stored) {
    if (ctx.grants && !mayDo(ctx.grants, model, "add")) throw new PermissionDenied();
    refs.clear();
    state.dirty = true;
    const created = await createObject(ctx, model, body);
    state.written.add(created);
    return { result: "created", id: created };
  }
  if (ctx.grants && !mayDo(ctx.grants, model, "change")) throw new PermissionDenied();
  const id = String(stored.id);
  const before = pre?.before ?? (await toRecord(ctx, model, stored));
  const parsed = await parseWrite(ctx, model, body, before, true);
  parsed.errors.throwIfAny();
  const changed =
    "relationships" in (body as Row) ||
    differs(model, parsed.record, before) ||
    (parsed.tags !== undefined && !sameSet(parsed.tags, pre?.tags ?? (await tagsOf(ctx, model, id))));
  if (!changed) {
    if (ctx.grants && !(await permits(ctx, model, id, "change"))) throw new PermissionDenied();
    return { result: "unchanged", id };
  }
  refs.clear();
  state.dirty = true;
  state.written.add(id);
  await updateObject(ctx, model, id, body, true);
  return { result: "updated", id };
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
