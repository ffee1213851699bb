/**
 * What list pages show of a model (issue 25): the columns (Nautobot's default columns where the registry
 * declares them in `registry/presentation.ts`, else a generic choice of short fields), without the field
 * the object's display already shows ("Prefix | Prefix"); content types as words instead of keys
 * (`dcim.interface` → "DCIM › interface"); and a page title for objects whose display is Nautobot's
 * `#<pk>` (an unlabelled cable: "Cable 3f2a9c1e").
 */
import { APP_LABELS, type Model, type Registry } from "../registry/index.ts";
import { LIST_COLUMNS } from "../registry/presentation.ts";
import { titleOf } from "./views.ts";

type Obj = Record<string, unknown>;

/** Kinds a generated list column may have: short values. */
const COLUMN_KINDS = new Set(["fk", "status", "choice", "str", "int", "ip", "slug", "count", "bool", "ct"]);
const SKIP = new Set(["description", "comments", "custom_fields", "config_context", "local_context_data"]);

/**
 * The list columns of a model after its display column (field names of its API representation): the
 * registry's declared defaults that the model has, else up to six short fields (status first). Never the
 * field the display is made of, nor `name`/`slug`.
 */
export function defaultColumns(model: Model): string[] {
  const shown = (n: string) => {
    const fd = model.fields[n];
    return !!fd && !fd.hidden && !fd.writeOnly && n !== model.display;
  };
  const declared = LIST_COLUMNS[model.key];
  if (declared) return declared.filter(shown);
  const out: string[] = [];
  for (const [name, fd] of model.fieldList) {
    if (SKIP.has(name) || name === "name" || name === "slug" || !shown(name)) continue;
    if (COLUMN_KINDS.has(fd.kind)) out.push(name);
  }
  return out.sort((a, b) => Number(b === "status") - Number(a === "status")).slice(0, 6);
}

/** A content type's words: `dcim.interface` → "DCIM › interface" (the model's verbose name). */
export function contentTypeLabel(reg: Registry, key: string): string {
  const m = reg.models.get(key);
  const [app] = key.split(".");
  return m
    ? `${APP_LABELS[m.app] ?? m.app} › ${m.verbose}`
    : `${APP_LABELS[app ?? ""] ?? app} › ${key.split(".")[1] ?? ""}`;
}

/** Value `v` of field `name` of `model` for display: content types (single and lists) as words. */
export function shownValue(reg: Registry, model: Model, name: string, v: unknown): unknown {
  const kind = model.fields[name]?.kind;
  if (kind === "ct" && typeof v === "string" && v.includes(".")) return contentTypeLabel(reg, v);
  if (kind === "cts" && Array.isArray(v))
    return v.map((x) => (typeof x === "string" ? contentTypeLabel(reg, x) : x));
  return v;
}

/** `obj` with its content-type fields (single and lists) given as words, for display only. */
export function withContentTypeLabels(reg: Registry, model: Model, obj: Obj): Obj {
  const out = { ...obj };
  for (const [name] of model.fieldList) if (name in out) out[name] = shownValue(reg, model, name, out[name]);
  return out;
}

/**
 * The title of an object's page and list link: its display, except Nautobot's `#<pk>` display of objects
 * without a name (an unlabelled cable), which becomes "<Verbose name> <first 8 characters of the id>".
 */
export function objectTitle(model: Model, obj: Obj): string {
  const display = String(obj.display ?? "");
  const id = String(obj.id ?? "");
  return display === `#${id}` || display === "" ? `${titleOf(model.verbose)} ${id.slice(0, 8)}` : display;
}
