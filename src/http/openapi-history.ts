/**
 * OpenAPI of history (issue 27): `as_of`/`as_of_seq` on versioned models' lists and details (and the
 * response header naming the point), and the paths of http/routes/history.ts. Extensions, not in Nautobot.
 */
import { errors, json, type Schema, UUID } from "./openapi-parts.ts";

/** The point parameters of a history read. */
export const AS_OF_PARAMS = [
  {
    name: "as_of_seq",
    in: "query",
    required: false,
    description:
      "Read the state after change N of the change sequence (extension); the answer's `X-Inventory-As-Of-Seq` header names the point. 400 before history begins (retention) or after the last change.",
    schema: { type: "integer", minimum: 0 },
  },
  {
    name: "as_of",
    in: "query",
    required: false,
    description: "Read the state at this time: the last change at or before it (extension, RFC 3339).",
    schema: { type: "string", format: "date-time" },
  },
];

const POINT = (name: string) => [
  { name: `${name}_seq`, in: "query", required: false, schema: { type: "integer", minimum: 0 } },
  { name, in: "query", required: false, schema: { type: "string", format: "date-time" } },
];

const DIFF: Schema = {
  type: "object",
  properties: {
    object_type: { type: "string" },
    object_id: { type: "string" },
    display: { type: "string", nullable: true },
    from_seq: { type: "integer" },
    to_seq: { type: "integer" },
    action: { type: "string", enum: ["created", "deleted", "updated", "unchanged", "absent"] },
    changes: {
      type: "object",
      description: "Field → [value at from, value at to].",
      additionalProperties: { type: "array", items: {} },
    },
  },
};

const REVERT_RESULT: Schema = {
  type: "object",
  properties: {
    dry_run: { type: "boolean" },
    applied: { type: "boolean" },
    plan: {
      type: "array",
      items: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["create", "update", "delete"] },
          object_type: { type: "string" },
          object_id: { type: "string" },
        },
      },
    },
    conflicts: {
      type: "array",
      items: {
        type: "object",
        properties: {
          object_type: { type: "string" },
          object_id: { type: "string" },
          reason: { type: "string" },
          detail: {},
        },
      },
    },
  },
};

/** Paths of history, keyed as in `paths` (relative to `/api`). */
export function historyPaths(): Record<string, unknown> {
  return {
    "/history/diff/": {
      get: {
        operationId: "history_diff",
        tags: ["history"],
        description: "One object between two points, field by field (`to` defaults to now). Extension.",
        parameters: [
          { name: "object_type", in: "query", required: true, schema: { type: "string" } },
          { name: "object_id", in: "query", required: true, schema: UUID },
          ...POINT("from"),
          ...POINT("to"),
        ],
        responses: { 200: json(DIFF), ...errors(400, 403) },
      },
    },
    "/history/changes/": {
      get: {
        operationId: "history_changes",
        tags: ["history"],
        description:
          "Every object that changed between two points, or in one request (`request_id`), as diffs, paged. Extension.",
        parameters: [
          { name: "object_type", in: "query", required: false, schema: { type: "string" } },
          { name: "request_id", in: "query", required: false, schema: { type: "string" } },
          ...POINT("from"),
          ...POINT("to"),
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 200 },
          },
          { name: "offset", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
        ],
        responses: {
          200: json({
            type: "object",
            properties: {
              count: { type: "integer" },
              from_seq: { type: "integer" },
              to_seq: { type: "integer" },
              next: { type: "string", nullable: true },
              previous: { type: "string", nullable: true },
              results: { type: "array", items: DIFF },
            },
          }),
          ...errors(400, 403, 404),
        },
      },
    },
    "/history/revert/": {
      post: {
        operationId: "history_revert",
        tags: ["history"],
        description:
          "Revert a request, a set of change-log entries, or one object to a point. A dry run unless `dry_run` is false; applied only without conflicts (409 otherwise, nothing changed). Extension.",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  request_id: { type: "string" },
                  changes: { type: "array", items: UUID },
                  object_type: { type: "string" },
                  object_id: UUID,
                  as_of_seq: { type: "integer", minimum: 0 },
                  as_of: { type: "string", format: "date-time" },
                  dry_run: { type: "boolean", default: true },
                },
              },
            },
          },
        },
        responses: {
          200: json(REVERT_RESULT),
          409: json(REVERT_RESULT, "Conflicts: nothing changed"),
          ...errors(400, 403, 404),
        },
      },
    },
  };
}
