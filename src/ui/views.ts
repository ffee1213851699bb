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

/** Acronyms a mechanical label writes in lower case, as Nautobot's pages write them ("Primary ip4" → "Primary IPv4"). */
const ACRONYMS: Record<string, string> = {
  ip: "IP",
  ips: "IPs",
  ip4: "IPv4",
  ip6: "IPv6",
  ipv4: "IPv4",
  ipv6: "IPv6",
  vlan: "VLAN",
  vlans: "VLANs",
  vrf: "VRF",
  vrfs: "VRFs",
  mtu: "MTU",
  mac: "MAC",
  dns: "DNS",
  lag: "LAG",
  vid: "VID",
  url: "URL",
  id: "ID",
  asn: "ASN",
  rir: "RIR",
  rd: "RD",
  nat: "NAT",
  vc: "VC",
  vm: "VM",
  vcpus: "VCPUs",
  uuid: "UUID",
};

/**
 * A detail page's label with its acronyms written as Nautobot's pages do, the rest unchanged ("Primary ip" →
 * "Primary IP", "Untagged vlan" → "Untagged VLAN"); for labels derived from field names (issue 25: "labels
 * are mechanical").
 */
export function labelOf(label: string): string {
  return label
    .split(" ")
    .map((w) => ACRONYMS[w.toLowerCase()] ?? w)
    .join(" ");
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
