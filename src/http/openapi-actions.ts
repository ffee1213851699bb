/**
 * OpenAPI paths of the detail actions beside the generic model endpoints (webhook retries, allocation),
 * merged into the document by `openapiDocument`. Component names follow openapi.ts (`IpamPrefix`, …).
 */
type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const UUID: Schema = { type: "string", format: "uuid" };
const ID_PARAM = { name: "id", in: "path", required: true, schema: UUID };
const json = (schema: Schema, description = "") => ({
  description,
  content: { "application/json": { schema } },
});
const ERROR = {
  description: "Error: `{detail}` or field errors (a list aligned with the input for list bodies)",
  content: { "application/json": { schema: ref("Error") } },
};
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), ERROR]));
const oneOrList = (name: string): Schema => ({ oneOf: [ref(name), { type: "array", items: ref(name) }] });
const NO_ROOM = { description: "No room in the prefix: nothing was created (Nautobot's 204)" };

/** Schemas used only by the actions. */
export const actionSchemas: Record<string, Schema> = {
  AvailableIP: {
    type: "object",
    properties: {
      family: { type: "integer", enum: [4, 6] },
      address: { type: "string" },
      vrf: { allOf: [ref("NestedIpamVrf")], nullable: true },
    },
    required: ["family", "address", "vrf"],
  },
  AvailablePrefix: {
    type: "object",
    properties: {
      family: { type: "integer", enum: [4, 6] },
      prefix: { type: "string" },
      vrf: { allOf: [ref("NestedIpamVrf")], nullable: true },
    },
    required: ["family", "prefix", "vrf"],
  },
  PrefixLength: {
    type: "object",
    description: "A Prefix body without `prefix`/`vrf` (set by the allocator) and with `prefix_length`.",
    properties: { prefix_length: { type: "integer", minimum: 0, maximum: 128 } },
    required: ["prefix_length"],
    additionalProperties: true,
  },
};

/** Paths of the actions, keyed as in `paths` (relative to `/api`). */
export function actionPaths(): Record<string, unknown> {
  return {
    "/extras/webhook-deliveries/{id}/retry/": {
      post: {
        operationId: "extras_webhook_deliveries_retry",
        tags: ["extras"],
        parameters: [ID_PARAM],
        responses: { 200: json(ref("ExtrasWebhookdelivery")), ...errors(403, 404, 409) },
      },
    },
    "/extras/webhooks/{id}/retry-failed/": {
      post: {
        operationId: "extras_webhooks_retry_failed",
        tags: ["extras"],
        parameters: [ID_PARAM],
        responses: {
          200: json({ type: "object", properties: { retried: { type: "integer" } }, required: ["retried"] }),
          ...errors(403, 404),
        },
      },
    },
    "/ipam/prefixes/{id}/available-ips/": {
      parameters: [ID_PARAM],
      get: {
        operationId: "ipam_prefixes_available_ips_list",
        tags: ["ipam"],
        description:
          "Free addresses of the prefix in address order, with its mask length and VRF (not paginated).",
        parameters: [{ name: "limit", in: "query", required: false, schema: { type: "integer" } }],
        responses: { 200: json({ type: "array", items: ref("AvailableIP") }), ...errors(403, 404) },
      },
      post: {
        operationId: "ipam_prefixes_available_ips_create",
        tags: ["ipam"],
        description:
          "Create one IP address per body item at the next free addresses (`address` and `vrf` are set from the prefix).",
        requestBody: {
          required: true,
          content: { "application/json": { schema: oneOrList("WritableIpamIpaddress") } },
        },
        responses: { 201: json(oneOrList("IpamIpaddress")), 204: NO_ROOM, ...errors(400, 403, 404) },
      },
    },
    "/ipam/prefixes/{id}/available-prefixes/": {
      parameters: [ID_PARAM],
      get: {
        operationId: "ipam_prefixes_available_prefixes_list",
        tags: ["ipam"],
        description: "Free child blocks of the prefix (minimal CIDR decomposition, address order).",
        responses: { 200: json({ type: "array", items: ref("AvailablePrefix") }), ...errors(403, 404) },
      },
      post: {
        operationId: "ipam_prefixes_available_prefixes_create",
        tags: ["ipam"],
        description:
          "Create one child prefix per body item in the first free block that fits its `prefix_length`.",
        requestBody: {
          required: true,
          content: { "application/json": { schema: oneOrList("PrefixLength") } },
        },
        responses: { 201: json(oneOrList("IpamPrefix")), 204: NO_ROOM, ...errors(400, 403, 404) },
      },
    },
  };
}
