/**
 * Values of representations as HTML fragments for list cells and detail rows. Every text is escaped here
 * (templates print these fragments raw); related objects become links to their UI pages.
 */
import MarkdownIt from "markdown-it";
import { uiUrl } from "./views.ts";

/** Markdown with raw HTML disabled (escaped) and unsafe link schemes refused (markdown-it defaults). */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

/**
 * Markdown text (notes, comments, markdown custom fields) as HTML, as Nautobot renders them: raw HTML in
 * the text is shown escaped, `javascript:` links are not links.
 */
export function markdownHtml(text: unknown): string {
  return `<div class="markdown">${md.render(String(text ?? ""))}</div>`;
}

/** HTML-escape a text. */
export function esc(v: unknown): string {
  return String(v ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

type Obj = Record<string, unknown>;

/**
 * A rendered value: nested objects as links, choices and statuses as badges (a `status` key adds the class
 * that the generated status-colour sheet paints), lists joined, JSON pretty.
 */
export function valueHtml(v: unknown, key = ""): string {
  if (v === null || v === undefined || v === "") return '<span class="muted">—</span>';
  if (Array.isArray(v)) {
    if (!v.length) return '<span class="muted">—</span>';
    if (v.every((x) => x && typeof x === "object" && "display" in (x as Obj)))
      return v.map((x) => valueHtml(x)).join(", ");
    if (v.every((x) => typeof x !== "object")) return v.map((x) => esc(x)).join(", ");
    return `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;
  }
  if (typeof v === "object") {
    const o = v as Obj;
    if ("value" in o && "label" in o && Object.keys(o).length === 2)
      return `<span class="badge${key === "status" ? " status" : ""} ${esc(o.value)}">${esc(o.label)}</span>`;
    if ("display" in o) {
      const href = uiUrl(o.url);
      return href ? `<a href="${esc(href)}">${esc(o.display)}</a>` : esc(o.display);
    }
    if (!Object.keys(o).length) return '<span class="muted">—</span>';
    return `<pre>${esc(JSON.stringify(o, null, 2))}</pre>`;
  }
  if (typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(v))
    return esc(v.replace("T", " ").slice(0, 19));
  if (typeof v === "boolean") return v ? "✓ yes" : "✗ no";
  if (key === "comments" && typeof v === "string") return markdownHtml(v);
  if (key.endsWith("url") && typeof v === "string" && v.startsWith("/"))
    return `<a href="${esc(v)}">${esc(v)}</a>`;
  return esc(v);
}
