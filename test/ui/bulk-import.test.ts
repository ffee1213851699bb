/**
 * Issue 25 at the HTTP level, on SQLite and PostgreSQL: bulk component creation with Nautobot's
 * alphanumeric ranges from a device page (all or none, Nautobot's messages), a prefix page's free space as
 * rows with pre-filled add links, "next available" IP and prefix through the API's allocator, and "make
 * primary" on an address assigned to a device interface.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { expandAlphanumericPattern, expandComponentNames } from "../../src/service/expand.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

describe("web interface: components in bulk, IP allocation", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    const site = await create(s, "/api/dcim/sites/", { name: "Bulk site", status: "active" });
    const m = await create(s, "/api/dcim/manufacturers/", { name: "Bulk maker" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: m.id, model: "Bulk type" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Bulk role" });
    w.device = await create(s, "/api/dcim/devices/", {
      name: "bulk-1",
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
    });
  });
  after(async () => {
    await s.close();
  });

  it("expands names as Nautobot's expand_alphanumeric_pattern", () => {
    assert.deepEqual(expandAlphanumericPattern("ge-0/0/[0-3]"), [
      "ge-0/0/0",
      "ge-0/0/1",
      "ge-0/0/2",
      "ge-0/0/3",
    ]);
    assert.deepEqual(expandAlphanumericPattern("e[1,3,5-7]"), ["e1", "e3", "e5", "e6", "e7"]);
    assert.deepEqual(expandAlphanumericPattern("[ge,xe]-[a-b]"), ["ge-a", "ge-b", "xe-a", "xe-b"]);
    assert.deepEqual(expandAlphanumericPattern("e[01-03]"), ["e1", "e2", "e3"]);
    assert.deepEqual(expandAlphanumericPattern("e[a-C]"), []);
    assert.deepEqual(expandAlphanumericPattern("plain"), ["plain"]);
    assert.throws(() => expandAlphanumericPattern("e[ab-cd]"), /Range "ab-cd" is invalid\./);
    assert.throws(() => expandAlphanumericPattern("e[0-99999999]"), /more than 10000 names/);
    assert.throws(
      () => expandComponentNames("eth[0-3]", "Port [1-2]"),
      (e: any) =>
        /The provided name pattern will create 4 components, however 2 labels will be generated\. These counts must match\./.test(
          e.errors.label_pattern[0],
        ),
    );
  });

  it("adds 48 interfaces with eth[1-48] in one request, all or none", async () => {
    const web = await webClient(s);
    const page = await web.get(`/dcim/devices/${w.device.id}/`);
    assert.match(page.html, /<summary>Add components<\/summary>/);
    for (const p of [
      "interfaces",
      "front-ports",
      "rear-ports",
      "console-ports",
      "power-outlets",
      "device-bays",
      "inventory-items",
    ])
      assert.match(page.html, new RegExp(`href="/dcim/devices/${w.device.id}/components/${p}/add/"`), p);
    const url = `/dcim/devices/${w.device.id}/components/interfaces/add/`;
    const form = await web.get(url);
    assert.equal(form.status, 200);
    assert.match(form.html, /name="name_pattern"/);
    // Labels that do not match the names: Nautobot's message, nothing created.
    let r = await web.post(url, {
      name_pattern: "eth[1-48]",
      label_pattern: "port [1-4]",
      type: "1000base-t",
    });
    assert.equal(r.status, 400);
    assert.match(r.html, /will create 48 components, however 4 labels will be generated/);
    r = await web.post(url, {
      name_pattern: "eth[1-48]",
      label_pattern: "p[1-48]",
      type: "1000base-t",
      enabled: "on",
    });
    assert.equal(r.status, 302, r.html.slice(0, 2000));
    const list = await s.api(`/api/dcim/interfaces/?device_id=${w.device.id}&limit=100`);
    assert.equal(list.body.count, 48);
    const names = list.body.results.map((i: any) => i.name);
    assert.deepEqual(
      names,
      Array.from({ length: 48 }, (_, i) => `eth${i + 1}`),
    );
    assert.equal(list.body.results[47].label, "p48");
    // A clash with eth48 fails the whole request: eth47..eth49 creates nothing.
    r = await web.post(url, { name_pattern: "eth[47-49]", type: "1000base-t" });
    assert.equal(r.status, 400);
    assert.match(r.html, /nothing was created/);
    assert.match(r.html, /eth47: /);
    assert.equal((await s.api(`/api/dcim/interfaces/?device_id=${w.device.id}&limit=1`)).body.count, 48);
    // Front ports need a rear port of the same device: both made in bulk, the ports' errors shown.
    r = await web.post(`/dcim/devices/${w.device.id}/components/rear-ports/add/`, {
      name_pattern: "rear[1-2]",
      type: "8p8c",
      positions: "1",
    });
    assert.equal(r.status, 302, r.html.slice(0, 2000));
  });

  it("shows a prefix's free space as rows, allocates the next IP and prefix, makes an address primary", async () => {
    const web = await webClient(s);
    const prefix = await create(s, "/api/ipam/prefixes/", { prefix: "10.9.0.0/24", status: "active" });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.9.0.0/26", status: "active" });
    await create(s, "/api/ipam/ip-addresses/", { address: "10.9.0.1/24", status: "active" });
    await create(s, "/api/ipam/ip-addresses/", { address: "10.9.0.10/24", status: "active" });
    let page = await web.get(`/ipam/prefixes/${prefix.id}/`);
    assert.equal(page.status, 200);
    assert.match(page.html, /10\.9\.0\.2\/24 – 10\.9\.0\.9\/24/);
    assert.match(page.html, /8 IPs available/);
    assert.match(page.html, /10\.9\.0\.11\/24 – 10\.9\.0\.254\/24/);
    assert.match(page.html, /href="\/ipam\/ip-addresses\/add\/\?address=10\.9\.0\.2%2F24"/);
    assert.match(page.html, /href="\/ipam\/prefixes\/add\/\?prefix=10\.9\.0\.64%2F26"/);
    assert.match(page.html, /64 addresses available/);
    const prefill = await web.get("/ipam/ip-addresses/add/?address=10.9.0.2%2F24");
    assert.match(
      prefill.html,
      /name="address"[^>]*value="10\.9\.0\.2\/24"|value="10\.9\.0\.2\/24"[^>]*name="address"/,
    );
    // Next available IP: 10.9.0.2, then to its edit form.
    let r = await web.post(`/ipam/prefixes/${prefix.id}/allocate-ip/`, {});
    assert.equal(r.status, 302, r.html.slice(0, 1000));
    assert.match(r.location ?? "", /^\/ipam\/ip-addresses\/[0-9a-f-]{36}\/edit\/$/);
    const ipId = r.location!.split("/")[3]!;
    const ip = await s.api(`/api/ipam/ip-addresses/${ipId}/`);
    assert.equal(ip.body.address, "10.9.0.2/24");
    // Next available prefix of /28: 10.9.0.64/28.
    r = await web.post(`/ipam/prefixes/${prefix.id}/allocate-prefix/`, { prefix_length: "28" });
    assert.equal(r.status, 302, r.html.slice(0, 1000));
    const pid = r.location!.split("/")[3]!;
    assert.equal((await s.api(`/api/ipam/prefixes/${pid}/`)).body.prefix, "10.9.0.64/28");
    r = await web.post(`/ipam/prefixes/${prefix.id}/allocate-prefix/`, { prefix_length: "40" });
    assert.equal(r.status, 400);
    assert.match(r.html, /Invalid prefix length \(40\) for IPv4/);
    // Make primary: assign through the API, then the button on the address's page.
    const iface = await create(s, "/api/dcim/interfaces/", {
      device: w.device.id,
      name: "mgmt0",
      type: "virtual",
    });
    await s.api(`/api/ipam/ip-addresses/${ipId}/`, {
      method: "PATCH",
      body: { assigned_object_type: "dcim.interface", assigned_object_id: iface.id },
    });
    page = await web.get(`/ipam/ip-addresses/${ipId}/`);
    assert.match(page.html, new RegExp(`action="/ipam/ip-addresses/${ipId}/make-primary/"`));
    r = await web.post(`/ipam/ip-addresses/${ipId}/make-primary/`, {});
    assert.equal(r.status, 302, r.html.slice(0, 1000));
    assert.equal(r.location, `/dcim/devices/${w.device.id}/`);
    const dev = await s.api(`/api/dcim/devices/${w.device.id}/`);
    assert.equal(dev.body.primary_ip4?.id, ipId);
    // An unassigned address has no button and the action refuses it.
    const lone = await create(s, "/api/ipam/ip-addresses/", { address: "10.9.0.200/24", status: "active" });
    assert.doesNotMatch((await web.get(`/ipam/ip-addresses/${lone.id}/`)).html, /make-primary/);
    assert.equal((await web.post(`/ipam/ip-addresses/${lone.id}/make-primary/`, {})).status, 400);
  });

  it("imports CSV by natural keys: preview, all or none with row errors, then every row; JSON and YAML too", async () => {
    const web = await webClient(s);
    const list = await web.get("/dcim/devices/");
    assert.match(list.html, /href="\/dcim\/devices\/import\/">Import<\/a>/);
    const form = await web.get("/dcim/devices/import/");
    assert.equal(form.status, 200);
    assert.match(form.html, /<label for="f-data">Data<\/label>/);
    const row = (i: number, site = "Bulk site", type = "Bulk type") =>
      `imp-${String(i).padStart(3, "0")},${type},Bulk role,${site},active`;
    const rows = Array.from({ length: 100 }, (_, i) => row(i + 1));
    rows[9] = row(10, "Nowhere"); // row 10: no such site
    rows[41] = row(42, "bulk-site", "No such type"); // row 42: site by slug, but no such device type
    const bad = ["name,device_type,device_role,site,status", ...rows].join("\n");
    const preview = await web.post("/dcim/devices/import/", { format: "csv", data: bad });
    assert.equal(preview.status, 200, preview.html.slice(0, 3000));
    assert.match(preview.html, /Preview: 100 to create/);
    assert.match(preview.html, /First 10 of 100/);
    let r = await web.post("/dcim/devices/import/", { format: "csv", data: bad, confirm: "yes" });
    assert.equal(r.status, 400);
    assert.match(r.html, /2 records failed validation; nothing was imported\./);
    assert.match(
      r.html,
      /<th scope="row">Row 10<\/th><td><div>site: Related object not found using the provided attributes: \{&#39;name&#39;: &#39;Nowhere&#39;\}/,
    );
    assert.match(r.html, /<th scope="row">Row 42<\/th><td><div>device_type: Related object not found/);
    assert.equal((await s.api("/api/dcim/devices/?name__isw=imp-&limit=1")).body.count, 0);
    rows[9] = row(10);
    rows[41] = row(42, "bulk-site");
    const good = ["name,device_type,device_role,site,status", ...rows].join("\n");
    r = await web.post("/dcim/devices/import/", { format: "csv", data: good, confirm: "yes" });
    assert.equal(r.status, 302, r.html.slice(0, 3000));
    const made = await s.api("/api/dcim/devices/?name__isw=imp-&limit=200");
    assert.equal(made.body.count, 100);
    assert.equal(made.body.results.find((d: any) => d.name === "imp-042").site.name, "Bulk site");
    // The change log names the logged-in user (not the API token's).
    const user = await create(s, "/api/users/users/", { username: "importer", password: "importer-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "importer sites",
      object_types: ["dcim.site"],
      actions: ["view", "add"],
      users: [user.id],
    });
    const other = await webClient(s, "importer", "importer-pass-1");
    r = await other.post("/dcim/sites/import/", {
      format: "json",
      data: JSON.stringify([{ name: "Imported JSON", slug: "imported-json", status: "active" }]),
      confirm: "yes",
    });
    assert.equal(r.status, 302, r.html.slice(0, 3000));
    const changes = await s.api(
      "/api/extras/object-changes/?changed_object_type=dcim.site&action=create&limit=100",
    );
    const mine = changes.body.results.find((c: any) => c.changed_object?.name === "Imported JSON");
    assert.equal(mine?.user_name, "importer", JSON.stringify(changes.body.results.slice(0, 2)));
    r = await web.post("/dcim/sites/import/", {
      format: "yaml",
      data: "- name: Imported YAML\n  status: active\n",
      confirm: "yes",
    });
    assert.equal(r.status, 302, r.html.slice(0, 3000));
    assert.equal((await s.api("/api/dcim/sites/?name=Imported%20YAML")).body.count, 1);
    // Bad input is a 400 naming the problem: unknown header, ragged row, non-list JSON item.
    r = await web.post("/dcim/sites/import/", { format: "csv", data: "name,colour\nx,red", confirm: "yes" });
    assert.equal(r.status, 400);
    assert.match(r.html, /Unexpected column header &quot;colour&quot; found\./);
    r = await web.post("/dcim/sites/import/", { format: "csv", data: "name,status\nx", confirm: "yes" });
    assert.equal(r.status, 400);
    assert.match(r.html, /Row 1: Expected 2 columns but found 1/);
    r = await web.post("/dcim/sites/import/", { format: "json", data: "[1]", confirm: "yes" });
    assert.equal(r.status, 400);
    assert.match(r.html, /Item 1: Expected an object\./);
  });

  it("imports an uploaded file (multipart)", async () => {
    // A session of our own: the upload is a multipart body, which the form client does not send.
    let cookie = "";
    const go = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${s.url}${path}`, {
        ...init,
        redirect: "manual",
        headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
      });
      for (const c of res.headers.getSetCookie()) if (c.startsWith("sessionid=")) cookie = c.split(";")[0]!;
      return { status: res.status, html: await res.text() };
    };
    const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const login = await go("/login/");
    const body = new URLSearchParams({
      username: "admin",
      password: "admin",
      next: "/",
      _csrf: csrfOf(login.html),
    });
    assert.equal((await go("/login/", { method: "POST", body })).status, 302);
    const page = await go("/dcim/sites/import/");
    assert.match(page.html, /enctype="multipart\/form-data"/);
    const fd = new FormData();
    fd.append("_csrf", csrfOf(page.html));
    fd.append("format", "csv");
    fd.append("confirm", "yes");
    fd.append("file", new Blob(["name,status\nUploaded site,active\n"], { type: "text/csv" }), "sites.csv");
    const res = await go("/dcim/sites/import/", { method: "POST", body: fd });
    assert.equal(res.status, 302, res.html.slice(0, 2000));
    assert.equal((await s.api("/api/dcim/sites/?name=Uploaded%20site")).body.count, 1);
  });

  it("constrained users: components, allocation, make primary and import refused, nothing created", async () => {
    const all = ["dcim.device", "dcim.interface", "ipam.prefix", "ipam.ipaddress", "dcim.site"];
    const vera = await create(s, "/api/users/users/", { username: "vera3", password: "vera3-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "vera3 view",
      object_types: all,
      actions: ["view"],
      users: [vera.id],
    });
    await create(s, "/api/users/permissions/", {
      name: "vera3 elsewhere",
      object_types: all,
      actions: ["add", "change", "delete"],
      users: [vera.id],
      constraints: { id: "00000000-0000-0000-0000-000000000000" },
    });
    const web = await webClient(s, "vera3", "vera3-pass-1");
    const count = async (path: string) => (await s.api(`${path}?limit=1`)).body.count;
    const before = {
      ifaces: await count("/api/dcim/interfaces/"),
      ips: await count("/api/ipam/ip-addresses/"),
      prefixes: await count("/api/ipam/prefixes/"),
      sites: await count("/api/dcim/sites/"),
      changes: await count("/api/extras/object-changes/"),
    };
    const prefix = (await s.api("/api/ipam/prefixes/?prefix=10.9.0.0/24")).body.results[0];
    const ip = (await s.api("/api/ipam/ip-addresses/?address=10.9.0.2/24")).body.results[0];
    let r = await web.post(`/dcim/devices/${w.device.id}/components/interfaces/add/`, {
      name_pattern: "vx[1-3]",
      type: "virtual",
    });
    assert.equal(r.status, 403, r.html.slice(0, 500));
    r = await web.post(`/ipam/prefixes/${prefix.id}/allocate-ip/`, {});
    assert.equal(r.status, 403, r.html.slice(0, 500));
    r = await web.post(`/ipam/prefixes/${prefix.id}/allocate-prefix/`, { prefix_length: "30" });
    assert.equal(r.status, 403, r.html.slice(0, 500));
    r = await web.post(`/ipam/ip-addresses/${ip.id}/make-primary/`, {});
    assert.equal(r.status, 403, r.html.slice(0, 500));
    r = await web.post("/dcim/sites/import/", {
      format: "csv",
      data: "name,status\nVera site,active",
      confirm: "yes",
    });
    assert.equal(r.status, 403, r.html.slice(0, 500));
    // A user who may not see this device: 404.
    const nobody = await create(s, "/api/users/users/", { username: "nobody3", password: "nobody3-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "nobody3 add",
      object_types: ["dcim.interface"],
      actions: ["add"],
      users: [nobody.id],
    });
    await create(s, "/api/users/permissions/", {
      name: "nobody3 view elsewhere",
      object_types: ["dcim.device"],
      actions: ["view"],
      users: [nobody.id],
      constraints: { name: "not-this-one" },
    });
    const web2 = await webClient(s, "nobody3", "nobody3-pass-1");
    r = await web2.post(`/dcim/devices/${w.device.id}/components/interfaces/add/`, {
      name_pattern: "vx[1-3]",
      type: "virtual",
    });
    assert.equal(r.status, 404, r.html.slice(0, 500));
    assert.deepEqual(
      {
        ifaces: await count("/api/dcim/interfaces/"),
        ips: await count("/api/ipam/ip-addresses/"),
        prefixes: await count("/api/ipam/prefixes/"),
        sites: await count("/api/dcim/sites/"),
        changes: await count("/api/extras/object-changes/"),
      },
      before,
    );
    assert.equal((await s.api(`/api/dcim/devices/${w.device.id}/`)).body.primary_ip4?.id, ip.id, "unchanged");
  });
});
