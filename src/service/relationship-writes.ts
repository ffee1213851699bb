/**
 * The writable `relationships` key of objects (Nautobot 1.6 `RelationshipsDataField.to_internal_value` and
 * `RelationshipModelSerializerMixin._save_relationships`): `{"<slug>": {"<side>": {"objects": [ref…]}}}`
 * replaces the listed side's associations of the object; relationships and sides not named are kept.
 */
import { randomUUID } from "node:crypto";
import { hasRelationships, type Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { ErrorBag, ValidationError } from "./errors.ts";
import { resolveRef } from "./input.ts";
import { relationshipsOf, sidesOf } from "./object-extras.ts";
import { changeList, type Row } from "./rows.ts";
import { associationError } from "./validators.ts";

/** One side of one relationship to set: the peers' ids, in order. */
export interface RelationshipChange {
  rel: Row;
  /** The side the *peers* are on (`source`, `destination`, `peer`). */
  other: "source" | "destination" | "peer";
  peers: string[];
}

/**
 * Django's `Model._meta.label` (`dcim.Site`, `ipam.IPAddress`): the app and the class name, which is the
 * verbose name in title case without spaces for every model that can have relationships.
 */
export function modelLabel(model: Model): string {
  return `${model.app}.${model.verbose.replace(/(^|\s)(\S)/g, (_m, _sp: string, c: string) => c.toUpperCase())}`;
}

const OPPOSITE = { source: "destination", destination: "source", peer: "peer" } as const;

/**
 * Parse the `relationships` value of a write body. Errors go under `relationships` with Nautobot's
 * wording. @returns undefined when the key is absent or the model has no relationships.
 */
export async function parseRelationships(
  ctx: Ctx,
  model: Model,
  input: unknown,
  errors: ErrorBag,
): Promise<RelationshipChange[] | undefined> {
  if (!hasRelationships(model) || input === undefined) return undefined;
  const fail = (msg: string) => {
    errors.add("relationships", msg);
    return undefined;
  };
  if (input === null || typeof input !== "object" || Array.isArray(input))
    return fail(
      `Expected a dictionary of items but got type "${Array.isArray(input) ? "list" : typeof input}".`,
    );
  const rels = await relationshipsOf(ctx, model.key);
  const label = modelLabel(model);
  const out: RelationshipChange[] = [];
  for (const [slug, data] of Object.entries(input as Record<string, unknown>)) {
    const rel = rels.find((r) => r.slug === slug);
    if (!rel) return fail(`"${slug}" is not a relationship on ${label}`);
    if (!data || typeof data !== "object" || Array.isArray(data))
      return fail(`"${slug}" must be a dictionary`);
    const valid = sidesOf(rel, model.key).map((s) => OPPOSITE[s]);
    for (const [other, sideData] of Object.entries(data as Record<string, unknown>)) {
      if (!(valid as string[]).includes(other))
        return fail(`"${other}" is not a valid side for "${rel.name}" on ${label}`);
      if (!sideData || typeof sideData !== "object" || !("objects" in sideData))
        return fail(`"objects" must be specified under ["${slug}"]["${other}"] when present`);
      const objects = (sideData as { objects: unknown }).objects;
      if (!Array.isArray(objects)) return fail('"objects" must be a list, not a single value');
      const many = rel.type === "many-to-many" || rel.type === "symmetric-many-to-many";
      const manyHere = many || (rel.type === "one-to-many" && other === "destination");
      if (objects.length > 1 && !manyHere)
        return fail(`For "${rel.name}", "${other}" objects must include at most a single object`);
      const target = ctx.reg.models.get(String(other === "source" ? rel.source_type : rel.destination_type));
      if (!target) return fail(`Model ${other} is not currently installed, cannot look it up`);
      const peers: string[] = [];
      for (const item of objects) {
        const bag = new ErrorBag();
        const id = await resolveRef(ctx, target, item, "x", bag);
        if (bag.has()) return fail(String((bag.errors.x as string[] | undefined)?.[0] ?? "Invalid object"));
        if (id && !peers.includes(id)) peers.push(id);
      }
      out.push({ rel, other: other as RelationshipChange["other"], peers });
    }
  }
  return out;
}

/**
 * Replace the associations of `id` on each changed side (in the caller's transaction). Each new association
 * is checked by `RelationshipAssociation.clean`'s rules (validators.ts `associationError`).
 * @throws ValidationError `{"relationships": [Nautobot's message]}` when a new association breaks one.
 */
export async function saveRelationships(
  ctx: Ctx,
  _model: Model,
  id: string,
  changes: readonly RelationshipChange[],
): Promise<void> {
  const table = "extras_relationshipassociation";
  for (const { rel, other, peers } of changes) {
    // The object's own side: as source its peers are destinations, and the other way round.
    const mine = OPPOSITE[other];
    let existing = ctx.db.selectFrom(table).selectAll().where("relationship_id", "=", rel.id);
    existing =
      mine === "peer"
        ? existing.where((eb) => eb.or([eb("source_id", "=", id), eb("destination_id", "=", id)]))
        : existing.where(`${mine}_id`, "=", id);
    const rows = await existing.execute();
    const peerOf = (a: Row) =>
      mine === "peer" ? (a.source_id === id ? a.destination_id : a.source_id) : a[`${other}_id`];
    const keep = new Set<string>();
    for (const a of rows) {
      if (peers.includes(peerOf(a))) keep.add(peerOf(a));
      else {
        await ctx.db.deleteFrom(table).where("id", "=", a.id).execute();
        noteAssociation(ctx, String(a.id), "delete");
      }
    }
    for (const peer of peers) {
      if (keep.has(peer)) continue;
      const [source, destination] = mine === "destination" ? [peer, id] : [id, peer];
      // Nautobot saves each association with `validated_save()`, so its `clean()` rules and wording apply
      // (there a 500 with the model's error; here a 400 under `relationships`).
      const broken = await associationError(ctx, {
        relationship: rel.id,
        source_type: rel.source_type,
        source_id: source,
        destination_type: rel.destination_type,
        destination_id: destination,
      });
      if (broken) throw new ValidationError({ relationships: [broken[1]] });
      const assocId = randomUUID();
      await ctx.db
        .insertInto(table)
        .values({
          id: assocId,
          relationship_id: rel.id,
          source_type: rel.source_type,
          source_id: source,
          destination_type: rel.destination_type,
          destination_id: destination,
        })
        .execute();
      noteAssociation(ctx, assocId, "create");
    }
  }
}

/**
 * Note an association written here, outside the generic writes: not change-logged (Nautobot does not log
 * them), but versioned (issue 27), so reads at a point show the associations of that point.
 */
function noteAssociation(ctx: Ctx, id: string, action: "create" | "delete"): void {
  changeList(ctx).push({ model: ctx.reg.get("extras.relationshipassociation"), id, action, logged: false });
}

const title = (s: string) => s.replace(/(^|\s)([a-z])/g, (_m, sp: string, c: string) => sp + c.toUpperCase());

/**
 * Relationships marked `required_on` this model's side need at least one peer (Nautobot 1.6
 * `RelationshipModel.required_related_objects_errors`, API wording). On an update that does not send
 * `relationships`, existing associations satisfy the rule. Symmetric relationships are never enforced.
 * @throws ValidationError `{"relationships": {"<slug>": [messages]}}`.
 */
export async function checkRequiredRelationships(
  ctx: Ctx,
  model: Model,
  changes: readonly RelationshipChange[] | undefined,
  instanceId: string | undefined,
  keySpecified: boolean,
): Promise<void> {
  if (!hasRelationships(model)) return;
  const rels = (await relationshipsOf(ctx, model.key)).filter(
    (r) =>
      r.required_on && !String(r.type).startsWith("symmetric-") && r[`${r.required_on}_type`] === model.key,
  );
  if (!rels.length) return;
  const errors: Record<string, string[]> = {};
  for (const rel of rels) {
    const opposite = rel.required_on === "source" ? "destination" : "source";
    const supplied = changes?.find((c) => c.rel.id === rel.id && c.other === opposite);
    if (instanceId && !supplied && !keySpecified) {
      const existing = await ctx.db
        .selectFrom("extras_relationshipassociation")
        .select("id")
        .where("relationship_id", "=", rel.id)
        .where(`${rel.required_on}_id`, "=", instanceId)
        .executeTakeFirst();
      if (existing) continue;
    }
    const required = ctx.reg.models.get(String(rel[`${opposite}_type`]));
    if (!required) continue;
    const many = rel.type === "many-to-many" || (rel.type === "one-to-many" && opposite === "destination");
    const howMany = many ? "at least one" : "a";
    const msgs: string[] = [];
    const any = await ctx.db.selectFrom(required.table).select("id").limit(1).executeTakeFirst();
    if (!any) {
      const plural = required.plural ?? `${required.verbose}s`;
      msgs.push(
        `${title(model.plural ?? `${model.verbose}s`)} require ${howMany} ${required.verbose}, but no ${plural} exist yet. ` +
          `Create a ${required.verbose} by posting to /api/${required.app}/${required.path}/`,
      );
    }
    if (!supplied?.peers.length)
      msgs.push(`You need to specify ["relationships"]["${rel.slug}"]["${opposite}"]["objects"].`);
    if (msgs.length) errors[String(rel.slug)] = msgs;
  }
  if (Object.keys(errors).length) throw new ValidationError({ relationships: errors });
}
