/**
 * Delete guards a model declaration names with `deleteGuard` (Nautobot's `Model.delete()` overrides that
 * raise `ProtectedError`): run by `deleteObjects` for the objects a delete names directly, never for those
 * it cascades to (Django's collector deletes those without calling `delete()`). A guard returns the ids it
 * refuses; the delete then answers 409 "Unable to delete object. N dependent objects were found: …" naming
 * them, as Nautobot names the protected object itself.
 */
import { sql } from "kysely";
import { escapeLike } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import { joinTable } from "../store/ddl.ts";
import type { Ctx } from "./context.ts";
import { chunks, type Row } from "./rows.ts";

/** Parse a stored JSON value (text on both engines); undefined when unreadable. */
function parsed(v: unknown): unknown {
  if (typeof v !== "string") return v ?? undefined;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/**
 * Whether some object of a model the custom field `cf` applies to holds `value`: equal to it for a select
 * field, listing it for a multi-select field (candidates found by their JSON text, each then checked
 * exactly). Custom-field data are keyed by the field's name, as Nautobot 1.6 keys `_custom_field_data`.
 */
async function choiceUsed(ctx: Ctx, cf: Row, types: readonly string[], value: string): Promise<boolean> {
  const name = String(cf.name);
  for (const key of types) {
    const m = ctx.reg.models.get(key);
    if (!m?.customFields) continue;
    const text = ctx.store.dialect.jsonText(sql.ref("_custom_field_data"), name);
    if (cf.type === "select") {
      const hit = await ctx.db
        .selectFrom(m.table)
        .select("id")
        .where(sql<boolean>`${text} = ${value}`)
        .limit(1)
        .executeTakeFirst();
      if (hit) return true;
      continue;
    }
    const rows = await ctx.db
      .selectFrom(m.table)
      .select(sql<string>`${text}`.as("v"))
      .where(ctx.store.dialect.ilike(text, `%${escapeLike(JSON.stringify(value))}%`))
      .execute();
    for (const r of rows) {
      const list = parsed(r.v);
      if (Array.isArray(list) && list.includes(value)) return true;
    }
  }
  return false;
}

/**
 * A custom-field choice cannot be deleted while it is its select field's default, one of its multi-select
 * field's defaults, or held by an object of the field's content types (Nautobot 1.6.32
 * `CustomFieldChoice.delete`: "Cannot delete this choice because it is in active use.", answered by the
 * REST API as a 409 naming the choice). Deleting the field itself deletes its choices regardless.
 */
async function customFieldChoiceInUse(ctx: Ctx, _model: Model, ids: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  const cfModel = ctx.reg.get("extras.customfield");
  for (const part of chunks([...ids])) {
    const choices = await ctx.db
      .selectFrom("extras_customfieldchoice as c")
      .innerJoin("extras_customfield as f", "f.id", "c.field_id")
      .select(["c.id as id", "c.value as value", "f.id as field_id", "f.name as name", "f.type as type"])
      .select("f.default as default")
      .where("c.id", "in", part)
      .execute();
    const typesOf = new Map<string, string[]>();
    for (const c of choices as Row[]) {
      const value = String(c.value);
      const def = parsed(c.default);
      if (c.type === "select" ? def === value : Array.isArray(def) && def.includes(value)) {
        refused.push(c.id);
        continue;
      }
      let types = typesOf.get(c.field_id);
      if (!types) {
        const rows = await ctx.db
          .selectFrom(joinTable(cfModel, "content_types"))
          .select("content_type")
          .where("source_id", "=", c.field_id)
          .execute();
        types = rows.map((r: Row) => String(r.content_type));
        typesOf.set(c.field_id, types);
      }
      if (await choiceUsed(ctx, c, types, value)) refused.push(c.id);
    }
  }
  return refused;
}

const GUARDS: Record<string, (ctx: Ctx, model: Model, ids: readonly string[]) => Promise<string[]>> = {
  customFieldChoiceInUse,
};

/**
 * Run a model's delete guard over the ids a delete names. @returns the ids refused (empty when none or
 * when the model has no guard). Unknown names are a programming error.
 */
export async function refusedDeletes(ctx: Ctx, model: Model, ids: readonly string[]): Promise<string[]> {
  if (!model.deleteGuard || !ids.length) return [];
  const g = GUARDS[model.deleteGuard];
  if (!g) throw new Error(`unknown delete guard ${model.deleteGuard}`);
  return g(ctx, model, ids);
}
