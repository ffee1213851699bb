/**
 * Issue 25, the web interface does a network engineer's daily work (helper U1), over HTTP on a real server
 * and database: the navigation menu on every page (Nautobot's groups, every model, by permission); list
 * pages with Nautobot's default columns, status and role filters, the URL's filters as removable chips,
 * the sort direction, no duplicate columns, content types in words, no `#<uuid>` titles; flash messages
 * after writes, bulk actions back to the filtered list; CSV export of the filter (streamed in pages) and
 * export templates; the colour theme remembered per user.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "csv-parse/sync";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { buildWorld, create, type World } from "../helpers/world.ts";

const reg = registry();
/** The list URL of every model the web interface browses (all but the content types). */
const ALL_LISTS = [...reg.models.values()]
  .filter((m) => m.key !== "extras.contenttype")
  .map((m) => `/${m.app}/${m.path}/`)
  .sort();

/** The links of the navigation menu of a page, by group label. */
function menuOf(html: string): Map<string, string[]> {
  const nav = /<nav class="menu"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
  const out = new Map<string, string[]>();
  for (const g of nav.matchAll(/<summary>([^<]*)<\/summary>\s*<ul>([\s\S]*?)<\/ul>/g))
    out.set(
      g[1]!,
      [...g[2]!.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!),
    );
  return out;
}

/** The header cells of a list page's table, as text. */
const headersOf = (html: string) =>
  [...(/<thead>([\s\S]*?)<\/thead>/.exec(html)?.[1] ?? "").matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)]
    .map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, "")
        .replace(/[▲▼]/g, "")
        .trim(),
    )
    .filter((t) => t && t !== "Select");

/** The flash messages of a page. */
const flashesOf = (html: string) =>
  [...html.matchAll(/<div class="flash (\w+)" role="status">([^<]*)<\/div>/g)].map((m) => `${m[1]}: ${m[2]}`);

const htmlText = (s: string) =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");

/** The documented CSV cell of an API value: null empty, choices by value, objects by display, lists joined. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(cell).join(",");
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if ("value" in o && "label" in o && Object.keys(o).length === 2) return cell(o.value);
    if ("display" in o) return String(o.display);
    return JSON.stringify(o);
  }
  return String(v);
}

describe("web interface lists, navigation, feedback and export (issue 25)", () => {
  let s: TestServer;
  let w: World;
  let admin: WebClient;
  const x: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
    admin = await webClient(s);
    x.site = await create(s, "/api/dcim/sites/", { name: "LON1", status: "active" });
    x.site2 = await create(s, "/api/dcim/sites/", { name: "PAR1", status: "planned" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
    x.type = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "7050SX3" });
    x.role = await create(s, "/api/dcim/device-roles/", { name: "Spine" });
    const device = (name: string, site: string, status: string) => ({
      name,
      device_type: x.type.id,
      device_role: x.role.id,
      site,
      status,
      serial: `SN,"${name}"`,
    });
    // 520 active devices in LON1 (more than one export page of 500), a few others around them.
    const bulk = Array.from({ length: 520 }, (_, i) =>
      device(`lon1-sw${String(i).padStart(3, "0")}`, x.site.id, "active"),
    );
    const r = await s.api("/api/dcim/devices/", { method: "POST", body: bulk });
    assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    await create(s, "/api/dcim/devices/", device("lon1-old", x.site.id, "offline"));
    await create(s, "/api/dcim/devices/", device("par1-sw1", x.site2.id, "active"));
    // A view-only user: devices and sites, nothing else.
    const u = await create(s, "/api/users/users/", { username: "viewer", password: "pw-viewer-1" });
    await create(s, "/api/users/permissions/", {
      name: "view-devices",
      users: [u.id],
      object_types: ["dcim.device", "dcim.site"],
      actions: ["view"],
    });
  });
  after(async () => {
    await s?.close();
  });

  it("a menu on every page, in Nautobot's groups, reaches every model's list; only what the user may view", async () => {
    const home = await admin.get("/");
    const menu = menuOf(home.html);
    assert.deepEqual(
      [...menu.keys()],
      [
        "Organization",
        "Devices",
        "Connections",
        "IPAM",
        "Virtualization",
        "Circuits",
        "Power",
        "Extensibility",
        "Admin",
      ],
    );
    assert.deepEqual([...menu.values()].flat().sort(), ALL_LISTS, "the admin's menu lists every model once");
    assert.ok(menu.get("IPAM")!.includes("/ipam/prefixes/"));
    assert.ok(menu.get("Power")!.includes("/dcim/power-feeds/"));
    assert.ok(menu.get("Connections")!.includes("/dcim/cables/"));
    // Every entry opens a list page that shows the same menu.
    for (const url of ALL_LISTS) {
      const page = await admin.get(url);
      assert.equal(page.status, 200, `${url}: ${page.html.slice(0, 300)}`);
      assert.deepEqual(menuOf(page.html), menu, url);
    }
    const detail = await admin.get(`/dcim/sites/${x.site.id}/`);
    assert.deepEqual(menuOf(detail.html), menu);

    const viewer = await webClient(s, "viewer", "pw-viewer-1");
    const theirs = menuOf((await viewer.get("/")).html);
    assert.deepEqual(Object.fromEntries(theirs), {
      Organization: ["/dcim/sites/"],
      Devices: ["/dcim/devices/"],
    });
  });

  it("a view-only user sees no write controls and gets 403 on write URLs", async () => {
    const viewer = await webClient(s, "viewer", "pw-viewer-1");
    const list = await viewer.get("/dcim/devices/");
    assert.equal(list.status, 200);
    assert.doesNotMatch(list.html, /\+ Add|Edit selected|Delete selected|name="pk"/);
    assert.match(list.html, /Export CSV/);
    const one = (await s.api("/api/dcim/devices/?name=par1-sw1")).body.results[0];
    const detail = await viewer.get(`/dcim/devices/${one.id}/`);
    assert.doesNotMatch(detail.html, /\/edit\/"|\/delete\/"/);
    assert.equal((await viewer.get("/dcim/devices/add/")).status, 403);
    assert.equal((await viewer.get(`/dcim/devices/${one.id}/edit/`)).status, 403);
    assert.equal((await viewer.post(`/dcim/devices/${one.id}/delete/`, {})).status, 403);
    assert.equal((await viewer.post("/dcim/devices/edit/", { pk: one.id, _apply: "yes" })).status, 403);
  });

  it("lists: Nautobot's default columns, status and role filters, URL filters as chips, sort direction", async () => {
    const devices = await admin.get(`/dcim/devices/?site_id=${x.site.id}&status=active&sort=-name`);
    assert.deepEqual(headersOf(devices.html), [
      "Device",
      "Status",
      "Tenant",
      "Site",
      "Location",
      "Rack",
      "Device Role",
      "Device Type",
      "Primary IP",
    ]);
    assert.match(devices.html, /<select name="status">/);
    assert.match(devices.html, /<select name="role_id">|<select name="device_role_id">/);
    assert.match(
      devices.html,
      /aria-sort="descending"[^>]*><a [^>]*>Device <span class="sort" aria-hidden="true">▼/,
    );
    // Both URL filters are chips, each removable on its own; the site filter is kept by the form.
    const chips = [
      ...devices.html.matchAll(
        /<li class="chip"><span>([^<]*): <strong>([^<]*)<\/strong><\/span> <a href="([^"]+)"/g,
      ),
    ];
    assert.deepEqual(chips.map((c) => `${c[1]}=${c[2]}`).sort(), ["Site=LON1", "Status=Active"]);
    const removeStatus = htmlText(chips.find((c) => c[1] === "Status")![3]!);
    assert.equal(removeStatus, `/dcim/devices/?site_id=${x.site.id}&sort=-name`);
    const rest = await admin.get(removeStatus);
    assert.match(rest.html, /<h1>Devices <span class="muted">\(521\)<\/span>/);
    // Ascending shows ▲.
    assert.match(
      (await admin.get("/dcim/devices/?sort=name")).html,
      /aria-sort="ascending"[^>]*><a [^>]*>Device <span class="sort" aria-hidden="true">▲/,
    );

    // No "Prefix | Prefix"; statuses on prefixes and VLANs.
    await create(s, "/api/ipam/prefixes/", { prefix: "10.9.0.0/16", status: "active" });
    const prefixes = headersOf((await admin.get("/ipam/prefixes/")).html);
    assert.equal(prefixes.filter((h) => h === "Prefix").length, 1, prefixes.join(" | "));
    assert.ok(prefixes.includes("Status"), prefixes.join(" | "));
    const vlans = headersOf((await admin.get("/ipam/vlans/")).html);
    assert.ok(vlans.includes("Status"), vlans.join(" | "));
    for (const url of ALL_LISTS) {
      const h = headersOf((await admin.get(url)).html);
      assert.equal(new Set(h).size, h.length, `${url}: duplicate columns ${h.join(" | ")}`);
    }

    // Content types in words, never raw keys; an unlabelled cable's title is not "#<uuid>".
    await create(s, "/api/extras/export-templates/", {
      content_type: "dcim.device",
      name: "names",
      template_code: "{% for d in queryset %}{{ d.name }};{% endfor %}",
      file_extension: "txt",
    });
    const templates = await admin.get("/extras/export-templates/");
    assert.match(templates.html, /<td>DCIM › device<\/td>/);
    assert.doesNotMatch(templates.html, /<td>dcim\.device<\/td>/);
    const par1 = (await s.api("/api/dcim/devices/?name=par1-sw1")).body.results[0];
    const [ia, ib] = [
      await create(s, "/api/dcim/interfaces/", { device: par1.id, name: "et-1", type: "10gbase-x-sfpp" }),
      await create(s, "/api/dcim/interfaces/", { device: par1.id, name: "et-2", type: "10gbase-x-sfpp" }),
    ];
    const cable = await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: ia.id,
      termination_b_type: "dcim.interface",
      termination_b_id: ib.id,
      status: "connected",
    });
    assert.equal(cable.display, `#${cable.id}`, "Nautobot's display of an unlabelled cable");
    const cablePage = await admin.get(`/dcim/cables/${cable.id}/`);
    assert.doesNotMatch(cablePage.html, /<h1>#[0-9a-f-]{36}/);
    assert.match(cablePage.html, new RegExp(`<h1>Cable ${cable.id.slice(0, 8)}`));
    assert.doesNotMatch((await admin.get("/dcim/cables/")).html, />#[0-9a-f-]{36}</);
    assert.ok(w.site);
  });

  it("flash messages after create, edit, delete and bulk actions, shown once; bulk actions return to the filtered list", async () => {
    const edit = await admin.post(`/dcim/sites/${x.site2.id}/edit/`, { name: "PAR1", status: "active" });
    assert.equal(edit.status, 302, edit.html.slice(0, 400));
    const next = await admin.get(edit.location!);
    assert.deepEqual(flashesOf(next.html), ["success: Modified site PAR1"]);
    assert.deepEqual(flashesOf((await admin.get(edit.location!)).html), [], "shown once");

    const made = await admin.post("/dcim/sites/add/", { name: "FRA9", status: "active" });
    assert.equal(made.status, 302);
    assert.deepEqual(flashesOf((await admin.get(made.location!)).html), ["success: Created site FRA9"]);

    const filtered = `/dcim/devices/?site_id=${x.site.id}&status=active&sort=-name&offset=50`;
    const ids = (await s.api(`/api/dcim/devices/?site_id=${x.site.id}&limit=3`)).body.results.map(
      (d: any) => d.id,
    );
    const bulk = await admin.post("/dcim/devices/edit/", {
      pk: ids,
      _apply: "yes",
      serial: "BULK",
      return_url: filtered,
    });
    assert.equal(bulk.status, 302, bulk.html.slice(0, 400));
    assert.equal(bulk.location, filtered);
    assert.deepEqual(flashesOf((await admin.get(filtered)).html), ["success: Updated 3 devices"]);
    // A return URL elsewhere is never followed.
    const away = await admin.post("/dcim/devices/edit/", {
      pk: ids,
      _apply: "yes",
      serial: "B2",
      return_url: "//evil.example/",
    });
    assert.equal(away.location, "/dcim/devices/");
    await admin.get("/");

    const confirm = await admin.post("/dcim/devices/delete/", { pk: ids.slice(0, 2), return_url: filtered });
    assert.match(
      confirm.html,
      new RegExp(
        `name="return_url" value="${filtered.replace(/[?&]/g, (c) => (c === "&" ? "&amp;" : "\\?"))}"`,
      ),
    );
    const del = await admin.post("/dcim/devices/delete/", {
      pk: ids.slice(0, 2),
      confirm: "yes",
      return_url: filtered,
    });
    assert.equal(del.location, filtered);
    assert.deepEqual(flashesOf((await admin.get(filtered)).html), ["success: Deleted 2 devices"]);

    const one = await admin.post(`/dcim/devices/${ids[2]}/delete/`, {});
    assert.equal(one.status, 302);
    assert.match(
      flashesOf((await admin.get(one.location!)).html).join(),
      /^success: Deleted device lon1-sw\d+$/,
    );

    const hook = await create(s, "/api/extras/webhooks/", {
      name: "hook1",
      content_types: ["dcim.site"],
      type_create: true,
      payload_url: "http://127.0.0.1:9/hook",
    });
    const toggled = await admin.post(`/extras/webhooks/${hook.id}/toggle/`, {});
    assert.deepEqual(flashesOf((await admin.get(toggled.location!)).html), [
      "success: Disabled webhook hook1.",
    ]);
    const retried = await admin.post(`/extras/webhooks/${hook.id}/retry-failed/`, {});
    assert.match(
      flashesOf((await admin.get(retried.location!)).html).join(),
      /^success: Failed deliveries of hook1 queued again/,
    );
  });

  it("Export CSV: every row of the filter, streamed in pages, the API's field names and data", async () => {
    const filter = `site_id=${x.site.id}&status=active`;
    const list = await admin.get(`/dcim/devices/?${filter}`);
    const href = htmlText(/href="([^"]+)" download>Export CSV/.exec(list.html)?.[1] ?? "");
    assert.equal(href, `/dcim/devices/export/?${filter}`);
    const res = await admin.get(href);
    assert.equal(res.status, 200);
    const records: string[][] = parse(res.html);
    const api: any[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await s.api(
        `/api/dcim/devices/?${filter}&limit=1000&offset=${offset}&exclude=config_context`,
      );
      api.push(...page.body.results);
      if (!page.body.next) break;
    }
    assert.ok(api.length > 500, `more than one export page (${api.length})`);
    const [header, ...rows] = records;
    assert.deepEqual(
      header,
      Object.keys(api[0]).filter((k) => k !== "config_context"),
    );
    assert.equal(rows.length, api.length);
    assert.deepEqual(
      rows,
      api.map((d) => header!.map((k) => cell(d[k]))),
    );
    assert.ok(
      rows.some((r) => r.includes('SN,"lon1-sw100"')),
      "commas and quotes survive",
    );

    // An export template of the model, listed on the list page, rendered over the same filter.
    const tpl = /href="([^"]+)" download>Export: names/.exec(list.html)?.[1];
    assert.ok(tpl, "the export template is offered");
    const rendered = await admin.get(htmlText(tpl));
    assert.equal(rendered.status, 200);
    assert.deepEqual(rendered.html.split(";").filter(Boolean).sort(), api.map((d) => d.name).sort());

    // A bad filter is a 400 naming it, never a 500 or a half-written file.
    const bad = await admin.get("/dcim/devices/export/?status=no-such-status");
    assert.equal(bad.status, 400);
    assert.match(bad.html, /status/);
    const noTpl = await admin.get("/dcim/devices/export/?template=00000000-0000-4000-8000-000000000000");
    assert.equal(noTpl.status, 404);
    const viewer = await webClient(s, "viewer", "pw-viewer-1");
    assert.equal((await viewer.get("/ipam/prefixes/export/")).status, 403);
  });

  it("dark mode: follows prefers-color-scheme, a choice is remembered per user", async () => {
    const css = await (await fetch(`${s.url}/static/ui.css`)).text();
    assert.match(css, /@media \(prefers-color-scheme: dark\)/);
    assert.match(css, /:root\[data-theme="dark"\]/);
    // The dark palette is written once: the chosen theme and the system preference assign the same
    // variables and no colour of their own, in one rule each.
    const chosen = css.match(/:root\[data-theme="dark"\] \{([^}]*)\}/)?.[1] ?? "";
    const preferred =
      css.match(
        /@media \(prefers-color-scheme: dark\) \{\s*:root:not\(\[data-theme="light"\]\) \{([^}]*)\}\s*\}/,
      )?.[1] ?? "";
    assert.match(chosen, /--fg: var\(--dark-fg\)/);
    assert.equal(preferred.replace(/\s+/g, " "), chosen.replace(/\s+/g, " "));
    assert.doesNotMatch(chosen, /#[0-9a-f]{3,8}\b|rgb\(/i);
    assert.equal(css.match(/data-theme="dark"\]/g)?.length, 1);
    const page = await admin.get("/dcim/sites/");
    assert.doesNotMatch(page.html, /<html lang="en" data-theme/);
    // A browser of its own (keeping every cookie): log in, choose dark, later pages say so.
    const jar = new Map<string, string>();
    const go = async (path: string, form?: Record<string, string>) => {
      const res = await fetch(`${s.url}${path}`, {
        method: form ? "POST" : "GET",
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
          ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
        body: form ? new URLSearchParams(form) : undefined,
        redirect: "manual",
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const [k, v] = pair!.split("=");
        if (v) jar.set(k!, v);
        else jar.delete(k!);
      }
      return { res, html: await res.text() };
    };
    const token = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const login = await go("/login/");
    await go("/login/", { username: "admin", password: "admin", next: "/", _csrf: token(login.html) });
    const home = await go("/");
    assert.match(home.html, /<button type="submit" name="theme" value="auto" aria-pressed="true">/);
    const set = await go("/theme/", { theme: "dark", next: "/dcim/sites/", _csrf: token(home.html) });
    assert.equal(set.res.status, 302);
    assert.equal(set.res.headers.get("location"), "/dcim/sites/");
    assert.match(set.res.headers.getSetCookie().join(), /ui_theme=dark;.*HttpOnly/);
    const dark = await go("/dcim/sites/");
    assert.match(dark.html, /<html lang="en" data-theme="dark">/);
    assert.match(dark.html, /value="dark" aria-pressed="true"/);
    await go("/theme/", { theme: "auto", next: "/", _csrf: token(dark.html) });
    assert.doesNotMatch((await go("/dcim/sites/")).html, /data-theme=/);
    const res = await fetch(`${s.url}/theme/`, { method: "POST", redirect: "manual" });
    assert.equal(res.status, 403, "CSRF-checked");
    const bad = await admin.post("/theme/", { theme: "pink", next: "//evil.example/" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /theme/);
    const away = await admin.post("/theme/", { theme: "light", next: "//evil.example/" });
    assert.equal(away.location, "/");
  });
});
