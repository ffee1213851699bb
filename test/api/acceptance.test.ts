/**
 * Issue 2 acceptance sequence, black-box over HTTP on the engine selected by TEST_DB: site, rack,
 * manufacturer, device type with interface templates, device role, device in the rack (components
 * instantiated), an IP on one of its interfaces; brief reads, paging, PATCH bumps last_updated, DELETE 204.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("acceptance: first working product", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("runs the new-user sequence", async () => {
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "AMS 1", status: "active" },
    });
    assert.equal(site.status, 201, JSON.stringify(site.body));
    assert.equal(site.body.slug, "ams-1");
    assert.deepEqual(site.body.status, { value: "active", label: "Active" });
    assert.match(site.headers.get("location") ?? "", /\/api\/dcim\/sites\/[0-9a-f-]{36}\/$/);
    const rack = await s.api("/api/dcim/racks/", {
      method: "POST",
      body: { name: "R1", site: site.body.id, status: "active" },
    });
    assert.equal(rack.status, 201, JSON.stringify(rack.body));
    assert.equal(rack.body.site.id, site.body.id);
    const mfr = await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "Juniper" } });
    assert.equal(mfr.status, 201, JSON.stringify(mfr.body));
    const dt = await s.api("/api/dcim/device-types/", {
      method: "POST",
      body: { manufacturer: { name: "Juniper" }, model: "MX204", u_height: 1 },
    });
    assert.equal(dt.status, 201, JSON.stringify(dt.body));
    assert.equal(dt.body.display, "Juniper MX204");
    for (let i = 0; i < 60; i++) {
      const t = await s.api("/api/dcim/interface-templates/", {
        method: "POST",
        body: { device_type: dt.body.id, name: `et-0/0/${i}`, type: "10gbase-x-sfpp" },
      });
      assert.equal(t.status, 201, JSON.stringify(t.body));
    }
    const role = await s.api("/api/dcim/device-roles/", {
      method: "POST",
      body: { name: "Router", color: "ff0000" },
    });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    const dev = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: {
        name: "r1",
        device_type: dt.body.id,
        device_role: role.body.id,
        site: site.body.id,
        rack: rack.body.id,
        position: 10,
        face: "front",
        status: "active",
      },
    });
    assert.equal(dev.status, 201, JSON.stringify(dev.body));
    assert.equal(dev.body.rack.id, rack.body.id);
    assert.deepEqual(dev.body.face, { value: "front", label: "Front" });

    const ifaces = await s.api(`/api/dcim/interfaces/?device_id=${dev.body.id}&limit=25`);
    assert.equal(ifaces.status, 200);
    assert.equal(ifaces.body.count, 60);
    assert.equal(ifaces.body.results.length, 25);
    assert.equal(ifaces.body.results[0].name, "et-0/0/0");
    assert.equal(ifaces.body.results[2].name, "et-0/0/2", "natural ordering");
    assert.equal(ifaces.body.previous, null);
    assert.ok(ifaces.body.next.includes("offset=25"));
    // Page through with offset and check that no row is skipped or repeated.
    const seen = new Set<string>();
    let next: string | null = `/api/dcim/interfaces/?device_id=${dev.body.id}&limit=25`;
    while (next) {
      const page: any = await s.api(next);
      for (const r of page.body.results) {
        assert.ok(!seen.has(r.id));
        seen.add(r.id);
      }
      next = page.body.next;
    }
    assert.equal(seen.size, 60);

    const ifaceId = ifaces.body.results[0].id;
    const ip = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: {
        address: "192.0.2.1/24",
        status: "active",
        assigned_object_type: "dcim.interface",
        assigned_object_id: ifaceId,
      },
    });
    assert.equal(ip.status, 201, JSON.stringify(ip.body));
    assert.equal(ip.body.assigned_object.id, ifaceId);
    assert.equal(ip.body.assigned_object.device.id, dev.body.id);
    assert.deepEqual(ip.body.family, { value: 4, label: "IPv4" });

    const brief = await s.api(`/api/dcim/devices/${dev.body.id}/?brief=1`);
    assert.equal(brief.status, 200);
    assert.deepEqual(Object.keys(brief.body).sort(), ["display", "id", "name", "url"]);
    const briefList = await s.api("/api/dcim/sites/?brief=1");
    assert.deepEqual(Object.keys(briefList.body.results[0]).sort(), ["display", "id", "name", "slug", "url"]);

    const before = site.body.last_updated;
    await new Promise((r) => setTimeout(r, 5));
    const patched = await s.api(`/api/dcim/sites/${site.body.id}/`, {
      method: "PATCH",
      body: { status: "planned" },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.status.value, "planned");
    assert.notEqual(patched.body.last_updated, before);

    const del = await s.api(`/api/ipam/ip-addresses/${ip.body.id}/`, { method: "DELETE" });
    assert.equal(del.status, 204);
    assert.equal((await s.api(`/api/ipam/ip-addresses/${ip.body.id}/`)).status, 404);
  });
});
