/**
 * OPTIONS metadata (Nautobot BulkOperationMetadata, nautobot-api-core.md §5): the model's name,
 * renders/parses, and per writable method a map of every field with its type, flags and choices.
 */

import { FIELD_TEXT } from "../registry/field-text.ts";
import { hasNotes, hasRelationships, type Model } from "../registry/index.ts";
import type { FieldDef } from "../registry/meta.ts";
import type { Ctx } from "../service/context.ts";
import { statusesFor } from "../service/rows.ts";
import type { Auth } from "./auth.ts";

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
      return "nested object";
    case "m2m":
    case "cts":
      return "field";
    case "computed":
      return fd.type ?? "field";
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

/** The `children` of a nested-object field: the target's nested serializer fields (DRF SimpleMetadata). */
function nestedChildren(target: Model): Record<string, unknown> {
  const out: Record<string, unknown> = {
    display: {
      type: "field",
      required: false,
      read_only: true,
      label: "Display",
      help_text: "Human friendly display value",
    },
    id: { type: "string", required: false, read_only: true, label: "Id" },
    url: { type: "field", required: false, read_only: true, label: "Url" },
  };
  for (const n of target.nested) {
    const fd = target.fields[n];
    if (fd && fd.kind !== "fk" && fd.kind !== "gfk" && fd.kind !== "m2m") out[n] = fieldMeta(target, n, fd);
  }
  return out;
}

/** Build the OPTIONS body. `scope` list offers POST and PUT, detail only PUT. */
export async function optionsFor(
  ctx: Ctx,
  model: Model,
  scope: "list" | "detail",
  auth: Auth,
  may: { post: boolean; put: boolean } = { post: true, put: true },
): Promise<Record<string, unknown>> {
  const words = model.verbose
    .split(" ")
    .map((w) =>
      w.length <= 3 && /^(ip|vrf|vlan|rir|vc)$/i.test(w)
        ? w.toUpperCase()
        : w.charAt(0).toUpperCase() + w.slice(1),
    );
  const body: Record<string, unknown> = {
    name: words.join(" "),
    description: "",
    renders: ["application/json", "text/html"],
    parses: ["application/json"],
  };
  if (model.readOnly || !auth.writeEnabled || !auth.actor) return body;
  const fields: Record<string, unknown> = {
    id: { type: "string", required: false, read_only: true, label: "Id" },
    display: {
      type: "field",
      required: false,
      read_only: true,
      label: "Display",
      help_text: "Human friendly display value",
    },
    url: { type: "field", required: false, read_only: true, label: "Url" },
  };
  for (const [name, fd] of model.fieldList) {
    if (fd.hidden) continue;
    const meta = fieldMeta(model, name, fd);
    if (fd.kind === "fk" && !fd.asId) meta.children = nestedChildren(ctx.reg.get(fd.to));
    if (fd.kind === "choice") meta.choices = fd.choices.map(([value, display]) => ({ value, display }));
    if (fd.kind === "status") {
      meta.choices = [...(await statusesFor(ctx, model.key)).values()].map((s) => ({
        value: s.slug,
        display: s.name,
      }));
    }
    if (fd.kind === "gfk") {
      const cts = ctx.reg.resolveAllowed(fd.allowed);
      fields[`${name}_type`] = {
        type: "field",
        required: !!fd.required,
        read_only: false,
        label: label(`${name}_type`),
        choices: cts.map((c) => ctChoice(ctx, c)),
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
    if (fd.kind === "ct") meta.choices = ctx.reg.resolveAllowed(fd.allowed).map((c) => ctChoice(ctx, c));
    if (fd.writeOnly) meta.write_only = true;
    fields[name] = meta;
  }
  if (model.changelog) {
    fields.created = { type: "date", required: false, read_only: true, label: "Created" };
    fields.last_updated = { type: "datetime", required: false, read_only: true, label: "Last updated" };
  }
  if (model.tags)
    fields.tags = {
      type: "field",
      required: false,
      read_only: false,
      label: "Tags",
      child: { type: "nested object", required: false, read_only: false },
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
function ctChoice(ctx: Ctx, key: string): { value: string; display: string } {
  const m = ctx.reg.models.get(key);
  return { value: key, display: m ? `${m.app} | ${m.verbose}` : key };
}
