/**
 * OPTIONS metadata (Nautobot BulkOperationMetadata, nautobot-api-core.md §5): the model's name, the view's
 * description, renders/parses, and per writable method a map of every field with its DRF type, flags,
 * bounds, choices and the `children` (nested serializers) or `child` (lists) it has. As Nautobot 1.6.32,
 * it describes the newest API version's serializer whatever version the request asks for (its
 * `NautobotAPIVersionMixin` picks the versioned serializer only for reads and writes, not for metadata).
 */

import { FIELD_TEXT, VIEW_DESCRIPTION } from "../registry/field-text.ts";
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

/** DRF metadata of one field (type, required, read-only, label, help text, length and value bounds). */
function fieldMeta(model: Model, name: string, fd: FieldDef): Record<string, unknown> {
  const text = FIELD_TEXT[`${model.app}/${model.path}`]?.[name];
  const meta: Record<string, unknown> = {
    type: typeOf(fd),
    required: !!fd.required && !fd.readOnly,
    read_only: !!fd.readOnly || fd.kind === "count" || fd.kind === "computed",
    label: text?.label ?? label(name, fd),
  };
  const help = text?.help ?? fd.help;
  if (help) meta.help_text = help;
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

/**
 * The `children` of a nested-object field: the target's nested serializer fields (DRF SimpleMetadata),
 * `names` (an FK's `nestedFields`) or the target's `nested` list. A nested FK is itself a read-only nested
 * object with its own children (a device type's `manufacturer`, an interface's `device`, a virtual
 * chassis's `master`), one rendered as a bare id (`cable`, `asId`) a plain writable "field".
 */
function nestedChildren(
  reg: Registry,
  target: Model,
  names: readonly string[] = target.nested,
  depth = 1,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...HEAD };
  for (const n of names) {
    const fd = target.fields[n];
    if (!fd || fd.kind === "gfk" || fd.kind === "m2m") continue;
    if (fd.kind === "fk") {
      const meta: Record<string, unknown> = {
        type: "field",
        required: false,
        read_only: false,
        label: FIELD_TEXT[`${target.app}/${target.path}`]?.[n]?.label ?? label(n, fd),
      };
      if (!fd.asId && n !== "cable") {
        meta.type = "nested object";
        meta.read_only = true;
        if (depth < MAX_NESTING) meta.children = nestedChildren(reg, reg.get(fd.to), undefined, depth + 1);
      }
      out[n] = meta;
      continue;
    }
    const meta = fieldMeta(target, n, fd);
    if (fd.kind === "computed" && fd.nestedType) meta.type = fd.nestedType;
    out[n] = meta;
  }
  return out;
}

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
  const words = model.verbose
    .split(" ")
    .map((w) =>
      w.length <= 3 && /^(ip|vrf|vlan|rir|vc)$/i.test(w)
        ? w.toUpperCase()
        : w.charAt(0).toUpperCase() + w.slice(1),
    );
  const body: Record<string, unknown> = {
    name: words.join(" "),
    description: VIEW_DESCRIPTION[`${model.app}/${model.path}`] ?? "",
    renders: ["application/json", "text/html"],
    parses: ["application/json"],
  };
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
    if (fd.kind === "choice") meta.choices = fd.choices.map(([value, display]) => ({ value, display }));
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
        choices: ctChoices(reg, cts),
      };
      fields[`${name}_id`] = {
        type: "string",
        required: !!fd.required,
        read_only: false,
        label: label(`${name}_id`),
      };
      fields[name] = { type: "field", required: false, read_only: true, label: label(name) };
      continue;
    }
    if (fd.kind === "ct") meta.choices = ctChoices(reg, reg.resolveAllowed(fd.allowed));
    if (fd.writeOnly) meta.write_only = true;
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
  if (hasNotes(model))
    fields.notes_url = { type: "field", required: false, read_only: true, label: "Notes url" };
  if (model.customFields) {
    fields.custom_fields = { type: "field", required: false, read_only: false, label: "Custom fields" };
    fields.computed_fields = { type: "field", required: false, read_only: true, label: "Computed fields" };
  }
  if (hasRelationships(model))
    fields.relationships = { type: "field", required: false, read_only: false, label: "Relationships" };
  // Nautobot: each method only with the model-level permission for it; no `actions` key when none.
  const actions: Record<string, unknown> = {};
  if (scope === "list" && may.post) actions.POST = fields;
  if (may.put) actions.PUT = fields;
  if (Object.keys(actions).length) body.actions = actions;
  return body;
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
