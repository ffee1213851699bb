/**
 * The query string of a list page (and of its exports), read once (issue 25): the API's filters and `q`,
 * `sort=<column>` or `-<column>`, `limit` and `offset`. Blank values mean "any" and are dropped; the
 * API's reserved parameters (`format`, `brief`, …) are not filters.
 */
import type { FastifyRequest } from "fastify";
import { RESERVED_PARAMS } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import { defaultColumns } from "./columns.ts";
import { nonBlank } from "./filters.ts";

/** A parsed list query. */
export interface ListQuery {
  /** Every non-blank parameter, in order (links keep them). */
  all: Map<string, string[]>;
  /** The filters passed to the service layer: `all` minus paging, sorting and reserved parameters. */
  filters: Map<string, string[]>;
  /** Rows per page, 1–1000 (default 50). */
  limit: number;
  /** First row, from 0. */
  offset: number;
  /** The ordering actually applied (`name` or `-name`), when the requested column is sortable. */
  sort?: string;
}

/** Parameters of a list page that are not filters. */
export const PAGING_PARAMS = new Set(["limit", "offset", "sort"]);

/** Query string → ordered multimap. */
export function queryParams(req: FastifyRequest): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const i = req.url.indexOf("?");
  if (i >= 0)
    for (const [k, v] of new URLSearchParams(req.url.slice(i + 1))) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

/** Whether a list may be ordered by field `name`: the name, a list column or a text field; never a computed, JSON or many-valued field. */
export function sortable(model: Model, name: string): boolean {
  const fd = model.fields[name];
  if (!fd || ["m2m", "computed", "count", "cts", "gfk", "json"].includes(fd.kind)) return false;
  return name === "name" || defaultColumns(model).includes(name) || fd.kind === "str";
}

/** The list query of a request for `model`. */
export function listQuery(req: FastifyRequest, model: Model): ListQuery {
  const all = nonBlank(queryParams(req));
  const limit = Math.min(Math.max(Number(all.get("limit")?.[0] ?? 50) || 50, 1), 1000);
  const offset = Math.max(Number(all.get("offset")?.[0] ?? 0) || 0, 0);
  // `sort=<column>` or `-<column>`: a sortable column orders the page (through the related object's own
  // ordering for a relation); anything else keeps the model's ordering.
  const sortRaw = all.get("sort")?.[0] ?? "";
  const sort = sortRaw && sortable(model, sortRaw.replace(/^-/, "")) ? sortRaw : undefined;
  const filters = new Map([...all].filter(([k]) => !PAGING_PARAMS.has(k) && !RESERVED_PARAMS.has(k)));
  return { all, filters, limit, offset, ...(sort ? { sort } : {}) };
}
