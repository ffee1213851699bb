/**
 * Detail-page tabs (issue 25): a device's page split as Nautobot 1.6's (main tab, one tab per component
 * type with its count, Config Context, Notes, Change Log), each tab its own bookmarkable page at
 * `/dcim/devices/<id>/<tab>/` with Nautobot's columns and the peer of each connection; the "Add
 * components" menu and each tab's add button; the same tabs derived for virtual machines and racks.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { SqlCounter } from "../helpers/sql-counter.ts";
import { webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

/** The tab bar of a page: [label, count or null, href, active]. */
function tabsOf(html: string): Array<[string, number | null, string, boolean]> {
  const nav = /<nav class="tabs"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? "";
  return [
    ...nav.matchAll(
      /<a href="([^"]+)"( aria-current="page")?[^>]*>([^<]+?)(?: <span class="count">\((\d+)\)<\/span>)?<\/a>/g,
    ),
  ].map((m) => [m[3]!, m[4] === undefined ? null : Number(m[4]), m[1]!, !!m[2]]);
}

/** The header cells of the tab's table. */
const headersOf = (html: string) =>
  [
    ...(
      /<section class="card" id="tab-table">[\s\S]*?<thead>([\s\S]*?)<\/thead>/.exec(html)?.[1] ?? ""
    ).matchAll(/<th>([^<]*)<\/th>/g),
  ].map((m) => m[1]);

/** The body rows of the tab's table, as HTML per row. */
const rowsOf = (html: string) =>
  [
    ...(
      /<section class="card" id="tab-table">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ""
    ).matchAll(/<tr>([\s\S]*?)<\/tr>/g),
  ].map((m) => m[1]!);

describe("web interface: detail-page tabs and add components", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "Tab site", status: "active" });
    const m = await create(s, "/api/dcim/manufacturers/", { name: "Tab maker" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: m.id, model: "Tab 48" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Tab role" });
    w.rack = await create(s, "/api/dcim/racks/", { name: "Tab rack", site: w.site.id, status: "active" });
    const mk = (name: string, extra = {}) =>
      create(s, "/api/dcim/devices/", {
        name,
        device_type: dt.id,
        device_role: role.id,
        site: w.site.id,
        status: "active",
        ...extra,
      });
    w.a = await mk("tab-a", { rack: w.rack.id, local_context_data: { ntp: ["192.0.2.123"] } });
    w.b = await mk("tab-b");
    const made = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      body: Array.from({ length: 48 }, (_, i) => ({
        device: w.a.id,
        name: `ge-0/0/${i}`,
        type: "1000base-t",
      })),
    });
    assert.equal(made.status, 201);
    w.ifaces = made.body;
    w.peer = await create(s, "/api/dcim/interfaces/", {
      device: w.b.id,
      name: "xe-1/1/1",
      type: "10gbase-x-sfpp",
    });
    w.cable = await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: w.ifaces[0].id,
      termination_b_type: "dcim.interface",
      termination_b_id: w.peer.id,
      status: "connected",
      label: "TAB-1",
    });
    w.ip = await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.1/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.ifaces[0].id,
    });
    w.rear = await create(s, "/api/dcim/rear-ports/", {
      device: w.a.id,
      name: "R1",
      type: "8p8c",
      positions: 1,
    });
    w.front = await create(s, "/api/dcim/front-ports/", {
      device: w.a.id,
      name: "F1",
      type: "8p8c",
      rear_port: w.rear.id,
    });
    w.console = await create(s, "/api/dcim/console-ports/", { device: w.a.id, name: "con0", type: "rj-45" });
    await create(s, "/api/extras/notes/", {
      note: "Swapped **PSU 2**",
      assigned_object_type: "dcim.device",
      assigned_object_id: w.a.id,
    });
    // A view-only user: devices and interfaces.
    const u = await create(s, "/api/users/users/", { username: "tabviewer", password: "pw-tabviewer-1" });
    await create(s, "/api/users/permissions/", {
      name: "view-tabs",
      users: [u.id],
      object_types: ["dcim.device", "dcim.interface"],
      actions: ["view"],
    });
  });
  after(async () => {
    await s?.close();
  });

  it("the device page: tabs with counts (empty component tabs hidden), fields, Add components for every type", async () => {
    const web = await webClient(s);
    const page = await web.get(`/dcim/devices/${w.a.id}/`);
    assert.equal(page.status, 200);
    const base = `/dcim/devices/${w.a.id}/`;
    assert.deepEqual(tabsOf(page.html), [
      ["Device", null, base, true],
      ["Interfaces", 48, `${base}interfaces/`, false],
      ["Front Ports", 1, `${base}front-ports/`, false],
      ["Rear Ports", 1, `${base}rear-ports/`, false],
      ["Console Ports", 1, `${base}console-ports/`, false],
      ["Config Context", null, `${base}config-context/`, false],
      ["Notes", 1, `${base}notes/`, false],
      ["Change Log", null, `${base}changelog/`, false],
    ]);
    // The main tab: the device's fields, no component table, no config context (its own tab).
    assert.match(page.html, /<th>Device Type<\/th>|<th>Device type<\/th>/);
    // Labels with Nautobot's acronyms, not mechanical ones ("Primary ip").
    assert.match(page.html, /<th>Primary IP<\/th>/);
    assert.match(page.html, /<th>Primary IPv4<\/th>/);
    assert.doesNotMatch(page.html, /<th>Primary ip/);
    assert.doesNotMatch(page.html, /id="tab-table"/);
    assert.doesNotMatch(page.html, /ge-0\/0\/1</);
    assert.doesNotMatch(page.html, /192\.0\.2\.123/);
    // "Add components": one entry per component type, each to the bulk add pre-filled with the device.
    const menu = /<summary>Add components<\/summary>([\s\S]*?)<\/details>/.exec(page.html)?.[1] ?? "";
    const entries = [...menu.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[2], m[1]]);
    assert.deepEqual(
      entries,
      [
        ["Interfaces", "interfaces"],
        ["Front Ports", "front-ports"],
        ["Rear Ports", "rear-ports"],
        ["Console Ports", "console-ports"],
        ["Console Server Ports", "console-server-ports"],
        ["Power Ports", "power-ports"],
        ["Power Outlets", "power-outlets"],
        ["Device Bays", "device-bays"],
        ["Inventory Items", "inventory-items"],
      ].map(([label, p]) => [label, `${base}components/${p}/add/`]),
    );
  });

  it("the interfaces tab: Nautobot's columns, the peer device and port, IP addresses, paging, add button", async () => {
    const web = await webClient(s);
    const page = await web.get(`/dcim/devices/${w.a.id}/interfaces/`);
    assert.equal(page.status, 200);
    assert.match(page.html, /<h1>tab-a<\/h1>/);
    assert.ok(
      tabsOf(page.html).find(([l]) => l === "Interfaces")?.[3],
      "the Interfaces tab is the active one",
    );
    // Nautobot's columns; not Status: the web interface shows API 1.2 representations, where an
    // interface has none (Nautobot 1.6 `InterfaceSerializerVersion12`).
    assert.deepEqual(headersOf(page.html), [
      "Name",
      "Label",
      "Enabled",
      "Type",
      "Parent",
      "LAG",
      "MTU",
      "Mode",
      "Description",
      "IP Addresses",
      "Cable",
      "Connection",
      "Actions",
    ]);
    const rows = rowsOf(page.html);
    assert.equal(rows.length, 48);
    // Natural order: ge-0/0/0, ge-0/0/1, …, ge-0/0/10.
    assert.match(rows[0]!, new RegExp(`href="/dcim/interfaces/${w.ifaces[0].id}/">ge-0/0/0</a>`));
    assert.match(rows[10]!, />ge-0\/0\/10</);
    // The connected row: its address, its cable, the peer as device › port, and its trace.
    assert.match(rows[0]!, new RegExp(`href="/ipam/ip-addresses/${w.ip.id}/">192\\.0\\.2\\.1/24</a>`));
    assert.match(rows[0]!, new RegExp(`href="/dcim/cables/${w.cable.id}/">TAB-1</a>`));
    assert.ok(
      rows[0]!.includes(
        `<a href="/dcim/devices/${w.b.id}/">tab-b</a> › <a href="/dcim/interfaces/${w.peer.id}/">xe-1/1/1</a>`,
      ),
      rows[0],
    );
    assert.ok(rows[0]!.includes(`href="/dcim/interfaces/${w.ifaces[0].id}/trace/">Trace<`));
    // An unconnected row: Connect with this interface as the A side, and Edit.
    assert.ok(rows[1]!.includes(`termination_a_id=${w.ifaces[1].id}">Connect<`), rows[1]);
    assert.ok(rows[1]!.includes(`href="/dcim/interfaces/${w.ifaces[1].id}/edit/">Edit<`));
    assert.match(page.html, /Showing 1–48 of 48/);
    assert.match(
      page.html,
      new RegExp(
        `<a class="button" href="/dcim/devices/${w.a.id}/components/interfaces/add/">\\+ Add interfaces</a>`,
      ),
    );
    // Pages of the tab keep the tab.
    const p3 = await web.get(`/dcim/devices/${w.a.id}/interfaces/?limit=20&offset=40`);
    assert.equal(rowsOf(p3.html).length, 8);
    assert.match(p3.html, /Showing 41–48 of 48/);
    assert.match(p3.html, /href="\?limit=20&amp;offset=20" rel="prev"/);
    assert.doesNotMatch(p3.html, /rel="next"/);
  });

  it("other tabs: ports with their cable peer, an empty tab by URL, config context, notes, change log", async () => {
    const web = await webClient(s);
    const rear = await web.get(`/dcim/devices/${w.a.id}/rear-ports/`);
    assert.deepEqual(headersOf(rear.html), [
      "Name",
      "Label",
      "Type",
      "Positions",
      "Description",
      "Cable",
      "Cable Peer",
      "Actions",
    ]);
    const front = await web.get(`/dcim/devices/${w.a.id}/front-ports/`);
    assert.deepEqual(headersOf(front.html), [
      "Name",
      "Label",
      "Type",
      "Rear Port",
      "Position",
      "Description",
      "Cable",
      "Cable Peer",
      "Actions",
    ]);
    assert.match(rowsOf(front.html)[0]!, new RegExp(`href="/dcim/rear-ports/${w.rear.id}/">R1</a>`));
    const con = await web.get(`/dcim/devices/${w.a.id}/console-ports/`);
    assert.deepEqual(headersOf(con.html), [
      "Name",
      "Label",
      "Type",
      "Description",
      "Cable",
      "Connection",
      "Actions",
    ]);
    // A tab with nothing in it is reachable by its URL, with its add button.
    const power = await web.get(`/dcim/devices/${w.a.id}/power-ports/`);
    assert.equal(power.status, 200);
    assert.match(power.html, /No power ports/);
    assert.equal(rowsOf(power.html).length, 0);
    assert.ok(tabsOf(power.html).some(([l, n, , active]) => l === "Power Ports" && n === 0 && active));
    assert.match(power.html, /components\/power-ports\/add\/">\+ Add power ports</);
    const cc = await web.get(`/dcim/devices/${w.a.id}/config-context/`);
    assert.equal(cc.status, 200);
    assert.match(cc.html, /<h2>Rendered Context<\/h2>/);
    assert.match(cc.html, /<h2>Local Context<\/h2>[\s\S]*192\.0\.2\.123/);
    const notes = await web.get(`/dcim/devices/${w.a.id}/notes/`);
    assert.match(notes.html, /<strong>PSU 2<\/strong>/);
    assert.match(notes.html, new RegExp(`action="/dcim/devices/${w.a.id}/notes/"`));
    // Adding a note returns to the Notes tab (a page without tabs: to its notes card).
    const added = await web.post(`/dcim/devices/${w.a.id}/notes/`, { note: "Second note" });
    assert.equal(added.status, 302);
    assert.equal(added.location, `/dcim/devices/${w.a.id}/notes/`);
    assert.match((await web.get(added.location!)).html, /Notes <span class="count">\(2\)<\/span>/);
    const siteNote = await web.post(`/dcim/sites/${w.site.id}/notes/`, { note: "Site note" });
    assert.equal(siteNote.location, `/dcim/sites/${w.site.id}/#notes`);
    const changes = await web.get(`/dcim/devices/${w.a.id}/changelog/`);
    assert.match(changes.html, /<h2>Change log<\/h2>[\s\S]*tab-a/);
    // Unknown tabs and models without tabs: 404.
    assert.equal((await web.get(`/dcim/devices/${w.a.id}/no-such-tab/`)).status, 404);
    assert.equal((await web.get(`/dcim/sites/${w.site.id}/interfaces/`)).status, 404);
    assert.equal((await web.get(`/dcim/devices/${w.b.id}/interfaces/`)).status, 200);
  });

  it("adding components from a tab lands on that tab with the new count", async () => {
    const web = await webClient(s);
    const r = await web.post(`/dcim/devices/${w.b.id}/components/interfaces/add/`, {
      name_pattern: "eth[1-4]",
      type: "1000base-t",
    });
    assert.equal(r.status, 302, r.html.slice(0, 1000));
    assert.equal(r.location, `/dcim/devices/${w.b.id}/interfaces/`);
    const tab = await web.get(r.location!);
    assert.ok(tabsOf(tab.html).some(([l, n, , active]) => l === "Interfaces" && n === 5 && active));
    assert.deepEqual(
      rowsOf(tab.html).map((x) => />([^<]+)<\/a>/.exec(x)?.[1]),
      ["eth1", "eth2", "eth3", "eth4", "xe-1/1/1"],
    );
  });

  it("loads set-wise: a tab of 48 interfaces runs as many SQL statements as one of 10", async () => {
    const c = await create(s, "/api/dcim/devices/", {
      name: "tab-c",
      device_type: w.a.device_type.id,
      device_role: w.a.device_role.id,
      site: w.site.id,
      status: "active",
      rack: w.rack.id,
      local_context_data: { ntp: ["192.0.2.124"] },
    });
    const made = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      body: Array.from({ length: 10 }, (_, i) => ({ device: c.id, name: `ge-0/0/${i}`, type: "1000base-t" })),
    });
    const far = await create(s, "/api/dcim/interfaces/", {
      device: w.b.id,
      name: "xe-1/1/2",
      type: "10gbase-x-sfpp",
    });
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: made.body[0].id,
      termination_b_type: "dcim.interface",
      termination_b_id: far.id,
      status: "connected",
    });
    await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.2/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: made.body[0].id,
    });
    const web = await webClient(s);
    const counter = new SqlCounter();
    const plain = s.store.db;
    s.store.db = plain.withPlugin(counter);
    try {
      // The fewest statements of three requests after a warm-up: a per-process cache refreshed by the
      // engine's own activity (PostgreSQL's snapshot token) may add one statement to a request.
      const statements = async (path: string) => {
        await web.get(path);
        let fewest = Number.POSITIVE_INFINITY;
        for (let i = 0; i < 3; i++) {
          const before = counter.n;
          const r = await web.get(path);
          assert.equal(r.status, 200, path);
          fewest = Math.min(fewest, counter.n - before);
        }
        return fewest;
      };
      for (const tab of ["interfaces/", ""]) {
        const big = await statements(`/dcim/devices/${w.a.id}/${tab}`);
        const small = await statements(`/dcim/devices/${c.id}/${tab}`);
        assert.ok(big > 0, "the counter sees the page's statements");
        assert.equal(
          big,
          small,
          `${tab || "main"} tab: 48 interfaces ran ${big} statements, 10 ran ${small}`,
        );
      }
    } finally {
      s.store.db = plain;
    }
  });

  it("a view-only user sees the tabs they may view, without add or edit controls", async () => {
    const viewer = await webClient(s, "tabviewer", "pw-tabviewer-1");
    const page = await viewer.get(`/dcim/devices/${w.a.id}/`);
    assert.deepEqual(
      tabsOf(page.html).map(([l]) => l),
      ["Device", "Interfaces", "Config Context"],
    );
    assert.doesNotMatch(page.html, /Add components/);
    const tab = await viewer.get(`/dcim/devices/${w.a.id}/interfaces/`);
    assert.equal(rowsOf(tab.html).length, 48);
    assert.doesNotMatch(tab.html, /\+ Add|\/edit\/"|>Connect</);
    assert.equal((await viewer.get(`/dcim/devices/${w.a.id}/rear-ports/`)).status, 403);
  });

  it("virtual machines and racks get their tabs from the same derivation", async () => {
    const web = await webClient(s);
    const ct = await create(s, "/api/virtualization/cluster-types/", { name: "Tab ct" });
    const cl = await create(s, "/api/virtualization/clusters/", { name: "Tab cluster", type: ct.id });
    const vm = await create(s, "/api/virtualization/virtual-machines/", {
      name: "tab-vm",
      cluster: cl.id,
      status: "active",
    });
    for (const name of ["eth0", "eth1"])
      await create(s, "/api/virtualization/interfaces/", { virtual_machine: vm.id, name, status: "active" });
    const base = `/virtualization/virtual-machines/${vm.id}/`;
    const page = await web.get(base);
    assert.deepEqual(
      tabsOf(page.html).map(([l, n, href]) => [l, n, href]),
      [
        ["Virtual Machine", null, base],
        ["VM Interfaces", 2, `${base}interfaces/`],
        ["Config Context", null, `${base}config-context/`],
        ["Notes", 0, `${base}notes/`],
        ["Change Log", null, `${base}changelog/`],
      ],
    );
    const tab = await web.get(`${base}interfaces/`);
    assert.deepEqual(headersOf(tab.html), [
      "Name",
      "Enabled",
      "Parent",
      "MAC Address",
      "MTU",
      "Mode",
      "Description",
      "IP Addresses",
      "Actions",
    ]);
    assert.equal(rowsOf(tab.html).length, 2);
    // A VM's interfaces are its components: Add components and the tab's button open the bulk add (no label).
    const add = `${base}components/interfaces/add/`;
    assert.match(tab.html, new RegExp(`<a class="button" href="${add}">\\+ Add VM interfaces</a>`));
    assert.match(page.html, new RegExp(`<a href="${add}">VM Interfaces</a>`));
    const form = await web.get(add);
    assert.equal(form.status, 200);
    assert.match(form.html, /name="name_pattern"/);
    assert.doesNotMatch(form.html, /name="label_pattern"|name="virtual_machine"/);
    const made = await web.post(add, { name_pattern: "eth[2-3]", status: "active" });
    assert.equal(made.status, 302, made.html.slice(0, 1000));
    assert.equal(made.location, `${base}interfaces/`);
    const vmIfaces = await s.api(`/api/virtualization/interfaces/?virtual_machine_id=${vm.id}`);
    assert.deepEqual(
      vmIfaces.body.results.map((i: any) => i.name),
      ["eth0", "eth1", "eth2", "eth3"],
    );

    await create(s, "/api/dcim/rack-reservations/", {
      rack: w.rack.id,
      units: [1, 2],
      user: (await s.api("/api/users/users/?username=admin")).body.results[0].id,
      description: "Tab hold",
    });
    const rbase = `/dcim/racks/${w.rack.id}/`;
    const rack = await web.get(rbase);
    const labels = tabsOf(rack.html).map(([l, n]) => [l, n]);
    assert.deepEqual(labels.slice(0, 3), [
      ["Rack", null],
      ["Rack Reservations", 1],
      ["Devices", 2],
    ]);
    // The rack's elevation stays on its main tab.
    assert.match(rack.html, /<h2>Elevation<\/h2>/);
    const devices = await web.get(`${rbase}devices/`);
    assert.match(rowsOf(devices.html)[0]!, new RegExp(`href="/dcim/devices/${w.a.id}/">tab-a</a>`));
    assert.ok(!headersOf(devices.html).includes("Rack"), "no column for the rack itself");
    const res = await web.get(`${rbase}rack-reservations/`);
    assert.match(res.html, new RegExp(`href="/dcim/rack-reservations/add/\\?rack=${w.rack.id}"`));
  });
});
