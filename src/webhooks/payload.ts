/**
 * What a webhook delivery sends: the template context (seed, Events "Template context and default body"),
 * the default JSON body, rendered headers and the signature.
 */
import { createHmac } from "node:crypto";
import { type RenderBudget, renderBounded } from "../template/bounded.ts";
import { TemplateError } from "../template/jinja.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** The change a delivery reports, as stored in its ObjectChange row. */
export interface StoredChange {
  action: "create" | "update" | "delete";
  /** `app.model` content type. */
  contentType: string;
  /** ISO 8601 time of the change. */
  time: string;
  userName: string | null;
  hasUser: boolean;
  requestId: string;
  /** Representation after the change (before it, for a delete), relative URLs. */
  objectData: Obj | null;
  /** Representation before an update, relative URLs. */
  prechangeData: Obj | null;
  /** `http://host` of the request that made the change, or null (importer, CLI). */
  baseUrl: string | null;
}

/** The context of a delivery: keys in Nautobot's order (nautobot-webhooks.md §3.1). */
export interface HookContext {
  event: "created" | "updated" | "deleted";
  timestamp: string;
  model: string;
  username: string;
  request_id: string;
  data: Obj | null;
  snapshots: {
    prechange: Obj | null;
    postchange: Obj | null;
    differences: { removed: Obj | null; added: Obj | null };
  };
}

/** Prefix every relative API URL (values of keys ending in `url`) with `base`. Returns a copy. */
export function absolutize<T extends Json>(value: T, base: string): T {
  if (!base) return value;
  const walk = (v: Json, key: string | undefined): Json => {
    if (Array.isArray(v)) return v.map((x) => walk(x, undefined));
    if (v && typeof v === "object") {
      const out: Obj = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k);
      return out;
    }
    if (typeof v === "string" && key?.endsWith("url") && v.startsWith("/api/")) return `${base}${v}`;
    return v;
  };
  return walk(value, undefined) as T;
}

function same(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Snapshot differences as Nautobot's `get_snapshots` (nautobot-webhooks.md §3.3): `added` holds every
 * top-level key of `post` whose value changed (ignoring `last_updated`), `removed` the old values of
 * the same keys; create → `{removed: null, added: post}`, delete → `{removed: pre, added: null}`.
 */
export function differences(pre: Obj | null, post: Obj | null): { removed: Obj | null; added: Obj | null } {
  if (pre && post) {
    const added: Obj = {};
    const removed: Obj = {};
    for (const [k, v] of Object.entries(post)) {
      if (k === "last_updated" || same(v, pre[k])) continue;
      added[k] = v;
      removed[k] = pre[k] ?? null;
    }
    return { removed, added };
  }
  if (pre) return { removed: pre, added: null };
  return { removed: null, added: post };
}

const EVENTS = { create: "created", update: "updated", delete: "deleted" } as const;

/** Build the context of one change; `fallbackBase` is used when the change has no request base URL. */
export function buildContext(change: StoredChange, fallbackBase: string): HookContext {
  const base = change.baseUrl ?? fallbackBase;
  const data = change.objectData ? absolutize(change.objectData, base) : null;
  let pre: Obj | null = null;
  let post: Obj | null = null;
  if (change.action === "create") post = data;
  else if (change.action === "update") {
    pre = change.prechangeData ? absolutize(change.prechangeData, base) : null;
    post = data;
  } else pre = data;
  return {
    event: EVENTS[change.action],
    timestamp: change.time,
    model: change.contentType.split(".")[1] ?? change.contentType,
    username: change.hasUser ? (change.userName ?? "") : "",
    request_id: change.requestId,
    data,
    snapshots: { prechange: pre, postchange: post, differences: differences(pre, post) },
  };
}

/**
 * The default body: the context as JSON with Python `json.dumps` separators (`", "`, `": "`), non-ASCII
 * kept raw, as Nautobot sends it (nautobot-webhooks.md §3.4).
 */
export function defaultBody(context: HookContext): string {
  const enc = (v: unknown): string => {
    if (v === null || v === undefined) return "null";
    if (Array.isArray(v)) return `[${v.map(enc).join(", ")}]`;
    if (typeof v === "object")
      return `{${Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${JSON.stringify(k)}: ${enc(x)}`)
        .join(", ")}}`;
    return JSON.stringify(v);
  };
  return enc(context);
}

/**
 * Render `additional_headers` and parse it: one `Name: Value` per line, split on the first colon only,
 * blank lines ignored, later duplicates win (fixes Nautobot's `split(":")`, W9).
 * @throws TemplateError for a template error or a line without a colon or with an invalid name.
 */
export async function renderHeaders(
  template: string,
  context: HookContext,
  budget: RenderBudget,
): Promise<Record<string, string>> {
  if (!template.trim()) return {};
  const text = await renderBounded(template, context as unknown as Record<string, unknown>, budget);
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const at = line.indexOf(":");
    if (at < 0)
      throw new TemplateError(`additional_headers line ${i + 1} has no colon: ${line.slice(0, 80)}`);
    const name = line.slice(0, at).trim();
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
      throw new TemplateError(`additional_headers line ${i + 1}: invalid header name "${name}"`);
    out[name] = line.slice(at + 1).trim();
  });
  return out;
}

/** The request body: the rendered `body_template`, or the default JSON body when it is blank. */
export async function renderBody(
  template: string,
  context: HookContext,
  budget: RenderBudget,
): Promise<string> {
  if (!template.trim()) return defaultBody(context);
  return renderBounded(template, context as unknown as Record<string, unknown>, budget);
}

/** `X-Hook-Signature`: lowercase hex HMAC-SHA512 of the exact body bytes keyed by the secret (seed, Events 3). */
export function signature(secret: string, body: string | Buffer): string {
  return createHmac("sha512", Buffer.from(secret, "utf8")).update(body).digest("hex");
}
