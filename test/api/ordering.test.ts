/**
 * List order as Nautobot 1.6 on PostgreSQL (issue 9): an ordering through an FK follows the related
 * object's own ordering (interfaces by their device's name, VLANs by site name, then group, then VID),
 * NULLs sort last ascending on both engines (unnamed devices, VLANs without a site), and prefixes put
 * those without a VRF first (`F("vrf__name").asc(nulls_first=True)`).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("list ordering", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.siteB = await create(s, "/api/dcim/sites/", { name: "B-site", status: "active" });
    w.siteA = await create(s, "/api/dcim/sites/", { name: "A-site", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    w.dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "R" });
  });
  after(async () => {
    await s.close();
  });

  const list = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.results;
  };

  it("components follow their device's natural name order, not its UUID", async () => {
    const devs: any[] = [];
    for (const name of ["sw10", "sw2", "sw1", "core"]) {
      devs.push(
        await create(s, "/api/dcim/devices/", {
          name,
          device_type: w.dt.id,
          device_role: w.role.id,
          site: w.siteA.id,
          status: "active",
        }),
      );
    }
    for (const d of devs)
      for (const n of ["eth10", "eth2"])
        await create(s, "/api/dcim/interfaces/", { device: d.id, name: n, type: "1000base-t" });
    const got = (await list("/api/dcim/interfaces/?limit=100")).map((i: any) => `${i.device.name}/${i.name}`);
    assert.deepEqual(got, [
      "core/eth2",
      "core/eth10",
      "sw1/eth2",
      "sw1/eth10",
      "sw2/eth2",
      "sw2/eth10",
      "sw10/eth2",
      "sw10/eth10",
    ]);
    // Paging keeps the order.
    const p1 = (await list("/api/dcim/interfaces/?limit=3")).map((i: any) => i.id);
    const p2 = (await list("/api/dcim/interfaces/?limit=3&offset=3")).map((i: any) => i.id);
    const all = (await list("/api/dcim/interfaces/?limit=100")).map((i: any) => i.id);
    assert.deepEqual([...p1, ...p2], all.slice(0, 6));
  });

  it("unnamed devices sort last", async () => {
    await create(s, "/api/dcim/devices/", {
      device_type: w.dt.id,
      device_role: w.role.id,
      site: w.siteA.id,
      status: "active",
    });
    const names = (await list("/api/dcim/devices/?limit=100")).map((d: any) => d.name);
    assert.equal(names[names.length - 1], null);
    assert.deepEqual(names.slice(0, 4), ["core", "sw1", "sw2", "sw10"]);
  });

  it("racks with and without a group are all listed (joins below an optional FK stay outer)", async () => {
    const g = await create(s, "/api/dcim/rack-groups/", { name: "G", site: w.siteA.id });
    await create(s, "/api/dcim/racks/", { name: "r-nogroup", site: w.siteA.id, status: "active" });
    await create(s, "/api/dcim/racks/", { name: "r-group", site: w.siteA.id, group: g.id, status: "active" });
    await create(s, "/api/dcim/racks/", { name: "r-b", site: w.siteB.id, status: "active" });
    const got = (await list("/api/dcim/racks/")).map((r: any) => r.name);
    assert.deepEqual(got, ["r-group", "r-nogroup", "r-b"]);
    assert.equal((await s.api(`/api/dcim/racks/?site_id=${w.siteA.id}`)).body.count, 2);
  });

  it("VLANs by site name, then group, then VID; no site last", async () => {
    const gB = await create(s, "/api/ipam/vlan-groups/", { name: "g", site: w.siteB.id });
    await create(s, "/api/ipam/vlans/", { vid: 5, name: "global", status: "active" });
    await create(s, "/api/ipam/vlans/", {
      vid: 30,
      name: "b30",
      status: "active",
      site: w.siteB.id,
      group: gB.id,
    });
    await create(s, "/api/ipam/vlans/", { vid: 20, name: "b20", status: "active", site: w.siteB.id });
    await create(s, "/api/ipam/vlans/", { vid: 40, name: "a40", status: "active", site: w.siteA.id });
    await create(s, "/api/ipam/vlans/", { vid: 10, name: "a10", status: "active", site: w.siteA.id });
    const got = (await list("/api/ipam/vlans/")).map((v: any) => v.name);
    assert.deepEqual(got, ["a10", "a40", "b30", "b20", "global"]);
  });

  it("prefixes without a VRF first, then by VRF name", async () => {
    const vz = await create(s, "/api/ipam/vrfs/", { name: "zeta" });
    const va = await create(s, "/api/ipam/vrfs/", { name: "alpha" });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.0.0.0/24", status: "active", vrf: vz.id });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.9.0.0/24", status: "active" });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.5.0.0/24", status: "active", vrf: va.id });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.1.0.0/24", status: "active" });
    const got = (await list("/api/ipam/prefixes/")).map((p: any) => `${p.vrf?.name ?? "-"} ${p.prefix}`);
    assert.deepEqual(got, ["- 10.1.0.0/24", "- 10.9.0.0/24", "alpha 10.5.0.0/24", "zeta 10.0.0.0/24"]);
  });
});
