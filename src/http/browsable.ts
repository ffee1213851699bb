/**
 * The browsable API (issue 5): an API response requested by a browser (`Accept` preferring `text/html`)
 * is rendered as a readable HTML page: the method, URL and status, and the JSON pretty-printed with every
 * URL turned into a link. Clients that ask for JSON (pynautobot, Ansible, curl's `*\/*`) get JSON.
 */

/** True when the `Accept` header prefers HTML over JSON (a browser's navigation request). */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const parts = accept.split(",").map((p) => p.split(";")[0]!.trim().toLowerCase());
  const html = parts.indexOf("text/html");
  if (html < 0) return false;
  const json = parts.indexOf("application/json");
  return json < 0 || html < json;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Render `body` (already JSON-serialisable) as an HTML page for `method url` with `status`. */
export function renderHtml(method: string, url: string, status: number, body: unknown): string {
  const json = JSON.stringify(body, null, 2) ?? "";
  const linked = esc(json).replace(
    /&quot;(https?:\/\/[^&\s]+?|\/api\/[^&\s]*?)&quot;/g,
    (_m, u: string) => `&quot;<a href="${u}">${u}</a>&quot;`,
  );
  const title = esc(`${method} ${url}`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} – Inventory API</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}pre{background:#f6f8fa;padding:1rem;overflow:auto;font-size:13px;line-height:1.4}
a{color:#0a58ca}.meta{color:#555}nav a{margin-right:1rem}</style></head>
<body><nav><a href="/">Web interface</a><a href="/api/">API root</a><a href="/api/docs/">Documentation</a></nav>
<h1>${title}</h1><p class="meta">HTTP ${status} · <a href="?format=json">JSON</a></p>
<pre>${linked}</pre></body></html>`;
}
