/**
 * Config-context schemas (JSON Schema validation of config contexts and local context data), secrets and
 * secrets groups, device and interface redundancy groups (issue 9). Bodies and messages as a running
 * Nautobot 1.6.32 answered the same requests.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("config-context schemas, secrets and redundancy groups", () => {
  let s: TestServer;
  let base: Record<string, unknown>;
  before(async () => {
    s = await startServer();
    const site = await create(s, "/api/dcim/sites/", { name: "S1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "R" });
    base = { device_type: dt.id, device_role: role.id, site: site.id, status: "active" };
  });
  after(async () => {
    await s.close();
  });

  it("schemas are checked, and config contexts and local context data validate against them", async () => {
    const schema = await create(s, "/api/extras/config-context-schemas/", {
      name: "ntp",
      data_schema: { type: "object", properties: { a: { type: "integer" } } },
    });
    assert.equal(schema.slug, "ntp");
    assert.equal(schema.owner, null);
    const bad = await s.api("/api/extras/config-context-schemas/", {
      method: "POST",
      body: { name: "bad", data_schema: { type: "bogus" } },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { data_schema: ["'bogus' is not valid under any of the given schemas"] });
    const notObj = await s.api("/api/extras/config-context-schemas/", {
      method: "POST",
      body: { name: "bad", data_schema: "x" },
    });
    assert.deepEqual(notObj.body, { data_schema: ["'x' is not of type 'object', 'boolean'"] });

    const cc = await s.api("/api/extras/config-contexts/", {
      method: "POST",
      body: { name: "c1", data: { a: "str" }, schema: schema.id },
    });
    assert.equal(cc.status, 400);
    assert.deepEqual(cc.body, {
      data: ["Validation using the JSON Schema ntp failed.", "'str' is not of type 'integer'"],
    });
    const ok = await create(s, "/api/extras/config-contexts/", {
      name: "c1",
      data: { a: 1 },
      schema: schema.id,
    });
    assert.equal(ok.schema.id, schema.id);
    assert.deepEqual(ok.device_redundancy_groups, []);

    const dev = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: { ...base, name: "d1", local_context_data: { a: "x" }, local_context_schema: schema.id },
    });
    assert.equal(dev.status, 400);
    assert.deepEqual(dev.body, {
      local_context_data: ["Validation using the JSON Schema ntp failed.", "'x' is not of type 'integer'"],
    });
    const noData = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: { ...base, name: "d1", local_context_schema: schema.id },
    });
    assert.deepEqual(noData.body, {
      local_context_schema: ["Local context data must exist for a schema to be applied."],
    });
    const good = await create(s, "/api/dcim/devices/", {
      ...base,
      name: "d1",
      local_context_data: { a: 2 },
      local_context_schema: schema.id,
    });
    assert.equal(good.local_context_schema.id, schema.id);
    // Changing the schema revalidates stored data on the next write of the device.
    const patched = await s.api(`/api/dcim/devices/${good.id}/`, {
      method: "PATCH",
      body: { local_context_data: { a: [] } },
    });
    assert.equal(patched.status, 400);
  });

  it("secrets: providers and parameters checked; groups list their secrets; values never served", async () => {
    const blank = await s.api("/api/extras/secrets/", {
      method: "POST",
      body: { name: "x", provider: "environment-variable", parameters: {} },
    });
    assert.deepEqual(blank.body, { parameters: ["This field cannot be blank."] });
    const nope = await s.api("/api/extras/secrets/", {
      method: "POST",
      body: { name: "x", provider: "nope", parameters: {} },
    });
    assert.deepEqual(nope.body, {
      parameters: ["This field cannot be blank."],
      provider: ['No registered provider "nope" is available'],
    });
    const rel = await s.api("/api/extras/secrets/", {
      method: "POST",
      body: { name: "x", provider: "text-file", parameters: { path: "etc/passwd" } },
    });
    assert.deepEqual(rel.body, { parameters: ["Path must be an absolute path, not a relative one"] });
    const sec = await create(s, "/api/extras/secrets/", {
      name: "Device password",
      provider: "environment-variable",
      parameters: { variable: "HOME" },
    });
    assert.equal(sec.slug, "device-password");
    assert.equal(JSON.stringify(sec).includes(process.env.HOME ?? "/root"), false);
    const group = await create(s, "/api/extras/secrets-groups/", { name: "Net" });
    assert.deepEqual(group.secrets, []);
    const assoc = await create(s, "/api/extras/secrets-groups-associations/", {
      group: group.id,
      secret: sec.id,
      access_type: "Generic",
      secret_type: "password",
    });
    assert.equal(assoc.display, "Net: Generic password: Device password");
    assert.equal(assoc.access_type, "Generic");
    const dup = await s.api("/api/extras/secrets-groups-associations/", {
      method: "POST",
      body: { group: group.id, secret: sec.id, access_type: "Generic", secret_type: "password" },
    });
    assert.deepEqual(dup.body, {
      non_field_errors: ["The fields group, access_type, secret_type must make a unique set."],
    });
    const got = await s.api(`/api/extras/secrets-groups/${group.id}/`);
    assert.equal(got.body.secrets.length, 1);
    assert.deepEqual(Object.keys(got.body.secrets[0]).sort(), [
      "access_type",
      "display",
      "id",
      "secret",
      "secret_type",
      "url",
    ]);
    const dev = await create(s, "/api/dcim/devices/", {
      ...base,
      name: "with-secrets",
      secrets_group: group.id,
    });
    assert.equal(dev.secrets_group.id, group.id);
  });

  it("device redundancy groups: priority rules, config contexts by group", async () => {
    const drg = await create(s, "/api/dcim/device-redundancy-groups/", {
      name: "Pair",
      status: "active",
      failover_strategy: "active-active",
    });
    assert.deepEqual(drg.failover_strategy, { value: "active-active", label: "Active/Active" });
    const plain = await create(s, "/api/dcim/device-redundancy-groups/", { name: "Plain", status: "active" });
    assert.equal(plain.failover_strategy, null);
    const noGroup = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: { ...base, name: "r1", device_redundancy_group_priority: 1 },
    });
    assert.deepEqual(noGroup.body, {
      device_redundancy_group_priority: [
        "Must assign a redundancy group when defining a redundancy group priority.",
      ],
    });
    const zero = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: { ...base, name: "r1", device_redundancy_group: drg.id, device_redundancy_group_priority: 0 },
    });
    assert.deepEqual(zero.body, {
      device_redundancy_group_priority: ["Ensure this value is greater than or equal to 1."],
    });
    const dev = await create(s, "/api/dcim/devices/", {
      ...base,
      name: "r1",
      device_redundancy_group: drg.id,
      device_redundancy_group_priority: 1,
    });
    assert.equal(dev.device_redundancy_group.id, drg.id);
    await create(s, "/api/extras/config-contexts/", {
      name: "pair-ctx",
      data: { ha: true },
      device_redundancy_groups: [drg.id],
    });
    const got = await s.api(`/api/dcim/devices/${dev.id}/`);
    assert.equal(got.body.config_context.ha, true);
    const other = await s.api("/api/dcim/devices/?name=with-secrets");
    assert.equal(other.body.results[0].config_context.ha, undefined);
    const members = await s.api(`/api/dcim/devices/?device_redundancy_group_id=${drg.id}`);
    assert.deepEqual(
      members.body.results.map((d: any) => d.name),
      ["r1"],
    );
  });

  it("interface redundancy groups list their interfaces through associations", async () => {
    const dev = await create(s, "/api/dcim/devices/", { ...base, name: "fw1" });
    const eth = await create(s, "/api/dcim/interfaces/", {
      device: dev.id,
      name: "eth0",
      type: "1000base-t",
    });
    const vip = await create(s, "/api/ipam/ip-addresses/", { address: "10.0.0.1/24", status: "active" });
    const grp = await create(s, "/api/dcim/interface-redundancy-groups/", {
      name: "VRRP 1",
      status: "active",
      protocol: "vrrp",
      protocol_group_id: "1",
      virtual_ip: vip.id,
    });
    assert.deepEqual(grp.protocol, { value: "vrrp", label: "VRRP" });
    assert.deepEqual(grp.interfaces, []);
    const a = await create(s, "/api/dcim/interface-redundancy-group-associations/", {
      interface_redundancy_group: grp.id,
      interface: eth.id,
      priority: 100,
    });
    assert.equal(a.display, "VRRP 1: fw1 eth0: 100");
    const brief = await s.api(`/api/dcim/interface-redundancy-group-associations/${a.id}/?brief=1`);
    assert.equal(brief.body.display, a.display);
    const dup = await s.api("/api/dcim/interface-redundancy-group-associations/", {
      method: "POST",
      body: { interface_redundancy_group: grp.id, interface: eth.id, priority: 50 },
    });
    assert.equal(dup.status, 400);
    const got = await s.api(`/api/dcim/interface-redundancy-groups/${grp.id}/`);
    assert.equal(got.body.interfaces.length, 1);
    assert.equal(got.body.interfaces[0].interface.id, eth.id);
    assert.equal(got.body.interfaces[0].priority, 100);
  });
});
