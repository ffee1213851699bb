/**
 * Detail pages and bulk edit of the web interface (issue 10): child tables (a device's interfaces with their
 * connections and IP addresses, a site's devices, a prefix's addresses and utilisation), notes, status
 * colours from the status rows, and bulk edit from list pages (blank unchanged, set null, tags added and
 * removed, all or none).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

describe("web interface: detail pages and bulk edit", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("detail pages show child tables: a device's interfaces with connections and IPs, a prefix's addresses", async () => {
    const site = await create(s, "/api/dcim/sites/", { name: "Child site", status: "active" });
    const m = await create(s, "/api/dcim/manufacturers/", { name: "Child maker" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: m.id, model: "Child type" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Child role" });
    const mk = (name: string) =>
      create(s, "/api/dcim/devices/", {
        name,
        device_type: dt.id,
        device_role: role.id,
        site: site.id,
        status: "active",
      });
    const [a, b] = [await mk("child-a"), await mk("child-b")];
    const ia = await create(s, "/api/dcim/interfaces/", {
      device: a.id,
      name: "xe-0/0/0",
      type: "10gbase-x-sfpp",
    });
    const ib = await create(s, "/api/dcim/interfaces/", {
      device: b.id,
      name: "xe-0/0/1",
      type: "10gbase-x-sfpp",
    });
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: ia.id,
      termination_b_type: "dcim.interface",
      termination_b_id: ib.id,
      status: "connected",
    });
    const ip = await create(s, "/api/ipam/ip-addresses/", {
      address: "203.0.113.9/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: ia.id,
    });
    const web = await webClient(s);
    // The device's interfaces are its Interfaces tab (issue 25, ui/tabs.ts).
    const page = await web.get(`/dcim/devices/${a.id}/interfaces/`);
    assert.match(page.html, /<h2>Interfaces \(1\)<\/h2>/);
    assert.match(
      page.html,
      new RegExp(`href="/dcim/interfaces/${ib.id}/">xe-0/0/1</a>`),
      "the connected endpoint links to the far interface",
    );
    assert.match(page.html, /<th>IP Addresses<\/th>/);
    assert.match(
      page.html,
      new RegExp(`href="/ipam/ip-addresses/${ip.id}/">203\\.0\\.113\\.9/24</a>`),
      "the interface's address is in its row",
    );
    const sitePage = await web.get(`/dcim/sites/${site.id}/`);
    assert.match(sitePage.html, /<h2>Devices \(2\)<\/h2>/);
    assert.match(sitePage.html, new RegExp(`href="/dcim/devices/${b.id}/">child-b</a>`));

    // A prefix: its addresses and its utilisation (1 of 254 usable IPv4 addresses).
    const prefix = await create(s, "/api/ipam/prefixes/", { prefix: "203.0.113.0/24", status: "active" });
    await create(s, "/api/ipam/prefixes/", { prefix: "203.0.113.0/28", status: "active" });
    const pp = await web.get(`/ipam/prefixes/${prefix.id}/`);
    assert.match(pp.html, /<h2>IP Addresses \(1\)<\/h2>/);
    assert.match(pp.html, /<h2>Prefixes \(1\)<\/h2>/);
    assert.match(pp.html, /1 of 254 addresses/);
    assert.match(pp.html, /aria-valuenow="0\.39"/);
    // A container counts the space of its child prefixes: a /28 of a /24 is 16 of 256.
    const box = await create(s, "/api/ipam/prefixes/", { prefix: "203.0.112.0/23", status: "container" });
    assert.match((await web.get(`/ipam/prefixes/${box.id}/`)).html, /256 of 512 addresses/);
  });

  it("status badges take each status's colour; notes are listed, added and escaped", async () => {
    const web = await webClient(s);
    await create(s, "/api/extras/statuses/", {
      name: "Dark green",
      slug: "dark-green",
      color: "1b5e20",
      content_types: ["dcim.site"],
    });
    const css = await web.get("/ui/status-colors.css");
    assert.equal(css.status, 200);
    // Black or white text, whichever contrasts more (WCAG): black on Active's green (7.9:1; Nautobot's
    // white is 2.8:1), white on a dark green.
    assert.match(css.html, /\.badge\.status\.active\{background:#4caf50;color:#000000\}/);
    assert.match(css.html, /\.badge\.status\.offline\{background:#ffc107;color:#000000\}/);
    assert.match(css.html, /\.badge\.status\.dark-green\{background:#1b5e20;color:#ffffff\}/);
    const site = await create(s, "/api/dcim/sites/", { name: "Noted site", status: "decommissioning" });
    let page = await web.get(`/dcim/sites/${site.id}/`);
    assert.match(page.html, /<span class="badge status decommissioning">Decommissioning<\/span>/);
    assert.match(page.html, /<h2>Notes \(0\)<\/h2>/);
    const added = await web.post(`/dcim/sites/${site.id}/notes/`, { note: "Power work <script>x</script>" });
    assert.equal(added.status, 302);
    page = await web.get(`/dcim/sites/${site.id}/`);
    assert.match(page.html, /<h2>Notes \(1\)<\/h2>/);
    assert.match(page.html, /Power work &lt;script&gt;x&lt;\/script&gt;/);
    assert.doesNotMatch(page.html, /<script>x/);
    // Notes and comments are Markdown, as Nautobot renders them; raw HTML and javascript: links stay inert.
    await web.post(`/dcim/sites/${site.id}/notes/`, {
      note: "**Done** [runbook](https://example.com/rb) [x](javascript:alert(1))",
    });
    await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { comments: "# Heading\n- item <img src=x onerror=alert(1)>" },
    });
    page = await web.get(`/dcim/sites/${site.id}/`);
    assert.match(page.html, /<strong>Done<\/strong> <a href="https:\/\/example.com\/rb">runbook<\/a>/);
    assert.doesNotMatch(page.html, /href="javascript:/);
    assert.match(page.html, /<h1>Heading<\/h1>/);
    assert.match(page.html, /<li>item &lt;img src=x onerror=alert\(1\)&gt;<\/li>/);
    const api = await s.api(`/api/dcim/sites/${site.id}/notes/`);
    assert.equal(api.body.count, 2);
    assert.equal(api.body.results[0].user.username, "admin");
  });

  it("bulk edit from a list page: blank unchanged, set null, tags added and removed, all or none", async () => {
    const tenant = await create(s, "/api/tenancy/tenants/", { name: "Bulk tenant" });
    const t1 = await create(s, "/api/extras/tags/", { name: "bulk-one", slug: "bulk-one" });
    const t2 = await create(s, "/api/extras/tags/", { name: "bulk-two", slug: "bulk-two" });
    const mk = (name: string) =>
      create(s, "/api/dcim/sites/", {
        name,
        status: "planned",
        description: `about ${name}`,
        asn: 65001,
        tags: [t1.id],
      });
    const [a, b, c] = [await mk("bulk-site-a"), await mk("bulk-site-b"), await mk("bulk-site-c")];
    const web = await webClient(s);
    const list = await web.get("/dcim/sites/");
    assert.match(list.html, /formaction="\/dcim\/sites\/edit\/"/);
    const form = await web.post("/dcim/sites/edit/", { pk: [a.id, b.id] });
    assert.equal(form.status, 200);
    assert.match(form.html, /Edit 2 Sites/);
    assert.match(form.html, /name="status"/);
    assert.match(form.html, /name="tenant"/);
    assert.match(form.html, /name="add_tags"/);
    assert.doesNotMatch(form.html, /name="name"/, "names are not bulk-edited");
    assert.doesNotMatch(form.html, /name="slug"/);

    // An invalid value: nothing is changed on any object, the error is beside the field.
    const bad = await web.post("/dcim/sites/edit/", {
      _apply: "yes",
      pk: [a.id, b.id],
      status: "active",
      asn: "99999999999",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /class="field has-error"/);
    assert.match(bad.html, /no object was changed/);
    assert.equal((await s.api(`/api/dcim/sites/${a.id}/`)).body.status.value, "planned");

    const done = await web.post("/dcim/sites/edit/", {
      _apply: "yes",
      pk: [a.id, b.id],
      status: "active",
      tenant: tenant.id,
      _nullify: "description",
      add_tags: t2.id,
      remove_tags: t1.id,
    });
    assert.equal(done.status, 302, done.html.slice(0, 2000));
    for (const x of [a, b]) {
      const got = (await s.api(`/api/dcim/sites/${x.id}/`)).body;
      assert.equal(got.status.value, "active");
      assert.equal(got.tenant.id, tenant.id);
      assert.equal(got.description, "");
      assert.equal(got.asn, 65001, "a blank control leaves the field unchanged");
      assert.deepEqual(
        got.tags.map((t: { slug: string }) => t.slug),
        ["bulk-two"],
      );
    }
    const untouched = (await s.api(`/api/dcim/sites/${c.id}/`)).body;
    assert.equal(untouched.status.value, "planned");
    assert.equal(untouched.description, "about bulk-site-c");
    // One change-log entry per edited object.
    const log = await s.api(`/api/extras/object-changes/?changed_object_id=${a.id}&action=update`);
    assert.equal(log.body.count, 1);
  });

  it("bulk edit sets and clears custom fields, leaving the others alone", async () => {
    for (const body of [
      { name: "bulk_owner", type: "text", content_types: ["dcim.site"] },
      { name: "bulk_floor", type: "integer", content_types: ["dcim.site"] },
    ])
      assert.equal((await s.api("/api/extras/custom-fields/", { method: "POST", body })).status, 201);
    const mk = (name: string) =>
      create(s, "/api/dcim/sites/", {
        name,
        status: "active",
        custom_fields: { bulk_owner: "noc", bulk_floor: 3 },
      });
    const [a, b] = [await mk("cf-site-a"), await mk("cf-site-b")];
    const web = await webClient(s);
    const form = await web.post("/dcim/sites/edit/", { pk: [a.id, b.id] });
    assert.match(form.html, /name="cf_bulk_owner"/);
    const bad = await web.post("/dcim/sites/edit/", {
      _apply: "yes",
      pk: [a.id, b.id],
      cf_bulk_floor: "high",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Enter a whole number/);
    const done = await web.post("/dcim/sites/edit/", {
      _apply: "yes",
      pk: [a.id, b.id],
      cf_bulk_owner: "<b>ops</b>",
      _nullify: "cf_bulk_floor",
    });
    assert.equal(done.status, 302, done.html.slice(0, 2000));
    for (const x of [a, b]) {
      const got = (await s.api(`/api/dcim/sites/${x.id}/`)).body;
      assert.equal(got.custom_fields.bulk_owner, "<b>ops</b>");
      assert.equal(got.custom_fields.bulk_floor, null);
    }
  });
});
