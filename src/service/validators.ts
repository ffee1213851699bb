/**
 * Service-level validation rules a model declaration names with `serviceValidate` (they need the filter
 * compiler or other service machinery, which the registry layer cannot import).
 */
import { filterSizeErrors } from "../query/filter-input.ts";
import { compileFilters, filterSetFor } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { groupFilterErrors } from "./dynamic-groups.ts";
import type { ErrorBag } from "./errors.ts";
import { checkConfigContextData, checkLocalContext, checkSchemaDefinition } from "./json-schema.ts";
import { nestedFor } from "./represent.ts";
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
      // Client input: the size bounds of client filters first (issue 23), then the filter compiler.
      const size = filterSizeErrors(params, new Set());
      const { errors: bad } = Object.keys(size).length
        ? { errors: size }
        : await compileFilters(
            { db: ctx.db, dialect: ctx.store.dialect, reg: ctx.reg, model: m },
            params,
            new Set(),
          );
      for (const [p, msgs] of Object.entries(bad))
        for (const msg of msgs) errors.add("constraints", `Invalid constraint for ${ct}: ${p}: ${msg}`);
    }
  }
}

/**
 * DynamicGroup: `filter` is a dictionary of the content type's REST filters (Nautobot 1.6
 * `DynamicGroup.clean_filter`, which answers the filterset's errors keyed by filter name): every key a
 * filter of the content type, every value a string, number, boolean or null or a list of them, within the
 * size bounds of query parameters (`filterSizeErrors`), and compiled by the same filter compiler as a list
 * (RE2 patterns, typed values, existing related objects); the member query itself is not run. Errors are
 * keyed by the filter's name, as Nautobot's.
 */
async function dynamicGroup(ctx: Ctx, _model: Model, rec: Row, errors: ErrorBag): Promise<void> {
  const m = ctx.reg.models.get(String(rec.content_type ?? ""));
  if (!m || rec.filter === undefined || rec.filter === null) return;
  for (const [p, msgs] of Object.entries(await groupFilterErrors(ctx, m, rec.filter)))
    for (const msg of msgs) errors.add(p, msg);
}

/** `str()` of the object `id` of model `key` (its display), or undefined when it cannot be found. */
export async function objectStr(ctx: Ctx, key: unknown, id: unknown): Promise<string | undefined> {
  const m = ctx.reg.models.get(String(key ?? ""));
  if (!m || typeof id !== "string") return undefined;
  const o = (await nestedFor(ctx, m, [id], [])).get(id);
  return o ? String(o.display) : undefined;
}

/**
 * RelationshipAssociation, as Nautobot 1.6.32 `RelationshipAssociation.clean` words and keys it: the first
 * broken rule only, in its order — the two sides have the relationship's content types; no object is
 * associated with itself; a symmetric pair is not stored twice (`__all__`); one-to-one / one-to-many sides
 * hold at most one association (`destination` / `source`, naming the object by its `str()`).
 */
async function relationshipAssociation(ctx: Ctx, _model: Model, rec: Row, errors: ErrorBag): Promise<void> {
  const msg = await associationError(ctx, rec);
  if (msg) errors.add(msg[0], msg[1]);
}

/**
 * The first rule of `RelationshipAssociation.clean` that the association `rec` (`relationship`,
 * `source_type`, `source_id`, `destination_type`, `destination_id`; `id` when stored) breaks, as
 * `[key, message]`, or undefined. Shared by the association endpoint and objects' `relationships` key.
 */
export async function associationError(ctx: Ctx, rec: Row): Promise<[string, string] | undefined> {
  const rel = await ctx.db
    .selectFrom("extras_relationship")
    .selectAll()
    .where("id", "=", String(rec.relationship ?? ""))
    .executeTakeFirst();
  if (!rel) return undefined;
  for (const side of ["source", "destination"] as const) {
    if (rec[`${side}_type`] !== rel[`${side}_type`])
      return [`${side}_type`, `${side}_type has a different value than defined in ${rel.name}`];
  }
  if (rec.source_type === rec.destination_type && rec.source_id === rec.destination_id)
    return ["destination_id", "An object cannot form a RelationshipAssociation with itself"];
  const type = String(rel.type);
  const all = () =>
    ctx.db.selectFrom("extras_relationshipassociation").select("id").where("relationship_id", "=", rel.id);
  const others = () => all().where("id", "!=", String(rec.id ?? ""));
  const exists = async (q: ReturnType<typeof all>) => !!(await q.executeTakeFirst());
  const src = async () => (await objectStr(ctx, rec.source_type, rec.source_id)) ?? String(rec.source_id);
  const dst = async () =>
    (await objectStr(ctx, rec.destination_type, rec.destination_id)) ?? String(rec.destination_id);
  const sourceId = String(rec.source_id);
  const destinationId = String(rec.destination_id);
  if (
    type.startsWith("symmetric-") &&
    (await exists(all().where("destination_id", "=", sourceId).where("source_id", "=", destinationId)))
  )
    return ["__all__", `A ${rel.name} association already exists between ${await src()} and ${await dst()}`];
  if (type === "many-to-many" || type === "symmetric-many-to-many") return undefined;
  if (await exists(others().where("destination_id", "=", destinationId)))
    return [
      "destination",
      `Unable to create more than one ${rel.name} association to ${await dst()} (destination)`,
    ];
  if (type === "one-to-many") return undefined;
  if (await exists(others().where("source_id", "=", sourceId)))
    return ["source", `Unable to create more than one ${rel.name} association from ${await src()} (source)`];
  if (type !== "symmetric-one-to-one") return undefined;
  if (await exists(all().where("destination_id", "=", sourceId)))
    return [
      "source",
      `Unable to create more than one ${rel.name} association involving ${await src()} (peer)`,
    ];
  if (await exists(all().where("source_id", "=", destinationId)))
    return [
      "destination",
      `Unable to create more than one ${rel.name} association involving ${await dst()} (peer)`,
    ];
  return undefined;
}

/**
 * A tag's content types may not drop a model that objects tagged with it belong to (Nautobot 1.6
 * `TagSerializer.validate`: "Unable to remove dcim.site. Dependent objects were found."; API 1.3+, where the
 * field is writable).
 */
async function tagContentTypes(ctx: Ctx, _model: Model, rec: Row, errors: ErrorBag): Promise<void> {
  if (!rec.id || !Array.isArray(rec.content_types)) return;
  const kept = new Set(rec.content_types as string[]);
  const used = await ctx.db
    .selectFrom("extras_taggeditem")
    .select("content_type")
    .distinct()
    .where("tag_id", "=", rec.id as string)
    .execute();
  for (const { content_type } of used) {
    if (!kept.has(content_type as string))
      errors.add("content_types", `Unable to remove ${content_type}. Dependent objects were found.`);
  }
}

const VALIDATORS: Record<string, (ctx: Ctx, model: Model, rec: Row, errors: ErrorBag) => Promise<void>> = {
  tagContentTypes,
  object_permission: objectPermission,
  dynamicGroup,
  relationshipAssociation,
  configContextSchema: checkSchemaDefinition,
  configContextData: checkConfigContextData,
  localContext: checkLocalContext,
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
