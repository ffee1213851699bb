/**
 * Bulk import of any model (issue 25; Nautobot 1.6 `BulkImportView`): CSV whose headers are the API's
 * writable field names (Nautobot's CSV headers; `field.attr` picks the related object's attribute, as
 * `parse_csv`), JSON or YAML (a list of API write bodies, or one body). CSV cells are typed by the field
 * (integers, decimals, booleans, JSON, `a,b` lists for many-to-many fields, `cf_<name>` custom fields) and
 * references resolved by natural key under the user's view permission (a UUID, else `name`, then `model`,
 * `slug`, …: `site` by name or slug, `device` by name, `device_type` by model or slug; `status` is its
 * slug); a reference that matches nothing is sent as an attribute dict, so the create reports Nautobot's
 * "Related object not found using the provided attributes" beside the row's field. Everything is then
 * created by the service's bulk create in one transaction (all or none, errors per item).
 */
import { parse as parseCsv } from "csv-parse/sync";
import { parse as parseYaml } from "yaml";
import { normalizeUuid } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, ValidationError } from "./errors.ts";
import { boundedFilters, listRows } from "./read.ts";
import { createMany, inTransaction } from "./write.ts";

type Obj = Record<string, unknown>;

/** The formats an import accepts. */
export type ImportFormat = "csv" | "json" | "yaml";

/** Most records one import may hold (the API's bulk cap is of the same order). */
export const MAX_IMPORT_RECORDS = 5_000;

/** Attributes tried, in order, to find a related object by a CSV cell that is not a UUID. */
const NATURAL_KEYS = ["name", "model", "slug", "username", "cid", "prefix", "address", "label"];

/** One record to create and its position in the input (CSV: data row number, 1 = first row after the headers). */
export interface ImportRecord {
  row: number;
  body: Obj;
  /** The record as given (CSV: the cells as text, keyed by header). */
  raw: Obj;
}

const fail = (message: string): never => {
  throw new ValidationError({ data: [message] });
};

/**
 * Parse an import's text into records of raw values.
 * @returns CSV: one object of strings per data row, keyed by header; JSON/YAML: the list's objects.
 * @throws ValidationError keyed `data` for unparsable text, a CSV row with the wrong number of columns
 *   (Nautobot's "Row N: Expected X columns but found Y"), an item that is not an object, or too many records.
 */
export function parseImport(format: ImportFormat, text: string): Obj[] {
  let records: unknown;
  if (format === "csv") {
    let rows: string[][];
    try {
      rows = parseCsv(text, { skip_empty_lines: true, relax_column_count: true, bom: true, trim: true });
    } catch (e) {
      return fail(`CSV: ${(e as Error).message}`);
    }
    const [headers, ...data] = rows;
    if (!headers?.length) return fail("No CSV data: the first line must name the columns.");
    records = data.map((cells, i) => {
      if (cells.length !== headers.length)
        fail(`Row ${i + 1}: Expected ${headers.length} columns but found ${cells.length}`);
      return Object.fromEntries(headers.map((h, j) => [h, cells[j] ?? ""]));
    });
  } else {
    try {
      records = format === "json" ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
    } catch (e) {
      return fail(`${format.toUpperCase()}: ${(e as Error).message}`);
    }
    if (records && typeof records === "object" && !Array.isArray(records)) records = [records];
    if (!Array.isArray(records)) return fail("Expected a list of objects.");
    records.forEach((r, i) => {
      if (!r || typeof r !== "object" || Array.isArray(r)) fail(`Item ${i + 1}: Expected an object.`);
    });
  }
  const list = records as Obj[];
  if (!list.length) fail("Nothing to import.");
  if (list.length > MAX_IMPORT_RECORDS)
    fail(`At most ${MAX_IMPORT_RECORDS} records can be imported at once.`);
  return list;
}

/** Find a related object by a CSV cell: its id, or undefined (then the caller sends an attribute dict). */
async function lookup(
  ctx: Ctx,
  target: Model,
  attr: string | undefined,
  value: string,
  memo: Map<string, string | undefined>,
) {
  const uuid = !attr && normalizeUuid(value);
  if (uuid) return uuid;
  const key = `${target.key}\u0000${attr ?? ""}\u0000${value}`;
  if (memo.has(key)) return memo.get(key);
  let found: string | undefined;
  for (const a of attr ? [attr] : NATURAL_KEYS.filter((k) => target.fields[k])) {
    try {
      // A cell and its header's lookup (`tenant.name__ic`) are client input: the bounds of client filters.
      const params = boundedFilters(new Map([[a, [value]]]), new Set());
      const { rows } = await listRows(ctx, target, { params, limit: 2, offset: 0 });
      if (rows.length === 1) {
        found = String(rows[0]!.id);
        break;
      }
    } catch (e) {
      if (!(e instanceof AppError)) throw e; // a filter the model does not have: try the next attribute
    }
  }
  memo.set(key, found);
  return found;
}

/**
 * CSV records (strings keyed by header) as API write bodies, typed by field kind, references resolved.
 * @throws ValidationError keyed `data` naming an unknown header (Nautobot's `Unexpected column header "x"
 *   found.`) or a dotted header on a field that is not a relation.
 */
export async function csvBodies(ctx: Ctx, model: Model, records: Obj[]): Promise<Obj[]> {
  const memo = new Map<string, string | undefined>();
  const headers = Object.keys(records[0] ?? {});
  for (const h of headers) {
    const [name, attr] = h.split(".", 2) as [string, string | undefined];
    const fd = model.fields[name];
    if (name.startsWith("cf_") && model.customFields && !attr) continue;
    if (!fd || fd.readOnly || fd.hidden || fd.kind === "computed" || fd.kind === "count")
      fail(`Unexpected column header "${h}" found.`);
    if (attr && fd!.kind !== "fk" && fd!.kind !== "m2m")
      fail(`Column "${name}" is not a related object; cannot use dots`);
  }
  const out: Obj[] = [];
  for (const rec of records) {
    const body: Obj = {};
    for (const [h, raw] of Object.entries(rec)) {
      const text = String(raw ?? "").trim();
      if (text === "") continue;
      const [name, attr] = h.split(".", 2) as [string, string | undefined];
      if (name.startsWith("cf_") && !model.fields[name]) {
        if (!body.custom_fields) body.custom_fields = {};
        const cf = body.custom_fields as Obj;
        cf[name.slice(3)] = /^-?\d+$/.test(text)
          ? Number(text)
          : /^(true|false)$/i.test(text)
            ? text.toLowerCase() === "true"
            : text;
        continue;
      }
      const fd = model.fields[name]!;
      if (fd.kind === "fk") {
        const target = ctx.reg.get(fd.to);
        const id = await lookup(ctx, target, attr, text, memo);
        body[name] = id ?? { [attr ?? NATURAL_KEYS.find((k) => target.fields[k]) ?? "id"]: text };
      } else if (fd.kind === "m2m") {
        const target = ctx.reg.get(fd.to);
        const ids: unknown[] = [];
        for (const part of text
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean)) {
          const id = await lookup(ctx, target, attr, part, memo);
          ids.push(id ?? { [attr ?? NATURAL_KEYS.find((k) => target.fields[k]) ?? "id"]: part });
        }
        body[name] = ids;
      } else if (fd.kind === "bool")
        body[name] = /^(true|yes|1|on)$/i.test(text) ? true : /^(false|no|0|off)$/i.test(text) ? false : text;
      else if ((fd.kind === "int" || fd.kind === "decimal") && /^-?\d+(\.\d+)?$/.test(text))
        body[name] = Number(text);
      else if (fd.kind === "json" || fd.kind === "cts") {
        try {
          body[name] = JSON.parse(text);
        } catch {
          body[name] = fd.kind === "cts" ? text.split(",").map((p) => p.trim()) : text;
        }
      } else body[name] = text;
    }
    out.push(body);
  }
  return out;
}

/** The records of an import as write bodies with their row numbers (CSV typed and resolved; JSON/YAML as given). */
export async function importRecords(
  ctx: Ctx,
  model: Model,
  format: ImportFormat,
  text: string,
): Promise<ImportRecord[]> {
  const raw = parseImport(format, text);
  const bodies = format === "csv" ? await csvBodies(ctx, model, raw) : raw;
  return bodies.map((body, i) => ({ row: i + 1, body, raw: raw[i]! }));
}

/** One failed record: its row number and `{field: [messages]}`. */
export interface RowErrors {
  row: number;
  errors: Record<string, string[]>;
}

/**
 * Create every record in one transaction through the bulk create (all or none). The acting user of `ctx`
 * is the user of the change log's rows.
 * @returns the new ids in record order.
 * @throws ImportFailed (400) listing each failed record's row number and field errors; nothing is created.
 */
export async function importObjects(ctx: Ctx, model: Model, records: ImportRecord[]): Promise<string[]> {
  try {
    return await inTransaction(ctx, (t) =>
      createMany(
        t,
        model,
        records.map((r) => r.body),
      ),
    );
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const list = Array.isArray(e.errors) ? e.errors : [e.errors];
    const rows: RowErrors[] = [];
    list.forEach((err, i) => {
      if (!err || typeof err !== "object" || !Object.keys(err).length) return;
      const errors: Record<string, string[]> = {};
      for (const [k, v] of Object.entries(err as Obj))
        errors[k] = [v].flat(3).map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x)));
      rows.push({ row: records[i]?.row ?? i + 1, errors });
    });
    throw new ImportFailed(rows);
  }
}

/** An import refused by validation: the failed records, by row number. */
export class ImportFailed extends AppError {
  override name = "ImportFailed";
  readonly rows: RowErrors[];
  constructor(rows: RowErrors[]) {
    super(
      400,
      `${rows.length} record${rows.length === 1 ? "" : "s"} failed validation; nothing was imported.`,
    );
    this.rows = rows;
  }
}
