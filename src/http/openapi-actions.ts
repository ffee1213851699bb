/**
 * OpenAPI paths of the detail actions beside the generic model endpoints (webhook retries, allocation),
 * merged into the document by `openapiDocument`. Component names follow openapi.ts (`IpamPrefix`, …).
 */
import { hasNotes, type Registry } from "../registry/index.ts";
import { componentName } from "./openapi.ts";
import { changePaths } from "./openapi-changes.ts";
import { historyPaths } from "./openapi-history.ts";
import { errors, json, ref, type Schema, UUID } from "./openapi-parts.ts";

const ID_PARAM = { name: "id", in: "path", required: true, schema: UUID };
const oneOrList = (name: string): Schema => ({ oneOf: [ref(name), { type: "array", items: ref(name) }] });
const NO_ROOM = { description: "No room in the prefix: nothing was created (Nautobot's 204)" };

/** Schemas used only by the actions. */
export const actionSchemas: Record<string, Schema> = {
  CablePath: {
    type: "object",
    properties: {
      id: UUID,
      origin_type: { type: "string" },
      origin: { type: "object", additionalProperties: true },
      destination_type: { type: "string", nullable: true },
      destination: { type: "object", additionalProperties: true, nullable: true },
      path: { type: "array", items: { type: "object", additionalProperties: true } },
      is_active: { type: "boolean" },
      is_split: { type: "boolean" },
    },
    required: [
      "id",
      "origin_type",
      "origin",
      "destination_type",
      "destination",
      "path",
      "is_active",
      "is_split",
    ],
  },
  InterfaceConnection: {
    type: "object",
    properties: {
      id: UUID,
      display: { type: "string" },
      interface_a: ref("NestedDcimInterface"),
      interface_b: { allOf: [ref("NestedDcimInterface")], nullable: true },
      connected_endpoint_reachable: { type: "boolean", nullable: true },
      created: { type: "string", nullable: true },
      last_updated: { type: "string", nullable: true },
    },
    required: ["id", "display", "interface_a", "interface_b", "connected_endpoint_reachable"],
  },
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

const ANY_OBJECT: Schema = { type: "object", additionalProperties: true };
const NESTED_OR_NULL: Schema = { ...ANY_OBJECT, nullable: true };

/** Trace, paths, connection lists and the connected-device locator (routes/cable-paths.ts). */
function cablePathPaths(reg: Registry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const op = (
    id: string,
    tag: string,
    description: string,
    responses: Record<string, unknown>,
    parameters?: unknown[],
  ) => ({
    get: { operationId: id, tags: [tag], description, ...(parameters ? { parameters } : {}), responses },
  });
  for (const m of reg.models.values()) {
    const base = `/${m.app}/${m.path}/{id}`;
    const id = `${m.app}_${m.path.replace(/-/g, "_")}`;
    if ("connected_endpoint" in m.fields)
      out[`${base}/trace/`] = {
        parameters: [ID_PARAM],
        ...op(
          `${id}_trace`,
          m.app,
          "The cable path from this endpoint as `[near end, cable, far end]` segments (Nautobot `PathEndpointMixin.trace`).",
          {
            200: json({
              type: "array",
              items: { type: "array", minItems: 3, maxItems: 3, items: NESTED_OR_NULL },
            }),
            ...errors(403, 404),
          },
        ),
      };
    if (m.key === "dcim.frontport" || m.key === "dcim.rearport")
      out[`${base}/paths/`] = {
        parameters: [ID_PARAM],
        ...op(`${id}_paths`, m.app, "The cable paths that pass through this port.", {
          200: json({ type: "array", items: ref("CablePath") }),
          ...errors(403, 404),
        }),
      };
  }
  const filter = (name: string) => ({
    name,
    in: "query",
    required: false,
    schema: { type: "array", items: { type: "string" } },
    style: "form",
    explode: true,
  });
  const page = [
    { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
    { name: "offset", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
  ];
  for (const [path, item, extra] of [
    ["interface-connections", "InterfaceConnection", []],
    ["console-connections", "DcimConsoleport", ["name"]],
    ["power-connections", "DcimPowerport", ["name"]],
  ] as const) {
    out[`/dcim/${path}/`] = op(
      `dcim_${path.replace(/-/g, "_")}_list`,
      "dcim",
      "Endpoints whose cable path reaches another endpoint.",
      {
        200: json({
          type: "object",
          properties: {
            count: { type: "integer" },
            next: { type: "string", nullable: true },
            previous: { type: "string", nullable: true },
            results: { type: "array", items: ref(item) },
          },
          required: ["count", "next", "previous", "results"],
        }),
        ...errors(400, 403),
      },
      [...["site", "device_id", "device", ...extra].map(filter), ...page],
    );
  }
  out["/dcim/connected-device/"] = op(
    "dcim_connected_device_list",
    "dcim",
    "The device at the far end of a peer device's interface (an empty body when nothing is connected).",
    { 200: json(ref("DcimDevice")), ...errors(400, 403, 404) },
    [
      { name: "peer_device", in: "query", required: true, schema: { type: "string" } },
      { name: "peer_interface", in: "query", required: true, schema: { type: "string" } },
    ],
  );
  return out;
}

const PAGE_PARAMS = [
  { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
  { name: "offset", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
];
const pageOf = (items: Schema): Schema => ({
  type: "object",
  properties: {
    count: { type: "integer" },
    next: { type: "string", nullable: true },
    previous: { type: "string", nullable: true },
    results: { type: "array", items },
  },
  required: ["count", "next", "previous", "results"],
});

/**
 * `…/upsert/` on every writable model with a natural key (routes/upsert.ts, issue 28; an extension, not a
 * Nautobot path): one object or a list, each matched by the model's natural key.
 */
function upsertPaths(reg: Registry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of reg.models.values()) {
    const key = m.naturalKeyFields;
    if (m.readOnly || !key.length) continue;
    const name = componentName(m);
    out[`/${m.app}/${m.path}/upsert/`] = {
      post: {
        operationId: `${m.app}_${m.path.replace(/-/g, "_")}_upsert`,
        tags: [m.app],
        description:
          `Extension (not in Nautobot): create or update ${m.plural ?? `${m.verbose}s`} matched by their natural key ` +
          `(${key.join(", ")}; references may be nested natural-key objects). Given fields are updated, others ` +
          "kept; an item that would change nothing writes nothing (no change log, no webhook). All items in one " +
          "transaction: any invalid item is a 400 (one error object per item) and nothing is written.",
        requestBody: {
          required: true,
          content: { "application/json": { schema: oneOrList(`Writable${name}`) } },
        },
        responses: {
          200: json({
            type: "array",
            items: {
              type: "object",
              properties: {
                result: { type: "string", enum: ["created", "updated", "unchanged"] },
                object: ref(name),
              },
              required: ["result", "object"],
            },
          }),
          ...errors(400, 403),
        },
      },
    };
  }
  return out;
}

/** `…/notes/` on every model with notes, and dynamic-group members (routes/object-actions.ts). */
function objectActionPaths(reg: Registry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of reg.models.values()) {
    if (!hasNotes(m)) continue;
    const id = `${m.app}_${m.path.replace(/-/g, "_")}`;
    out[`/${m.app}/${m.path}/{id}/notes/`] = {
      parameters: [ID_PARAM],
      get: {
        operationId: `${id}_notes_list`,
        tags: [m.app],
        description: `Notes of this ${m.verbose}, oldest first (Nautobot \`NotesViewSetMixin\`).`,
        parameters: PAGE_PARAMS,
        responses: { 200: json(pageOf(ref("ExtrasNote"))), ...errors(403, 404) },
      },
      post: {
        operationId: `${id}_notes_create`,
        tags: [m.app],
        description: `Add a note to this ${m.verbose}, written by the acting user.`,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
            },
          },
        },
        responses: { 201: json(ref("ExtrasNote")), ...errors(400, 403, 404) },
      },
    };
  }
  out["/dcim/racks/{id}/elevation/"] = {
    parameters: [ID_PARAM],
    get: {
      operationId: "dcim_racks_elevation_list",
      tags: ["dcim"],
      description:
        "The units of one face of the rack, top to bottom, each with the device occupying it (Nautobot `RackViewSet.elevation`); `render=svg` draws them.",
      parameters: [
        { name: "face", in: "query", required: false, schema: { type: "string", enum: ["front", "rear"] } },
        { name: "render", in: "query", required: false, schema: { type: "string", enum: ["json", "svg"] } },
        { name: "unit_width", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
        { name: "unit_height", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
        ...PAGE_PARAMS,
      ],
      responses: {
        200: {
          description: "The units (JSON page) or the drawing (SVG)",
          content: {
            "application/json": { schema: pageOf(ANY_OBJECT) },
            "image/svg+xml": { schema: { type: "string" } },
          },
        },
        ...errors(400, 403, 404),
      },
    },
  };
  out["/extras/dynamic-groups/{id}/members/"] = {
    parameters: [ID_PARAM],
    get: {
      operationId: "extras_dynamic_groups_members_list",
      tags: ["extras"],
      description: "The objects the group's filter and child groups select, in the member model's order.",
      parameters: PAGE_PARAMS,
      responses: { 200: json(pageOf(ANY_OBJECT)), ...errors(400, 403, 404) },
    },
  };
  return out;
}

/** Paths of the actions, keyed as in `paths` (relative to `/api`). */
export function actionPaths(reg: Registry): Record<string, unknown> {
  return {
    ...cablePathPaths(reg),
    ...upsertPaths(reg),
    ...objectActionPaths(reg),
    ...changePaths(),
    ...historyPaths(),
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
