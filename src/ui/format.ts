/**
 * Values of representations as HTML fragments for list cells and detail rows. Every text is escaped here
 * (templates print these fragments raw); related objects become links to their UI pages.
 */
import MarkdownIt from "markdown-it";
import { uiUrl } from "./views.ts";

/** Markdown with raw HTML disabled (escaped) and unsafe link schemes refused (markdown-it defaults). */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

/**
 * Characters of Markdown one page renders (issue 23). markdown-it is linear but costly on hostile input
 * (about 10 µs a character for `![` repeated on this project's 2-core machine), so a page renders at most
 * this much text as Markdown: one note or comments at the size cap (`SIZE_LIMITS.text`, 64 KiB) renders
 * whole, in well under a second whatever it holds.
 */
export const MARKDOWN_PAGE_BUDGET = 65_536;
/** Characters of a text shown escaped, as plain text, once the page's Markdown budget is spent. */
export const MARKDOWN_PLAIN_PREVIEW = 2_048;

/** What is left of a page's Markdown budget, in characters; shared by the texts of one page. */
export interface MarkdownBudget {
  chars: number;
}

/** A fresh budget for one page (`MARKDOWN_PAGE_BUDGET` characters). */
export function markdownBudget(): MarkdownBudget {
  return { chars: MARKDOWN_PAGE_BUDGET };
}

/**
 * Markdown text (notes, comments, markdown custom fields) as HTML, as Nautobot renders them: raw HTML in
 * the text is shown escaped, `javascript:` links are not links. A text longer than what is left of
 * `budget` (by default a budget of its own) is not parsed: its first `MARKDOWN_PLAIN_PREVIEW` characters
 * are shown escaped as plain text, with the number of characters left out, so the HTML of a page stays
 * bounded (texts stored before the size caps can be megabytes long).
 */
export function markdownHtml(text: unknown, budget: MarkdownBudget = markdownBudget()): string {
  const s = String(text ?? "");
  if (s.length <= budget.chars) {
    budget.chars -= s.length;
    return `<div class="markdown">${md.render(s)}</div>`;
  }
  const shown = s.slice(0, MARKDOWN_PLAIN_PREVIEW);
  const more = s.length - shown.length;
  return `<div class="markdown plain"><pre>${esc(shown)}</pre>${
    more > 0 ? `<p class="muted">… ${more} more characters not shown (too long to render here).</p>` : ""
  }</div>`;
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
 * that the generated status-colour sheet paints), lists joined, JSON pretty; `comments` as Markdown within
 * `budget` (the page's, see `markdownHtml`).
 */
export function valueHtml(v: unknown, key = "", budget?: MarkdownBudget): string {
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
  if (key === "comments" && typeof v === "string") return markdownHtml(v, budget);
  if (key.endsWith("url") && typeof v === "string" && v.startsWith("/"))
    return `<a href="${esc(v)}">${esc(v)}</a>`;
  return esc(v);
}
