/**
 * Config-context schemas (Nautobot 1.6 `ConfigContextSchema`, `ConfigContextSchemaValidationMixin`):
 * a schema's `data_schema` must be a valid JSON Schema (draft 7, as Nautobot's `Draft7Validator`), and
 * config contexts' `data` and devices'/VMs' `local_context_data` must validate against their schema.
 * Validation uses Ajv; messages follow Python `jsonschema`'s wording for the common cases.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { Model } from "../registry/index.ts";
import { compileBounded, RegexDeadlineError, searchBounded } from "../store/regex.ts";
import type { Ctx } from "./context.ts";
import type { ErrorBag } from "./errors.ts";
import type { Row } from "./rows.ts";

/** Milliseconds one validation may spend matching JSON Schema `pattern`s (issue 23). */
export const VALIDATION_BUDGET_MS = 2_000;
let validationDeadline = Number.POSITIVE_INFINITY;

/**
 * JSON Schema `pattern` and `patternProperties` as RE2 (re2js: linear time, no backreferences or
 * lookaround; issue 23) instead of Ajv's backtracking `new RegExp`, with the size bounds of the regex
 * filters (store/regex.ts): a pattern too large or not RE2 syntax makes the schema invalid. Searches run
 * under the deadline of the validation in progress. Deliberate deviation: Nautobot (Python `re`) also
 * accepts backreferences and lookaround in schemas.
 */
const re2Engine = Object.assign(
  (pattern: string) => {
    compileBounded(pattern, 0);
    return {
      test: (s: string) => searchBounded(pattern, 0, s, validationDeadline),
      toString: () => `re2:${pattern}`,
    };
  },
  { code: "re2" },
);

const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: true, code: { regExp: re2Engine } });
const compiled = new Map<string, ValidateFunction>();

/** Python `repr` of a JSON value, as `jsonschema` messages show it (`'x'`, `1`, `True`, `None`). */
function pyRepr(v: unknown): string {
  if (typeof v === "string") return `'${v}'`;
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return JSON.stringify(v);
}

/** One Ajv error in `jsonschema`'s words where they are known. */
function message(e: ErrorObject, data: unknown): string {
  let value: unknown = data;
  for (const part of e.instancePath.split("/").slice(1)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    value = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  }
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "type":
      return `${pyRepr(value)} is not of type ${String(p.type)
        .split(",")
        .map((t) => `'${t}'`)
        .join(", ")}`;
    case "required":
      return `'${p.missingProperty}' is a required property`;
    case "enum":
      return `${pyRepr(value)} is not one of ${JSON.stringify(p.allowedValues)}`;
    case "additionalProperties":
      return `Additional properties are not allowed ('${p.additionalProperty}' was unexpected)`;
    case "anyOf":
      return `${pyRepr(value)} is not valid under any of the given schemas`;
    default:
      return `${e.instancePath || "data"} ${e.message ?? "is invalid"}`;
  }
}

/** Problems of a JSON Schema itself (empty when valid). */
export function schemaProblems(schema: unknown): string[] {
  if (schema === null || (typeof schema !== "object" && typeof schema !== "boolean") || Array.isArray(schema))
    return [`${pyRepr(schema)} is not of type 'object', 'boolean'`];
  if (ajv.validateSchema(schema as object)) {
    try {
      ajv.compile(schema as object);
      return [];
    } catch (e) {
      return [(e as Error).message];
    }
  }
  const errs = ajv.errors ?? [];
  // The metaschema's own anyOf/type branches: report the offending value once, as jsonschema does.
  const e = errs.find((x) => x.keyword === "anyOf") ?? errs[0];
  return e ? [message(e, schema)] : ["Invalid JSON Schema."];
}

/** Validate `data` against a stored schema row; messages as Nautobot's (first line names the schema). */
function validateAgainst(schema: Row, data: unknown): string[] {
  const key = `${schema.id}:${schema.last_updated}`;
  let fn = compiled.get(key);
  if (!fn) {
    try {
      fn = ajv.compile(JSON.parse(String(schema.data_schema)));
    } catch {
      return [`Validation using the JSON Schema ${schema.name} failed.`, "The schema itself is invalid."];
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, fn);
  }
  validationDeadline = Date.now() + VALIDATION_BUDGET_MS;
  try {
    if (fn(data)) return [];
  } catch (e) {
    if (!(e instanceof RegexDeadlineError)) throw e;
    return [
      `Validation using the JSON Schema ${schema.name} failed.`,
      `Matching the schema's patterns took longer than ${VALIDATION_BUDGET_MS / 1000} s.`,
    ];
  } finally {
    validationDeadline = Number.POSITIVE_INFINITY;
  }
  const e = fn.errors?.[0];
  return [`Validation using the JSON Schema ${schema.name} failed.`, ...(e ? [message(e, data)] : [])];
}

async function schemaRow(ctx: Ctx, id: unknown): Promise<Row | undefined> {
  if (!id) return undefined;
  return ctx.db
    .selectFrom("extras_configcontextschema")
    .selectAll()
    .where("id", "=", String(id))
    .executeTakeFirst();
}

/** `ConfigContextSchema`: `data_schema` is a valid draft-7 schema. */
export async function checkSchemaDefinition(_ctx: Ctx, _m: Model, rec: Row, errors: ErrorBag): Promise<void> {
  for (const msg of schemaProblems(rec.data_schema)) errors.add("data_schema", msg);
}

/** `ConfigContext`: `data` validates against `schema` when one is set. */
export async function checkConfigContextData(ctx: Ctx, _m: Model, rec: Row, errors: ErrorBag): Promise<void> {
  const schema = await schemaRow(ctx, rec.schema);
  if (schema) for (const msg of validateAgainst(schema, rec.data)) errors.add("data", msg);
}

/**
 * Devices and VMs: `local_context_schema` needs `local_context_data`, which validates against it
 * (Nautobot 1.6 `ConfigContextModel.clean`).
 */
export async function checkLocalContext(ctx: Ctx, _m: Model, rec: Row, errors: ErrorBag): Promise<void> {
  if (!rec.local_context_schema) return;
  if (rec.local_context_data === null || rec.local_context_data === undefined) {
    errors.add("local_context_schema", "Local context data must exist for a schema to be applied.");
    return;
  }
  const schema = await schemaRow(ctx, rec.local_context_schema);
  if (schema)
    for (const msg of validateAgainst(schema, rec.local_context_data)) errors.add("local_context_data", msg);
}
