/**
 * Conditional requests over HTTP (issue 26; RFC 9110 §13): the `ETag` of an object and of a list page,
 * `If-None-Match` on GET/HEAD answered `304 Not Modified` before anything is rendered, and the tags of
 * `If-Match` handed to the service's check (service/object-versions.ts), which answers 412. An extension
 * Nautobot clients never notice: requests without these headers behave as before.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { etagOf, pageEtag, versionOf } from "../service/object-versions.ts";
import type { Row } from "../service/rows.ts";

/** The entity tags of a conditional header: `*`, the listed tags as sent (quoted, `W/` kept), or undefined when absent. */
function tagsOf(header: string | string[] | undefined): "*" | string[] | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(",") : header;
  if (text.trim() === "*") return "*";
  // An entity tag is `W/"…"` or `"…"` with no `"` inside (RFC 9110 §8.8.3): commas inside are legal.
  return text.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/** The tags of `If-Match` (strong comparison by the service), or undefined when the request has none. */
export function ifMatchTags(req: FastifyRequest): "*" | string[] | undefined {
  return tagsOf(req.headers["if-match"]);
}

/** Whether `If-None-Match` lists `etag` (weak comparison: `W/` ignored) or is `*`. */
function noneMatchHits(req: FastifyRequest, etag: string): boolean {
  const tags = tagsOf(req.headers["if-none-match"]);
  if (tags === undefined) return false;
  if (tags === "*") return true;
  return tags.some((t) => t.replace(/^W\//, "") === etag);
}

/** Whether the request carries `If-None-Match` (the list route then computes its ETag the cheap way first). */
export function hasIfNoneMatch(req: FastifyRequest): boolean {
  return req.headers["if-none-match"] !== undefined;
}

/** Set `ETag` and add `Accept` to `Vary` (the same URL answers JSON or the browsable HTML). */
function tagReply(reply: FastifyReply, etag: string): void {
  reply.header("ETag", etag);
  const vary = reply.getHeader("Vary");
  const list = vary === undefined ? [] : String(vary).split(/\s*,\s*/);
  if (!list.some((v) => v.toLowerCase() === "accept")) reply.header("Vary", [...list, "Accept"].join(", "));
}

/**
 * Tag the answer to a GET/HEAD of one object with its ETag (`"<id>:<version>"`); when `If-None-Match` names
 * it, answer 304 with no body and return true (the caller renders nothing).
 */
export function objectNotModified(req: FastifyRequest, reply: FastifyReply, row: Row): boolean {
  const etag = etagOf(String(row.id), versionOf(row));
  tagReply(reply, etag);
  if (!noneMatchHits(req, etag)) return false;
  reply.code(304).send();
  return true;
}

/**
 * Tag the answer to a GET/HEAD of a list page with its ETag (`pageEtag` of the page's ids and versions, the
 * count and the variant: URL, `Accept`, API version, base URL, user); when `If-None-Match` names it, answer
 * 304 with no body and return true.
 * @param rows the page's rows in order (at least `id` and the version column)
 */
export function pageNotModified(
  req: FastifyRequest,
  reply: FastifyReply,
  baseUrl: string,
  page: { count: number; rows: readonly Row[] },
): boolean {
  const variant = [
    req.url,
    req.headers.accept ?? "",
    req.apiVersion ?? "",
    baseUrl,
    req.auth.actor?.id ?? "",
  ].join("\n");
  const etag = pageEtag(variant, page.count, page.rows);
  tagReply(reply, etag);
  if (!noneMatchHits(req, etag)) return false;
  reply.code(304).send();
  return true;
}
