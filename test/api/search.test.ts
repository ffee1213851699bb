/**
 * `?q=` searches the fields Nautobot 1.6.32's FilterSets search (issue 9): their `SearchFilter`
 * predicates, read from a running Nautobot, including paths through related objects (a device type's
 * manufacturer name, a device's inventory-item serials, a circuit's terminations, a virtual chassis's
 * members), content types, JSON data, and the object id.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("q search", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "S", status: "active", description: "zebra site" });
    w.mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
    w.dt = await create(s, "/api/dcim/device-types/", { manufacturer: w.mfr.id, model: "7050" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "Leaf", description: "quokka" });
    w.dev = await create(s, "/api/dcim/devices/", {
      name: "leaf1",
      device_type: w.dt.id,
      device_role: w.role.id,
      site: w.site.id,
      status: "active",
    });
    await create(s, "/api/dcim/inventory-items/", { device: w.dev.id, name: "psu", serial: "PSU-SN-777" });
  });
  after(async () => {
    await s.close();
  });

  const names = async (path: string, key = "name") =>
    (await s.api(path)).body.results.map((o: any) => o[key]).sort();

  it("paths through related objects, forward and reverse", async () => {
    assert.deepEqual(await names("/api/dcim/devices/?q=arista"), ["leaf1"]);
    assert.deepEqual(await names("/api/dcim/devices/?q=SN-777"), ["leaf1"]);
    const vc = await create(s, "/api/dcim/virtual-chassis/", { name: "stack" });
    await s.api(`/api/dcim/devices/${w.dev.id}/`, {
      method: "PATCH",
      body: { virtual_chassis: vc.id, vc_position: 1 },
    });
    assert.deepEqual(await names("/api/dcim/virtual-chassis/?q=leaf1"), ["stack"]);
    const p = await create(s, "/api/circuits/providers/", { name: "P" });
    const ct = await create(s, "/api/circuits/circuit-types/", { name: "Transit" });
    const c = await create(s, "/api/circuits/circuits/", {
      cid: "C1",
      provider: p.id,
      type: ct.id,
      status: "active",
    });
    await create(s, "/api/circuits/circuit-terminations/", {
      circuit: c.id,
      term_side: "A",
      site: w.site.id,
      xconnect_id: "XC-42",
    });
    assert.deepEqual(await names("/api/circuits/circuits/?q=XC-42", "cid"), ["C1"]);
    assert.deepEqual(await names("/api/circuits/circuit-terminations/?q=C1", "term_side"), ["A"]);
  });

  it("only Nautobot's fields: a role's description is not searched, a site's is", async () => {
    assert.deepEqual(await names("/api/dcim/device-roles/?q=quokka"), []);
    assert.deepEqual(await names("/api/dcim/sites/?q=zebra"), ["S"]);
    assert.deepEqual(await names(`/api/dcim/device-roles/?q=${w.role.id}`), ["Leaf"]);
  });

  it("content types and JSON data", async () => {
    await create(s, "/api/extras/config-contexts/", { name: "ntp", data: { ntp_servers: ["10.9.9.9"] } });
    assert.deepEqual(await names("/api/extras/config-contexts/?q=10.9.9"), ["ntp"]);
    await create(s, "/api/extras/custom-links/", {
      content_type: "dcim.device",
      name: "l",
      text: "t",
      target_url: "http://x",
      new_window: false,
    });
    assert.deepEqual(await names("/api/extras/custom-links/?q=device"), ["l"]);
    const st = await names("/api/extras/statuses/?q=cable", "slug");
    assert.ok(st.includes("connected"), st.join(","));
  });
});
