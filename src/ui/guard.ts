/**
 * The object-level permission check of every web-interface action on existing objects (issue 23): edit,
 * delete, bulk edit and delete, notes, "Send test", "Retry". The same rule as the API's object routes,
 * with Nautobot's 403 for an object the user may see but not act on:
 * - no `action` permission on the model at all → 403 (Nautobot's `ObjectPermissionRequiredMixin`);
 * - an object outside the user's `view` constraints (or missing) → 404, so nothing about it leaks;
 * - an object the user may view but that falls outside their `action` constraints → 403.
 */

import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { NotFoundError, PermissionDenied } from "../service/errors.ts";
import { type Action, mayDo, permits, restriction } from "../service/permissions.ts";
import { listRows } from "../service/read.ts";
import type { Row } from "../service/rows.ts";

const denied = (model: Model, action: Action) =>
  new PermissionDenied(`You do not have permission to ${action} this ${model.verbose}.`);

/**
 * The row `id` of `model` that the user may `action`. @throws PermissionDenied (403) or NotFoundError (404)
 * as described above.
 */
export async function rowFor(ctx: Ctx, model: Model, id: string, action: Action): Promise<Row> {
  const [row] = await rowsFor(ctx, model, [id], action);
  return row!;
}

/**
 * The rows `ids` of `model` (in the model's order), every one of which the user may `action`: all or a
 * 403/404 as described above, never the permitted part of a selection.
 */
export async function rowsFor(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
  action: Action,
): Promise<Row[]> {
  if (!mayDo(ctx.grants, model, action)) throw denied(model, action);
  const uniq = [...new Set(ids)];
  if (!uniq.length) return [];
  const { rows } = await listRows(ctx, model, {
    params: new Map([["id", uniq]]),
    limit: undefined,
    offset: 0,
    action: "view",
  });
  if (rows.length < uniq.length) throw new NotFoundError();
  if (action === "view" || !(await restriction(ctx, model, action))) return rows;
  if (uniq.length === 1) {
    if (!(await permits(ctx, model, uniq[0]!, action))) throw denied(model, action);
    return rows;
  }
  const { count } = await listRows(ctx, model, {
    params: new Map([["id", uniq]]),
    limit: undefined,
    offset: 0,
    action,
    skipCount: true,
  });
  if (count < uniq.length) throw denied(model, action);
  return rows;
}
