/** Building blocks shared by the OpenAPI document (openapi.ts), its action paths (openapi-actions.ts) and extensions (openapi-changes.ts, openapi-conditional.ts). */

/** A JSON Schema / OpenAPI object. */
export type Schema = Record<string, unknown>;

/** `$ref` to a component schema. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const UUID: Schema = { type: "string", format: "uuid" };

const ERROR: Schema = {
  description: "Error: `{detail}` or field errors (a list aligned with the input for bulk writes)",
  content: { "application/json": { schema: ref("Error") } },
};

/** The error responses of `codes`, each the shared `Error` component. */
export const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), ERROR])) as Record<string, unknown>;

/** A JSON response with `schema`. */
export const json = (schema: Schema, description = "") => ({
  description,
  content: { "application/json": { schema } },
});

/**
 * A JSON error response of its own shape: an object with `detail` (DRF's error key, always present) and
 * `properties` (the change feed's 410 with the retained positions, a conditional write's 412 with the
 * current ETag or the stale bulk items).
 */
export const errorResponse = (description: string, properties: Record<string, Schema>) =>
  json(
    { type: "object", properties: { detail: { type: "string" }, ...properties }, required: ["detail"] },
    description,
  );
