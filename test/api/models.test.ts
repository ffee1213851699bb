/**
 * Generic per-model CRUD over HTTP, for every writable model in the registry: create, read (full and
 * brief), list, filter by id, update (PUT), partial update (PATCH), uniqueness violation, delete.
 * Inputs come from test/helpers/world.ts; a model without a sample fails the suite.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildWorld, SAMPLES, specialCreate, type World } from "../helpers/world.ts";

const reg = registry();

/**
 * Models where posting the same body twice is allowed (Nautobot 1.6): duplicate prefixes/IPs in the global
 * table (ENFORCE_GLOBAL_UNIQUE off), services, tokens, permissions, VC names, unparented inventory items.
 */
const ALLOW_DUPLICATES = new Set([
  "ipam.prefix",
  "ipam.ipaddress",
  "ipam.service",
  "users.token",
  "users.objectpermission",
  "dcim.virtualchassis",
  "dcim.inventoryitem",
  "extras.note",
  "extras.computedfield",
]);
const writable = [...reg.models.values()]
  .filter((m) => !m.readOnly)
  .sort((a, b) => a.key.localeCompare(b.key));

describe("per-model CRUD", () => {
  let s: TestServer;
  let w: World;
  let n = 1;
  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
  });
  after(async () => {
    await s.close();
  });

  it("has a sample for every writable model", () => {
    const missing = writable.map((m) => m.key).filter((k) => !SAMPLES[k]);
    assert.deepEqual(missing, []);
  });

  for (const model of writable) {
    const sample = SAMPLES[model.key];
    if (!sample) continue;
    it(`${model.key}: create, read, brief, list, PUT, PATCH, unique, delete`, async () => {
      const i = n++;
      const body = (await specialCreate(s, w, model.key, i)) ?? sample.create(w, i);
      const created = await s.api(sample.path, { method: "POST", body });
      assert.equal(created.status, 201, `create: ${JSON.stringify(created.body)}`);
      const obj = created.body;
      assert.match(obj.id, /^[0-9a-f-]{36}$/);
      assert.equal(obj.url, `${s.url}${sample.path}${obj.id}/`);
      assert.equal(typeof obj.display, "string");
      if (model.changelog) {
        assert.match(obj.created, /^\d{4}-\d{2}-\d{2}$/);
        assert.match(obj.last_updated, /^\d{4}-\d{2}-\d{2}T.*Z$/);
      }
      if (model.customFields) assert.equal(typeof obj.custom_fields, "object");
      if (model.tags) assert.ok(Array.isArray(obj.tags));

      // Every related object given in the body is rendered nested: display, id, url + its nested fields.
      for (const [name, fd] of model.fieldList) {
        if (fd.kind !== "fk" || typeof (body as Record<string, unknown>)[name] !== "string") continue;
        const nestedObj = obj[name];
        assert.ok(nestedObj && typeof nestedObj === "object", `${name} nested`);
        // Less the annotated counts, which a related object lacks in Nautobot 1.6 (issue 24).
        const target = reg.get(fd.to);
        const extra = (fd.nestedFields ?? target.nested).filter((n) => {
          const d = target.fields[n];
          return !(
            (d?.kind === "count" && !d.property) ||
            (d?.kind === "computed" && d.annotation === "absent")
          );
        });
        assert.deepEqual(
          Object.keys(nestedObj).sort(),
          ["display", "id", "url", ...extra].sort(),
          `${model.key}.${name} nested shape`,
        );
        assert.equal(nestedObj.id, (body as Record<string, unknown>)[name]);
        assert.match(
          nestedObj.url,
          new RegExp(`^${s.url}/api/${reg.get(fd.to).app}/${reg.get(fd.to).path}/${nestedObj.id}/$`),
        );
      }

      const got = await s.api(`${sample.path}${obj.id}/`);
      assert.equal(got.status, 200);
      assert.equal(got.body.id, obj.id);
      assert.equal(got.body.display, obj.display);

      const brief = await s.api(`${sample.path}${obj.id}/?brief=1`);
      assert.equal(brief.status, 200);
      // A bare generic relation is its `<name>_id` in nested forms (Nautobot's nested association).
      const nestedKeys = model.nested.map((k) => {
        const fd = model.fields[k];
        return fd?.kind === "gfk" && fd.bare ? `${k}_id` : k;
      });
      assert.deepEqual(Object.keys(brief.body).sort(), ["display", "id", "url", ...nestedKeys].sort());

      const list = await s.api(`${sample.path}?id=${obj.id}`);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      assert.equal(list.body.count, 1);
      assert.equal(list.body.results[0].id, obj.id);

      const patched = await s.api(`${sample.path}${obj.id}/`, { method: "PATCH", body: sample.patch });
      assert.equal(patched.status, 200, `patch: ${JSON.stringify(patched.body)}`);
      for (const [k, v] of Object.entries(sample.patch)) {
        const got2 = patched.body[k];
        const value = got2 && typeof got2 === "object" && "value" in got2 ? got2.value : got2;
        assert.deepEqual(value, v, `patched ${k}`);
      }

      if (model.key !== "dcim.cable" && model.key !== "users.token") {
        const { id: _ignored, ...putBody } = body as Record<string, unknown>;
        const put = await s.api(`${sample.path}${obj.id}/`, { method: "PUT", body: putBody });
        assert.equal(put.status, 200, `put: ${JSON.stringify(put.body)}`);
      }

      if (sample.unique || !ALLOW_DUPLICATES.has(model.key)) {
        const dupBody = { ...(body as Record<string, unknown>) };
        if (sample.unique === "asset_tag") {
          await s.api(`${sample.path}${obj.id}/`, { method: "PATCH", body: { asset_tag: `AT-${i}` } });
          dupBody.asset_tag = `AT-${i}`;
          dupBody.name = `other-${i}`;
        }
        const dup = await s.api(sample.path, { method: "POST", body: dupBody });
        assert.equal(dup.status, 400, `duplicate must fail: ${JSON.stringify(dup.body)}`);
        const keys = Object.keys(dup.body);
        assert.ok(keys.length > 0, JSON.stringify(dup.body));
        if (sample.unique) {
          assert.ok(
            keys.includes(sample.unique) || keys.includes("non_field_errors") || keys.includes("__all__"),
            JSON.stringify(dup.body),
          );
        }
      }

      const del = await s.api(`${sample.path}${obj.id}/`, { method: "DELETE" });
      assert.equal(del.status, 204, `delete: ${JSON.stringify(del.body)}`);
      assert.equal(del.body, null);
      assert.equal((await s.api(`${sample.path}${obj.id}/`)).status, 404);
    });
  }

  const PROTECTED: Array<[string, string]> = [
    ["/api/dcim/sites/", "site"],
    ["/api/dcim/racks/", "rack"],
    ["/api/dcim/manufacturers/", "manufacturer"],
    ["/api/dcim/device-types/", "devicetype"],
    ["/api/dcim/device-roles/", "devicerole"],
    ["/api/tenancy/tenants/", "tenant"],
    ["/api/virtualization/clusters/", "cluster"],
    ["/api/virtualization/cluster-types/", "clustertype"],
    ["/api/circuits/providers/", "provider"],
    ["/api/circuits/circuit-types/", "circuittype"],
    ["/api/ipam/vlan-groups/", "vlangroup"],
    ["/api/dcim/location-types/", "locationtype"],
  ];
  for (const [path, key] of PROTECTED) {
    it(`protected delete: ${path} in use answers 409 and deletes nothing`, async () => {
      const r = await s.api(`${path}${w[key]}/`, { method: "DELETE" });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.match(r.body.detail, /^Unable to delete object\. \d+ dependent objects were found: /);
      assert.equal((await s.api(`${path}${w[key]}/`)).status, 200);
    });
  }

  it("nests parents in children (device → site, rack, type, role)", async () => {
    const d = await s.api(`/api/dcim/devices/${w.device}/`);
    assert.equal(d.status, 200);
    assert.deepEqual(Object.keys(d.body.site).sort(), ["display", "id", "name", "slug", "url"]);
    assert.equal(d.body.site.id, w.site);
    assert.equal(d.body.rack.id, w.rack);
    assert.equal(d.body.device_type.manufacturer.id, w.manufacturer);
    assert.equal(d.body.device_role.id, w.devicerole);
    const v = await s.api(`/api/ipam/vlans/${w.vlan}/`);
    // A related object carries no annotated counts (Nautobot 1.6 loads it through the relation; issue 24).
    assert.deepEqual(Object.keys(v.body.group).sort(), ["display", "id", "name", "slug", "url"]);
  });
});
