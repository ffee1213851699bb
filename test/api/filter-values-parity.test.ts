/**
 * Issue 24, invalid filter values answer as Nautobot 1.6.32 (compared side by side with
 * scripts/filter-values.ts): a malformed network on the IP filters matches nothing, a boolean that is none
 * is ignored, a blank value is no filter, an unknown interface kind matches nothing; where Nautobot answers
 * 400 the body is its body (dates, numbers, model choices, UUIDs), and GraphQL arguments go through the
 * same compiler. NUL bytes and over-long values stay 400 (issue 23).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("invalid filter values as Nautobot answers them", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "G3 Site", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "G3 M" });
    w.dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "G3 T" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "G3 Role" });
    w.dev = await create(s, "/api/dcim/devices/", {
      name: "g3-dev",
      device_type: w.dt.id,
      device_role: w.role.id,
      site: w.site.id,
      status: "active",
    });
    for (const [name, mgmt] of [
      ["e1", true],
      ["e2", false],
    ] as const)
      await create(s, "/api/dcim/interfaces/", {
        device: w.dev.id,
        name,
        type: "1000base-t",
        mgmt_only: mgmt,
        mtu: 1500,
      });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.0.1.0/24", status: "active" });
    await create(s, "/api/ipam/prefixes/", { prefix: "10.0.0.0/16", status: "active" });
    await create(s, "/api/ipam/ip-addresses/", { address: "10.0.1.5/24", status: "active" });
  });
  after(async () => {
    await s.close();
  });

  const count = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
    return r.body.count as number;
  };
  const bad = async (path: string, body: unknown) => {
    const r = await s.api(path);
    assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
    assert.deepEqual(r.body, body, path);
  };

  it("a malformed network on within, within_include, contains, parent matches nothing; a blank one is no filter", async () => {
    assert.equal(await count("/api/ipam/prefixes/?within=10.0.0.0/8"), 2);
    for (const q of ["within", "within_include", "contains"]) {
      for (const v of ["banana", "10.0.0.0/33", "-1"])
        assert.equal(await count(`/api/ipam/prefixes/?${q}=${encodeURIComponent(v)}`), 0, `${q}=${v}`);
      assert.equal(await count(`/api/ipam/prefixes/?${q}=`), 2, `${q}=`);
    }
    assert.equal(await count("/api/ipam/ip-addresses/?parent=banana"), 0);
    assert.equal(await count("/api/ipam/ip-addresses/?parent=10.0.0.0/8"), 1);
  });

  it("a boolean filter given no boolean is ignored (NullBooleanField)", async () => {
    assert.equal(await count("/api/dcim/interfaces/?mgmt_only=true"), 1);
    for (const v of ["maybe", "banana", "-1", ""]) {
      assert.equal(await count(`/api/dcim/interfaces/?mgmt_only=${v}`), 2, `mgmt_only=${v}`);
      assert.equal(await count(`/api/dcim/interfaces/?enabled=${v}`), 2, `enabled=${v}`);
      assert.equal(await count(`/api/dcim/devices/?is_full_depth=${v}`), 1, `is_full_depth=${v}`);
      assert.equal(await count(`/api/dcim/devices/?pass_through_ports=${v}`), 1, `pass_through_ports=${v}`);
    }
  });

  it("a blank value is no filter; an unknown interface kind matches nothing", async () => {
    for (const q of ["mtu", "mtu__gt", "name", "name__ic", "id", "id__n", "kind", "device_with_common_vc"])
      assert.equal(await count(`/api/dcim/interfaces/?${q}=`), 2, `${q}=`);
    assert.equal(await count("/api/dcim/interfaces/?mtu=1500&name="), 2);
    assert.equal(await count("/api/dcim/interfaces/?kind=banana"), 0);
    assert.equal(await count("/api/dcim/interfaces/?kind=physical"), 2);
    assert.equal(await count("/api/ipam/prefixes/?mask_length="), 2);
    assert.equal(await count("/api/ipam/prefixes/?mask_length=-1"), 0);
    assert.equal(await count("/api/ipam/prefixes/?mask_length=24"), 1);
    assert.equal(await count("/api/ipam/services/?port=1.5"), 0);
  });

  it("400 bodies are Nautobot's: dates, numbers, model choices, UUIDs", async () => {
    await bad("/api/dcim/sites/?created=banana", { created: ["Enter a valid date."] });
    await bad("/api/dcim/sites/?created__gte=2020-02-30", { created__gte: ["Enter a valid date."] });
    await bad("/api/dcim/sites/?last_updated=banana", { last_updated: ["Enter a valid date/time."] });
    assert.equal(await count("/api/dcim/sites/?created__gte=2000-01-01"), 1);
    assert.equal(await count("/api/dcim/sites/?last_updated__gte=2000-01-01T00:00:00Z"), 1);
    await bad("/api/ipam/prefixes/?mask_length=banana", { mask_length: ["Enter a number."] });
    await bad("/api/ipam/prefixes/?mask_length__gte=x", { mask_length__gte: ["Enter a number."] });
    await bad("/api/ipam/prefixes/?family=banana", { family: ["Enter a number."] });
    await bad("/api/ipam/services/?port=banana", { port: ["Enter a number."] });
    await bad("/api/dcim/sites/?region_id=banana", {
      region_id: ["Select a valid choice. banana is not one of the available choices."],
    });
    const none = "00000000-0000-4000-8000-000000000000";
    await bad(`/api/dcim/sites/?region_id=${none}`, {
      region_id: [`Select a valid choice. ${none} is not one of the available choices.`],
    });
    await bad(`/api/dcim/devices/?site_id=${none}`, {
      site_id: [`Select a valid choice. ${none} is not one of the available choices.`],
    });
    assert.equal(await count(`/api/dcim/devices/?site_id=${w.site.id}`), 1);
    await bad("/api/ipam/prefixes/?present_in_vrf=banana", {
      present_in_vrf: ["Select a valid choice. That choice is not one of the available choices."],
    });
    await bad("/api/ipam/vlans/?available_on_device=banana", {
      available_on_device: ["Enter a valid UUID."],
    });
    await bad("/api/dcim/interfaces/?device_with_common_vc=banana", {
      device_with_common_vc: ["Enter a valid UUID."],
    });
  });

  it('GraphQL arguments go through the same compiler: prefixes(within: "banana") is []', async () => {
    const q = async (query: string) => {
      const r = await s.api("/api/graphql/", { method: "POST", body: { query } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };
    assert.deepEqual(await q('{ prefixes(within: "banana") { prefix } }'), { data: { prefixes: [] } });
    assert.deepEqual(await q('{ prefixes(within: "10.0.0.0/8") { prefix } }'), {
      data: { prefixes: [{ prefix: "10.0.0.0/16" }, { prefix: "10.0.1.0/24" }] },
    });
    assert.deepEqual(await q("{ interfaces(mgmt_only: true) { name } }"), {
      data: { interfaces: [{ name: "e1" }] },
    });
  });

  it("NUL bytes and over-long values stay 400 (issue 23)", async () => {
    assert.equal((await s.api("/api/ipam/prefixes/?within=%00")).status, 400);
    assert.equal((await s.api(`/api/ipam/prefixes/?within=${"1".repeat(1001)}`)).status, 400);
    assert.equal((await s.api("/api/dcim/interfaces/?mgmt_only=%00")).status, 400);
  });
});
