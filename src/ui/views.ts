/**
 * Server-side rendering of the web UI: Eta templates (`src/ui/templates/*.eta`) with autoescaping on, so
 * anything a user typed is HTML-escaped unless a template deliberately prints trusted markup with `<%~`.
 * Eta was chosen over Nunjucks for its active maintenance, TypeScript types, escaping by default and speed;
 * its syntax is plain JavaScript, so there is nothing of ours to learn.
 */
import { fileURLToPath } from "node:url";
import { Eta } from "eta";

const eta = new Eta({
  views: fileURLToPath(new URL("./templates/", import.meta.url)),
  autoEscape: true,
  cache: process.env.NODE_ENV !== "development",
});

/** Render a page template with `data` (available as `it` in templates). */
export function renderPage(name: string, data: Record<string, unknown>): string {
  return eta.render(name, data);
}

/** The UI URL of an API URL (`/api/dcim/sites/<id>/` → `/dcim/sites/<id>/`); other strings unchanged. */
export function uiUrl(apiUrl: unknown): string | undefined {
  if (typeof apiUrl !== "string") return undefined;
  const i = apiUrl.indexOf("/api/");
  return i >= 0 ? apiUrl.slice(i + 4) : undefined;
}

/** Title case of a verbose name ("ip address" → "IP Address"). */
export function titleOf(words: string): string {
  return words
    .replace(/\bvirtualmachine/gi, "virtual machine")
    .split(" ")
    .map((w) =>
      /^(ip|vrf|vlan|rir|vc|vm|asn)(s|4|6)?$/i.test(w)
        ? w.toUpperCase().replace(/S$/, "s")
        : w.charAt(0).toUpperCase() + w.slice(1),
    )
    .join(" ");
}
