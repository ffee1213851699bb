/**
 * `as_of` and `as_of_seq` on reads (issue 27): the request reads the state at a point of history through the
 * store's as-of handle (store/as-of.ts), with the same routes and service code as a live read. Names no
 * Nautobot filter uses. The response says the point in `X-Inventory-As-Of-Seq`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Registry } from "../registry/index.ts";
import { makeCtx, type ServiceSettings } from "../service/context.ts";
import { AppError } from "../service/errors.ts";
import { AS_OF_HEADER, resolvePoint } from "../service/history.ts";
import type { Store } from "../store/db.ts";
import { queryParams } from "./kit.ts";

/**
 * When the request asks for a point (`as_of=<RFC 3339 time>` or `as_of_seq=<N>`), resolve it and point the
 * request's reads at it (`req.readDb`, `req.asOfSeq`, no shared cache). @returns whether it asked.
 * @throws AppError 400 on a write, on a route that cannot read history (`config.asOf` unset: cable traces,
 *   allocation, the change feed…), on an in-memory database, or for a point history cannot answer.
 */
export async function asOfRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: { store: Store; reg: Registry; settings: ServiceSettings },
): Promise<boolean> {
  const q = queryParams(req.url, req);
  const asOf = q.get("as_of")?.[0];
  const asOfSeq = q.get("as_of_seq")?.[0];
  if (asOf === undefined && asOfSeq === undefined) return false;
  if (!req.routeOptions.config?.asOf) throw new AppError(400, "as_of and as_of_seq are not supported here.");
  if (req.method !== "GET" && req.method !== "HEAD" && req.routeOptions.url !== "/api/graphql/")
    throw new AppError(400, "as_of and as_of_seq are for reads only.");
  if (!deps.store.asOf)
    throw new AppError(400, "History reads need a database file, not an in-memory database.");
  const point = await resolvePoint(makeCtx(deps), asOf, asOfSeq);
  req.asOfSeq = point;
  req.readDb = deps.store.asOf.at(point);
  req.dataToken = undefined;
  req.definitionsToken = undefined;
  reply.header(AS_OF_HEADER, String(point));
  return true;
}

/**
 * Consistent paging of live lists (issue 27, NetBox #3699): a page of a versioned model's list that has
 * more pages is pinned to the point it reflects, and its `next`/`previous` links carry `as_of_seq`, so a
 * client walking the list while others write gets exactly the rows of its first page's moment, each once.
 * The latest point is read after the request's data token (`req.dataToken`, read when it arrived) and the
 * live page after it; when the data token still reads the same afterwards nothing was committed meanwhile
 * (the shared memo the page used holds that state too) and the page is exactly that point's; otherwise the
 * page is read again at the point through history. Reads on a replica, or without a data token, are not
 * pinned. @returns the page and its point, undefined when not pinned (`live` then ran once).
 */
export async function pinnedRead<T>(
  req: FastifyRequest,
  how: {
    /** The latest point (service/history.ts `historyRange`). */
    latest: () => Promise<number>;
    /** The data token now (`Store.freshTokens().data`). */
    tokenNow: () => Promise<string | undefined>;
    live: () => Promise<T>;
    atPoint: (point: number) => Promise<T>;
    /** Whether the page has a neighbour (only then is it pinned). */
    paged: (page: T) => boolean;
  },
): Promise<{ page: T; point: number | undefined }> {
  const token = req.dataToken;
  if (req.asOfSeq !== undefined || req.readDb !== undefined || token === undefined)
    return { page: await how.live(), point: undefined };
  const point = await how.latest();
  const page = await how.live();
  if (!how.paged(page)) return { page, point: undefined };
  if ((await how.tokenNow()) === token) return { page, point };
  return { page: await how.atPoint(point), point };
}
