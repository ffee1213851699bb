/**
 * Issue 25 over HTTP (both engines): the forms' typeahead lookups (`/ui-api/lookup/`, scoped by the form's
 * other controls and by the user's permissions), cabling from the UI (the cable form's A/B sides, "Connect"
 * pre-filling the A side, errors beside their fields), the cable trace page, the peers on a device page,
 * and the IP address form's interface assignment.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

/** The `data-lookup` spec of control `name` on a form page. */
function lookupOf(html: string, name: string): any {
  const m = new RegExp(`name="${name}"[^>]*data-lookup="([^"]+)"`).exec(html);
  assert.ok(m, `no typeahead on ${name}`);
  return JSON.parse(
    m[1]!
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, "&"),
  );
}

describe("web interface: typeaheads, cabling and traces", () => {
  let s: TestServer;
  let web: WebClient;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    web = await webClient(s);
    w.site = await create(s, "/api/dcim/sites/", { name: "FRA1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "7050" });
    const pp = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "Panel-24" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    const dev = (name: string, type: string) =>
      create(s, "/api/dcim/devices/", {
        name,
        device_type: type,
        device_role: role.id,
        site: w.site.id,
        status: "active",
      });
    w.d1 = await dev("fra1-leaf1", dt.id);
    w.d2 = await dev("fra1-leaf2", dt.id);
    w.p1 = await dev("fra1-panel1", pp.id);
    w.p2 = await dev("fra1-panel2", pp.id);
    const iface = (device: string, name: string) =>
      create(s, "/api/dcim/interfaces/", { device, name, type: "10gbase-x-sfpp" });
    w.a = await iface(w.d1.id, "eth1");
    w.a2 = await iface(w.d1.id, "eth2");
    w.b = await iface(w.d2.id, "eth1");
    w.rp1 = await create(s, "/api/dcim/rear-ports/", {
      device: w.p1.id,
      name: "rear1",
      type: "lc",
      positions: 1,
    });
    w.rp2 = await create(s, "/api/dcim/rear-ports/", {
      device: w.p2.id,
      name: "rear1",
      type: "lc",
      positions: 1,
    });
    w.fp1 = await create(s, "/api/dcim/front-ports/", {
      device: w.p1.id,
      name: "front1",
      type: "lc",
      rear_port: w.rp1.id,
    });
    w.fp2 = await create(s, "/api/dcim/front-ports/", {
      device: w.p2.id,
      name: "front1",
      type: "lc",
      rear_port: w.rp2.id,
    });
  });
  after(async () => {
    await s?.close();
  });

  it("lookups answer {id, display} scoped by filters and permissions; bad input is a 4xx", async () => {
    const r = await fetch(`${s.url}/ui-api/lookup/?model=dcim.interface&device_id=${w.d1.id}&q=eth`, {
      redirect: "manual",
    });
    // Without the session: the login redirect, never data.
    assert.equal(r.status, 302);
    const page = await web.get(`/ui-api/lookup/?model=dcim.interface&device_id=${w.d1.id}&q=eth`);
    assert.equal(page.status, 200);
    const body = JSON.parse(page.html);
    assert.deepEqual(body.results.map((o: any) => o.display).sort(), ["eth1", "eth2"]);
    assert.deepEqual(Object.keys(body.results[0]).sort(), ["display", "id"]);
    assert.equal(body.more, false);
    // At most 50 answers, "more" when there are others; in natural order (ge-0/0/2 before ge-0/0/10).
    const many = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      body: Array.from({ length: 55 }, (_, i) => ({
        device: w.d2.id,
        name: `ge-0/0/${i}`,
        type: "1000base-t",
      })),
    });
    assert.equal(many.status, 201);
    const first = JSON.parse(
      (await web.get(`/ui-api/lookup/?model=dcim.interface&device_id=${w.d2.id}&q=ge-0`)).html,
    );
    assert.equal(first.results.length, 50);
    assert.equal(first.more, true);
    const names = first.results.map((o: any) => o.display);
    const sorted = [...names].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    assert.deepEqual(names, sorted);
    const few = JSON.parse(
      (await web.get(`/ui-api/lookup/?model=dcim.interface&device_id=${w.d2.id}&q=ge-0/0/1`)).html,
    );
    assert.deepEqual(
      few.results.map((o: any) => o.display),
      ["ge-0/0/1", ...Array.from({ length: 10 }, (_, i) => `ge-0/0/${10 + i}`)],
    );
    await s.api("/api/dcim/interfaces/", {
      method: "DELETE",
      body: many.body.map((o: any) => ({ id: o.id })),
    });
    const q = JSON.parse((await web.get(`/ui-api/lookup/?model=dcim.device&q=panel`)).html);
    assert.deepEqual(q.results.map((o: any) => o.display).sort(), ["fra1-panel1", "fra1-panel2"]);
    assert.equal((await web.get("/ui-api/lookup/?model=dcim.nothing")).status, 404);
    const bad = await web.get("/ui-api/lookup/?model=dcim.interface&device_id=not-a-uuid");
    assert.equal(bad.status, 400);
    assert.match(bad.html, /device_id/);
    const user = await create(s, "/api/users/users/", { username: "bob", password: "bob-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "bob devices",
      object_types: ["dcim.device"],
      actions: ["view"],
      users: [user.id],
      constraints: { name: "fra1-leaf1" },
    });
    const bob = await webClient(s, "bob", "bob-pass-1");
    const mine = JSON.parse((await bob.get("/ui-api/lookup/?model=dcim.device")).html);
    assert.deepEqual(
      mine.results.map((o: any) => o.display),
      ["fra1-leaf1"],
    );
    assert.equal((await bob.get("/ui-api/lookup/?model=dcim.interface")).status, 403);
  });

  it("forms carry typeaheads: LAG/parent on the same device, primary IPs of the device", async () => {
    const add = await web.get("/dcim/interfaces/add/");
    assert.equal(add.status, 200);
    for (const f of ["lag", "parent_interface", "bridge"]) {
      const spec = lookupOf(add.html, f);
      assert.deepEqual(spec.sources[""], { model: "dcim.interface", scope: { device_id: "device" } }, f);
    }
    assert.equal(lookupOf(add.html, "device").sources[""].model, "dcim.device");
    assert.match(add.html, /src="\/ui\/vendor\/tom-select\.js"/);
    const edit = await web.get(`/dcim/devices/${w.d1.id}/edit/`);
    const ip4 = lookupOf(edit.html, "primary_ip4").sources[""];
    assert.deepEqual(ip4, { model: "ipam.ipaddress", scope: { device_id: `=${w.d1.id}` } });
    assert.deepEqual(lookupOf(edit.html, "rack").sources[""].scope, { site_id: "site" });
    const js = await web.get("/ui/vendor/tom-select.js");
    assert.equal(js.status, 200);
    assert.match(js.html, /TomSelect/);
    assert.equal((await web.get("/static/typeahead.js")).status, 200);
  });

  it("connects from a port: the A side pre-filled, B chosen by device; errors beside the fields", async () => {
    const port = await web.get(`/dcim/interfaces/${w.a.id}/`);
    const connect = /href="(\/dcim\/cables\/add\/\?[^"]+)">Connect</.exec(port.html);
    assert.ok(connect, "a Connect link on an uncabled interface");
    const form = await web.get(connect[1]!.replace(/&amp;/g, "&"));
    assert.equal(form.status, 200);
    assert.match(form.html, /<option value="dcim.interface" selected>/);
    assert.match(form.html, new RegExp(`name="termination_a_id" type="text" value="${w.a.id}"`));
    assert.match(form.html, /data-current="[^"]*eth1/);
    const b = lookupOf(form.html, "termination_b_id");
    assert.equal(b.typeField, "termination_b_type");
    assert.deepEqual(b.sources["dcim.interface"], {
      model: "dcim.interface",
      scope: { device_id: "termination_b_parent" },
    });
    assert.equal(lookupOf(form.html, "termination_b_parent").sources["dcim.frontport"].model, "dcim.device");
    // Nothing chosen: the required errors beside the A/B controls, never a silent 400.
    const empty = await web.post("/dcim/cables/add/", { status: "connected" });
    assert.equal(empty.status, 400);
    assert.match(empty.html, /termination_a_id[\s\S]*?This field is required/);
    const ok = await web.post("/dcim/cables/add/", {
      termination_a_type: "dcim.interface",
      termination_a_id: w.a.id,
      termination_b_type: "dcim.frontport",
      termination_b_parent: w.p1.id,
      termination_b_id: w.fp1.id,
      status: "connected",
      label: "C-100",
      color: "ff0000",
    });
    assert.equal(ok.status, 302, ok.html.slice(0, 2000));
    const cables = await s.api(`/api/dcim/cables/?termination_a_id=${w.a.id}`);
    assert.equal(cables.body.count, 1);
    assert.equal(cables.body.results[0].termination_b.id, w.fp1.id);
    // The same port again: the service's message beside the B-side control.
    const again = await web.post("/dcim/cables/add/", {
      termination_a_type: "dcim.interface",
      termination_a_id: w.a2.id,
      termination_b_type: "dcim.frontport",
      termination_b_id: w.fp1.id,
      status: "connected",
    });
    assert.equal(again.status, 400, String(again.html.match(/class="error"[^>]*>[^<]*/g)));
    assert.match(
      again.html,
      /class="field has-error"[\s\S]*?termination_b_id[\s\S]*?class="error" role="alert">Another cable already has this termination b\./,
      String(again.html.match(/(has-error|class="error")[^>]*>[^<]*/g)),
    );
  });

  it("the trace page draws every hop; the device page shows the peer and a trace link", async () => {
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.rearport",
      termination_a_id: w.rp1.id,
      termination_b_type: "dcim.rearport",
      termination_b_id: w.rp2.id,
      status: "connected",
      label: "C-200",
    });
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.frontport",
      termination_a_id: w.fp2.id,
      termination_b_type: "dcim.interface",
      termination_b_id: w.b.id,
      status: "connected",
      label: "C-300",
    });
    const trace = await web.get(`/dcim/interfaces/${w.a.id}/trace/`);
    assert.equal(trace.status, 200);
    assert.match(trace.html, /<svg class="trace"/);
    const svg = /<svg[\s\S]*<\/svg>/.exec(trace.html)![0];
    for (const name of [
      "fra1-leaf1",
      "eth1",
      "C-100",
      "fra1-panel1",
      "front1",
      "rear1",
      "C-200",
      "fra1-panel2",
      "C-300",
      "fra1-leaf2",
    ])
      assert.ok(svg.includes(`>${name}<`), `${name} in the drawing`);
    assert.match(svg, /stroke="#ff0000"/);
    assert.ok(svg.includes(`href="/dcim/devices/${w.d2.id}/"`), "the far device links to its page");
    // The same path as the API's trace.
    const api = await s.api(`/api/dcim/interfaces/${w.a.id}/trace/`);
    assert.match(trace.html, new RegExp(`Hops \\(${api.body.length}\\)`));
    assert.equal((await web.get(`/dcim/front-ports/${w.fp1.id}/trace/`)).status, 404);
    const device = await web.get(`/dcim/devices/${w.d1.id}/interfaces/`);
    assert.ok(device.html.includes(`href="/dcim/interfaces/${w.a.id}/trace/">Trace<`), "trace link");
    assert.match(
      device.html,
      new RegExp(
        `href="/dcim/devices/${w.d2.id}/">fra1-leaf2</a> › <a href="/dcim/interfaces/${w.b.id}/">eth1</a>`,
      ),
    );
    assert.ok(device.html.includes(`termination_a_id=${w.a2.id}">Connect<`), "connect link on eth2");
  });

  it("the IP address form assigns an interface, chosen by device", async () => {
    const form = await web.get("/ipam/ip-addresses/add/");
    const spec = lookupOf(form.html, "assigned_object_id");
    assert.deepEqual(spec.sources["virtualization.vminterface"].scope, {
      virtual_machine_id: "assigned_object_parent",
    });
    assert.equal(lookupOf(form.html, "nat_inside").sources[""].model, "ipam.ipaddress");
    const saved = await web.post("/ipam/ip-addresses/add/", {
      address: "10.9.8.7/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_parent: w.d1.id,
      assigned_object_id: w.a2.id,
    });
    assert.equal(saved.status, 302, saved.html.slice(0, 2000));
    const ip = await s.api("/api/ipam/ip-addresses/?address=10.9.8.7/24");
    assert.equal(ip.body.results[0].assigned_object_id, w.a2.id);
    const edit = await web.get(`/ipam/ip-addresses/${ip.body.results[0].id}/edit/`);
    assert.match(edit.html, new RegExp(`name="assigned_object_parent" type="text" value="${w.d1.id}"`));
  });
});
