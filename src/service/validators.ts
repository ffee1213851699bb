/**
 * Service-level validation rules a model declaration names with `serviceValidate` (they need the filter
 * compiler or other service machinery, which the registry layer cannot import).
 */
import { compileFilters, filterSetFor } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import type { ErrorBag } from "./errors.ts";
import type { Row } from "./rows.ts";

const ACTIONS = new Set(["view", "add", "change", "delete"]);

/**
 * ObjectPermission: actions are view/add/change/delete, and every constraint set compiles as filters of
 * every listed object type (issue 5: constraints use the API's query language). `"$user"` values are
 * checked for the parameter name only.
 */
async function objectPermission(ctx: Ctx, _model: Model, rec: Row, errors: ErrorBag): Promise<void> {
  const actions = Array.isArray(rec.actions) ? rec.actions : [];
  for (const a of actions) if (!ACTIONS.has(String(a))) errors.add("actions", `Invalid action "${a}".`);
  const raw = rec.constraints;
  if (raw === null || raw === undefined) return;
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.some((c) => !c || typeof c !== "object" || Array.isArray(c))) {
    errors.add("constraints", "Constraints must be an object or a list of objects.");
    return;
  }
  for (const ct of (rec.object_types as string[] | undefined) ?? []) {
    const m = ctx.reg.models.get(ct);
    if (!m) continue;
    const fs = filterSetFor(ctx.reg, m);
    for (const c of list as Array<Record<string, unknown>>) {
      const params = new Map<string, string[]>();
      for (const [k, v] of Object.entries(c)) {
        const values = (Array.isArray(v) ? v : [v]).map(String);
        if (values.includes("$user")) {
          if (!fs.has(k))
            errors.add("constraints", `Invalid constraint for ${ct}: ${k}: Unknown filter field`);
          continue;
        }
        params.set(k, values);
      }
      const { errors: bad } = await compileFilters(
        { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model: m },
        params,
        new Set(),
      );
      for (const [p, msgs] of Object.entries(bad))
        for (const msg of msgs) errors.add("constraints", `Invalid constraint for ${ct}: ${p}: ${msg}`);
    }
  }
}

const VALIDATORS: Record<string, (ctx: Ctx, model: Model, rec: Row, errors: ErrorBag) => Promise<void>> = {
  object_permission: objectPermission,
};

/** Run a named service validator. Unknown names are a programming error. */
export async function runServiceValidator(
  ctx: Ctx,
  name: string,
  model: Model,
  rec: Row,
  errors: ErrorBag,
): Promise<void> {
  const v = VALIDATORS[name];
  if (!v) throw new Error(`unknown service validator ${name}`);
  await v(ctx, model, rec, errors);
}
