/**
 * The opt-in keys of full representations that come from other extras: `relationships` (Nautobot 1.6
 * `RelationshipsDataField.to_representation`) and `computed_fields` (`ComputedField` templates rendered
 * per object). Both are loaded set-wise for a page: one query for the definitions (memoised per request),
 * one for the associations, one per related content type for the peers.
 */
import type { Model } from "../registry/index.ts";
import {
  type RequestBudget,
  renderBudgetFromEnv,
  renderMany,
  requestBudgetFromEnv,
} from "../template/bounded.ts";
import { type Ctx, definitionsMemo } from "./context.ts";
import { nestedFor } from "./represent.ts";
import { chunks, type Row } from "./rows.ts";

type Obj = Record<string, unknown>;

/** The relationships whose source or destination is a content type, by name (memoised per request). */
export async function relationshipsOf(ctx: Ctx, modelKey: string): Promise<Row[]> {
  const key = `relationships:${modelKey}`;
  const memo = definitionsMemo(ctx);
  let rels = memo.get(key) as Row[] | undefined;
  if (!rels) {
    rels = await ctx.db
      .selectFrom("extras_relationship")
      .selectAll()
      .where((eb) => eb.or([eb("source_type", "=", modelKey), eb("destination_type", "=", modelKey)]))
      .orderBy("name")
      .execute();
    memo.set(key, rels);
  }
  return rels;
}

/** The sides a content type takes in a relationship: `source`, `destination` or `peer` (symmetric). */
export function sidesOf(rel: Row, modelKey: string): Array<"source" | "destination" | "peer"> {
  if (String(rel.type).startsWith("symmetric-")) return rel.source_type === modelKey ? ["peer"] : [];
  const out: Array<"source" | "destination"> = [];
  if (rel.source_type === modelKey) out.push("source");
  if (rel.destination_type === modelKey) out.push("destination");
  return out;
}

/** Nautobot `Relationship.has_many(side)`: whether that side may hold several objects. */
export function hasMany(rel: Row, side: "source" | "destination" | "peer"): boolean {
  const type = String(rel.type);
  if (type === "many-to-many" || type === "symmetric-many-to-many") return true;
  return type === "one-to-many" && side === "destination";
}

/**
 * Nautobot `Relationship.get_label(side)`: the side's label, else the other model's verbose name (plural
 * when the other side holds several objects).
 */
export function relationshipLabel(ctx: Ctx, rel: Row, side: "source" | "destination" | "peer"): string {
  const own = side === "destination" ? rel.destination_label : rel.source_label;
  if (own) return String(own);
  const otherSide = side === "source" ? "destination" : side === "destination" ? "source" : "peer";
  const other = ctx.reg.models.get(String(side === "destination" ? rel.source_type : rel.destination_type));
  if (!other) return "";
  return hasMany(rel, otherSide) ? (other.plural ?? `${other.verbose}s`) : other.verbose;
}

/**
 * The `relationships` value of rows: `{<slug>: {id, url, name, type, <other side>: {label, object_type,
 * objects: [nested…]}}}` for every relationship the model takes part in, associations or not.
 */
export async function relationshipsFor(ctx: Ctx, model: Model, ids: string[]): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  const rels = await relationshipsOf(ctx, model.key);
  if (!rels.length) return out;
  const relModel = ctx.reg.get("extras.relationship");
  const assocs: Row[] = [];
  for (const part of chunks(ids, 900)) {
    assocs.push(
      ...(await ctx.db
        .selectFrom("extras_relationshipassociation")
        .selectAll()
        .where(
          "relationship_id",
          "in",
          rels.map((r) => r.id),
        )
        .where((eb) =>
          eb.or([
            eb.and([eb("source_type", "=", model.key), eb("source_id", "in", part)]),
            eb.and([eb("destination_type", "=", model.key), eb("destination_id", "in", part)]),
          ]),
        )
        .execute()),
    );
  }
  // Peers: the other end of each association, rendered nested, one query per content type.
  const wanted = new Map<string, string[]>();
  for (const a of assocs) {
    for (const side of ["source", "destination"] as const) {
      const list = wanted.get(a[`${side}_type`]) ?? [];
      list.push(a[`${side}_id`]);
      wanted.set(a[`${side}_type`], list);
    }
  }
  const peers = new Map<string, Obj>();
  for (const [t, tids] of wanted) {
    const m = ctx.reg.models.get(t);
    if (!m) continue;
    for (const [id, o] of await nestedFor(ctx, m, tids)) peers.set(`${t}:${id}`, o);
  }
  const byRel = new Map<string, Row[]>();
  for (const a of assocs) byRel.set(a.relationship_id, [...(byRel.get(a.relationship_id) ?? []), a]);
  for (const id of ids) {
    const data: Obj = {};
    for (const rel of rels) {
      const entry: Obj = {
        id: rel.id,
        url: `${ctx.baseUrl}/api/extras/${relModel.path}/${rel.id}/`,
        name: rel.name,
        type: rel.type,
      };
      for (const side of sidesOf(rel, model.key)) {
        const other = side === "source" ? "destination" : side === "destination" ? "source" : "peer";
        const objectType = other === "source" ? rel.source_type : rel.destination_type;
        const objects: Obj[] = [];
        for (const a of byRel.get(rel.id) ?? []) {
          let peer: string | undefined;
          if (side === "source" && a.source_id === id) peer = `${a.destination_type}:${a.destination_id}`;
          else if (side === "destination" && a.destination_id === id)
            peer = `${a.source_type}:${a.source_id}`;
          else if (side === "peer" && a.source_id === id) peer = `${a.destination_type}:${a.destination_id}`;
          else if (side === "peer" && a.destination_id === id) peer = `${a.source_type}:${a.source_id}`;
          const o = peer ? peers.get(peer) : undefined;
          if (o) objects.push(o);
        }
        entry[other] = { label: relationshipLabel(ctx, rel, side), object_type: objectType, objects };
      }
      data[String(rel.slug)] = entry;
    }
    out.set(id, data);
  }
  return out;
}

/** The computed-field budget of each request, from its first computed field on (issue 23). */
const requestBudgets = new WeakMap<Ctx, RequestBudget>();

/**
 * Fill `computed_fields` of rendered objects: each computed field of the content type, by slug, rendered
 * from its template with `obj` = the object's representation, in the bounded renderer's reader lane
 * (template/bounded.ts `renderMany`). A failing render gives the field's `fallback_value` (Nautobot 1.6
 * `ComputedField.render` catches every exception), and so does every render the request's budget
 * (`INVENTORY_COMPUTED_TIMEOUT`, `INVENTORY_COMPUTED_MAX_BYTES`, shared by all calls with the same ctx) did
 * not leave time or room for.
 */
export async function computedFieldsFor(ctx: Ctx, model: Model, objs: Obj[]): Promise<void> {
  const key = `computedfields:${model.key}`;
  const memo = definitionsMemo(ctx);
  let defs = memo.get(key) as Row[] | undefined;
  if (!defs) {
    defs = await ctx.db
      .selectFrom("extras_computedfield")
      .selectAll()
      .where("content_type", "=", model.key)
      .orderBy("weight")
      .orderBy("slug")
      .execute();
    memo.set(key, defs);
  }
  if (!defs.length || !objs.length) return;
  let request = requestBudgets.get(ctx);
  if (!request) {
    request = requestBudgetFromEnv();
    requestBudgets.set(ctx, request);
  }
  const contexts = objs.map((obj) => ({ obj: { ...obj, computed_fields: undefined } }));
  const rendered = await renderMany(
    defs.map((d) => String(d.template)),
    contexts,
    renderBudgetFromEnv(),
    request,
  );
  objs.forEach((obj, i) => {
    const values: Obj = {};
    defs.forEach((d, t) => {
      values[d.slug] = rendered[i * defs.length + t] ?? d.fallback_value ?? "";
    });
    obj.computed_fields = values;
  });
}
