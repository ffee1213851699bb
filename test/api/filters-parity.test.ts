/**
 * Filter semantics found side by side with Nautobot 1.6.32 (issue 9): interface `vlan_id`, `vlan` and
 * `has_tagged_vlans`, the reverse-relation filters (`devices` on roles, `child_interfaces`,
 * `has_<related>`), negations of relation filters, and the config-context assignment filters.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("filter parity", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "S1", status: "active" });
    w.site2 = await create(s, "/api/dcim/sites/", { name: "S2", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    w.dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    w.role2 = await create(s, "/api/dcim/device-roles/", { name: "Spine" });
    w.dev = await create(s, "/api/dcim/devices/", {
      name: "leaf1",
      device_type: w.dt.id,
      device_role: w.role.id,
      site: w.site.id,
      status: "active",
    });
    w.v10 = await create(s, "/api/ipam/vlans/", { vid: 10, name: "ten", status: "active" });
    w.v20 = await create(s, "/api/ipam/vlans/", { vid: 20, name: "twenty", status: "active" });
    const mk = (name: string, extra: Record<string, unknown>) =>
      create(s, "/api/dcim/interfaces/", { device: w.dev.id, name, type: "1000base-t", ...extra });
    w.access = await mk("e1", { mode: "access", untagged_vlan: w.v10.id });
    w.trunk = await mk("e2", { mode: "tagged", tagged_vlans: [w.v10.id, w.v20.id] });
    w.plain = await mk("e3", {});
    w.sub = await create(s, "/api/dcim/interfaces/", {
      device: w.dev.id,
      name: "e3.100",
      type: "virtual",
      parent_interface: w.plain.id,
    });
  });
  after(async () => {
    await s.close();
  });

  const names = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.results.map((o: any) => o.name ?? o.display).sort();
  };

  it("interface vlan_id, vlan and has_tagged_vlans", async () => {
    assert.deepEqual(await names(`/api/dcim/interfaces/?vlan_id=${w.v10.id}`), ["e1", "e2"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?vlan_id=${w.v20.id}`), ["e2"]);
    assert.deepEqual(await names("/api/dcim/interfaces/?vlan=10"), ["e1", "e2"]);
    assert.deepEqual(await names("/api/dcim/interfaces/?vlan=20"), ["e2"]);
    assert.deepEqual(await names("/api/dcim/interfaces/?has_tagged_vlans=true"), ["e2"]);
    assert.deepEqual(await names("/api/dcim/interfaces/?has_tagged_vlans=false"), ["e1", "e3", "e3.100"]);
    const bad = await s.api("/api/dcim/interfaces/?vlan=abc");
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { vlan: ["Enter a number."] });
    const badId = await s.api("/api/dcim/interfaces/?vlan_id=abc");
    assert.equal(badId.status, 400);
    assert.ok(badId.body.vlan_id);
  });

  it("reverse-relation filters and negations", async () => {
    assert.deepEqual(await names("/api/dcim/device-roles/?devices=leaf1"), ["Leaf"]);
    assert.deepEqual(await names(`/api/dcim/device-roles/?devices=${w.dev.id}`), ["Leaf"]);
    assert.deepEqual(await names("/api/dcim/device-roles/?devices__n=leaf1"), ["Spine"]);
    assert.deepEqual(await names("/api/dcim/device-roles/?has_devices=false"), ["Spine"]);
    assert.deepEqual(await names("/api/dcim/interfaces/?has_child_interfaces=true"), ["e3"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?child_interfaces=${w.sub.id}`), ["e3"]);
    assert.deepEqual(await names("/api/dcim/sites/?has_devices=true"), ["S1"]);
    assert.deepEqual(await names("/api/dcim/devices/?role__n=leaf"), []);
    assert.deepEqual(await names("/api/dcim/devices/?site__n=s2"), ["leaf1"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?id__re=^${w.access.id.slice(0, 8)}`), ["e1"]);
  });

  it("circuits and providers by where their circuits terminate", async () => {
    const region = await create(s, "/api/dcim/regions/", { name: "EU" });
    const sub = await create(s, "/api/dcim/regions/", { name: "NL", parent: region.id });
    const site3 = await create(s, "/api/dcim/sites/", { name: "S3", status: "active", region: sub.id });
    const p1 = await create(s, "/api/circuits/providers/", { name: "P1" });
    const p2 = await create(s, "/api/circuits/providers/", { name: "P2" });
    const ct = await create(s, "/api/circuits/circuit-types/", { name: "T" });
    const c1 = await create(s, "/api/circuits/circuits/", {
      cid: "C1",
      provider: p1.id,
      type: ct.id,
      status: "active",
    });
    await create(s, "/api/circuits/circuits/", { cid: "C2", provider: p2.id, type: ct.id, status: "active" });
    await create(s, "/api/circuits/circuit-terminations/", {
      circuit: c1.id,
      term_side: "A",
      site: site3.id,
    });
    const cids = async (q: string) =>
      (await s.api(`/api/circuits/circuits/?${q}`)).body.results.map((c: any) => c.cid).sort();
    assert.deepEqual(await cids("region=eu"), ["C1"]);
    assert.deepEqual(await cids(`region_id=${sub.id}`), ["C1"]);
    assert.deepEqual(await cids("site=s3"), ["C1"]);
    assert.deepEqual(await cids("site__n=s3"), ["C2"]);
    assert.deepEqual(await names("/api/circuits/providers/?site=s3"), ["P1"]);
    assert.deepEqual(await names("/api/circuits/providers/?region=eu"), ["P1"]);
  });

  it("method filters: pass-through ports, template booleans, common chassis, negations, VM interface IPs", async () => {
    assert.deepEqual(await names("/api/dcim/devices/?pass_through_ports=false"), ["leaf1"]);
    await create(s, "/api/dcim/rear-ports/", { device: w.dev.id, name: "r1", type: "lc" });
    assert.deepEqual(await names("/api/dcim/devices/?pass_through_ports=true"), ["leaf1"]);
    assert.deepEqual(await names("/api/dcim/device-types/?interfaces=false"), ["M T"]);
    await create(s, "/api/dcim/interface-templates/", {
      device_type: w.dt.id,
      name: "x1",
      type: "1000base-t",
    });
    assert.deepEqual(await names("/api/dcim/device-types/?interfaces=true"), ["M T"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?device_with_common_vc=${w.dev.id}`), [
      "e1",
      "e2",
      "e3",
      "e3.100",
    ]);
    const ip = await create(s, "/api/ipam/ip-addresses/", {
      address: "10.1.1.1/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.access.id,
    });
    await create(s, "/api/ipam/ip-addresses/", { address: "10.1.1.2/24", status: "active" });
    const addrs = async (q: string) =>
      (await s.api(`/api/ipam/ip-addresses/?${q}`)).body.results.map((i: any) => i.address).sort();
    assert.deepEqual(await addrs(`interface_id=${w.access.id}`), ["10.1.1.1/24"]);
    assert.deepEqual(await addrs(`interface_id__n=${w.access.id}`), ["10.1.1.2/24"]);
    const cl = await create(s, "/api/virtualization/cluster-types/", { name: "CT" });
    const cluster = await create(s, "/api/virtualization/clusters/", { name: "C", type: cl.id });
    const vm = await create(s, "/api/virtualization/virtual-machines/", {
      name: "vm",
      cluster: cluster.id,
      status: "active",
    });
    const vif = await create(s, "/api/virtualization/interfaces/", { virtual_machine: vm.id, name: "v0" });
    await create(s, "/api/virtualization/interfaces/", { virtual_machine: vm.id, name: "v1" });
    await create(s, "/api/ipam/ip-addresses/", {
      address: "10.2.2.2/24",
      status: "active",
      assigned_object_type: "virtualization.vminterface",
      assigned_object_id: vif.id,
    });
    assert.deepEqual(await names("/api/virtualization/interfaces/?has_ip_addresses=true"), ["v0"]);
    assert.deepEqual(await names("/api/virtualization/interfaces/?ip_addresses=10.2.2.2/24"), ["v0"]);
    void ip;
  });

  it("config contexts by assignment, singular names as Nautobot", async () => {
    await create(s, "/api/extras/config-contexts/", { name: "c-site", data: {}, sites: [w.site.id] });
    await create(s, "/api/extras/config-contexts/", { name: "c-role", data: {}, roles: [w.role.id] });
    assert.deepEqual(await names("/api/extras/config-contexts/?site=s1"), ["c-site"]);
    assert.deepEqual(await names(`/api/extras/config-contexts/?role_id=${w.role.id}`), ["c-role"]);
    assert.deepEqual(await names("/api/extras/config-contexts/?site__n=s1"), ["c-role"]);
  });
});
