/**
 * OPTIONS metadata as Nautobot 1.6.32 gives it (issue 24), compared with a running Nautobot 1.6.32:
 * the newest serializer described at every API version, nested `children` of nested serializers (tags,
 * nested FKs, primary IPs) and `child` of lists, DRF field types ("field" for method and choice fields),
 * the integer columns' `min_value`/`max_value` (enforced on write too), and the view's `description`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

const options = async (s: TestServer, path: string, version?: string) => {
  const r = await s.api(path, {
    method: "OPTIONS",
    headers: version ? { Accept: `application/json; version=${version}` } : {},
  });
  assert.equal(r.status, 200);
  return r.body;
};

describe("OPTIONS metadata as Nautobot 1.6.32", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("describes the newest serializer at every API version", async () => {
    for (const v of [undefined, "1.2", "1.3", "1.6"]) {
      const i = (await options(s, "/api/dcim/interfaces/", v)).actions.POST;
      assert.equal(i.status?.required, true, `interface status at ${v}`);
      assert.ok(
        i.status.choices.some((c: { value: string }) => c.value === "planned"),
        `status choices at ${v}`,
      );
      const vi = (await options(s, "/api/virtualization/interfaces/", v)).actions.POST;
      assert.equal(vi.status?.required, true);
      const cf = (await options(s, "/api/extras/custom-fields/", v)).actions.POST;
      assert.equal(cf.name, undefined, `custom field name at ${v}`);
      assert.equal(cf.label.required, true);
      assert.equal(cf.slug.required, true);
      const t = (await options(s, "/api/extras/tags/", v)).actions.POST;
      assert.equal(t.content_types?.type, "field");
    }
  });

  it("gives nested serializers their children, lists their child", async () => {
    const d = (await options(s, "/api/dcim/devices/")).actions.POST;
    assert.deepEqual(Object.keys(d.tags.child.children), [
      "display",
      "id",
      "url",
      "name",
      "slug",
      "color",
      "created",
      "last_updated",
    ]);
    const mf = d.device_type.children.manufacturer;
    assert.equal(mf.type, "nested object");
    assert.equal(mf.read_only, true);
    assert.deepEqual(Object.keys(mf.children), ["display", "id", "url", "name", "slug", "devicetype_count"]);
    assert.deepEqual(Object.keys(d.primary_ip.children), ["display", "id", "url", "family", "address"]);
    assert.equal(d.primary_ip.type, "nested object");
    assert.equal(d.primary_ip.children.family.type, "integer");
    assert.equal(d.primary_ip4.children.family.type, "integer");
    assert.equal(d.virtual_chassis.children.master.type, "nested object");
    assert.ok(d.virtual_chassis.children.master.children.name);
    const i = (await options(s, "/api/dcim/interfaces/")).actions.POST;
    for (const n of ["lag", "bridge", "parent_interface"]) {
      assert.deepEqual(Object.keys(i[n].children), ["display", "id", "url", "device", "name", "cable"], n);
      assert.equal(i[n].children.device.type, "nested object");
      assert.equal(i[n].children.device.read_only, true);
      assert.deepEqual(i[n].children.cable, {
        type: "field",
        required: false,
        read_only: false,
        label: "Cable",
      });
    }
    const vm = (await options(s, "/api/virtualization/virtual-machines/")).actions.POST;
    assert.ok(vm.site.children.slug);
    assert.ok(vm.primary_ip.children.address);
    const ip = (await options(s, "/api/ipam/ip-addresses/")).actions.POST;
    assert.equal(ip.nat_outside.type, "field");
    assert.equal(ip.nat_outside.child.type, "nested object");
    assert.ok(ip.nat_outside.child.children.address);
    const sg = (await options(s, "/api/extras/secrets-groups/")).actions.POST;
    assert.equal(sg.secrets.child.type, "nested object");
  });

  it("names DRF field types as Nautobot's serializers have them", async () => {
    const i = (await options(s, "/api/dcim/interfaces/")).actions.POST;
    for (const n of ["cable_peer", "cable_peer_type", "connected_endpoint", "connected_endpoint_reachable"])
      assert.equal(i[n].type, "field", n);
    const d = (await options(s, "/api/dcim/devices/")).actions.POST;
    assert.equal(d.config_context.type, "field");
    assert.equal(d.parent_device.type, "field");
    const p = (await options(s, "/api/ipam/prefixes/")).actions.POST;
    assert.equal(p.family.type, "field");
    assert.equal(p.location.children.tree_depth.type, "field");
    const pl = (await options(s, "/api/dcim/platforms/")).actions.POST;
    assert.equal(pl.network_driver_mappings.type, "field");
  });

  it("gives integer columns their bounds, and enforces them", async () => {
    const d = (await options(s, "/api/dcim/devices/")).actions.POST;
    assert.equal(d.position.min_value, 1);
    assert.equal(d.position.max_value, 32767);
    const pf = (await options(s, "/api/dcim/power-feeds/")).actions.POST;
    assert.equal(pf.voltage.min_value, -32768);
    assert.equal(pf.voltage.max_value, 32767);
    const vm = (await options(s, "/api/virtualization/virtual-machines/")).actions.POST;
    assert.equal(vm.memory.max_value, 2147483647);
    for (const path of ["/api/extras/custom-links/", "/api/extras/computed-fields/", "/api/ipam/roles/"]) {
      const w = (await options(s, path)).actions.POST.weight;
      assert.equal(w.min_value, 0, path);
      assert.equal(w.max_value, 32767, path);
    }
    const r = await s.api("/api/ipam/roles/", {
      method: "POST",
      body: { name: "Heavy", slug: "heavy", weight: 40000 },
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { weight: ["Ensure this value is less than or equal to 32767."] });
    const ok = await s.api("/api/ipam/roles/", {
      method: "POST",
      body: { name: "Max", slug: "max", weight: 32767 },
    });
    assert.equal(ok.status, 201);
  });

  it("gives the view's description", async () => {
    assert.equal(
      (await options(s, "/api/extras/webhooks/")).description,
      "Manage Webhooks through DELETE, GET, POST, PUT, and PATCH requests.",
    );
    assert.equal(
      (await options(s, "/api/extras/statuses/")).description,
      "View and manage custom status choices for objects with a `status` field.",
    );
    assert.equal((await options(s, "/api/dcim/devices/")).description, "");
  });
});
