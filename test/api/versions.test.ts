/**
 * Issue 24, API versions: Nautobot 1.6.32 serves 1.2 to 1.6 with different serializers
 * (nautobot-models.md §0.2): tags have `content_types` from 1.3; interfaces and VM interfaces a `status`
 * from 1.4; an IP address's `nat_outside` is a list from 1.3 (1.2: one object, 412 when there are more);
 * custom fields have `name` up to 1.3 and `custom_fields` dicts are keyed by slug from 1.4.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("API versions 1.2 to 1.6", () => {
  let s: TestServer;
  const at = (v: string) => ({ Accept: `application/json; version=${v}` });
  let deviceId: string;
  before(async () => {
    s = await startServer();
    const site = await s.api("/api/dcim/sites/", { method: "POST", body: { name: "V1", status: "active" } });
    const maker = await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "Vm" } });
    const type = await s.api("/api/dcim/device-types/", {
      method: "POST",
      body: { model: "Vt", manufacturer: maker.body.id },
    });
    const role = await s.api("/api/dcim/device-roles/", { method: "POST", body: { name: "Vr" } });
    const dev = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: {
        name: "vd1",
        site: site.body.id,
        device_type: type.body.id,
        device_role: role.body.id,
        status: "active",
      },
    });
    assert.equal(dev.status, 201, JSON.stringify(dev.body));
    deviceId = dev.body.id;
  });
  after(async () => {
    await s.close();
  });

  it("tags: no content_types at 1.2 (every taggable type); required, read and written from 1.3", async () => {
    const old = await s.api("/api/extras/tags/", {
      method: "POST",
      body: { name: "Old", slug: "old", content_types: ["dcim.site"] },
    });
    assert.equal(old.status, 201, JSON.stringify(old.body));
    assert.equal("content_types" in old.body, false);
    const seen = await s.api(`/api/extras/tags/${old.body.id}/`, { headers: at("1.3") });
    assert.ok(seen.body.content_types.includes("dcim.device"), "a 1.2 tag applies to every taggable model");
    assert.ok(seen.body.content_types.length > 20);
    const missing = await s.api("/api/extras/tags/", {
      method: "POST",
      headers: at("1.3"),
      body: { name: "New", slug: "new" },
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { content_types: ["This field is required."] });
    const made = await s.api("/api/extras/tags/?api_version=1.6", {
      method: "POST",
      body: { name: "New", slug: "new", content_types: ["dcim.site"] },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual(made.body.content_types, ["dcim.site"]);
    const patched = await s.api(`/api/extras/tags/${made.body.id}/`, {
      method: "PATCH",
      headers: at("1.3"),
      body: { content_types: ["dcim.device", "ipam.prefix"] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.content_types, ["dcim.device", "ipam.prefix"]);
    assert.equal(patched.headers.get("api-version"), "1.3");
    // A PATCH at 1.2 leaves them as they are.
    await s.api(`/api/extras/tags/${made.body.id}/`, { method: "PATCH", body: { description: "x" } });
    const again = await s.api(`/api/extras/tags/${made.body.id}/?api_version=1.5`);
    assert.deepEqual(again.body.content_types, ["dcim.device", "ipam.prefix"]);
  });

  it("a tag applies to the models of its content types, which keep those in use (every API version)", async () => {
    const tag = await s.api("/api/extras/tags/?api_version=1.3", {
      method: "POST",
      body: { name: "Sites only", slug: "sites-only", content_types: ["dcim.site"] },
    });
    assert.equal(tag.status, 201, JSON.stringify(tag.body));
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Tagged", status: "active", tags: [tag.body.id] },
    });
    assert.equal(site.status, 201, JSON.stringify(site.body));
    for (const ref of [tag.body.id, { name: "Sites only" }]) {
      const bad = await s.api(`/api/dcim/devices/${deviceId}/`, { method: "PATCH", body: { tags: [ref] } });
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, {
        tags: [
          [
            typeof ref === "string"
              ? `Related object not found using the provided ID: ${tag.body.id}`
              : "Related object not found using the provided attributes: {'name': 'Sites only'}",
          ],
        ],
      });
    }
    const drop = await s.api(`/api/extras/tags/${tag.body.id}/`, {
      method: "PATCH",
      headers: at("1.3"),
      body: { content_types: ["dcim.device"] },
    });
    assert.equal(drop.status, 400);
    assert.deepEqual(drop.body, {
      content_types: ["Unable to remove dcim.site. Dependent objects were found."],
    });
    const widen = await s.api(`/api/extras/tags/${tag.body.id}/`, {
      method: "PATCH",
      headers: at("1.3"),
      body: { content_types: ["dcim.site", "dcim.device"] },
    });
    assert.equal(widen.status, 200, JSON.stringify(widen.body));
    const ok = await s.api(`/api/dcim/devices/${deviceId}/`, {
      method: "PATCH",
      body: { tags: [tag.body.id] },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it("migrate gives tags stored without content types (earlier releases) every taggable model", async () => {
    const tag = await s.api("/api/extras/tags/", {
      method: "POST",
      body: { name: "Legacy", slug: "legacy" },
    });
    await s.store.db.deleteFrom("extras_tag_content_types").where("source_id", "=", tag.body.id).execute();
    await s.store.db.deleteFrom("inventory_meta").where("key", "=", "tag_content_types_v1").execute();
    const run = spawnSync(process.execPath, ["src/main.ts", "migrate", "--database", s.databaseUrl], {
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    const after = await s.api(`/api/extras/tags/${tag.body.id}/?api_version=1.3`);
    assert.ok(after.body.content_types.includes("dcim.device"), JSON.stringify(after.body.content_types));
  });

  it("interfaces and VM interfaces: status from 1.4 only (1.2/1.3 store active)", async () => {
    const a = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      headers: at("1.3"),
      body: { device: deviceId, name: "e1", type: "1000base-t", status: "planned" },
    });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal("status" in a.body, false);
    const b = await s.api(`/api/dcim/interfaces/${a.body.id}/`, { headers: at("1.4") });
    assert.equal(b.body.status.value, "active");
    const c = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      headers: at("1.4"),
      body: { device: deviceId, name: "e2", type: "1000base-t" },
    });
    assert.equal(c.status, 400);
    assert.deepEqual(c.body, { status: ["This field is required."] });
    const d = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      headers: at("1.6"),
      body: { device: deviceId, name: "e2", type: "1000base-t", status: "planned" },
    });
    assert.equal(d.status, 201, JSON.stringify(d.body));
    assert.equal(d.body.status.value, "planned");
    const list = await s.api(`/api/dcim/interfaces/?device_id=${deviceId}`);
    assert.ok(list.body.results.every((r: any) => !("status" in r)));
  });

  it("IP addresses: nat_outside one object at 1.2 (412 with more), a list from 1.3", async () => {
    const inside = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "10.9.0.1/24", status: "active" },
    });
    const o1 = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "192.0.2.1/24", status: "active", nat_inside: inside.body.id },
    });
    assert.equal(o1.status, 201, JSON.stringify(o1.body));
    const one = await s.api(`/api/ipam/ip-addresses/${inside.body.id}/`);
    assert.equal(one.body.nat_outside.id, o1.body.id);
    const listed = await s.api(`/api/ipam/ip-addresses/${inside.body.id}/`, { headers: at("1.3") });
    assert.deepEqual(
      listed.body.nat_outside.map((o: any) => o.id),
      [o1.body.id],
    );
    await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "192.0.2.2/24", status: "active", nat_inside: inside.body.id },
    });
    const legacy = await s.api(`/api/ipam/ip-addresses/${inside.body.id}/`);
    assert.equal(legacy.status, 412);
    assert.match(legacy.body.detail, /does not conform to pre-1\.3 behavior/);
    const two = await s.api(`/api/ipam/ip-addresses/${inside.body.id}/?api_version=1.3`);
    assert.equal(two.status, 200);
    assert.equal(two.body.nat_outside.length, 2);
  });

  it("custom fields: `name` up to 1.3, custom_fields keyed by slug from 1.4", async () => {
    const cf = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: { name: "owner_name", slug: "owner_slug", content_types: ["dcim.site"], type: "text" },
    });
    assert.equal(cf.status, 201, JSON.stringify(cf.body));
    assert.equal(cf.body.name, "owner_name");
    const at14 = await s.api(`/api/extras/custom-fields/${cf.body.id}/`, { headers: at("1.4") });
    assert.equal("name" in at14.body, false);
    assert.equal(at14.body.slug, "owner_slug");
    const bare = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      headers: at("1.4"),
      body: { content_types: ["dcim.site"], type: "text" },
    });
    assert.equal(bare.status, 400);
    assert.deepEqual(bare.body, { label: ["This field is required."], slug: ["This field is required."] });
    const made = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      headers: at("1.4"),
      body: { label: "Rack Owner", slug: "rack_owner", content_types: ["dcim.site"], type: "text" },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const asOld = await s.api(`/api/extras/custom-fields/${made.body.id}/`);
    assert.equal(asOld.body.name, "rack_owner");
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      headers: at("1.4"),
      body: { name: "V2", status: "active", custom_fields: { owner_slug: "ops" } },
    });
    assert.equal(site.status, 201, JSON.stringify(site.body));
    assert.equal(site.body.custom_fields.owner_slug, "ops");
    const old = await s.api(`/api/dcim/sites/${site.body.id}/`, { headers: at("1.3") });
    assert.equal(old.body.custom_fields.owner_name, "ops");
    assert.equal("owner_slug" in old.body.custom_fields, false);
  });
});
