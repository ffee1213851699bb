/**
 * Model-level validation errors under the keys and in the words a running Nautobot 1.6.32 answered for the
 * same requests (issue 9): rack position taken, rack face missing, a second cable on a cabled interface
 * (either end), a cable to itself, a primary IP of another device, duplicate device names with and
 * without a tenant.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("validation errors as Nautobot", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "S", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    w.dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T2", u_height: 2 });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "R" });
    w.rack = await create(s, "/api/dcim/racks/", { name: "RK", site: w.site.id, status: "active" });
    w.base = { device_type: w.dt.id, device_role: w.role.id, site: w.site.id, status: "active" };
    w.d1 = await create(s, "/api/dcim/devices/", {
      ...w.base,
      name: "d1",
      rack: w.rack.id,
      position: 10,
      face: "front",
    });
    w.d2 = await create(s, "/api/dcim/devices/", { ...w.base, name: "d2" });
    const iface = (device: string, name: string) =>
      create(s, "/api/dcim/interfaces/", { device, name, type: "1000base-t" });
    w.i1 = await iface(w.d1.id, "e1");
    w.i2 = await iface(w.d2.id, "e1");
    w.i3 = await iface(w.d2.id, "e2");
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: w.i1.id,
      termination_b_type: "dcim.interface",
      termination_b_id: w.i2.id,
      status: "connected",
    });
  });
  after(async () => {
    await s.close();
  });

  const post = (path: string, body: unknown) => s.api(path, { method: "POST", body });
  const cable = (a: string, b: string) =>
    post("/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: a,
      termination_b_type: "dcim.interface",
      termination_b_id: b,
      status: "connected",
    });

  it("rack position and face", async () => {
    const taken = await post("/api/dcim/devices/", {
      ...w.base,
      name: "d3",
      rack: w.rack.id,
      position: 11,
      face: "front",
    });
    assert.deepEqual(taken.body, {
      position: [
        "U11 is already occupied or does not have sufficient space to accommodate this device type: T2 (2U)",
      ],
    });
    const noFace = await post("/api/dcim/devices/", { ...w.base, name: "d3", rack: w.rack.id, position: 20 });
    assert.deepEqual(noFace.body, { face: ["Must specify rack face when defining rack position."] });
  });

  it("cables: one per end, never to itself", async () => {
    const a = await cable(w.i1.id, w.i3.id);
    assert.equal(a.status, 400);
    assert.deepEqual(a.body, {
      non_field_errors: ["The fields termination_a_type, termination_a_id must make a unique set."],
    });
    const b = await cable(w.i3.id, w.i2.id);
    assert.deepEqual(b.body, {
      non_field_errors: ["The fields termination_b_type, termination_b_id must make a unique set."],
    });
    const self = await cable(w.i3.id, w.i3.id);
    assert.deepEqual(self.body, { __all__: ["Cannot connect dcim | interface to itself"] });
  });

  it("primary IP of another device", async () => {
    const ip = await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.1/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.i2.id,
    });
    const r = await s.api(`/api/dcim/devices/${w.d1.id}/`, { method: "PATCH", body: { primary_ip4: ip.id } });
    assert.deepEqual(r.body, {
      primary_ip4: ["The specified IP address (192.0.2.1/24) is not assigned to this device."],
    });
  });

  it("duplicate device names, without and with a tenant", async () => {
    const noTenant = await post("/api/dcim/devices/", { ...w.base, name: "d2" });
    assert.deepEqual(noTenant.body, { name: ["A device with this name already exists."] });
    const tenant = await create(s, "/api/tenancy/tenants/", { name: "T" });
    await create(s, "/api/dcim/devices/", { ...w.base, name: "dt", tenant: tenant.id });
    const withTenant = await post("/api/dcim/devices/", { ...w.base, name: "dt", tenant: tenant.id });
    assert.deepEqual(withTenant.body, {
      __all__: ["Device with this Site, Tenant and Name already exists."],
    });
    // The same name without a tenant is another device.
    assert.equal((await post("/api/dcim/devices/", { ...w.base, name: "dt" })).status, 201);
  });
});
