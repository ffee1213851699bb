/**
 * OpenAPI 3.0 document derived from the registry (issue 5): for every model a list and a detail path with
 * every operation the server answers, every filter and lookup as a query parameter, request bodies, and
 * response schemas that describe what the server really returns (test/api/openapi.test.ts validates real
 * responses of every endpoint against it; schemathesis fuzzes it in CI).
 *
 * Components per model (PascalCase of app + model, e.g. `DcimSite`):
 * - `DcimSite`: the full representation (every key always present, except opt-out computed fields);
 * - `NestedDcimSite`: the nested / brief representation (`display`, `id`, `url` and the nested fields);
 * - `WritableDcimSite`: a POST/PUT body (required fields listed); `PatchedWritableDcimSite`: a PATCH body;
 * - `PaginatedDcimSiteList`: the list envelope.
 */
import { filterSetFor } from "../query/filters.ts";
import { hasNotes, hasRelationships, type Model, type Registry } from "../registry/index.ts";
import type { FieldDef } from "../registry/meta.ts";
import { actionPaths, actionSchemas } from "./openapi-actions.ts";
import { addConditionalRequests } from "./openapi-conditional.ts";
import { AS_OF_PARAMS } from "./openapi-history.ts";
import { addNonAtomic, partialSchemas } from "./openapi-partial.ts";
import { errors, json, ref, type Schema, UUID } from "./openapi-parts.ts";
import { appTags, operationText, parameterText } from "./openapi-text.ts";

const nullable = (s: Schema, yes: boolean): Schema => (yes ? { ...s, nullable: true } : s);
const refNullable = (name: string, yes: boolean): Schema =>
  yes ? { allOf: [ref(name)], nullable: true } : ref(name);

/** Component base name of a model: `dcim.site` → `DcimSite`. */
export function componentName(m: Model): string {
  const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  return `${pascal(m.app)}${pascal(m.name)}`;
}

const CHOICE_OUT: Schema = {
  type: "object",
  properties: { value: {}, label: { type: "string" } },
  required: ["value", "label"],
};

/** A related object given by UUID or by attributes (seed, Writes; nautobot-api-core.md §3). */
const RELATED_IN: Schema = { oneOf: [UUID, { type: "object", additionalProperties: true }] };

/** Schema of a field as rendered in a representation (`mode` full or nested). */
function outSchema(reg: Registry, m: Model, name: string, fd: FieldDef, mode: "full" | "nested"): Schema {
  switch (fd.kind) {
    case "str":
      if (m.key === "users.token" && name === "key") return { type: "string", nullable: true };
      return nullable({ type: "string" }, !!fd.nullable);
    case "text":
    case "slug":
    case "mac":
    case "ct":
      return nullable({ type: "string" }, !!fd.nullable);
    case "ip":
      return { type: "string", nullable: true };
    case "date":
      return { type: "string", format: "date", nullable: true };
    case "datetime":
      return { type: "string", format: "date-time", nullable: true };
    case "int":
      return { type: "integer", nullable: true };
    case "count":
      return { type: "integer" };
    case "bool":
      return nullable({ type: "boolean" }, !!fd.nullable);
    case "decimal":
      return { type: "string", format: "decimal", nullable: true };
    case "json":
      return {};
    case "choice":
      return fd.plain || (fd.nestedAuto && mode === "nested")
        ? { type: "string" }
        : { ...CHOICE_OUT, nullable: true };
    case "status":
      return { ...CHOICE_OUT, nullable: true };
    case "fk": {
      if (fd.asId === true || (mode !== "full" && name === "cable")) return { ...UUID, nullable: true };
      const target = reg.get(fd.to);
      // Nested objects of FKs may be the display-only form: id, url, display only are guaranteed.
      return refNullable(`Nested${componentName(target)}`, true);
    }
    case "m2m":
      return { type: "array", items: ref(`Nested${componentName(reg.get(fd.to))}`) };
    case "cts":
      return { type: "array", items: { type: "string" } };
    case "gfk":
      return { type: "object", nullable: true };
    case "computed":
      switch (fd.type) {
        case "string":
          return { type: "string", nullable: true };
        case "boolean":
          return { type: "boolean", nullable: true };
        case "integer":
          return { type: "integer", nullable: true };
        case "choice":
          // Nested serializers render the value alone (Nautobot NestedIPAddressSerializer.family: integer).
          return mode === "nested" ? { type: "integer", nullable: true } : { ...CHOICE_OUT, nullable: true };
        case "nested object":
          return { type: "object", nullable: true };
        default:
          return {};
      }
  }
}

/** Schema of a field in a write body. */
function inSchema(reg: Registry, fd: FieldDef): Schema | undefined {
  if (fd.readOnly) return undefined;
  switch (fd.kind) {
    case "str":
      return nullable(
        {
          type: "string",
          ...(fd.max ? { maxLength: fd.max } : {}),
        },
        !!fd.nullable,
      );
    case "text":
    case "slug":
    case "mac":
    case "date":
    case "datetime":
    case "ip":
      return nullable({ type: "string" }, !!fd.nullable || fd.kind === "ip");
    case "ct":
      return { type: "string", enum: reg.resolveAllowed(fd.allowed) };
    case "int":
      return nullable(
        {
          type: "integer",
          ...(fd.min !== undefined ? { minimum: fd.min } : {}),
          ...(fd.max !== undefined ? { maximum: fd.max } : {}),
        },
        !!fd.nullable,
      );
    case "bool":
      return { type: "boolean" };
    case "decimal":
      return { oneOf: [{ type: "number" }, { type: "string" }], nullable: true };
    case "json":
      return {};
    case "choice":
      return { type: fd.int ? "integer" : "string", enum: fd.choices.map(([v]) => v) };
    case "status":
      return { type: "string" };
    case "fk":
      return nullable(RELATED_IN, !fd.required);
    case "m2m":
      return { type: "array", items: RELATED_IN };
    case "cts":
      return { type: "array", items: { type: "string", enum: reg.resolveAllowed(fd.allowed) } };
    case "gfk":
    case "count":
    case "computed":
      return undefined;
  }
}

function fullSchema(reg: Registry, m: Model): Schema {
  const props: Record<string, Schema> = {
    id: m.key === "extras.contenttype" ? { type: "integer" } : UUID,
    display: { type: "string" },
    url: { type: "string", format: "uri" },
  };
  const required = ["id", "display", "url"];
  for (const [n, fd] of m.fieldList) {
    if (fd.hidden || fd.writeOnly) continue;
    if (fd.kind === "gfk") {
      props[`${n}_type`] = { type: "string", nullable: true };
      props[`${n}_id`] = { type: "string", nullable: true };
      required.push(`${n}_type`, `${n}_id`);
      if (!fd.bare) {
        props[n] = { type: "object", nullable: true };
        required.push(n);
      }
      continue;
    }
    props[n] = outSchema(reg, m, n, fd, "full");
    // Annotated counts are left out of create responses (Nautobot 1.6: the saved instance has no
    // annotation; service/represent.ts), so they are not required.
    if (fd.kind !== "computed" && !(fd.kind === "count" && !fd.property)) required.push(n);
  }
  if (m.changelog) {
    props.created = { type: "string", nullable: true };
    props.last_updated = { type: "string", format: "date-time", nullable: true };
    required.push("created", "last_updated");
  }
  if (m.tags) {
    props.tags = { type: "array", items: ref("NestedExtrasTag") };
    required.push("tags");
  }
  if (hasNotes(m)) {
    props.notes_url = { type: "string", format: "uri" };
    required.push("notes_url");
  }
  if (m.customFields) {
    props.custom_fields = { type: "object", additionalProperties: true };
    required.push("custom_fields");
    props.computed_fields = {
      type: "object",
      additionalProperties: { type: "string" },
      description: "Opt-in on GET: `?include=computed_fields`; always present in write responses.",
    };
  }
  if (hasRelationships(m))
    props.relationships = {
      type: "object",
      additionalProperties: true,
      description: "Opt-in on GET: `?include=relationships`; always present in write responses.",
    };
  return { type: "object", properties: props, required };
}

function nestedSchema(reg: Registry, m: Model): Schema {
  const props: Record<string, Schema> = {
    display: { type: "string" },
    id: m.key === "extras.contenttype" ? { type: "integer" } : UUID,
    url: { type: "string", format: "uri" },
  };
  for (const n of m.nested) {
    const fd = m.fields[n];
    if (!fd || fd.kind === "gfk") continue;
    props[n] = outSchema(reg, m, n, fd, "nested");
  }
  // Nested objects inside other representations may be the display-only form: only these three are sure.
  return { type: "object", properties: props, required: ["display", "id", "url"] };
}

function writableSchema(reg: Registry, m: Model, withRequired: boolean): Schema {
  const props: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [n, fd] of m.fieldList) {
    if (fd.kind === "gfk") {
      if (fd.readOnly) continue;
      props[`${n}_type`] = nullable({ type: "string", enum: reg.resolveAllowed(fd.allowed) }, !fd.required);
      props[`${n}_id`] = nullable(UUID, !fd.required);
      if (fd.required && withRequired) required.push(`${n}_type`, `${n}_id`);
      continue;
    }
    const s = inSchema(reg, fd);
    if (!s) continue;
    props[n] = s;
    const defaulted = fd.kind === "slug" && !!fd.from;
    if (fd.required && !defaulted && withRequired) required.push(n);
  }
  if (m.tags) props.tags = { type: "array", items: RELATED_IN };
  if (m.customFields) props.custom_fields = { type: "object", additionalProperties: true };
  if (hasRelationships(m))
    props.relationships = {
      type: "object",
      additionalProperties: true,
      description:
        'Per relationship slug, the side to set: `{"<slug>": {"destination": {"objects": [<id or attributes>]}}}`.',
    };
  return { type: "object", properties: props, ...(required.length ? { required } : {}) };
}

/** `exclude=config_context` on devices and VMs (list and detail). */
const EXCLUDE_PARAM = {
  name: "exclude",
  in: "query",
  required: false,
  schema: { type: "string", enum: ["config_context"] },
};

function listParameters(reg: Registry, m: Model): unknown[] {
  const params: unknown[] = [...filterSetFor(reg, m).keys()].sort().map((p) => ({
    name: p,
    in: "query",
    description: parameterText(m, p),
    required: false,
    schema: { type: "array", items: { type: "string" } },
    style: "form",
    explode: true,
  }));
  params.push(
    {
      name: "limit",
      in: "query",
      description: "Page size (default 50; 0 = the maximum, 1000 unless configured).",
      required: false,
      schema: { type: "integer", minimum: 0 },
    },
    {
      name: "offset",
      in: "query",
      description: "Rows to skip before the page.",
      required: false,
      schema: { type: "integer", minimum: 0 },
    },
    {
      name: "brief",
      in: "query",
      description: "Nested (brief) representations: id, url, display and a few fields.",
      required: false,
      schema: { type: "boolean" },
    },
  );
  if (m.configContext) params.push(EXCLUDE_PARAM);
  // History reads (issue 27): every change-logged model.
  if (m.versioned) params.push(...AS_OF_PARAMS);
  return params;
}

let cached: Record<string, unknown> | undefined;

/**
 * Fill what the generators above leave without words: an operation's summary from its description's first
 * sentence (or its id), a path parameter's description from its name.
 */
function describeRest(paths: Record<string, unknown>): void {
  const param = (p: Record<string, unknown>) => {
    if (p.description) return;
    p.description =
      p.name === "id"
        ? "The object's id (a UUID; an integer for content types)."
        : p.name === "exclude"
          ? "`config_context` leaves the rendered configuration context out (faster)."
          : `The \`${String(p.name)}\` parameter.`;
  };
  for (const item of Object.values(paths) as Array<Record<string, any>>) {
    for (const [method, op] of Object.entries(item)) {
      if (method === "parameters") {
        for (const p of op as Array<Record<string, unknown>>) param(p);
        continue;
      }
      for (const p of (op.parameters ?? []) as Array<Record<string, unknown>>) param(p);
      if (!op.summary) {
        const first = String(op.description ?? "")
          .split(/(?<=\.)\s/)[0]
          ?.replace(/\.$/, "");
        op.summary = first && first.length <= 90 ? first : String(op.operationId).replace(/_/g, " ");
      }
      op.description ??= op.summary;
    }
  }
}

/** The OpenAPI document (built once; `servers` carries the request's base URL). */
export function openapiDocument(reg: Registry, baseUrl: string): Record<string, unknown> {
  if (!cached) {
    const paths: Record<string, unknown> = {};
    const schemas: Record<string, Schema> = {
      // `{detail}` or `{field: [messages]}`; bulk writes answer a list aligned with the input.
      Error: {
        anyOf: [
          { type: "object", additionalProperties: true },
          { type: "array", items: { type: "object", additionalProperties: true } },
        ],
      },
    };
    const BRIEF_OR_FULL = (name: string): Schema => ({ anyOf: [ref(name), ref(`Nested${name}`)] });
    for (const m of reg.models.values()) {
      const name = componentName(m);
      schemas[name] = fullSchema(reg, m);
      schemas[`Nested${name}`] = nestedSchema(reg, m);
      schemas[`Paginated${name}List`] = {
        type: "object",
        properties: {
          count: { type: "integer" },
          next: { type: "string", format: "uri", nullable: true },
          previous: { type: "string", format: "uri", nullable: true },
          results: { type: "array", items: BRIEF_OR_FULL(name) },
        },
        required: ["count", "next", "previous", "results"],
      };
      const op = (id: Parameters<typeof operationText>[1]) => ({
        operationId: `${m.app}_${m.path.replace(/-/g, "_")}_${id}`,
        tags: [m.app],
        ...operationText(m, id),
      });
      const idParam = {
        name: "id",
        in: "path",
        required: true,
        schema: m.key === "extras.contenttype" ? { type: "integer" } : UUID,
      };
      const list: Record<string, unknown> = {
        get: {
          ...op("list"),
          parameters: listParameters(reg, m),
          responses: { 200: json(ref(`Paginated${name}List`)), ...errors(400, 403) },
        },
      };
      const detail: Record<string, unknown> = {
        parameters: [idParam],
        get: {
          ...op("retrieve"),
          parameters: [...(m.configContext ? [EXCLUDE_PARAM] : []), ...(m.versioned ? AS_OF_PARAMS : [])],
          responses: { 200: json(BRIEF_OR_FULL(name)), ...errors(400, 403, 404) },
        },
      };
      if (!m.readOnly) {
        schemas[`Writable${name}`] = writableSchema(reg, m, true);
        schemas[`PatchedWritable${name}`] = writableSchema(reg, m, false);
        const withId = (s: string): Schema => ({
          allOf: [ref(s), { type: "object", properties: { id: UUID }, required: ["id"] }],
        });
        list.post = {
          ...op("create"),
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { oneOf: [ref(`Writable${name}`), { type: "array", items: ref(`Writable${name}`) }] },
              },
            },
          },
          responses: {
            201: json(
              { oneOf: [ref(name), { type: "array", items: ref(name) }] },
              "Created (an array for an array body)",
            ),
            ...errors(400, 403),
          },
        };
        list.put = {
          ...op("bulk_update"),
          requestBody: {
            required: true,
            content: { "application/json": { schema: { type: "array", items: withId(`Writable${name}`) } } },
          },
          responses: { 200: json({ type: "array", items: ref(name) }), ...errors(400, 403) },
        };
        list.patch = {
          ...op("bulk_partial_update"),
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: { type: "array", items: withId(`PatchedWritable${name}`) } },
            },
          },
          responses: { 200: json({ type: "array", items: ref(name) }), ...errors(400, 403) },
        };
        list.delete = {
          ...op("bulk_destroy"),
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "array",
                  items: { type: "object", properties: { id: UUID }, required: ["id"] },
                },
              },
            },
          },
          responses: { 204: { description: "Deleted" }, ...errors(400, 403, 409) },
        };
        detail.put = {
          ...op("update"),
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref(`Writable${name}`) } },
          },
          responses: { 200: json(ref(name)), ...errors(400, 403, 404) },
        };
        detail.patch = {
          ...op("partial_update"),
          requestBody: {
            required: true,
            content: { "application/json": { schema: ref(`PatchedWritable${name}`) } },
          },
          responses: { 200: json(ref(name)), ...errors(400, 403, 404) },
        };
        detail.delete = {
          ...op("destroy"),
          responses: { 204: { description: "Deleted" }, ...errors(403, 404, 409) },
        };
      }
      paths[`/${m.app}/${m.path}/`] = list;
      paths[`/${m.app}/${m.path}/{id}/`] = detail;
    }
    addConditionalRequests(reg, paths);
    Object.assign(paths, actionPaths(reg));
    Object.assign(schemas, actionSchemas);
    addNonAtomic(reg, paths);
    Object.assign(schemas, partialSchemas);
    describeRest(paths);
    cached = {
      openapi: "3.0.3",
      info: {
        title: "Inventory API",
        version: "1.2",
        description:
          "Network inventory with Nautobot 1.6's REST API at version 1.2. Authenticate with `Authorization: Token <key>`; lists are paginated (`limit`, `offset`) and filtered by query parameters.",
      },
      tags: appTags([...new Set([...reg.models.values()].map((x) => x.app))].sort()),
      paths,
      components: {
        schemas,
        securitySchemes: {
          tokenAuth: {
            type: "apiKey",
            in: "header",
            name: "Authorization",
            description: "`Token <key>`",
          },
        },
      },
      security: [{ tokenAuth: [] }],
    };
  }
  return { ...cached, servers: [{ url: `${baseUrl}/api` }] };
}
