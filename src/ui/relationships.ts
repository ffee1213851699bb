/**
 * Relationships in the web interface (issue 25), as Nautobot 1.6.32's `RelationshipModelForm` and detail
 * pages show them, for every model with relationships, driven by the relationship definitions:
 *
 * - a form control per relationship side the object takes (`cr_<slug>__<peer side>`, Nautobot's field
 *   name), labelled with `Relationship.get_label(side)`, the relationship's description as help text, a
 *   single select where the peer side holds one object and a multi select where it holds several
 *   (`Relationship.has_many`), over the typeahead of the peer's content type filtered by the peer side's
 *   `<side>_filter`; sides marked hidden and sides whose `<side>_filter` the object does not match are left
 *   out (`RelationshipModel.get_relationships`), and so are sides whose peers the user may not view;
 * - the posted controls as the API's `relationships` write key, so the service layer saves the object and
 *   its associations in one transaction with one change-log entry and the API's webhooks;
 * - the detail page's rows: each shown side's label and its peers as links.
 */
import { hasRelationships, type Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { ValidationError } from "../service/errors.ts";
import {
  hasMany,
  relationshipLabel,
  relationshipsFor,
  relationshipsOf,
  sidesOf,
} from "../service/object-extras.ts";
import { mayDo } from "../service/permissions.ts";
import { listRows } from "../service/read.ts";
import type { Row } from "../service/rows.ts";
import { esc } from "./format.ts";
import { type Control, relatedControl } from "./forms.ts";
import { uiUrl } from "./views.ts";

type Obj = Record<string, unknown>;
type Side = "source" | "destination" | "peer";

const OPPOSITE = { source: "destination", destination: "source", peer: "peer" } as const;

/** One relationship side a form shows: the control's name, the peer side and the peers' model. */
interface FormSide {
  rel: Row;
  /** The object's own side. */
  side: Side;
  /** The side the peers are on (the API's key under the relationship's slug). */
  other: Side;
  name: string;
  peerModel: Model;
}

/** A relationship's `<side>_filter` as filter parameters (`{"site": ["ams"]}` → `site=ams`), or undefined. */
function filterOf(rel: Row, side: "source" | "destination"): Map<string, string[]> | undefined {
  let raw: unknown = rel[`${side}_filter`];
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const out = new Map<string, string[]>();
  for (const [k, v] of Object.entries(raw as Obj))
    out.set(
      k,
      [v]
        .flat()
        .filter((x) => x !== null && x !== undefined)
        .map(String),
    );
  return out.size ? out : undefined;
}

/**
 * The relationship sides of `model` a form shows for object `id` (none for a new object): not hidden, and
 * the object matches the side's filter (Nautobot `RelationshipModel.get_relationships`).
 */
async function formSides(ctx: Ctx, model: Model, id?: string): Promise<FormSide[]> {
  if (!hasRelationships(model)) return [];
  const out: FormSide[] = [];
  for (const rel of await relationshipsOf(ctx, model.key)) {
    for (const side of sidesOf(rel, model.key)) {
      const own = side === "peer" ? "source" : side;
      if (rel[`${own}_hidden`]) continue;
      const filter = id ? filterOf(rel, own) : undefined;
      if (filter) {
        try {
          const { rows } = await listRows(ctx, model, {
            params: new Map([...filter, ["id", [id!]]]),
            limit: 1,
            offset: 0,
            skipCount: true,
          });
          if (!rows.length) continue;
        } catch (e) {
          // A filter the model's filter set rejects does not hide the relationship.
          if (!(e instanceof ValidationError)) throw e;
        }
      }
      const other = OPPOSITE[side];
      const peerModel = ctx.reg.models.get(
        String(other === "destination" ? rel.destination_type : rel.source_type),
      );
      // Without the view permission on the peers a user sees none of them, and an empty control would
      // delete the associations on save: such sides are neither drawn nor sent (kept as they are).
      if (!peerModel || !mayDo(ctx.grants, peerModel, "view")) continue;
      out.push({ rel, side, other, name: `cr_${rel.slug}__${other}`, peerModel });
    }
  }
  return out;
}

/**
 * A required-relationship message of the API in Nautobot 1.6.32's form wording
 * (`RelationshipModel.required_related_objects_errors(output_for="ui")`): "You need to select a provider."
 * (or "at least one") instead of the API's `["relationships"][…]["objects"]`, and the peer's add page
 * instead of its API endpoint as the hint when none exist yet.
 */
function uiWording(message: string, rel: Row, other: Side, peer: Model): string {
  const howMany = hasMany(rel, other) ? "at least one" : "a";
  if (/^You need to specify \["relationships"\]/.test(message))
    return `You need to select ${howMany} ${peer.verbose}.`;
  return message.replace(
    /Create an? .+ by posting to \/api\/\S+$/,
    `Create a ${peer.verbose} at /${peer.app}/${peer.path}/add/.`,
  );
}

/**
 * The relationship controls of a form for `model`: values from `current` when the form is a posted one
 * (`posted`), else the object's associations (`id`) or none (a new object). Errors of a control come under
 * its name or under `relationships.<slug>` (`splitErrors` of the service's `{"relationships": {slug: …}}`).
 */
export async function relationshipControls(
  ctx: Ctx,
  model: Model,
  current: Obj,
  errors: Record<string, string[]>,
  opts: { id?: string; posted?: boolean } = {},
): Promise<Control[]> {
  const sides = await formSides(ctx, model, opts.id);
  if (!sides.length) return [];
  const saved =
    opts.id && !opts.posted ? (await relationshipsFor(ctx, model, [opts.id])).get(opts.id) : undefined;
  const out: Control[] = [];
  for (const { rel, side, other, name, peerModel } of sides) {
    const multiple = hasMany(rel, other);
    let value: string[];
    if (opts.posted)
      value = [current[name] ?? []]
        .flat()
        .flatMap((v) => String(v).split(","))
        .map((v) => v.trim())
        .filter(Boolean);
    else {
      const objects = ((saved?.[String(rel.slug)] as Obj | undefined)?.[other] as Obj | undefined)?.objects;
      value = Array.isArray(objects) ? objects.map((o) => String((o as Obj).id)) : [];
    }
    const own = side === "peer" ? "source" : side;
    const peerFilter = filterOf(rel, other === "peer" ? "source" : other);
    // The peer side's filter narrows the typeahead (one value per parameter, as the lookup takes them).
    const scope: Record<string, string> = {};
    for (const [k, v] of peerFilter ?? []) if (v.length === 1) scope[k] = `=${v[0]}`;
    out.push(
      await relatedControl(
        ctx,
        {
          name,
          label: relationshipLabel(ctx, rel, side),
          required: rel.required_on === own && !String(rel.type).startsWith("symmetric-"),
          errors: [
            ...(errors[name] ?? []),
            ...(errors[`relationships.${rel.slug}`] ?? []).map((m) => uiWording(m, rel, other, peerModel)),
          ],
          value: multiple ? value : (value[0] ?? ""),
          ...(rel.description ? { help: String(rel.description) } : {}),
        },
        peerModel.key,
        { sources: { "": { model: peerModel.key, scope } }, ...(multiple ? { multiple: true } : {}) },
        multiple,
      ),
    );
  }
  return out;
}

/**
 * The relationship controls of a posted form as the API's `relationships` write key
 * (`{"<slug>": {"<peer side>": {"objects": [ids]}}}`) in `body`; every shown side is sent (an emptied one
 * removes its associations). Nothing for a model without relationships.
 */
export async function relationshipsFromForm(
  ctx: Ctx,
  model: Model,
  form: Obj,
  body: Obj,
  id?: string,
): Promise<void> {
  const sides = await formSides(ctx, model, id);
  if (!sides.length) return;
  const rels: Record<string, Record<string, { objects: string[] }>> = {};
  for (const { rel, other, name } of sides) {
    const objects = [form[name] ?? []]
      .flat()
      .flatMap((v) => String(v).split(","))
      .map((v) => v.trim())
      .filter(Boolean);
    const slug = String(rel.slug);
    rels[slug] = { ...(rels[slug] ?? {}), [other]: { objects } };
  }
  body.relationships = rels;
}

/**
 * The detail page's rows of an object's relationships (its `relationships` representation): per shown
 * side, the side's label and its peers as links (`—` without any), in the relationships' name order.
 */
export async function relationshipRows(
  ctx: Ctx,
  model: Model,
  data: unknown,
): Promise<Array<{ label: string; value: string }>> {
  if (!data || typeof data !== "object") return [];
  const out: Array<{ label: string; value: string }> = [];
  for (const rel of await relationshipsOf(ctx, model.key)) {
    const entry = (data as Obj)[String(rel.slug)] as Obj | undefined;
    if (!entry) continue;
    for (const side of sidesOf(rel, model.key)) {
      if (rel[`${side === "peer" ? "source" : side}_hidden`]) continue;
      const shown = entry[OPPOSITE[side]] as { label?: string; objects?: Obj[] } | undefined;
      if (!shown) continue;
      const links = (shown.objects ?? []).map((o) => {
        const href = uiUrl(o.url);
        return href ? `<a href="${esc(href)}">${esc(o.display)}</a>` : esc(o.display);
      });
      out.push({
        label: String(shown.label ?? rel.name),
        value: links.length ? links.join(", ") : '<span class="muted">—</span>',
      });
    }
  }
  return out;
}
