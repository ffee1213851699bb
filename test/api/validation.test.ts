/**
 * Model rules over HTTP (issue 2 "Tests and checks"): rack position and face, VLAN group and site,
 * primary IP assignment, prefix normalisation, interface LAG/parent rules, cable terminations, location
 * hierarchy; and the generic input errors (malformed JSON, wrong types, bad choices, long strings,
 * bad UUIDs, bad IPs, non-JSON bodies) — always a 4xx naming the field, never a 500 or a partial write.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildWorld, create, type World } from "../helpers/world.ts";

describe("validation rules", () => {
  let s: TestServer;
  let w: World;
  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
  });
  after(async () => {
    await s.close();
  });

  const post = (path: string, body: unknown) => s.api(path, { method: "POST", body });
  const expect400 = async (path: string, body: unknown, key?: string) => {
    const r = await post(path, body);
    assert.equal(r.status, 400, `${path} ${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.body)}`);
    if (key) assert.ok(key in r.body, `expected error under ${key}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const device = (extra: Record<string, unknown>) => ({
    device_type: w.devicetype,
    device_role: w.devicerole,
    site: w.site,
    status: "active",
    ...extra,
  });

  it("rack placement: position needs rack and face; units cannot overlap", async () => {
    await expect400("/api/dcim/devices/", device({ name: "p1", position: 5, face: "front" }));
    await expect400("/api/dcim/devices/", device({ name: "p2", rack: w.rack, position: 5 }));
    await create(s, "/api/dcim/devices/", device({ name: "p3", rack: w.rack, position: 20, face: "front" }));
    await expect400("/api/dcim/devices/", device({ name: "p4", rack: w.rack, position: 20, face: "front" }));
    await expect400(
      "/api/dcim/devices/",
      device({ name: "p5", rack: w.rack, position: 20, face: "sideways" }),
      "face",
    );
    const other = await create(s, "/api/dcim/racks/", {
      name: "other site rack",
      site: w.site2,
      status: "active",
    });
    await expect400("/api/dcim/devices/", device({ name: "p6", rack: other.id }));
  });

  it("power feeds: AC voltage cannot be negative; DC three-phase is allowed (Nautobot 1.6 PowerFeed.clean)", async () => {
    const body = await expect400(
      "/api/dcim/power-feeds/",
      { power_panel: w.powerpanel, name: "neg", status: "active", supply: "ac", voltage: -48 },
      "voltage",
    );
    assert.deepEqual(body.voltage, ["Voltage cannot be negative for AC supply"]);
    const dc = await post("/api/dcim/power-feeds/", {
      power_panel: w.powerpanel,
      name: "dc3",
      status: "active",
      supply: "dc",
      phase: "three-phase",
      voltage: -48,
    });
    assert.equal(dc.status, 201, JSON.stringify(dc.body));
  });

  it("VLAN group site must equal the VLAN's site", async () => {
    await expect400("/api/ipam/vlans/", {
      vid: 300,
      name: "x",
      status: "active",
      site: w.site2,
      group: w.vlangroup,
    });
    await expect400("/api/ipam/vlans/", { vid: 301, name: "y", status: "active", group: w.vlangroup });
    await create(s, "/api/ipam/vlans/", {
      vid: 302,
      name: "z",
      status: "active",
      site: w.site,
      group: w.vlangroup,
    });
    await expect400("/api/ipam/vlans/", {
      vid: 302,
      name: "z2",
      status: "active",
      site: w.site,
      group: w.vlangroup,
    });
  });

  it("primary IP must be assigned to one of the device's interfaces and of the right family", async () => {
    const ip = await create(s, "/api/ipam/ip-addresses/", { address: "198.51.100.7/24", status: "active" });
    let r = await s.api(`/api/dcim/devices/${w.device}/`, { method: "PATCH", body: { primary_ip4: ip.id } });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    r = await s.api(`/api/ipam/ip-addresses/${ip.id}/`, {
      method: "PATCH",
      body: { assigned_object_type: "dcim.interface", assigned_object_id: w.interface },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    r = await s.api(`/api/dcim/devices/${w.device}/`, { method: "PATCH", body: { primary_ip4: ip.id } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.primary_ip4.id, ip.id);
    assert.equal(r.body.primary_ip.id, ip.id);
    r = await s.api(`/api/dcim/devices/${w.device}/`, { method: "PATCH", body: { primary_ip6: ip.id } });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    // Moving the primary IP to another device's interface is refused.
    r = await s.api(`/api/ipam/ip-addresses/${ip.id}/`, {
      method: "PATCH",
      body: { assigned_object_id: w.interface2 },
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
  });

  it("prefixes drop host bits; IPs keep them; /0 and garbage are rejected", async () => {
    const p = await create(s, "/api/ipam/prefixes/", { prefix: "192.0.2.77/24", status: "active" });
    assert.equal(p.prefix, "192.0.2.0/24");
    assert.deepEqual(p.family, { value: 4, label: "IPv4" });
    const p6 = await create(s, "/api/ipam/prefixes/", { prefix: "2001:DB8:1::5/48", status: "active" });
    assert.equal(p6.prefix, "2001:db8:1::/48");
    const ip = await create(s, "/api/ipam/ip-addresses/", { address: "192.0.2.77/24", status: "active" });
    assert.equal(ip.address, "192.0.2.77/24");
    await expect400("/api/ipam/prefixes/", { prefix: "0.0.0.0/0", status: "active" });
    await expect400("/api/ipam/prefixes/", { prefix: "300.1.1.0/24", status: "active" }, "prefix");
    await expect400("/api/ipam/ip-addresses/", { address: "nope", status: "active" }, "address");
    const within = await s.api("/api/ipam/prefixes/?within=192.0.0.0/16");
    assert.ok(within.body.results.some((x: any) => x.id === p.id));
    const parent = await s.api("/api/ipam/ip-addresses/?parent=192.0.2.0/24");
    assert.ok(parent.body.results.some((x: any) => x.id === ip.id));
    assert.ok(parent.body.results.every((x: any) => x.address.startsWith("192.0.2.")));
  });

  it("interface LAG and parent rules", async () => {
    const lag = await create(s, "/api/dcim/interfaces/", { device: w.device, name: "ae0", type: "lag" });
    const other = await create(s, "/api/dcim/interfaces/", { device: w.device2, name: "ae9", type: "lag" });
    await create(s, "/api/dcim/interfaces/", {
      device: w.device,
      name: "ge-0/0/1",
      type: "1000base-t",
      lag: lag.id,
    });
    await expect400("/api/dcim/interfaces/", {
      device: w.device,
      name: "ge-0/0/2",
      type: "1000base-t",
      lag: other.id,
    });
    await expect400("/api/dcim/interfaces/", {
      device: w.device,
      name: "ge-0/0/3",
      type: "1000base-t",
      parent_interface: lag.id,
    });
    const sub = await create(s, "/api/dcim/interfaces/", {
      device: w.device,
      name: "ae0.100",
      type: "virtual",
      parent_interface: lag.id,
    });
    assert.equal(sub.parent_interface.id, lag.id);
    await expect400("/api/dcim/interfaces/", {
      device: w.device,
      name: "eth-lag",
      type: "virtual",
      lag: lag.id,
    });
  });

  it("cable terminations: compatible, free, not virtual, immutable", async () => {
    const a = await create(s, "/api/dcim/interfaces/", { device: w.device, name: "c-a", type: "1000base-t" });
    const b = await create(s, "/api/dcim/interfaces/", {
      device: w.device2,
      name: "c-b",
      type: "1000base-t",
    });
    const v = await create(s, "/api/dcim/interfaces/", { device: w.device2, name: "c-v", type: "virtual" });
    const body = {
      termination_a_type: "dcim.interface",
      termination_a_id: a.id,
      termination_b_type: "dcim.interface",
      termination_b_id: b.id,
      status: "connected",
    };
    const cable = await create(s, "/api/dcim/cables/", body);
    const ia = await s.api(`/api/dcim/interfaces/${a.id}/`);
    assert.equal(ia.body.cable.id, cable.id);
    assert.equal(ia.body.cable_peer.id, b.id);
    assert.equal(cable.termination_a.id, a.id);
    assert.equal(cable.termination_b.id, b.id);
    await expect400("/api/dcim/cables/", body);
    const c = await create(s, "/api/dcim/interfaces/", {
      device: w.device2,
      name: "c-c",
      type: "1000base-t",
    });
    await expect400("/api/dcim/cables/", { ...body, termination_a_id: c.id, termination_b_id: v.id });
    await expect400("/api/dcim/cables/", {
      ...body,
      termination_a_id: c.id,
      termination_b_type: "dcim.powerport",
      termination_b_id: w.powerport,
    });
    const r = await s.api(`/api/dcim/cables/${cable.id}/`, {
      method: "PATCH",
      body: { termination_b_id: c.id },
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    const d = await s.api(`/api/dcim/cables/${cable.id}/`, { method: "DELETE" });
    assert.equal(d.status, 204);
    assert.equal((await s.api(`/api/dcim/interfaces/${a.id}/`)).body.cable, null);
  });

  it("location hierarchy", async () => {
    const floorType = await create(s, "/api/dcim/location-types/", {
      name: "Floor",
      parent: w.locationtype,
      content_types: ["dcim.device"],
    });
    await expect400("/api/dcim/locations/", { name: "F1", location_type: floorType.id, status: "active" });
    await expect400("/api/dcim/locations/", {
      name: "F1",
      location_type: floorType.id,
      parent: w.location,
      site: w.site,
      status: "active",
    });
    const f1 = await create(s, "/api/dcim/locations/", {
      name: "F1",
      location_type: floorType.id,
      parent: w.location,
      status: "active",
    });
    assert.equal(f1.display, "Bldg 1 → F1");
    await expect400("/api/dcim/locations/", { name: "B2", location_type: w.locationtype, status: "active" });
  });

  it("generic input errors are 4xx naming the field, and write nothing", async () => {
    const before = (await s.api("/api/dcim/sites/?limit=1")).body.count;
    let r = await s.api("/api/dcim/sites/", { method: "POST", body: "{not json" });
    assert.equal(r.status, 400);
    assert.match(r.body.detail, /^JSON parse error - /);
    r = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: "name=x",
      headers: { "Content-Type": "text/plain" },
    });
    assert.equal(r.status, 415);
    await expect400("/api/dcim/sites/", { name: "x".repeat(101), status: "active" }, "name");
    await expect400("/api/dcim/sites/", { name: "ok", status: "bogus" }, "status");
    await expect400("/api/dcim/sites/", { name: "ok", status: "active", asn: "many" }, "asn");
    await expect400("/api/dcim/sites/", { name: "ok", status: "active", region: "not-a-uuid" }, "region");
    await expect400(
      "/api/dcim/sites/",
      { name: "ok", status: "active", region: "3f1a0000-0000-4000-8000-000000000000" },
      "region",
    );
    await expect400(
      "/api/dcim/sites/",
      { name: "ok", status: "active", region: { name: "Nowhere" } },
      "region",
    );
    await expect400("/api/dcim/racks/", { name: "ok", site: w.site, status: "active", width: 7 }, "width");
    await expect400("/api/dcim/sites/", [
      { name: "bulk-ok", status: "active" },
      { name: "", status: "active" },
    ]);
    assert.equal((await s.api("/api/dcim/sites/?limit=1")).body.count, before);
    assert.equal((await s.api("/api/dcim/sites/not-a-uuid/")).status, 404);
    assert.equal((await s.api("/api/dcim/nothing/")).status, 404);
    r = await s.api("/api/dcim/sites/?limit=1", { token: null });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { detail: "Authentication credentials were not provided." });
    r = await s.api("/api/dcim/sites/", { token: "0".repeat(40) });
    assert.deepEqual(r.body, { detail: "Invalid token" });
    r = await s.api("/api/dcim/sites", {});
    assert.equal(r.status, 302);
    assert.equal(r.headers.get("location"), "/api/dcim/sites/");
  });

  it("bulk update and delete are all-or-none", async () => {
    const a = await create(s, "/api/tenancy/tenants/", { name: "bulk a" });
    const b = await create(s, "/api/tenancy/tenants/", { name: "bulk b" });
    let r = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [
        { id: a.id, description: "ok" },
        { id: b.id, name: "" },
      ],
    });
    assert.equal(r.status, 400);
    assert.equal((await s.api(`/api/tenancy/tenants/${a.id}/`)).body.description, "");
    r = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [
        { id: a.id, description: "ok" },
        { id: b.id, description: "ok2" },
      ],
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 2);
    r = await s.api("/api/tenancy/tenants/", { method: "DELETE", body: [{ id: a.id }, { id: w.tenant }] });
    assert.equal(r.status, 409);
    assert.equal((await s.api(`/api/tenancy/tenants/${a.id}/`)).status, 200);
    r = await s.api("/api/tenancy/tenants/", { method: "DELETE", body: [{ id: a.id }, { id: b.id }] });
    assert.equal(r.status, 204);
    assert.equal((await s.api(`/api/tenancy/tenants/${a.id}/`)).status, 404);
  });
});
