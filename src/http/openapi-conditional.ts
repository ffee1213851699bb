/**
 * The conditional-request extension in the OpenAPI document (issue 26): on every model's list and detail
 * paths, `ETag` on 200 answers, `If-None-Match` on GET (304), `If-Match` on PUT/PATCH/DELETE of one object
 * (412), and the `_version` key of bulk items (412 naming the stale ones). Added to the operations
 * openapi.ts derives from the registry, so every model gets them and no model is listed by hand.
 */
import type { Registry } from "../registry/index.ts";
import { VERSION_KEY } from "../service/object-versions.ts";
import { errorResponse, type Schema } from "./openapi-parts.ts";

const ETAG_HEADER = {
  ETag: {
    description:
      'Strong entity tag: `"<id>:<version>"` for an object (its version rises with every write to it), a hash of the ids and versions of the rows, the count and the request for a list page. Send it back in `If-None-Match` (GET) or `If-Match` (writes of one object).',
    schema: { type: "string" },
  },
};

const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "Answer 304 Not Modified, with no body, when the ETag is still one of these (or `*`).",
  schema: { type: "string" },
};

const IF_MATCH = {
  name: "If-Match",
  in: "header",
  required: false,
  description:
    "Write only if the object's current ETag is one of these (or `*`); otherwise 412 Precondition Failed with `{detail, etag}` naming the current ETag, and nothing is changed. Checked on the locked row inside the write's transaction.",
  schema: { type: "string" },
};

const NOT_MODIFIED = {
  description: "Not Modified: the ETag named by If-None-Match is current (no body).",
  headers: ETAG_HEADER,
};

const PRECONDITION_FAILED = errorResponse(
  "Precondition Failed: the object, or a bulk item naming `_version`, changed since; nothing was changed.",
  {
    etag: { type: "string", description: "The object's current ETag (one object)." },
    stale: {
      type: "array",
      description:
        "Bulk: every stale item (its index in the body, id, the version it named, the current one).",
      items: {
        type: "object",
        properties: {
          index: { type: "integer" },
          id: { type: "string", format: "uuid" },
          [VERSION_KEY]: { type: "integer" },
          current: { type: "integer" },
          etag: { type: "string" },
        },
      },
    },
  },
);

type Op = Record<string, any>;

/** Give a 200 answer the `ETag` header. */
function tagged(op: Op | undefined): void {
  const ok = op?.responses?.["200"];
  if (ok) op.responses["200"] = { ...ok, headers: { ...(ok.headers ?? {}), ...ETAG_HEADER } };
}

/** Add the conditional headers, answers and the bulk `_version` key to the model paths of `paths`. */
export function addConditionalRequests(reg: Registry, paths: Record<string, unknown>): void {
  const versionProp: Schema = {
    type: "object",
    properties: {
      [VERSION_KEY]: {
        type: "integer",
        minimum: 1,
        description:
          "Optional: the object's version this item was read at (the number after `:` in its ETag); if any item's object changed since, the whole request is a 412 naming every stale item and nothing changes.",
      },
    },
  };
  for (const m of reg.models.values()) {
    const list = paths[`/${m.app}/${m.path}/`] as Record<string, Op> | undefined;
    const detail = paths[`/${m.app}/${m.path}/{id}/`] as Record<string, Op> | undefined;
    for (const [path, get] of [
      [list, list?.get],
      [detail, detail?.get],
    ] as const) {
      if (!path || !get) continue;
      get.parameters = [...(get.parameters ?? []), IF_NONE_MATCH];
      get.responses = { ...get.responses, 304: NOT_MODIFIED };
      tagged(get);
    }
    for (const method of ["put", "patch", "delete"]) {
      const op = detail?.[method];
      if (op) {
        op.parameters = [...(op.parameters ?? []), IF_MATCH];
        op.responses = { ...op.responses, 412: PRECONDITION_FAILED };
      }
      const bulk = list?.[method];
      const items = bulk?.requestBody?.content?.["application/json"]?.schema?.items;
      if (bulk && items) {
        bulk.requestBody.content["application/json"].schema.items = { allOf: [items, versionProp] };
        bulk.responses = { ...bulk.responses, 412: PRECONDITION_FAILED };
      }
    }
  }
}
