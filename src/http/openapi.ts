/**
 * OpenAPI 3.0 document derived from the registry: one list and one detail path per model with the
 * operations, parameters (the model's filters) and a schema of the full representation.
 */
import { filterSetFor } from "../query/filters.ts";
import type { Registry } from "../registry/index.ts";
import type { FieldDef } from "../registry/meta.ts";

function schemaOf(fd: FieldDef): Record<string, unknown> {
  switch (fd.kind) {
    case "int":
    case "count":
      return { type: "integer", ...(fd.kind === "int" && fd.nullable ? { nullable: true } : {}) };
    case "bool":
      return { type: "boolean" };
    case "decimal":
      return { type: "string", format: "decimal", nullable: true };
    case "json":
      return {};
    case "m2m":
    case "cts":
      return { type: "array", items: {} };
    case "fk":
    case "gfk":
    case "computed":
      return { type: "object", nullable: true };
    case "choice":
    case "status":
      return fd.kind === "choice" && fd.plain
        ? { type: "string" }
        : { type: "object", properties: { value: {}, label: { type: "string" } } };
    default:
      return { type: "string", ...("nullable" in fd && fd.nullable ? { nullable: true } : {}) };
  }
}

let cached: Record<string, unknown> | undefined;

/** The OpenAPI document (built once; `servers` carries the request's base URL). */
export function openapiDocument(reg: Registry, baseUrl: string): Record<string, unknown> {
  if (!cached) {
    const paths: Record<string, unknown> = {};
    const schemas: Record<string, unknown> = {};
    for (const m of reg.models.values()) {
      const name = m.key.replace(".", "_");
      const props: Record<string, unknown> = {
        id: { type: "string", format: "uuid" },
        display: { type: "string" },
        url: { type: "string", format: "uri" },
      };
      for (const [n, fd] of m.fieldList) if (!fd.hidden && !fd.writeOnly) props[n] = schemaOf(fd);
      schemas[name] = { type: "object", properties: props };
      const params = [...filterSetFor(reg, m).keys()].map((p) => ({
        name: p,
        in: "query",
        required: false,
        schema: { type: "string" },
      }));
      params.push(
        { name: "limit", in: "query", required: false, schema: { type: "integer" } } as any,
        { name: "offset", in: "query", required: false, schema: { type: "integer" } } as any,
        { name: "brief", in: "query", required: false, schema: { type: "string" } } as any,
      );
      const ref = { $ref: `#/components/schemas/${name}` };
      const list: Record<string, unknown> = {
        get: {
          operationId: `${m.app}_${m.path}_list`,
          tags: [m.app],
          parameters: params,
          responses: {
            200: {
              description: "",
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: {
                      count: { type: "integer" },
                      next: { type: "string", nullable: true },
                      previous: { type: "string", nullable: true },
                      results: { type: "array", items: ref },
                    },
                  },
                },
              },
            },
          },
        },
      };
      const detail: Record<string, unknown> = {
        get: {
          operationId: `${m.app}_${m.path}_retrieve`,
          tags: [m.app],
          parameters: [
            { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          ],
          responses: { 200: { description: "", content: { "application/json": { schema: ref } } } },
        },
      };
      if (!m.readOnly) {
        list.post = {
          operationId: `${m.app}_${m.path}_create`,
          tags: [m.app],
          requestBody: { content: { "application/json": { schema: ref } } },
          responses: { 201: { description: "" } },
        };
        list.put = {
          operationId: `${m.app}_${m.path}_bulk_update`,
          tags: [m.app],
          responses: { 200: { description: "" } },
        };
        list.patch = {
          operationId: `${m.app}_${m.path}_bulk_partial_update`,
          tags: [m.app],
          responses: { 200: { description: "" } },
        };
        list.delete = {
          operationId: `${m.app}_${m.path}_bulk_destroy`,
          tags: [m.app],
          responses: { 204: { description: "" } },
        };
        const idp = [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }];
        detail.put = {
          operationId: `${m.app}_${m.path}_update`,
          tags: [m.app],
          parameters: idp,
          requestBody: { content: { "application/json": { schema: ref } } },
          responses: { 200: { description: "" } },
        };
        detail.patch = {
          operationId: `${m.app}_${m.path}_partial_update`,
          tags: [m.app],
          parameters: idp,
          requestBody: { content: { "application/json": { schema: ref } } },
          responses: { 200: { description: "" } },
        };
        detail.delete = {
          operationId: `${m.app}_${m.path}_destroy`,
          tags: [m.app],
          parameters: idp,
          responses: { 204: { description: "" } },
        };
      }
      paths[`/${m.app}/${m.path}/`] = list;
      paths[`/${m.app}/${m.path}/{id}/`] = detail;
    }
    cached = {
      openapi: "3.0.3",
      info: { title: "Inventory API", version: "1.2" },
      paths,
      components: {
        schemas,
        securitySchemes: { tokenAuth: { type: "apiKey", in: "header", name: "Authorization" } },
      },
      security: [{ tokenAuth: [] }],
    };
  }
  return { ...cached, servers: [{ url: `${baseUrl}/api` }] };
}
