/**
 * Create/edit forms generated from the registry (issue 10): one control per writable field, chosen by the
 * field's kind, and the conversion of a posted form back into the API's write body, so that the service
 * layer validates UI writes exactly as API writes. Related objects are selects of the target's objects
 * (up to `MAX_OPTIONS`, else a text box taking an id or natural key).
 */
import { formFieldText } from "../registry/form-text.ts";
import type { Model } from "../registry/index.ts";
import type { FieldDef, GenericFkField } from "../registry/meta.ts";
import type { Ctx } from "../service/context.ts";
import type { ValidationError } from "../service/errors.ts";
import { hasMoreThan, listRows } from "../service/read.ts";
import { represent } from "../service/represent.ts";
import { customFieldsFor, statusesFor } from "../service/rows.ts";
import { gfkLookups, type LookupSpec, labelsOf, lookupFor, parentOf } from "./typeahead.ts";
import { titleOf } from "./views.ts";

/** Most options a related-object select lists before falling back to a text box. */
export const MAX_OPTIONS = 500;

/** One form control as the template draws it. */
export interface Control {
  name: string;
  label: string;
  /** `password`: a write-only field (a webhook's secret, a user's password), never drawn with a value. */
  kind: "text" | "textarea" | "number" | "checkbox" | "select" | "multi" | "json" | "date" | "password";
  required: boolean;
  help?: string;
  value: string | string[] | boolean;
  options?: Array<{ value: string; label: string }>;
  errors: string[];
  /** Hint shown in an empty box (a write-only field of an existing object: kept when left blank). */
  placeholder?: string;
  /** A typeahead (issue 25): where `static/typeahead.js` looks the control's objects up. */
  lookup?: LookupSpec;
  /** Labels of the current value(s) of a text-box fallback, for the typeahead's first draw. */
  current?: Array<{ value: string; label: string }>;
}

type Obj = Record<string, unknown>;

const editable = (fd: FieldDef) =>
  !fd.readOnly && !fd.hidden && fd.kind !== "count" && fd.kind !== "computed";

const str = (v: unknown): string =>
  v === null || v === undefined ? "" : String(Array.isArray(v) ? (v[0] ?? "") : v);

/**
 * The controls of a generic FK `name` (issue 25): `<name>_type` (a select of the allowed models),
 * `<name>_parent` (a typeahead of the chosen model's parent, a device or virtual machine, not saved) and
 * `<name>_id` (a typeahead of the chosen model's objects on that parent; a text box of the id without JS).
 */
async function gfkControls(
  ctx: Ctx,
  model: Model,
  name: string,
  fd: GenericFkField,
  current: Obj,
  errors: Record<string, string[]>,
): Promise<Control[]> {
  const { types, parent, object, parentLabel } = gfkLookups(ctx, name, fd);
  const type = str(current[`${name}_type`]);
  const id = str(current[`${name}_id`]);
  let parentId = str(current[`${name}_parent`]);
  const typeModel = ctx.reg.models.get(type);
  const p = typeModel && types.includes(type) ? parentOf(ctx, typeModel) : undefined;
  if (!parentId && p && /^[0-9a-f-]{32,36}$/i.test(id)) {
    const { rows } = await listRows(ctx, typeModel!, {
      params: new Map([["id", [id]]]),
      limit: 1,
      offset: 0,
    });
    parentId = str(rows[0]?.[`${p.field}_id`]);
  }
  const label = (x: string, m?: string) =>
    m ? (async () => (await labelsOf(ctx, m, [x])).get(x))() : undefined;
  const idLabel = type && types.includes(type) ? await label(id, type) : undefined;
  const parentLabelOf = p ? await label(parentId, p.model.key) : undefined;
  const base = formFieldText(model, name, fd).label;
  return [
    {
      name: `${name}_type`,
      label: `${base} type`,
      kind: "select",
      required: !!fd.required,
      value: type,
      errors: errors[`${name}_type`] ?? [],
      options: types.map((t) => ({ value: t, label: titleOf(ctx.reg.get(t).verbose) })),
    },
    {
      name: `${name}_parent`,
      label: `${base} ${parentLabel.toLowerCase()}`,
      kind: "text",
      required: false,
      value: parentId,
      errors: [],
      help: "Narrows the choice below (not saved).",
      lookup: parent,
      current: parentLabelOf ? [{ value: parentId, label: parentLabelOf }] : [],
    },
    {
      name: `${name}_id`,
      label: base,
      kind: "text",
      required: !!fd.required,
      value: id,
      errors: [...(errors[`${name}_id`] ?? []), ...(errors[name] ?? [])],
      help: "Type to search; without JavaScript, the object's id.",
      lookup: object,
      current: idLabel ? [{ value: id, label: idLabel }] : [],
    },
  ];
}

/** Options of a related model (display labels), or undefined when it has too many rows to list. */
async function relatedOptions(
  ctx: Ctx,
  to: string,
): Promise<Array<{ value: string; label: string }> | undefined> {
  const target = ctx.reg.get(to);
  if (await hasMoreThan(ctx, target, MAX_OPTIONS)) return undefined;
  const { rows } = await listRows(ctx, target, { params: new Map(), limit: MAX_OPTIONS, offset: 0 });
  const objs = await represent(ctx, target, rows, { fields: [] });
  return objs.map((o) => ({ value: String(o.id), label: String(o.display) }));
}

/**
 * A control choosing objects of model `to` (one, or several when `multiple`): a select (or multi select)
 * of its objects while there are at most `MAX_OPTIONS`, else a text box of comma-separated ids or names;
 * both become the typeahead `lookup` in the browser. `base.value` holds the chosen id(s).
 */
export async function relatedControl(
  ctx: Ctx,
  base: Omit<Control, "kind" | "options" | "lookup" | "current">,
  to: string,
  lookup: LookupSpec,
  multiple: boolean,
): Promise<Control> {
  const options = await relatedOptions(ctx, to);
  if (options) return { ...base, kind: multiple ? "multi" : "select", options, lookup };
  const ids = [base.value].flat().map(String).filter(Boolean);
  const labels = await labelsOf(ctx, to, ids);
  return {
    ...base,
    value: ids.join(","),
    kind: "text",
    help: "The id or name of the related object.",
    lookup,
    current: ids.map((v) => ({ value: v, label: labels.get(v) ?? v })),
  };
}

/** The current value of a field in a full representation, as form text. */
function formValue(fd: FieldDef, v: unknown): string | string[] | boolean {
  if (v === null || v === undefined) return fd.kind === "bool" ? false : "";
  if (fd.kind === "bool") return !!v;
  // A re-drawn form holds the posted strings; a fresh one the representation's values.
  if (typeof v === "string") return fd.kind === "m2m" || fd.kind === "cts" ? [v] : v;
  if (fd.kind === "m2m") return Array.isArray(v) ? v.map((x) => String((x as Obj).id ?? x)) : [];
  if (fd.kind === "cts") return Array.isArray(v) ? v.map(String) : [];
  if (fd.kind === "fk") return typeof v === "object" ? String((v as Obj).id ?? "") : String(v);
  if (fd.kind === "choice" || fd.kind === "status")
    return typeof v === "object" ? String((v as Obj).value ?? "") : String(v);
  if (fd.kind === "json") return JSON.stringify(v, null, 2);
  return String(v);
}

/**
 * The controls of a model's form, filled from `current` (a full representation or posted values). `id` is
 * the edited object's (scopes its primary-IP typeaheads); `fresh` marks a new object's form (field defaults
 * apply to the fields `current` does not give; default: when `current` is empty).
 */
export async function controlsFor(
  ctx: Ctx,
  model: Model,
  current: Obj,
  errors: Record<string, string[]> = {},
  opts: { id?: string; fresh?: boolean } = {},
): Promise<Control[]> {
  const out: Control[] = [];
  const fresh = opts.fresh ?? !Object.keys(current).length;
  for (const [name, fd] of model.fieldList) {
    if (!editable(fd)) continue;
    if (fd.kind === "gfk") {
      out.push(...(await gfkControls(ctx, model, name, fd, current, errors)));
      continue;
    }
    // A new object's form starts from the field defaults (an `enabled` box checked, a choice preselected).
    const given = name in current ? current[name] : "default" in fd && fresh ? fd.default : undefined;
    // Nautobot's label and help text of the field, as OPTIONS gives them (issue 25).
    const text = formFieldText(model, name, fd);
    const base = {
      name,
      label: text.label,
      required: !!fd.required,
      errors: errors[name] ?? [],
      value: formValue(fd, given),
      ...(text.help ? { help: text.help } : {}),
    };
    // A write-only field (issue 25: the webhook secret) is a password box, empty even after a failed post:
    // its value is never sent back to the browser.
    if (fd.writeOnly) {
      out.push({
        ...base,
        kind: "password",
        value: "",
        ...(opts.id ? { placeholder: "Unchanged when left blank" } : {}),
      });
      continue;
    }
    switch (fd.kind) {
      case "text":
        out.push({ ...base, kind: "textarea" });
        break;
      case "json":
        out.push({ ...base, kind: "json" });
        break;
      case "int":
      case "decimal":
        out.push({ ...base, kind: "number" });
        break;
      case "date":
        out.push({ ...base, kind: "date" });
        break;
      case "bool":
        out.push({ ...base, kind: "checkbox" });
        break;
      case "choice":
        out.push({
          ...base,
          kind: "select",
          options: fd.choices.map(([v, l]) => ({ value: String(v), label: l })),
        });
        break;
      case "status":
        out.push({
          ...base,
          kind: "select",
          options: [...(await statusesFor(ctx, model.key)).values()].map((s) => ({
            value: String(s.slug),
            label: String(s.name),
          })),
        });
        break;
      case "ct":
      case "cts": {
        const options = ctx.reg
          .resolveAllowed(fd.allowed)
          .map((k) => ({ value: k, label: k.replace(".", " | ") }));
        out.push({ ...base, kind: fd.kind === "ct" ? "select" : "multi", options });
        break;
      }
      case "fk":
      case "m2m": {
        const lookup = {
          ...lookupFor(ctx, model, name, fd.to, opts.id),
          ...(fd.kind === "m2m" ? { multiple: true } : {}),
        };
        out.push(await relatedControl(ctx, base, fd.to, lookup, fd.kind === "m2m"));
        break;
      }
      default:
        out.push({ ...base, kind: "text" });
    }
  }
  if (model.tags) {
    const tags = await relatedOptions(ctx, "extras.tag");
    const cur = current.tags;
    const value = Array.isArray(cur)
      ? cur.map((t) => String((t as Obj).id ?? t))
      : typeof cur === "string"
        ? [cur]
        : [];
    if (tags)
      out.push({
        name: "tags",
        label: "Tags",
        kind: "multi",
        required: false,
        errors: errors.tags ?? [],
        value,
        options: tags,
      });
  }
  if (model.customFields) {
    const values = (current.custom_fields ?? {}) as Obj;
    for (const d of await customFieldsFor(ctx, model.key)) {
      const key = `cf_${d.name}`;
      const v = key in current ? current[key] : values[d.name];
      const base = {
        name: key,
        label: d.name.replace(/_/g, " "),
        required: d.required,
        errors: errors[key] ?? [],
      };
      const text = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
      if (d.type === "boolean")
        out.push({ ...base, kind: "checkbox", value: v === true || v === "on" || v === "true" });
      else if (d.type === "select")
        out.push({
          ...base,
          kind: "select",
          value: text,
          options: d.choices.map((c) => ({ value: c, label: c })),
        });
      else if (d.type === "multi-select")
        out.push({
          ...base,
          kind: "multi",
          value: Array.isArray(v) ? v.map(String) : v ? [String(v)] : [],
          options: d.choices.map((c) => ({ value: c, label: c })),
        });
      else if (d.type === "integer") out.push({ ...base, kind: "number", value: text });
      else if (d.type === "date") out.push({ ...base, kind: "date", value: text });
      else if (d.type === "json")
        out.push({
          ...base,
          kind: "json",
          value: v === undefined || v === null ? "" : JSON.stringify(v, null, 2),
        });
      else if (d.type === "markdown") out.push({ ...base, kind: "textarea", value: text });
      else out.push({ ...base, kind: "text", value: text });
    }
  }
  return out;
}

/**
 * Custom-field and tag values of a posted form into `body` (`cf_<name>` controls → `custom_fields`, typed by
 * the field's type; an integer that is not one, or bad JSON, is an error beside its control).
 */
export async function extrasFromForm(
  ctx: Ctx,
  model: Model,
  form: Record<string, unknown>,
  body: Obj,
  errors: Record<string, string[]>,
): Promise<void> {
  if (model.tags) {
    const raw = form.tags;
    body.tags = Array.isArray(raw) ? raw.map(String) : raw ? [String(raw)] : [];
  }
  if (!model.customFields) return;
  const cf: Obj = {};
  for (const d of await customFieldsFor(ctx, model.key)) {
    const key = `cf_${d.name}`;
    const raw = form[key];
    const text = raw === undefined ? "" : String(Array.isArray(raw) ? raw[0] : raw).trim();
    if (d.type === "boolean") cf[d.name] = raw === "on" || raw === "true";
    else if (d.type === "multi-select")
      cf[d.name] = Array.isArray(raw) ? raw.map(String) : raw ? [String(raw)] : [];
    else if (text === "") cf[d.name] = null;
    else if (d.type === "integer") {
      if (/^-?\d+$/.test(text)) cf[d.name] = Number(text);
      else errors[key] = ["Enter a whole number."];
    } else if (d.type === "json") {
      try {
        cf[d.name] = JSON.parse(text);
      } catch (e) {
        errors[key] = [`Enter valid JSON: ${(e as Error).message}`];
      }
    } else cf[d.name] = text;
  }
  body.custom_fields = cf;
}

/**
 * A posted form as the API's write body. Blank values of optional fields are null; unchecked boxes false;
 * JSON fields parsed (a syntax error is reported beside the field). @returns the body and field errors.
 */
export function bodyFromForm(
  model: Model,
  form: Record<string, unknown>,
): { body: Obj; errors: Record<string, string[]> } {
  const body: Obj = {};
  const errors: Record<string, string[]> = {};
  const list = (v: unknown) =>
    Array.isArray(v) ? v.map(String) : v === undefined || v === "" ? [] : [String(v)];
  for (const [name, fd] of model.fieldList) {
    if (!editable(fd)) continue;
    const raw = form[name];
    switch (fd.kind) {
      case "gfk": {
        // Both blank: required → left out (the service names both fields), optional → unassigned.
        const t = str(form[`${name}_type`]).trim();
        const i = str(form[`${name}_id`]).trim();
        if (t || i) {
          body[`${name}_type`] = t || null;
          body[`${name}_id`] = i || null;
        } else if (!fd.required) {
          body[`${name}_type`] = null;
          body[`${name}_id`] = null;
        }
        break;
      }
      case "bool":
        body[name] = raw === "on" || raw === "true";
        break;
      case "m2m":
      case "cts":
        // A text-box fallback (too many objects for a select) holds comma-separated ids or names.
        body[name] = list(raw)
          .flatMap((v) => (fd.kind === "m2m" ? v.split(",") : [v]))
          .map((v) => v.trim())
          .filter(Boolean);
        break;
      case "json": {
        const text = String(raw ?? "").trim();
        if (!text) body[name] = fd.nullable ? null : (fd.default ?? null);
        else
          try {
            body[name] = JSON.parse(text);
          } catch (e) {
            errors[name] = [`Enter valid JSON: ${(e as Error).message}`];
          }
        break;
      }
      default: {
        const text = raw === undefined ? "" : String(Array.isArray(raw) ? raw[0] : raw);
        // A write-only field left blank keeps its stored value (or its default on create).
        if (fd.writeOnly && text === "") break;
        if (text === "") {
          if (
            fd.kind === "fk" ||
            fd.nullable ||
            fd.kind === "int" ||
            fd.kind === "decimal" ||
            fd.kind === "date" ||
            fd.kind === "choice" ||
            fd.kind === "ip" ||
            fd.kind === "mac"
          )
            body[name] = fd.kind === "choice" && !fd.nullable ? "" : null;
          else body[name] = "";
          // Left blank: the field's default applies, or the service reports it as required.
          if (
            fd.kind === "slug" ||
            fd.kind === "status" ||
            (fd.kind === "choice" && (fd.default !== undefined || fd.required))
          )
            delete body[name];
        } else body[name] = fd.kind === "int" && /^-?\d+$/.test(text) ? Number(text) : text;
      }
    }
  }
  return { body, errors };
}

/** Field errors of a ValidationError as `{field: [messages]}` plus the messages without a field. */
export function splitErrors(e: ValidationError): { fields: Record<string, string[]>; general: string[] } {
  const fields: Record<string, string[]> = {};
  const general: string[] = [];
  const errs = Array.isArray(e.errors) ? (e.errors[0] ?? {}) : e.errors;
  for (const [k, v] of Object.entries(errs as Record<string, unknown>)) {
    const msgs = [v].flat(3).map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x)));
    if (k === "non_field_errors" || k === "__all__") general.push(...msgs);
    else if (k === "relationships" && v && typeof v === "object" && !Array.isArray(v))
      // Per relationship (`{"relationships": {"<slug>": [messages]}}`): beside its controls (relationships.ts).
      for (const [slug, m] of Object.entries(v as Record<string, unknown>))
        fields[`relationships.${slug}`] = [m].flat(3).map(String);
    else fields[k] = msgs;
  }
  return { fields, general };
}
