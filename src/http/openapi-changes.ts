/**
 * OpenAPI paths of the change feed, its stream and webhook replay (issue 26; http/routes/changes.ts).
 */
import { errorResponse, errors, json, type Schema, UUID } from "./openapi-parts.ts";

const FEED_ENTRY: Schema = {
  type: "object",
  properties: {
    seq: { type: "integer", description: "Place in the change sequence (commit order, never reused)." },
    time: { type: "string", format: "date-time" },
    user: { type: "string", format: "uuid", nullable: true },
    user_name: { type: "string" },
    request_id: { type: "string", nullable: true },
    action: { type: "string", enum: ["create", "update", "delete"] },
    changed_object_type: { type: "string", description: "Content type, `app.model`." },
    changed_object_id: { type: "string", format: "uuid" },
    object_repr: { type: "string" },
    before: { type: "object", nullable: true, description: "REST representation before the change." },
    after: { type: "object", nullable: true, description: "REST representation after the change." },
  },
};

const FILTERS = [
  { name: "after", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
  {
    name: "type",
    in: "query",
    required: false,
    description: "Content types (`dcim.device`), repeated or comma-separated.",
    schema: { type: "string" },
  },
  {
    name: "action",
    in: "query",
    required: false,
    schema: { type: "string", enum: ["create", "update", "delete"] },
  },
  { name: "request_id", in: "query", required: false, schema: { type: "string" } },
];

const GONE = errorResponse(
  "The position was purged by retention: resynchronise, then follow from `oldest_seq - 1`.",
  { oldest_seq: { type: "integer", nullable: true }, purged_through: { type: "integer" } },
);

/** Paths of the change feed, keyed as in `paths` (relative to `/api`). */
export function changePaths(): Record<string, unknown> {
  return {
    "/extras/object-changes/feed/": {
      get: {
        operationId: "extras_object_changes_feed",
        tags: ["extras"],
        description:
          "Changes after `after` in seq order (gap-free: a change below a seq already seen never appears later). `next` resumes exactly after the last one returned. Extension, not in Nautobot.",
        parameters: [
          ...FILTERS,
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 1000 },
          },
        ],
        responses: {
          200: json({
            type: "object",
            properties: {
              next: { type: "string", format: "uri" },
              last_seq: { type: "integer" },
              count: { type: "integer" },
              results: { type: "array", items: FEED_ENTRY },
            },
          }),
          410: GONE,
          ...errors(400, 403),
        },
      },
    },
    "/extras/object-changes/stream/": {
      get: {
        operationId: "extras_object_changes_stream",
        tags: ["extras"],
        description:
          "The feed as `text/event-stream`: one `change` event per change, `id:` = seq, resumable with `Last-Event-ID` or `after`; heartbeat comments while idle. Extension, not in Nautobot.",
        parameters: [
          ...FILTERS,
          { name: "Last-Event-ID", in: "header", required: false, schema: { type: "integer", minimum: 0 } },
        ],
        responses: {
          200: {
            description: "Server-sent events.",
            // One schema per event (as schemathesis and OpenAPI 3.2's itemSchema read SSE): `id` is the seq,
            // `event` is `change`, `data` the feed entry as JSON.
            content: {
              "text/event-stream": {
                schema: {
                  type: "object",
                  properties: {
                    id: { type: "string" },
                    event: { type: "string" },
                    data: { type: "string" },
                    retry: { type: "integer" },
                  },
                },
              },
            },
          },
          410: GONE,
          503: { description: "Too many streams in this process (see `Retry-After`)." },
          ...errors(400, 403),
        },
      },
    },
    "/extras/webhooks/{id}/replay/": {
      post: {
        operationId: "extras_webhooks_replay",
        tags: ["extras"],
        description:
          "Queue the webhook's events since seq `after` (or time `since`) again as new deliveries in seq order, at most 10,000 per call (`more`: call again with `after` = `next`). Extension, not in Nautobot.",
        parameters: [{ name: "id", in: "path", required: true, schema: UUID }],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  after: { type: "integer", minimum: 0 },
                  since: { type: "string", format: "date-time" },
                },
              },
            },
          },
        },
        responses: {
          200: json({
            type: "object",
            properties: { queued: { type: "integer" }, next: { type: "integer" }, more: { type: "boolean" } },
            required: ["queued", "next", "more"],
          }),
          ...errors(400, 403, 404),
        },
      },
    },
  };
}
