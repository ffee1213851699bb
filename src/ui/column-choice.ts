/**
 * The per-user column chooser of list pages (issue 25; Nautobot's "Configure" table button, kept in the
 * user's `config_data` as `tables.<TableName>.columns`): which columns a model's list may show, and the
 * columns a user chose (in their order), stored server-side through service/ui-preferences.ts.
 * The object's title column (its link) always comes first and is not part of the choice.
 */
import type { Model } from "../registry/index.ts";
import { deletePreference, getPreference, setPreference } from "../service/ui-preferences.ts";
import type { Store } from "../store/db.ts";
import { defaultColumns } from "./columns.ts";
import { titleOf } from "./views.ts";

/** Field kinds a list can render in a cell: short values (not texts, JSON, paths or many-to-many). */
const CHOOSABLE_KINDS = new Set([
  "fk",
  "status",
  "choice",
  "str",
  "int",
  "decimal",
  "ip",
  "mac",
  "slug",
  "count",
  "bool",
  "ct",
  "date",
  "datetime",
]);

/** Most columns a user may choose for one list. */
export const MAX_CHOSEN_COLUMNS = 40;

/** The preference key of a model's columns (Nautobot: `tables.<TableName>.columns`). */
export const columnsKey = (model: Model) => `tables.${model.key}.columns`;

/**
 * The columns a model's list can show (API field names, model order): the defaults first, then every other
 * visible short field. Never the field the title column already shows (the display field).
 */
export function availableColumns(model: Model): string[] {
  const defaults = defaultColumns(model);
  const out = [...defaults];
  for (const [name, fd] of model.fieldList) {
    if (out.includes(name) || name === model.display || fd.hidden || fd.writeOnly) continue;
    if (CHOOSABLE_KINDS.has(fd.kind)) out.push(name);
  }
  return out;
}

/** A column's header: the field's label, else its name in words. */
export const columnLabel = (model: Model, name: string) =>
  model.fields[name]?.label ?? titleOf(name.replace(/_/g, " "));

/**
 * The columns user `userId` sees on `model`'s list, in their order: their stored choice without names the
 * model no longer offers (unknown or removed columns are ignored), else the defaults (also when nothing of
 * the stored choice is left).
 */
export async function userColumns(store: Store, userId: string, model: Model): Promise<string[]> {
  const stored = await getPreference(store, userId, columnsKey(model));
  if (!Array.isArray(stored)) return defaultColumns(model);
  const offered = new Set(availableColumns(model));
  const cols = [...new Set(stored.filter((c): c is string => typeof c === "string" && offered.has(c)))];
  return cols.length ? cols : defaultColumns(model);
}

/**
 * Parse the chooser form: `column` (checked names, repeated) and `order_<name>` (a number; lower first,
 * ties and missing numbers in the form's order).
 * @returns the chosen names in order, or an error text naming the field (a 400 for the caller).
 */
export function chosenColumns(model: Model, body: Record<string, unknown>): string[] | { error: string } {
  const offered = availableColumns(model);
  const picked = [body.column ?? []].flat().map(String);
  const unknown = picked.find((c) => !offered.includes(c));
  if (unknown !== undefined)
    return { error: `column: "${unknown.slice(0, 40)}" is not a column of this list.` };
  const chosen = [...new Set(picked)];
  if (!chosen.length) return { error: "column: choose at least one column (or reset to the default)." };
  if (chosen.length > MAX_CHOSEN_COLUMNS)
    return { error: `column: at most ${MAX_CHOSEN_COLUMNS} columns can be chosen.` };
  const rank = new Map<string, number>();
  for (const c of chosen) {
    const raw = body[`order_${c}`];
    const text = String(Array.isArray(raw) ? raw[0] : (raw ?? "")).trim();
    if (text === "") continue;
    const n = Number(text);
    if (!Number.isFinite(n)) return { error: `order_${c}: "${text.slice(0, 20)}" is not a number.` };
    rank.set(c, n);
  }
  const pos = (c: string) => rank.get(c) ?? Number.POSITIVE_INFINITY;
  return chosen
    .map((c, i) => ({ c, i }))
    .sort((a, b) => pos(a.c) - pos(b.c) || a.i - b.i)
    .map((x) => x.c);
}

/** Store user `userId`'s columns of `model` (already checked by `chosenColumns`). */
export async function saveColumns(store: Store, userId: string, model: Model, cols: string[]): Promise<void> {
  await setPreference(store, userId, columnsKey(model), cols);
}

/** Forget user `userId`'s columns of `model`: the list shows Nautobot's defaults again. */
export async function resetColumns(store: Store, userId: string, model: Model): Promise<void> {
  await deletePreference(store, userId, columnsKey(model));
}
