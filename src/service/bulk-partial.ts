/**
 * Non-atomic bulk writes (issue 28, "Per-item results for bulk writes"; an extension, opt-in with
 * `?atomic=false`): each item of a bulk POST/PUT/PATCH/DELETE or upsert succeeds or fails on its own,
 * written through the normal write path (`createMany`/`createObject`, `updateObject`, `deleteObjects`,
 * `upsertObjects`: validation, change log, webhook outbox, versions). Its result is the one it would get in
 * a transaction of its own after the items before it; the list is first tried in one transaction, then
 * without the failed items, and only then one transaction per item (`batchFirst`). The default (all or
 * none, seed "Bulk operations" 4) does not come here.
 */
import { normalizeUuid } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, ValidationError } from "./errors.ts";
import { checkItemVersions, VERSION_KEY } from "./object-versions.ts";
import { getRow, type ListParams, plainLookup } from "./read.ts";
import { unsupported, upsertObjects } from "./upsert.ts";
import {
  createMany,
  createObject,
  deleteObjects,
  inTransaction,
  type Locked,
  lockForUpdate,
  snapshots,
  updateObject,
} from "./write.ts";

/** What happened to one item. */
export type ItemStatus = "created" | "updated" | "deleted" | "unchanged" | "failed";

/**
 * One item's result: its position in the body (0-based), its status, and either the object's full
 * representation (created/updated/unchanged), nothing (deleted) or the errors (failed): the same shape as
 * that item's entry of the all-or-none 400 body (`{field: [messages]}`), or `{detail}` for a 403/404/409/412.
 */
export interface ItemResult {
  index: number;
  status: ItemStatus;
  object?: Record<string, unknown>;
  errors?: unknown;
}

/** Renders objects by id inside the item's transaction (the HTTP layer's `renderIds`). */
export type Render = (t: Ctx, model: Model, ids: string[]) => Promise<Array<Record<string, unknown>>>;

/** Bulk write kinds: the list endpoint's methods, and the upsert action. */
export type PartialKind = "POST" | "PUT" | "PATCH" | "DELETE" | "UPSERT";

/**
 * Write `items` of `model` one by one, each in its own transaction (committed before the next starts).
 * @param visible for PUT/PATCH/DELETE: how the rows this user may change/delete are found (owner column,
 *   constraints; `action` is set here); an item whose id is not among them fails with
 *   `{id: ["Object with id … does not exist."]}` as in the all-or-none 400.
 * @returns one result per item, in body order
 * @throws AppError 405/400 for an upsert of a read-only model or one without a natural key (before any
 *   item); otherwise only errors that are not the client's (a database failure: items before it stay
 *   committed, the request answers 500)
 */
export async function writeEach(
  ctx: Ctx,
  model: Model,
  kind: PartialKind,
  items: unknown[],
  render: Render,
  visible: Omit<ListParams, "action"> = { params: new Map(), limit: 1, offset: 0 },
): Promise<ItemResult[]> {
  // A model that cannot be upserted at all is one 400/405 for the request, not one per item.
  if (kind === "UPSERT") {
    if (model.readOnly) throw new AppError(405, 'Method "POST" not allowed.');
    unsupported(model);
  }
  const out: ItemResult[] = [];
  const done = await batchFirst(ctx, model, kind, items, render, visible);
  for (const [index, item] of items.entries()) {
    const known = done.get(index);
    if (known) {
      out.push(known);
      continue;
    }
    try {
      out.push(
        await inTransaction(ctx, async (t) => {
          const { status, id } = await writeOne(t, model, kind, item, visible);
          if (status === "deleted") return { index, status };
          const [object] = await render(t, model, [id]);
          return object ? { index, status, object } : { index, status };
        }),
      );
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      out.push({ index, status: "failed", errors: errorsOf(e) });
    }
  }
  return out;
}

/**
 * Every item is first tried in one transaction for the whole list (far cheaper than one per item: see the
 * README): creates and upserts through the all-or-none path (`createMany`, `upsertObjects`, whose items are
 * checked one after the other, each against the earlier ones, as one-by-one writes are), updates and
 * deletes item by item (`writeOne`, the rows locked first in id order as the all-or-none bulk does). When no
 * item fails, it commits and every item is done. When some fail with a client error, it rolls back: those
 * items are failed with exactly these errors, and the others are written again, in one transaction, without
 * them. Whatever else goes wrong (a database error, a 403/409 of a create or upsert, a failure in the second
 * round) leaves the items not yet done to the one-transaction-per-item loop.
 * @returns the results of the items done, by index (empty when nothing was settled)
 */
async function batchFirst(
  ctx: Ctx,
  model: Model,
  kind: PartialKind,
  items: unknown[],
  render: Render,
  visible: Omit<ListParams, "action">,
): Promise<Map<number, ItemResult>> {
  const done = new Map<number, ItemResult>();
  let left = items.map((_, i) => i);
  for (let round = 0; round < 2 && left.length; round++) {
    const these = left;
    try {
      const written = await inTransaction(ctx, async (t) => {
        const results = await writeAll(
          t,
          model,
          kind,
          these.map((i) => items[i]),
          visible,
        );
        const shown = results.filter((r) => r.status !== "deleted");
        const objects = await render(
          t,
          model,
          shown.map((r) => r.id),
        );
        const byId = new Map(shown.map((r, k) => [r, objects[k]]));
        return results.map((r) => ({ ...r, object: byId.get(r) }));
      });
      for (const [k, r] of written.entries()) {
        const index = these[k]!;
        done.set(
          index,
          r.object ? { index, status: r.status, object: r.object } : { index, status: r.status },
        );
      }
      return done;
    } catch (e) {
      if (
        round > 0 ||
        !(e instanceof ValidationError) ||
        !Array.isArray(e.errors) ||
        e.errors.length !== these.length
      )
        return done;
      const errs = e.errors;
      left = these.filter((index, k) => {
        const err = errs[k];
        const bad = !!err && typeof err === "object" && Object.keys(err).length > 0;
        if (bad) done.set(index, { index, status: "failed", errors: err });
        return !bad;
      });
    }
  }
  return done;
}

/**
 * Write all `items` in the caller's transaction.
 * @throws ValidationError with one entry per item (`{}` for the good ones) when any item failed with a
 *   client error (for updates and deletes also a 403/409/412, as that item's `errorsOf`)
 */
async function writeAll(
  t: Ctx,
  model: Model,
  kind: PartialKind,
  items: unknown[],
  visible: Omit<ListParams, "action">,
): Promise<Array<{ status: ItemStatus; id: string }>> {
  if (kind === "POST") return (await createMany(t, model, items)).map((id) => ({ status: "created", id }));
  if (kind === "UPSERT")
    return (await upsertObjects(t, model, items)).map((o) => ({ status: o.result, id: o.id }));
  // Locked in id order first, so concurrent bulks cannot deadlock (as the all-or-none bulk update).
  const ids = items.flatMap((item) => {
    const raw = item && typeof item === "object" ? (item as { id?: unknown }).id : undefined;
    const id = typeof raw === "string" ? normalizeUuid(raw) : undefined;
    return id ? [id] : [];
  });
  const locked = await lockForUpdate(t, model, [...new Set(ids)]);
  // Pre-change snapshots set-wise, as the all-or-none bulk update takes them.
  const prepared: Prepared = { locked };
  if (kind !== "DELETE" && locked.size)
    prepared.taken = await snapshots(
      t,
      model,
      [...locked.keys()],
      [...locked.values()].map((l) => l.stored),
    );
  const out: Array<{ status: ItemStatus; id: string }> = [];
  const errs: unknown[] = [];
  let failed = false;
  for (const item of items) {
    try {
      out.push(await writeOne(t, model, kind, item, visible, prepared));
      errs.push({});
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      failed = true;
      errs.push(errorsOf(e));
    }
  }
  if (failed) throw new ValidationError(errs);
  return out;
}

/** Rows locked and snapshots taken set-wise for a list's updates (`lockForUpdate`, `snapshots`). */
interface Prepared {
  locked: Map<string, Locked>;
  taken?: Map<string, Record<string, unknown>>;
}

/** Write one item in the caller's transaction (`prepared`: what a list's caller read set-wise). */
async function writeOne(
  t: Ctx,
  model: Model,
  kind: PartialKind,
  item: unknown,
  visible: Omit<ListParams, "action">,
  prepared?: Prepared,
): Promise<{ status: ItemStatus; id: string }> {
  if (kind === "POST") return { status: "created", id: await createObject(t, model, item) };
  if (kind === "UPSERT") {
    const [o] = await upsertObjects(t, model, [item]);
    return { status: o!.result, id: o!.id };
  }
  const { id, raw } = byId(item);
  const action = kind === "DELETE" ? "delete" : "change";
  try {
    // A locked row that no constraint or filter hides exists for this user: no second read.
    const seen = prepared?.locked.has(id) && plainLookup(t, { ...visible, action });
    if (!seen) await getRow(t, model, id, { ...visible, action });
  } catch (e) {
    if (e instanceof AppError && e.status === 404)
      throw new ValidationError({ id: [`Object with id ${id} does not exist.`] });
    throw e;
  }
  const { id: _id, [VERSION_KEY]: version, ...data } = raw;
  if (version !== undefined) {
    if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1)
      throw new ValidationError({
        [VERSION_KEY]: ["A valid integer is required (the object's version, 1 or more)."],
      });
    await checkItemVersions(t, model, [{ index: 0, id, version }]);
  }
  if (kind === "DELETE") {
    await deleteObjects(t, model, [id]);
    return { status: "deleted", id };
  }
  await updateObject(t, model, id, data, kind === "PATCH", prepared?.taken, prepared?.locked);
  return { status: "updated", id };
}

/**
 * A bulk update/delete item: a dict with a UUID `id` (BulkOperationSerializer).
 * @throws ValidationError naming `id` or `non_field_errors`, as that item's entry of the all-or-none 400
 */
function byId(item: unknown): { id: string; raw: Record<string, unknown> } {
  if (!item || typeof item !== "object" || Array.isArray(item))
    throw new ValidationError({ non_field_errors: ["Invalid data. Expected a dictionary."] });
  const raw = item as Record<string, unknown>;
  if (!("id" in raw)) throw new ValidationError({ id: ["This field is required."] });
  const id = typeof raw.id === "string" ? normalizeUuid(raw.id) : undefined;
  if (!id) throw new ValidationError({ id: ["Must be a valid UUID."] });
  return { id, raw };
}

/** The errors of one failed item: field errors as the 400 body gives them, else `{detail}`. */
function errorsOf(e: AppError): unknown {
  const body = e instanceof ValidationError ? e.errors : (e.body ?? { detail: e.message });
  // A one-item list (an upsert's per-item errors) is that item's errors.
  return Array.isArray(body) && body.length === 1 ? body[0] : body;
}

/**
 * The `atomic` query parameter of a bulk write: `false` (or `0`) asks for per-item results; absent or
 * `true`/`1` keeps all or none.
 * @throws ValidationError naming `atomic` for any other value
 */
export function atomicParam(values: readonly string[] | undefined): boolean {
  const v = values?.[values.length - 1];
  if (v === undefined || v === "true" || v === "1" || v === "True") return true;
  if (v === "false" || v === "0" || v === "False") return false;
  throw new ValidationError({ atomic: [`Must be true or false, not "${v}".`] });
}
