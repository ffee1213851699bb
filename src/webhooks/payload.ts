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

/**
 * A stored ISO time as Python's `str()` of an aware UTC datetime, Nautobot's webhook `timestamp`
 * (`2026-11-23 13:23:04.729000+00:00`; no fraction when it is zero; nautobot-webhooks.md §3.1).
 */
export function pythonTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const frac = /\.(\d+)/.exec(iso)?.[1] ?? "";
  const micro = `${frac}000000`.slice(0, 6);
  const base = d.toISOString().slice(0, 19).replace("T", " ");
  return `${base}${micro === "000000" ? "" : `.${micro}`}+00:00`;
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

/**
 * Build the context of one change. `data` and the snapshots keep the relative API URLs of the stored
 * representation and `timestamp` is Python's format, as Nautobot 1.6 sends them (receivers written
 * against Nautobot parse both).
 */
export function buildContext(change: StoredChange): HookContext {
  const data = change.objectData;
  let pre: Obj | null = null;
  let post: Obj | null = null;
  if (change.action === "create") post = data;
  else if (change.action === "update") {
    pre = change.prechangeData;
    post = data;
  } else pre = data;
  return {
    event: EVENTS[change.action],
    timestamp: pythonTime(change.time),
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
