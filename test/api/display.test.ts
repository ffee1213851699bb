/**
 * `display` equals Nautobot 1.6's `__str__`/`display` in every form (full, brief, nested inside another
 * object), also where it reads a related object (issue 9: unnamed devices in a virtual chassis showed
 * `undefined:1`, tokens lacked the username).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("display strings", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  const both = async (path: string, id: string) => {
    const full = await s.api(`${path}${id}/`);
    const brief = await s.api(`${path}${id}/?brief=1`);
    assert.equal(brief.body.display, full.body.display);
    return full.body.display as string;
  };

  it("unnamed virtual-chassis members, device types, provider networks, tokens, relationships", async () => {
    const site = await create(s, "/api/dcim/sites/", { name: "S", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Juniper" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "EX4300" });
    assert.equal(await both("/api/dcim/device-types/", dt.id), "Juniper EX4300");
    const role = await create(s, "/api/dcim/device-roles/", { name: "Access" });
    const vc = await create(s, "/api/dcim/virtual-chassis/", { name: "stack1" });
    const member = await create(s, "/api/dcim/devices/", {
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
      virtual_chassis: vc.id,
      vc_position: 1,
    });
    assert.equal(await both("/api/dcim/devices/", member.id), `stack1:1 (${member.id})`);
    const lone = await create(s, "/api/dcim/devices/", {
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
    });
    assert.equal(await both("/api/dcim/devices/", lone.id), `Juniper EX4300 (${lone.id})`);
    const iface = await create(s, "/api/dcim/interfaces/", {
      device: member.id,
      name: "ge-0/0/0",
      type: "1000base-t",
    });
    assert.equal(iface.device.display, `stack1:1 (${member.id})`);
    const change = await s.api(`/api/extras/object-changes/?changed_object_id=${member.id}`);
    assert.equal(change.body.results[0].changed_object.display, `stack1:1 (${member.id})`);

    const provider = await create(s, "/api/circuits/providers/", { name: "Telia" });
    const net = await create(s, "/api/circuits/provider-networks/", {
      provider: provider.id,
      name: "Backbone",
    });
    assert.equal(await both("/api/circuits/provider-networks/", net.id), "Telia Backbone");

    const token = await create(s, "/api/users/tokens/", { description: "ci" });
    assert.equal(token.display, `${token.key.slice(-6)} (admin)`);
    assert.equal(await both("/api/users/tokens/", token.id), `${token.key.slice(-6)} (admin)`);

    const rel = await create(s, "/api/extras/relationships/", {
      name: "uplink_pair",
      type: "one-to-one",
      source_type: "dcim.device",
      destination_type: "dcim.device",
    });
    assert.equal(rel.display, "uplink pair");
  });
  it("count fields of created and updated objects count the rows pointing at them, a hook's too", async () => {
    // A created object's counts are known without a query when nothing else in the transaction could point
    // at it; a virtual chassis created with a master has one member, set by its hook in the same write.
    const site = await create(s, "/api/dcim/sites/", { name: "Count site", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Count mfr" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "C1" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Count role" });
    const dev = await create(s, "/api/dcim/devices/", {
      name: "count-master",
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
    });
    const vc = await create(s, "/api/dcim/virtual-chassis/", { name: "count-stack", master: dev.id });
    // Nautobot 1.6 leaves annotated counts out of a create's response (issue 24); the object has them.
    assert.equal("member_count" in vc, false);
    assert.equal((await s.api(`/api/dcim/virtual-chassis/${vc.id}/`)).body.member_count, 1);
    const logged = await s.api(`/api/extras/object-changes/?changed_object_id=${vc.id}`);
    assert.equal(logged.body.results[0].object_data.member_count, 1);
    // A device joining the chassis through its own write: the chassis counts it.
    const dev2 = await create(s, "/api/dcim/devices/", {
      name: "count-member-2",
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
      virtual_chassis: vc.id,
      vc_position: 2,
    });
    assert.equal(dev2.virtual_chassis.id, vc.id);
    // A plain update keeps the counts of what points at the object, in the response and the change log.
    const renamed = await s.api(`/api/dcim/virtual-chassis/${vc.id}/`, {
      method: "PATCH",
      body: { domain: "count.example" },
    });
    assert.equal(renamed.body.member_count, 2);
    const last = await s.api(`/api/extras/object-changes/?changed_object_id=${vc.id}&action=update&limit=1`);
    assert.equal(last.body.results[0].object_data.member_count, 2);
    assert.equal(last.body.results[0].object_data.domain, "count.example");
    const fresh = await create(s, "/api/tenancy/tenant-groups/", { name: "Count group" });
    assert.equal((await s.api(`/api/tenancy/tenant-groups/${fresh.id}/`)).body.tenant_count, 0);
    const [t1, t2] = (
      await s.api("/api/tenancy/tenants/", {
        method: "POST",
        body: [
          { name: "count-t1", group: fresh.id },
          { name: "count-t2", group: fresh.id },
        ],
      })
    ).body;
    assert.equal(t1.group.id, fresh.id);
    assert.equal(t2.group.id, fresh.id);
    assert.equal((await s.api(`/api/tenancy/tenant-groups/${fresh.id}/`)).body.tenant_count, 2);
  });
  it("nat_outside in a create's response, one by one and in bulk, matches a read afterwards", async () => {
    const inside = await create(s, "/api/ipam/ip-addresses/", { address: "10.77.0.1/24", status: "active" });
    assert.equal(inside.nat_outside, null);
    const outside = await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.77/32",
      status: "active",
      nat_inside: inside.id,
    });
    assert.equal(outside.nat_outside, null);
    assert.equal((await s.api(`/api/ipam/ip-addresses/${inside.id}/`)).body.nat_outside.id, outside.id);
    // Within one bulk: the second item points at the first by its address.
    const pair = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: [
        { address: "10.77.1.1/24", status: "active" },
        { address: "192.0.2.78/32", status: "active", nat_inside: { address: "10.77.1.1/24" } },
      ],
    });
    assert.equal(pair.status, 201, JSON.stringify(pair.body));
    assert.equal(pair.body[1].nat_inside.id, pair.body[0].id);
    assert.equal(pair.body[0].nat_outside?.id, pair.body[1].id);
    const logged = await s.api(`/api/extras/object-changes/?changed_object_id=${pair.body[0].id}`);
    assert.equal(logged.body.results[0].object_data.nat_outside?.id, pair.body[1].id);
    assert.equal(
      (await s.api(`/api/ipam/ip-addresses/${pair.body[0].id}/`)).body.nat_outside.id,
      pair.body[1].id,
    );
  });
});
