/**
 * The opt-in non-atomic mode of bulk writes (issue 28; an extension, no Nautobot client sends it):
 * `?atomic=false` on a list endpoint's POST/PUT/PATCH/DELETE or on `…/upsert/` writes each item on its own
 * (service/bulk-partial.ts) and answers **207 Multi-Status** with one result per item, in body
 * order: `{index, status, object}` (`created`/`updated`/`unchanged`), `{index, status: "deleted"}` or
 * `{index, status: "failed", errors}` (the item's entry of the all-or-none 400 body). Without the switch,
 * nothing here runs.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Model } from "../../registry/index.ts";
import { atomicParam, type PartialKind, writeEach } from "../../service/bulk-partial.ts";
import { ValidationError } from "../../service/errors.ts";
import type { ListParams } from "../../service/read.ts";
import { type HttpKit, queryParams } from "../kit.ts";
import { checkBulkSize } from "./models.ts";

/** The status code of a non-atomic bulk write's answer. */
export const PARTIAL_STATUS = 207;

/** Whether the request asks for the non-atomic mode (`?atomic=false`); 400 naming `atomic` for a bad value. */
export function nonAtomic(req: FastifyRequest): boolean {
  return !atomicParam(queryParams(req.url, req).get("atomic"));
}

/**
 * Answer a non-atomic bulk write: 207 with one result per item.
 * @param owner the owner column that restricts the rows (tokens), as the all-or-none path uses
 * @throws ValidationError (400) when a PUT/PATCH/DELETE body is not a list, or the list is too long
 */
export async function sendPartial(
  kit: HttpKit,
  req: FastifyRequest,
  reply: FastifyReply,
  model: Model,
  kind: PartialKind,
  owner?: [string, string],
): Promise<FastifyReply> {
  const body = req.body;
  if (!Array.isArray(body) && kind !== "POST" && kind !== "UPSERT")
    throw new ValidationError({
      non_field_errors: [
        `Expected a list of items but got type "${body === null ? "NoneType" : typeof body === "object" ? "dict" : typeof body}".`,
      ],
    });
  const items = Array.isArray(body) ? body : [body];
  checkBulkSize(items, kit.config.maxBulk);
  const visible: Omit<ListParams, "action"> = {
    params: new Map(),
    limit: 1,
    offset: 0,
    ...(owner ? { ownerColumn: owner } : {}),
  };
  const results = await writeEach(
    kit.ctxFor(req),
    model,
    kind,
    items,
    (t, m, ids) => kit.renderIds(t, m, ids, { created: kind === "POST" }),
    visible,
  );
  return kit.send(req, reply, PARTIAL_STATUS, results);
}
