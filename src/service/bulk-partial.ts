/**
 * Non-atomic bulk writes (issue 28, "Per-item results for bulk writes"; an extension, opt-in with
 * `?atomic=false`): each item of a bulk POST/PUT/PATCH/DELETE or upsert is written in a transaction of its
 * own, through the normal write path (`createObject`, `updateObject`, `deleteObjects`, `upsertObjects`:
 * validation, change log, webhook outbox, versions), so it succeeds or fails on its own. The default
 * (all or none, seed "Bulk operations" 4) does not come here.
 */
import { normalizeUuid } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, ValidationError } from "./errors.ts";
import { checkItemVersions, VERSION_KEY } from "./object-versions.ts";
import { getRow, type ListParams } from "./read.ts";
import { unsupported, upsertObjects } from "./upsert.ts";
import { createObject, deleteObjects, inTransaction, updateObject } from "./write.ts";

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
  for (const [index, item] of items.entries()) {
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

/** Write one item in the caller's transaction. */
async function writeOne(
  t: Ctx,
  model: Model,
  kind: PartialKind,
  item: unknown,
  visible: Omit<ListParams, "action">,
): Promise<{ status: ItemStatus; id: string }> {
  if (kind === "POST") return { status: "created", id: await createObject(t, model, item) };
  if (kind === "UPSERT") {
    const [o] = await upsertObjects(t, model, [item]);
    return { status: o!.result, id: o!.id };
  }
  const { id, raw } = byId(item);
  const action = kind === "DELETE" ? "delete" : "change";
  try {
    await getRow(t, model, id, { ...visible, action });
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
  await updateObject(t, model, id, data, kind === "PATCH");
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
