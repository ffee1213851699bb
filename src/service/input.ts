/**
 * Write input parsing: a JSON body → a record keyed by field name, with DRF's per-field error messages
 * (nautobot-api-core.md §2.5-§3, §7). Related objects are resolved here (UUID or attribute dict).
 */
import { randomBytes } from "node:crypto";
import { hostText, IpParseError, networkText, parseCidr } from "../net/ip.ts";
import { normalizeUuid } from "../query/filters.ts";
import { customValueError } from "../registry/custom-values.ts";
import { type Model, versionBefore } from "../registry/index.ts";
import { type FieldDef, type FkField, type GenericFkField, sizeLimit } from "../registry/meta.ts";
import { joinTable } from "../store/ddl.ts";
import { storedTime } from "../store/values.ts";
import { type Ctx, modelAt } from "./context.ts";
import { ErrorBag } from "./errors.ts";
import { columnOf, customFieldKey, customFieldsFor, type Row, statusesFor } from "./rows.ts";
import { deferredChecks } from "./uniqueness.ts";
import { regexMatcherFor } from "./value-regex.ts";

/** Parsed write: the merged record and the relation sets to store. */
export interface ParsedWrite {
  record: Row;
  /** Fields present in the body (for change detection and PATCH semantics). */
  touched: Set<string>;
  /** Tag ids when `tags` was sent. */
  tags: string[] | undefined;
  errors: ErrorBag;
  /**
   * Unique fields whose value was generated here and found free in this transaction (an omitted slug), so
   * the uniqueness check need not look again.
   */
  generatedUnique?: Set<string>;
}

const pyRepr = (o: Record<string, unknown>): string =>
  `{${Object.entries(o)
    .map(
      ([k, v]) =>
        `'${k}': ${typeof v === "string" ? `'${v}'` : v === null ? "None" : typeof v === "boolean" ? (v ? "True" : "False") : JSON.stringify(v)}`,
    )
    .join(", ")}}`;

/** Django `slugify`: ASCII, lower-case, spaces and repeated dashes to one dash. */
export function slugify(text: string, underscore = false): string {
  const s = text
    .normalize("NFKD")
    .replace(/[\u0080-\uffff]/g, "")
    .replace(/[^\w\s-]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[-\s]+/g, "-");
  return underscore ? s.replace(/-/g, "_") : s;
}

/** Naturalized sort key: digit runs zero-padded to 8 (Nautobot natural ordering). */
export function naturalKey(v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  return v.replace(/\d+/g, (d) => d.padStart(8, "0"));
}

/** Rows a transaction found by a lookup (`noteExisting`), by transaction: table NUL id. */
const knownRows = new WeakMap<object, Set<string>>();

/**
 * Note that row `id` of `target` exists, as a lookup inside the caller's transaction just found (upsert's
 * natural-key matching): `resolveRef` of that id in the same transaction then answers without a query.
 * Only for transactions that delete nothing before their end (nothing is noted outside a transaction).
 */
export function noteExisting(ctx: Ctx, target: Model, id: string): void {
  if (!ctx.db.isTransaction) return;
  const set = knownRows.get(ctx.db) ?? new Set<string>();
  knownRows.set(ctx.db, set);
  set.add(`${target.table}\u0000${id}`);
}

/**
 * Resolve a related-object reference (UUID string or attribute dict) to an id
 * (WritableNestedSerializer.to_internal_value). Returns undefined and records an error on failure.
 */
export async function resolveRef(
  ctx: Ctx,
  target: Model,
  value: unknown,
  field: string,
  errors: ErrorBag,
  limitTo?: Readonly<Record<string, unknown>>,
): Promise<string | undefined> {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const attrs: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === "url" || k === "display") continue;
      attrs[k] = v;
    }
    let q = ctx.db.selectFrom(target.table).select("id");
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "id") {
        const u = typeof v === "string" ? normalizeUuid(v) : undefined;
        q = q.where("id", "=", u ?? "__invalid__");
        continue;
      }
      const fd = target.fields[k];
      if (!fd || fd.kind === "m2m" || fd.kind === "count" || fd.kind === "computed" || fd.kind === "cts") {
        const choices = ["id", ...target.fieldList.map(([n]) => n)].sort().join(", ");
        errors.add(field, `Cannot resolve keyword '${k}' into field. Choices are: ${choices}`);
        return undefined;
      }
      if (fd.kind === "fk" && v !== null && typeof v === "object") {
        const sub = await resolveRef(ctx, ctx.reg.get(fd.to), v, field, errors);
        if (!sub) return undefined;
        q = q.where(`${k}_id`, "=", sub);
        continue;
      }
      if (fd.kind === "status") {
        const st = (await statusesFor(ctx, target.key)).get(show(v).toLowerCase());
        q = q.where("status_id", "=", st?.id ?? "__none__");
        continue;
      }
      const c = columnOf(target, k);
      q = v === null ? q.where(c, "is", null) : q.where(c, "=", (typeof v === "boolean" ? v : v) as any);
    }
    for (const [k, v] of Object.entries(limitTo ?? {})) q = q.where(columnOf(target, k), "=", v as any);
    const rows = await q.limit(2).execute();
    if (rows.length === 0) {
      errors.add(field, `Related object not found using the provided attributes: ${pyRepr(attrs)}`);
      return undefined;
    }
    if (rows.length > 1) {
      errors.add(field, `Multiple objects match the provided attributes: ${pyRepr(attrs)}`);
      return undefined;
    }
    return rows[0]!.id as string;
  }
  const u = typeof value === "string" ? normalizeUuid(value) : undefined;
  if (!u) {
    errors.add(
      field,
      `Related objects must be referenced by ID or by dictionary of attributes. Received an unrecognized value: ${typeof value === "string" ? value : JSON.stringify(value)}`,
    );
    return undefined;
  }
  if (!limitTo && ctx.db.isTransaction && knownRows.get(ctx.db)?.has(`${target.table}\u0000${u}`)) return u;
  let q = ctx.db.selectFrom(target.table).select("id").where("id", "=", u);
  for (const [k, v] of Object.entries(limitTo ?? {})) q = q.where(columnOf(target, k), "=", v as any);
  const row = await q.executeTakeFirst();
  if (!row) {
    errors.add(field, `Related object not found using the provided ID: ${u}`);
    return undefined;
  }
  return u;
}

/** A client value as text for messages and lookups: strings as they are, anything else as JSON (never `toString`). */
function show(v: unknown): string {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? String(v));
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URL_RE = /^(https?|ftp):\/\/[^\s/$.?#].[^\s]*$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAC_RE =
  /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:.-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:.-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

/** Parse one scalar value for a field; records errors. `undefined` = invalid. */
async function parseValue(
  ctx: Ctx,
  model: Model,
  name: string,
  fd: FieldDef,
  v: unknown,
  errors: ErrorBag,
): Promise<unknown> {
  if (v === null) {
    // A non-nullable choice or number is refused as DRF does (`allow_null` only where the model field is
    // `null=True`): an integer choice stored as "" was a 500 on PostgreSQL (issue 23).
    // The serializer's refusal (`FkField.rejectNull`) is the REST API's; the service may clear the field
    // (a revert to a version without it, service/revert.ts).
    if (fd.kind === "fk" && fd.rejectNull && ctx.restApi) {
      errors.add(name, "This field may not be null.");
      return undefined;
    }
    if (fd.nullable || fd.kind === "json") return null;
    errors.add(name, "This field may not be null.");
    return undefined;
  }
  switch (fd.kind) {
    case "str":
    case "text":
    case "slug": {
      if (typeof v !== "string" && typeof v !== "number") {
        errors.add(name, "Not a valid string.");
        return undefined;
      }
      // DRF CharField trim_whitespace (credentials, write-only, are kept as typed).
      const s = fd.writeOnly ? String(v) : String(v).trim();
      if (s === "" && (fd.required || fd.kind === "slug")) {
        errors.add(name, "This field may not be blank.");
        return undefined;
      }
      const max = sizeLimit(fd);
      if (max !== undefined && s.length > max) {
        errors.add(name, `Ensure this field has no more than ${max} characters.`);
        return undefined;
      }
      if (fd.kind === "str" && fd.min !== undefined && s.length < fd.min && s !== "") {
        errors.add(name, `Ensure this field has at least ${fd.min} characters.`);
        return undefined;
      }
      if (fd.kind === "slug" && !/^[-a-zA-Z0-9_]+$/.test(s)) {
        errors.add(name, "Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.");
        return undefined;
      }
      if (fd.kind === "str" && s !== "") {
        if (fd.pattern && !fd.pattern[0].test(s)) {
          errors.add(name, fd.pattern[1]);
          return undefined;
        }
        if (fd.format === "email" && !EMAIL.test(s)) {
          errors.add(name, "Enter a valid email address.");
          return undefined;
        }
        if (fd.format === "url" && !URL_RE.test(s)) {
          errors.add(name, "Enter a valid URL.");
          return undefined;
        }
        if (fd.format === "color" && !/^[0-9a-f]{6}$/.test(s)) {
          errors.add(name, "Enter a valid hexadecimal RGB color code.");
          return undefined;
        }
      }
      return s;
    }
    case "int": {
      let n: number;
      if (typeof v === "number" && Number.isInteger(v)) n = v;
      else if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) n = Number(v);
      else {
        errors.add(name, "A valid integer is required.");
        return undefined;
      }
      if (fd.min !== undefined && n < fd.min) {
        errors.add(name, `Ensure this value is greater than or equal to ${fd.min}.`);
        return undefined;
      }
      if (fd.max !== undefined && n > fd.max) {
        errors.add(name, `Ensure this value is less than or equal to ${fd.max}.`);
        return undefined;
      }
      if (Math.abs(n) > Number.MAX_SAFE_INTEGER) {
        errors.add(name, "A valid integer is required.");
        return undefined;
      }
      return n;
    }
    case "bool": {
      if (v === true || v === false) return v;
      if (v === "true" || v === "True" || v === 1 || v === "1") return true;
      if (v === "false" || v === "False" || v === 0 || v === "0") return false;
      errors.add(name, "Must be a valid boolean.");
      return undefined;
    }
    case "decimal": {
      const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
      if (!Number.isFinite(n)) {
        errors.add(name, "A valid number is required.");
        return undefined;
      }
      const r = Number(n.toFixed(fd.places));
      const intDigits = Math.trunc(Math.abs(r)).toString().length;
      if (intDigits > fd.digits - fd.places) {
        errors.add(name, `Ensure that there are no more than ${fd.digits} digits in total.`);
        return undefined;
      }
      return r;
    }
    case "date": {
      if (typeof v !== "string" || !DATE.test(v) || Number.isNaN(Date.parse(v))) {
        errors.add(name, "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.");
        return undefined;
      }
      return v;
    }
    case "datetime": {
      const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
      if (Number.isNaN(t)) {
        errors.add(
          name,
          "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
        );
        return undefined;
      }
      return storedTime(t);
    }
    case "json": {
      if (fd.object && (typeof v !== "object" || Array.isArray(v))) {
        errors.add(name, 'JSON data must be in object form. Example: {"foo": 123}'); // ConfigContext(Model).clean
        return undefined;
      }
      if (fd.array) {
        if (!Array.isArray(v)) {
          errors.add(
            name,
            `Expected a list of items but got type "${typeof v === "string" ? "str" : typeof v}".`,
          );
          return undefined;
        }
        if (fd.array === "int") {
          for (const item of v) {
            if (typeof item !== "number" || !Number.isInteger(item)) {
              errors.add(name, "A valid integer is required.");
              return undefined;
            }
            if (
              (fd.itemMin !== undefined && item < fd.itemMin) ||
              (fd.itemMax !== undefined && item > fd.itemMax)
            ) {
              errors.add(
                name,
                `Ensure this value is greater than or equal to ${fd.itemMin} and less than or equal to ${fd.itemMax}.`,
              );
              return undefined;
            }
          }
        } else if (v.some((x) => typeof x !== "string")) {
          errors.add(name, "Not a valid string.");
          return undefined;
        }
      }
      const max = sizeLimit(fd);
      if (max !== undefined && (JSON.stringify(v)?.length ?? 0) > max) {
        errors.add(name, `Ensure this field has no more than ${max} characters (as compact JSON).`);
        return undefined;
      }
      return v;
    }
    case "choice": {
      if (typeof v === "object") {
        errors.add(name, 'Value must be passed directly (e.g. "foo": 123); do not use a dictionary or list.');
        return undefined;
      }
      // Surrounding whitespace is dropped as DRF's CharField `trim_whitespace` and Python's `int()` do.
      let val: unknown = typeof v === "string" ? v.trim() : v;
      if (typeof val === "string" && /^-?\d+$/.test(val) && fd.int) val = Number(val);
      if (val === "") {
        if (fd.int) {
          // Nautobot 1.6 answers an integer choice given "" like this (checked against 1.6.32).
          errors.add(name, "This field may not be blank.");
          return undefined;
        }
        if (fd.required) {
          errors.add(name, "This field may not be blank.");
          return undefined;
        }
        return "";
      }
      const c = fd.choices.find(([cv]) => cv === val || String(cv) === String(val));
      if (!c) {
        errors.add(name, `${show(val)} is not a valid choice.`);
        return undefined;
      }
      return c[0];
    }
    case "mac": {
      const m = typeof v === "string" ? MAC_RE.exec(v.trim()) : null;
      if (!m) {
        errors.add(name, "Enter a valid MAC address.");
        return undefined;
      }
      return m.slice(1, 7).join(":").toUpperCase();
    }
    case "ip": {
      try {
        if (typeof v !== "string") throw new Error("not a string");
        const c = parseCidr(v);
        return fd.mode === "network" ? networkText(c) : hostText(c);
      } catch (e) {
        errors.add(name, e instanceof IpParseError ? e.message : `Invalid IP address format: ${show(v)}`);
        return undefined;
      }
    }
    case "ct": {
      const allowed = ctx.reg.resolveAllowed(fd.allowed);
      if (typeof v !== "string" || v.split(".").length !== 2) {
        errors.add(name, "Invalid value. Specify a content type as '<app_label>.<model_name>'.");
        return undefined;
      }
      if (!allowed.includes(v)) {
        errors.add(name, `Invalid content type: ${v}`);
        return undefined;
      }
      return v;
    }
    case "cts": {
      if (!Array.isArray(v)) {
        errors.add(
          name,
          `Expected a list of items but got type "${typeof v === "string" ? "str" : typeof v}".`,
        );
        return undefined;
      }
      const allowed = ctx.reg.resolveAllowed(fd.allowed);
      const out: string[] = [];
      for (const item of v) {
        if (typeof item !== "string" || item.split(".").length !== 2) {
          errors.add(name, "Invalid value. Specify a content type as '<app_label>.<model_name>'.");
          return undefined;
        }
        if (!allowed.includes(item)) {
          errors.add(name, `Invalid content type: ${item}`);
          return undefined;
        }
        if (!out.includes(item)) out.push(item);
      }
      return out;
    }
    case "fk":
      return resolveRef(ctx, ctx.reg.get(fd.to), v, name, errors, (fd as FkField).limitTo);
    case "m2m": {
      if (!Array.isArray(v)) {
        errors.add(
          name,
          `Expected a list of items but got type "${typeof v === "string" ? "str" : typeof v}".`,
        );
        return undefined;
      }
      const target = ctx.reg.get(fd.to);
      const ids: string[] = [];
      for (const item of v) {
        const id = await resolveRef(ctx, target, item, name, errors);
        if (!id) return undefined;
        if (!ids.includes(id)) ids.push(id);
      }
      return ids;
    }
    case "status": {
      if (typeof v !== "string") {
        errors.add(name, "Invalid value.");
        return undefined;
      }
      const st = (await statusesFor(ctx, model.key)).get(v.toLowerCase());
      if (!st) {
        errors.add(name, `Object with slug=${v.toLowerCase()} does not exist.`);
        return undefined;
      }
      return st.slug;
    }
    default:
      return undefined;
  }
}

/** Default value of a field on create. */
function defaultOf(fd: FieldDef): unknown {
  switch (fd.kind) {
    case "str":
      return fd.default !== undefined ? fd.default : fd.nullable ? null : "";
    case "text":
      return fd.default ?? "";
    case "int":
      return fd.default ?? null;
    case "bool":
      return fd.default ?? false;
    case "choice":
      return fd.default ?? (fd.nullable ? null : "");
    case "json":
      return fd.default !== undefined ? structuredClone(fd.default) : null;
    case "m2m":
    case "cts":
      return [];
    case "datetime":
      return fd.autoNow ? storedTime() : null;
    default:
      return null;
  }
}

/**
 * One side of a generic FK (`<name>_type` or `<name>_id`) of a write, as DRF's fields of Nautobot 1.6's
 * serializers check it: absent from a create, "This field is required." when the FK is required, else null;
 * absent from an update, the stored value; null, "This field may not be null." unless nullable; a type is an
 * allowed content type (`ContentTypeField`), an id a UUID. `undefined` when refused (the error recorded).
 */
function gfkSide(
  ctx: Ctx,
  fd: GenericFkField,
  key: string,
  input: Record<string, unknown>,
  record: Row,
  before: Row | undefined,
  partial: boolean,
  errors: ErrorBag,
): string | null | undefined {
  if (!(key in input)) {
    if (before) return (record[key] as string | null | undefined) ?? null;
    if (fd.required && !partial) {
      errors.add(key, "This field is required.");
      return undefined;
    }
    return null;
  }
  const v = input[key];
  if (v === null) {
    if (fd.nullable) return null;
    errors.add(key, "This field may not be null.");
    return undefined;
  }
  if (key.endsWith("_type")) {
    if (typeof v === "string" && ctx.reg.resolveAllowed(fd.allowed).includes(v)) return v;
    errors.add(
      key,
      typeof v === "string" && v.split(".").length === 2
        ? `Invalid content type: ${v}`
        : "Invalid value. Specify a content type as '<app_label>.<model_name>'.",
    );
    return undefined;
  }
  const u = typeof v === "string" ? normalizeUuid(v) : undefined;
  if (!u) errors.add(key, "Must be a valid UUID.");
  return u;
}

/**
 * A nullable generic FK is either unset (both sides null) or set (both sides given): Nautobot 1.6
 * `IPAddress.clean`, whose first rule this is (after the custom-field values of `CustomFieldModel.clean`),
 * so it is checked only once every field has parsed.
 */
function gfkPairErrors(model: Model, record: Row, errors: ErrorBag): void {
  for (const [name, fd] of model.fieldList) {
    if (fd.kind !== "gfk") continue;
    const [tk, ik] = [`${name}_type`, `${name}_id`];
    if ((record[tk] == null) !== (record[ik] == null))
      errors.add("__all__", `${tk} and ${ik} must either both be null or both be non-null`);
  }
}

/** Whether a JSON value holds a NUL character in any string or key (iterative; depth is bounded at parse). */
function hasNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\u0000")) return true;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        if (k.includes("\u0000")) return true;
        stack.push(x);
      }
  }
  return false;
}

/**
 * Parse a write body into a merged record.
 * @param before the stored record on update (undefined on create)
 * @param partial PATCH semantics (no required checks)
 */
export async function parseWrite(
  ctx: Ctx,
  model: Model,
  body: unknown,
  before: Row | undefined,
  partial: boolean,
): Promise<ParsedWrite> {
  model = modelAt(ctx, model);
  const errors = new ErrorBag();
  const record: Row = before ? structuredClone(before) : {};
  const touched = new Set<string>();
  let tags: string[] | undefined;
  if (body === null || body === undefined) {
    errors.add("non_field_errors", "No data provided");
    return { record, touched, tags, errors };
  }
  if (typeof body !== "object" || Array.isArray(body)) {
    errors.add(
      "non_field_errors",
      `Invalid data. Expected a dictionary, but got ${Array.isArray(body) ? "list" : typeof body === "string" ? "str" : typeof body === "number" ? "int" : typeof body}.`,
    );
    return { record, touched, tags, errors };
  }
  const input = body as Record<string, unknown>;
  // PostgreSQL text cannot hold NUL: refused on every field, nested values included, on both engines.
  for (const [name, value] of Object.entries(input)) {
    if (hasNul(value)) errors.add(name, "Null characters are not allowed.");
  }
  if (errors.has()) return { record, touched, tags, errors };
  for (const [name, fd] of model.fieldList) {
    if (before && fd.defaultOnWrite && ctx.restApi && !(name in input && !fd.readOnly)) {
      // A REST write that gives no value resets the field (`FieldBase.defaultOnWrite`); a PUT still has
      // to name a required field.
      if (fd.required && !partial) errors.add(name, "This field is required.");
      else record[name] = fd.kind === "status" ? fd.default : defaultOf(fd);
      continue;
    }
    if (fd.readOnly || fd.kind === "count" || fd.kind === "computed") {
      if (!before)
        record[name] =
          fd.kind === "datetime"
            ? defaultOf(fd)
            : fd.kind === "status" && fd.default
              ? fd.default
              : fd.kind === "cts" && fd.versions
                ? // Not on the wire at this API version: every allowed type (a tag at API 1.2 applies to
                  // every taggable model, Nautobot 1.6 `TagSerializerVersion12`).
                  ctx.reg.resolveAllowed(fd.allowed)
                : (record[name] ?? (fd.kind === "m2m" || fd.kind === "cts" ? [] : null));
      continue;
    }
    if (fd.kind === "gfk") {
      const tk = `${name}_type`;
      const ik = `${name}_id`;
      if (!(tk in input) && !(ik in input)) {
        if (!before) {
          record[tk] = null;
          record[ik] = null;
          if (fd.required && !partial) {
            errors.add(tk, "This field is required.");
            errors.add(ik, "This field is required.");
          }
        }
        continue;
      }
      touched.add(name);
      const t = gfkSide(ctx, fd, tk, input, record, before, partial, errors);
      const i = gfkSide(ctx, fd, ik, input, record, before, partial, errors);
      if (t === undefined || i === undefined) continue;
      // One side null and not the other: `gfkPairErrors`, once every field is parsed.
      if (t !== null && i !== null && !fd.unchecked) {
        const target = ctx.reg.get(t);
        const found = await ctx.db
          .selectFrom(target.table)
          .select("id")
          .where("id", "=", i)
          .executeTakeFirst();
        if (!found) {
          errors.add(ik, `Related object not found using the provided ID: ${i}`);
          continue;
        }
      }
      record[tk] = t;
      record[ik] = i;
      continue;
    }
    if (!(name in input)) {
      if (!before) {
        if (fd.required && !partial && fd.kind !== "slug") errors.add(name, "This field is required.");
        else record[name] = defaultOf(fd);
      } else if (fd.required && !partial && fd.kind !== "slug") {
        // DRF: a PUT must carry every required field, whatever is stored (issue 9, seen side by side).
        errors.add(name, "This field is required.");
      }
      continue;
    }
    touched.add(name);
    const v = await parseValue(ctx, model, name, fd, input[name], errors);
    if (v !== undefined) record[name] = v;
  }
  // Slugs generated from their source field when omitted (AutoSlugField).
  const generatedUnique = new Set<string>();
  for (const [name, fd] of model.fieldList) {
    if (fd.kind !== "slug" || touched.has(name) || before?.[name]) continue;
    const src = (fd.from ? record[fd.from] : undefined) || (fd.orFrom ? record[fd.orFrom] : undefined);
    if (typeof src !== "string" || !src) {
      if (fd.required && !partial) errors.add(name, "This field is required.");
      continue;
    }
    let base = slugify(src, fd.underscore).slice(0, fd.max ?? 100) || "slug";
    if (model.key === "dcim.location" && record.parent) {
      const parent = await ctx.db
        .selectFrom(model.table)
        .select("slug")
        .where("id", "=", record.parent)
        .executeTakeFirst();
      if (parent?.slug) base = `${parent.slug}-${base}`.slice(0, fd.max ?? 100);
    }
    let candidate = base;
    // In a bulk create with deferred checks the base is taken as free and checked with the other items.
    if (fd.unique && !deferredChecks(ctx, model)) {
      for (let n = 2; n < 1000; n++) {
        const clash = await ctx.db
          .selectFrom(model.table)
          .select("id")
          .where(name, "=", candidate)
          .executeTakeFirst();
        if (!clash) {
          generatedUnique.add(name);
          break;
        }
        candidate = `${base}${fd.underscore ? "_" : "-"}${n}`;
      }
    }
    record[name] = candidate;
  }
  if (model.tags && "tags" in input) {
    touched.add("tags");
    const v = input.tags;
    if (!Array.isArray(v)) {
      errors.add(
        "tags",
        `Expected a list of items but got type "${typeof v === "string" ? "str" : typeof v}".`,
      );
    } else {
      const tagModel = ctx.reg.get("extras.tag");
      const positional: unknown[] = [];
      let bad = false;
      tags = [];
      const found: Array<{ at: number; item: unknown; id: string }> = [];
      for (const item of v) {
        const bag = new ErrorBag();
        const id = await resolveRef(ctx, tagModel, item, "x", bag);
        if (bag.has()) {
          bad = true;
          positional.push(bag.errors.x ?? []);
        } else {
          positional.push({});
          if (id) found.push({ at: positional.length - 1, item, id });
          if (id && !tags.includes(id)) tags.push(id);
        }
      }
      // A tag applies to the models of its content types (Nautobot 1.6 `TaggableManagerField` looks tags up
      // in `Tag.objects.get_for_model(model)`, at every API version): another tag is "not found".
      if (found.length) {
        const applies = new Set(
          (
            await ctx.db
              .selectFrom(joinTable(tagModel, "content_types"))
              .select("source_id")
              .where("content_type", "=", model.key)
              .where("source_id", "in", [...new Set(found.map((f) => f.id))])
              .execute()
          ).map((r) => r.source_id as string),
        );
        for (const f of found) {
          if (applies.has(f.id)) continue;
          bad = true;
          const attrs = f.item !== null && typeof f.item === "object" && !Array.isArray(f.item);
          positional[f.at] = [
            attrs
              ? `Related object not found using the provided attributes: ${pyRepr(
                  Object.fromEntries(
                    Object.entries(f.item as Record<string, unknown>).filter(
                      ([k]) => k !== "url" && k !== "display",
                    ),
                  ),
                )}`
              : `Related object not found using the provided ID: ${f.id}`,
          ];
        }
      }
      if (bad) {
        (errors.errors as Record<string, unknown>).tags = positional;
        tags = undefined;
      }
    }
  }
  if (model.customFields) {
    const defs = await customFieldsFor(ctx, model.key);
    const current: Record<string, unknown> = before?.custom_fields ? { ...before.custom_fields } : {};
    if ("custom_fields" in input) {
      touched.add("custom_fields");
      const cf = input.custom_fields;
      if (cf === null || typeof cf !== "object" || Array.isArray(cf)) {
        errors.add("custom_fields", "Expected a dictionary of items.");
      } else {
        for (const [k, val] of Object.entries(cf as Record<string, unknown>)) {
          // Keyed by name at API 1.2/1.3, by slug from 1.4 (`customFieldKey`); stored by name.
          const def = defs.find((d) => customFieldKey(ctx, d) === k);
          if (!def) {
            // Nautobot 1.6 `CustomFieldsDataField.to_internal_value`: before 1.4 the dict is stored as sent,
            // undefined keys too (`CustomFieldModel.clean` only logs them): they are kept, not shown in
            // `custom_fields`, and a custom field later defined with that name shows the value. From 1.4
            // only keys that are a custom field's slug are mapped to names; the others are dropped.
            if (versionBefore(ctx.reg.apiVersion, "1.4")) current[k] = val;
            continue;
          }
          const err = await customValueError(def, val, regexMatcherFor(ctx));
          if (err) errors.add("__all__", `Invalid value for custom field '${k}': ${err}`);
          current[def.name] = val;
        }
      }
    }
    if (!before) {
      for (const d of defs) if (!(d.name in current)) current[d.name] = d.default;
    }
    for (const d of defs) {
      if (
        d.required &&
        (current[d.name] === null || current[d.name] === undefined || current[d.name] === "")
      ) {
        errors.add("__all__", `Missing required custom field '${customFieldKey(ctx, d)}'.`);
      }
    }
    record.custom_fields = current;
  }
  if (!errors.has()) gfkPairErrors(model, record, errors);
  if (model.key === "users.token" && !before && !record.key) record.key = randomBytes(20).toString("hex");
  return { record, touched, tags, errors, generatedUnique };
}
