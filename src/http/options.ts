/**
 * OPTIONS metadata (Nautobot BulkOperationMetadata, nautobot-api-core.md §5): the model's name, the view's
 * description, renders/parses, and per writable method a map of every field with its DRF type, flags,
 * bounds, choices and the `children` (nested serializers) or `child` (lists) it has. As Nautobot 1.6.32,
 * it describes the newest API version's serializer whatever version the request asks for (its
 * `NautobotAPIVersionMixin` picks the versioned serializer only for reads and writes, not for metadata).
 */

import { fieldText, VIEW_DESCRIPTION } from "../registry/field-text.ts";
import { hasNotes, hasRelationships, type Model, type Registry, registryAt } from "../registry/index.ts";
import type { FieldDef } from "../registry/meta.ts";
import type { Ctx } from "../service/context.ts";
import { statusesFor } from "../service/rows.ts";
import type { Auth } from "./auth.ts";
import { API_VERSIONS } from "./versions.ts";

/** The API version whose serializers OPTIONS describes at every requested version (the newest). */
const DESCRIBED_VERSION = API_VERSIONS[API_VERSIONS.length - 1]!;

/** How deep nested serializers' `children` go (Nautobot's nest at most three levels: device → interface → device). */
const MAX_NESTING = 3;

const label = (name: string, fd?: FieldDef) =>
  fd?.label ?? (name.charAt(0).toUpperCase() + name.slice(1)).replace(/_/g, " ");

function typeOf(fd: FieldDef): string {
  switch (fd.kind) {
    case "str":
      return fd.format === "email" ? "email" : fd.format === "url" ? "url" : "string";
    case "text":
    case "mac":
    case "ip":
      return "string";
    case "slug":
      return "slug";
    case "int":
    case "count":
      return "integer";
    case "bool":
      return "boolean";
    case "decimal":
      return "decimal";
    case "date":
      return "date";
    case "datetime":
      return "datetime";
    case "json":
      return "field";
    case "choice":
      return fd.plain ? "choice" : "field";
    case "fk":
      // One rendered as a bare id is a PrimaryKeyRelatedField.
      return fd.asId ? "field" : "nested object";
    case "m2m":
    case "cts":
      return "field";
    case "computed":
      // Nautobot's SerializerMethodFields and ReadOnlyFields are DRF "field"; a declared type wins.
      return !fd.type || fd.type === "json" ? "field" : fd.type;
    default:
      return "field";
  }
}

/**
 * DRF metadata of one field (type, required, read-only, label, help text, length and value bounds), as
 * DRF 3.14 `SimpleMetadata.get_field_info` gives it: no `write_only` key (a password or secret is shown as
 * a plain writable field).
 */
function fieldMeta(model: Model, name: string, fd: FieldDef): Record<string, unknown> {
  const text = fieldText(model, name, fd);
  const meta: Record<string, unknown> = {
    type: typeOf(fd),
    required: !!fd.required && !fd.readOnly,
    read_only: !!fd.readOnly || fd.kind === "count" || fd.kind === "computed",
    label: text.label,
  };
  if (text.help) meta.help_text = text.help;
  // DRF's `ModelSerializer.include_extra_kwargs` drops the length and value bounds of read-only fields.
  if (meta.read_only) return meta;
  if (fd.kind === "str" && fd.min) meta.min_length = fd.min;
  if ((fd.kind === "str" || fd.kind === "slug") && fd.max) meta.max_length = fd.max;
  if (fd.kind === "mac") meta.max_length = 18;
  if (fd.kind === "int") {
    if (fd.min !== undefined) meta.min_value = fd.min;
    if (fd.max !== undefined) meta.max_value = fd.max;
  }
  return meta;
}

/** DRF's metadata of the id, display and url fields every Nautobot serializer starts with. */
const HEAD = {
  display: {
    type: "field",
    required: false,
    read_only: true,
    label: "Display",
    help_text: "Human friendly display value",
  },
  id: { type: "string", required: false, read_only: true, label: "Id" },
  url: { type: "field", required: false, read_only: true, label: "Url" },
} as const;

/** DRF's metadata of the change-log dates of a model with a change log. */
const CHANGELOG = {
  created: { type: "date", required: false, read_only: true, label: "Created" },
  last_updated: { type: "datetime", required: false, read_only: true, label: "Last updated" },
} as const;

const NOTES_URL = { type: "field", required: false, read_only: true, label: "Notes url" } as const;

/**
 * Models whose API view has Nautobot 1.6's `ContentTypeMetadata` as its `metadata_class`
 * (`nautobot/extras/api/views.py`), the only views besides those with a status field
 * (`StatusViewSetMixin`'s `StatusFieldMetadata`, a subclass) that list a content-type field's `choices`.
 */
const CONTENT_TYPE_METADATA = new Set([
  "extras.customfield",
  "extras.exporttemplate",
  "extras.imageattachment",
  "extras.note",
  "extras.objectchange",
  "extras.relationship",
  "extras.relationshipassociation",
]);

/** Whether OPTIONS lists the choices of the model's content-type fields (see CONTENT_TYPE_METADATA). */
const showsContentTypeChoices = (model: Model) =>
  CONTENT_TYPE_METADATA.has(model.key) || model.fieldList.some(([, fd]) => fd.kind === "status");

/**
 * A field as a nested serializer has it: Nautobot's nested serializers are not versioned, so a field that
 * is on the wire only at some API versions (`FieldBase.versions`) is described as declared where it is on
 * (a nested custom field's `name`, off the 1.6 serializer, is writable and required there).
 */
function unversioned(target: Model, name: string, fd: FieldDef): FieldDef {
  const v = fd.versions;
  if (!v || !fd.hidden) return fd;
  const at = v.until ?? v.since;
  return (at && registryAt(at).models.get(target.key)?.fields[name]) || fd;
}

/**
 * Whether a nested serializer makes the field required although the model does not: DRF's
 * `ModelSerializer.get_uniqueness_extra_kwargs` requires every field of a `unique_together` set whose fields
 * are all in the serializer, unless the model field has a default (Nautobot 1.6's nested device type: its
 * `slug`, from `(manufacturer, slug)`). Nautobot's full serializers validate uniqueness otherwise.
 */
function uniqueRequired(target: Model, names: readonly string[], name: string, fd: FieldDef): boolean {
  if (fd.readOnly || (fd as { default?: unknown }).default !== undefined) return false;
  return (target.uniqueTogether ?? []).some(
    (u) => u.fields.includes(name) && u.fields.every((f) => names.includes(f)),
  );
}

/**
 * The `children` of a nested-object field: the target's nested serializer fields (DRF SimpleMetadata),
 * `names` (an FK's `nestedFields`, which may name the change-log dates and `notes_url`) or the target's
 * `nested` list. A nested FK is itself a read-only nested object with its own children (a device type's
 * `manufacturer`, an interface's `device`), unless the nested serializer declares it writable
 * (`FkField.nestedWrite`: a virtual chassis's `master`); one rendered as a bare id (`cable`, `asId`) is a
 * plain writable "field". Choice fields carry their `choices`, as DRF lists them for any writable field.
 */
function nestedChildren(
  reg: Registry,
  target: Model,
  names: readonly string[] = target.nested,
  depth = 1,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...HEAD };
  for (const n of names) {
    if (n === "created" || n === "last_updated") {
      out[n] = CHANGELOG[n];
      continue;
    }
    if (n === "notes_url") {
      out[n] = NOTES_URL;
      continue;
    }
    const declared = target.fields[n];
    if (!declared || declared.kind === "gfk" || declared.kind === "m2m") continue;
    const fd = unversioned(target, n, declared);
    if (fd.kind === "fk") {
      const meta: Record<string, unknown> = {
        type: "field",
        required: false,
        read_only: false,
        label: fieldText(target, n, fd).label,
      };
      if (!fd.asId && n !== "cable") {
        meta.type = "nested object";
        meta.required = fd.nestedWrite === "required";
        meta.read_only = !fd.nestedWrite;
        if (depth < MAX_NESTING) meta.children = nestedChildren(reg, reg.get(fd.to), undefined, depth + 1);
      }
      out[n] = meta;
      continue;
    }
    const meta = fieldMeta(target, n, fd);
    if (uniqueRequired(target, names, n, fd)) meta.required = true;
    if (fd.kind === "computed" && fd.nestedType) meta.type = fd.nestedType;
    if (fd.kind === "choice" && fd.nestedAuto) {
      meta.type = "choice";
      meta.required = fd.nestedAuto.required;
      if (fd.nestedAuto.label) meta.label = fd.nestedAuto.label;
    }
    if (fd.kind === "choice" && !fd.readOnly) meta.choices = choicesOf(fd);
    out[n] = meta;
  }
  // The nested representation's own order (`ModelDef.nestedKeyOrder`), not a slim form's.
  return target.nestedKeyOrder && names === target.nested ? reordered(out, target.nestedKeyOrder) : out;
}

/** A choice field's choices as DRF's metadata lists them. */
const choicesOf = (fd: FieldDef & { kind: "choice" }) =>
  fd.choices.map(([value, display]) => ({ value, display }));

/**
 * A list of nested objects as DRF describes a `many=True` nested serializer: type "field" with a `child`
 * nested object (no label) whose `children` are the target's nested fields.
 */
function nestedList(reg: Registry, target: Model, meta: Record<string, unknown>, readOnly: boolean) {
  meta.type = "field";
  meta.child = {
    type: "nested object",
    required: false,
    read_only: readOnly,
    children: nestedChildren(reg, target),
  };
}

/**
 * A model view's name as Nautobot 1.6's `get_view_name` gives it: the model's verbose name in title case
 * (acronyms upper case), also for views over a model that are not its own (the interface connections
 * list is "Interface").
 */
export function viewName(model: Model): string {
  return model.verbose
    .split(" ")
    .map((w) =>
      w.length <= 3 && /^(ip|vrf|vlan|rir|vc)$/i.test(w)
        ? w.toUpperCase()
        : w.charAt(0).toUpperCase() + w.slice(1),
    )
    .join(" ");
}

/** The OPTIONS body of a view without actions: its name, description, renderers and parsers. */
export function viewOptions(name: string, description = ""): Record<string, unknown> {
  return { name, description, renders: ["application/json", "text/html"], parses: ["application/json"] };
}

/** Build the OPTIONS body. `scope` list offers POST and PUT, detail only PUT. */
export async function optionsFor(
  ctx: Ctx,
  requested: Model,
  scope: "list" | "detail",
  auth: Auth,
  may: { post: boolean; put: boolean } = { post: true, put: true },
): Promise<Record<string, unknown>> {
  const reg = registryAt(DESCRIBED_VERSION);
  const model = reg.get(requested.key);
  const body = viewOptions(viewName(model), VIEW_DESCRIPTION[`${model.app}/${model.path}`]);
  if (model.readOnly || !auth.writeEnabled || !auth.actor) return body;
  const fields: Record<string, unknown> = { id: HEAD.id, display: HEAD.display, url: HEAD.url };
  for (const [name, fd] of model.fieldList) {
    if (fd.hidden) continue;
    const meta = fieldMeta(model, name, fd);
    if (fd.kind === "fk" && !fd.asId) meta.children = nestedChildren(reg, reg.get(fd.to), fd.nestedFields);
    if (fd.kind === "computed" && fd.target) {
      const target = reg.get(fd.target.model);
      if (fd.target.many) nestedList(reg, target, meta, true);
      else meta.children = nestedChildren(reg, target);
    }
    if (fd.kind === "computed" && fd.of) nestedList(reg, reg.get(fd.of.model), meta, true);
    if (fd.kind === "choice") meta.choices = choicesOf(fd);
    if (fd.kind === "status") {
      meta.choices = [...(await statusesFor(ctx, model.key)).values()].map((s) => ({
        value: s.slug,
        display: s.name,
      }));
    }
    if (fd.kind === "gfk") {
      const cts = reg.resolveAllowed(fd.allowed);
      fields[`${name}_type`] = {
        type: "field",
        required: !!fd.required,
        read_only: false,
        label: label(`${name}_type`),
        ...(showsContentTypeChoices(model) ? { choices: ctChoices(reg, cts) } : {}),
      };
      fields[`${name}_id`] = {
        type: "string",
        required: !!fd.required,
        read_only: false,
        label: label(`${name}_id`),
      };
      // A bare one (a relationship association's source and destination) has no object field.
      if (!fd.bare) fields[name] = { type: "field", required: false, read_only: true, label: label(name) };
      continue;
    }
    if (fd.kind === "ct" && !fd.readOnly && showsContentTypeChoices(model))
      meta.choices = ctChoices(reg, reg.resolveAllowed(fd.allowed));
    fields[name] = meta;
  }
  if (model.changelog) Object.assign(fields, CHANGELOG);
  if (model.tags)
    fields.tags = {
      type: "field",
      required: false,
      read_only: false,
      label: "Tags",
      child: {
        type: "nested object",
        required: false,
        read_only: false,
        // Nautobot's TagSerializerField: the nested tag plus its change-log dates.
        children: { ...nestedChildren(reg, reg.get("extras.tag")), ...CHANGELOG },
      },
    };
  if (hasNotes(model)) fields.notes_url = NOTES_URL;
  if (model.customFields) {
    fields.custom_fields = { type: "field", required: false, read_only: false, label: "Custom fields" };
    fields.computed_fields = { type: "field", required: false, read_only: true, label: "Computed fields" };
  }
  if (hasRelationships(model))
    fields.relationships = { type: "field", required: false, read_only: false, label: "Relationships" };
  // Nautobot: each method only with the model-level permission for it; no `actions` key when none.
  // Nautobot's serializers that list their fields explicitly in another order (`ModelDef.keyOrder`).
  const ordered = model.keyOrder ? reordered(fields, model.keyOrder) : fields;
  const actions: Record<string, unknown> = {};
  if (scope === "list" && may.post) actions.POST = ordered;
  if (may.put) actions.PUT = ordered;
  if (Object.keys(actions).length) body.actions = actions;
  return body;
}

/** `obj` with `order`'s keys first (those present), then the rest in their order (as the representation). */
function reordered(obj: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (k in obj) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[k] = v;
  return out;
}

/** A content-type choice as Nautobot's OPTIONS shows it: `{"value": "dcim.site", "display": "dcim | site"}`. */
function ctChoice(reg: Registry, key: string): { value: string; display: string } {
  const m = reg.models.get(key);
  return { value: key, display: m ? `${m.app} | ${m.verbose}` : key };
}

/**
 * Content-type choices in Nautobot 1.6's order: by app label, then by the model's verbose name compared
 * code unit by code unit, so capitalised names come first ("IP address", "RIR", "VLAN", then "aggregate";
 * seen in every content-type field's OPTIONS of Nautobot 1.6.32, e.g. relationships' `source_type`).
 */
function ctChoices(reg: Registry, keys: readonly string[]): Array<{ value: string; display: string }> {
  const sortKey = (k: string): [string, string] => {
    const m = reg.models.get(k);
    return m ? [m.app, m.verbose] : [k.split(".")[0] ?? k, k];
  };
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...keys]
    .sort((a, b) => {
      const [aa, av] = sortKey(a);
      const [ba, bv] = sortKey(b);
      return cmp(aa, ba) || cmp(av, bv);
    })
    .map((c) => ctChoice(reg, c));
}
