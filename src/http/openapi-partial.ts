/**
 * The non-atomic bulk write extension in the OpenAPI document (issue 28; http/routes/bulk-partial.ts): the
 * `atomic` query parameter and the 207 answer on every writable model's bulk POST/PUT/PATCH/DELETE and on
 * its `…/upsert/` action. Added to the operations openapi.ts derives from the registry, so every model gets
 * them and no model is listed by hand.
 */
import type { Registry } from "../registry/index.ts";
import { json, ref, type Schema } from "./openapi-parts.ts";

/** The component schema of one item's result. */
const RESULT = "BulkItemResult";

const ATOMIC_PARAM = {
  name: "atomic",
  in: "query",
  required: false,
  description:
    "Extension (not in Nautobot): `false` writes each item on its own (good items are committed beside failed ones, each with its change log entry and webhook) and answers 207 with one result per item; absent or `true`, the write is all or none as in Nautobot.",
  schema: { type: "boolean", default: true },
};

/** Schemas this extension adds to `components.schemas`. */
export const partialSchemas: Record<string, Schema> = {
  [RESULT]: {
    type: "object",
    description:
      "One item of a non-atomic bulk write: its index in the body, what happened, and the object's representation (created, updated, unchanged), nothing (deleted) or the item's errors (failed: `{field: [messages]}` as the 400 body gives them, or `{detail}`).",
    properties: {
      index: { type: "integer" },
      status: { type: "string", enum: ["created", "updated", "deleted", "unchanged", "failed"] },
      object: { type: "object", additionalProperties: true },
      errors: { type: "object", additionalProperties: true },
    },
    required: ["index", "status"],
  },
};

const MULTI_STATUS = json(
  { type: "array", items: ref(RESULT) },
  "Multi-Status (with `atomic=false`): one result per item, in body order",
);

/** Add `atomic` and the 207 answer to the bulk writes and upserts of every writable model in `paths`. */
export function addNonAtomic(reg: Registry, paths: Record<string, unknown>): void {
  for (const m of reg.models.values()) {
    if (m.readOnly) continue;
    const list = paths[`/${m.app}/${m.path}/`] as Record<string, Record<string, unknown>> | undefined;
    const upsert = paths[`/${m.app}/${m.path}/upsert/`] as
      | Record<string, Record<string, unknown>>
      | undefined;
    const ops = [list?.post, list?.put, list?.patch, list?.delete, upsert?.post];
    for (const op of ops) {
      if (!op) continue;
      op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), ATOMIC_PARAM];
      op.responses = { ...(op.responses as Record<string, unknown>), 207: MULTI_STATUS };
    }
  }
}
