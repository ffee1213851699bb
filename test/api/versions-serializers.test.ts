/**
 * Issue 24, serializer rules that Nautobot 1.6.32 applies whatever the API version, seen side by side with
 * it: a VM interface written through the REST API without a status becomes `active`, on update too and at
 * every version (`VMInterfaceSerializerVersion12.validate`, inherited by the 1.4+ `VMInterfaceSerializer`);
 * a custom field's slug comes from its label (`label or name`, `CustomField.slug` populated from the label)
 * at API 1.2/1.3, and from 1.4 the slug must be given.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("version-dependent serializer rules as Nautobot 1.6.32", () => {
  let s: TestServer;
  const at = (v: string) => ({ Accept: `application/json; version=${v}` });
  let vm: string;
  before(async () => {
    s = await startServer();
    const ct = await s.api("/api/virtualization/cluster-types/", { method: "POST", body: { name: "Sct" } });
    const cl = await s.api("/api/virtualization/clusters/", {
      method: "POST",
      body: { name: "Scl", type: ct.body.id },
    });
    const made = await s.api("/api/virtualization/virtual-machines/", {
      method: "POST",
      body: { name: "svm", cluster: cl.body.id, status: "active" },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    vm = made.body.id;
  });
  after(async () => {
    await s.close();
  });

  it("a VM interface written without a status becomes active, on update and at every version", async () => {
    const made = await s.api("/api/virtualization/interfaces/", {
      method: "POST",
      headers: at("1.6"),
      body: { name: "eth0", virtual_machine: vm, status: "planned" },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.status.value, "planned");
    const url = `/api/virtualization/interfaces/${made.body.id}/`;
    const statusNow = async () => (await s.api(url, { headers: at("1.6") })).body.status.value;
    // 1.6 PATCH without a status: active (as Nautobot answers it).
    const p16 = await s.api(url, { method: "PATCH", headers: at("1.6"), body: { description: "a" } });
    assert.equal(p16.status, 200, JSON.stringify(p16.body));
    assert.equal(p16.body.status.value, "active");
    // A status given at 1.6 is kept.
    const kept = await s.api(url, { method: "PATCH", headers: at("1.6"), body: { status: "planned" } });
    assert.equal(kept.body.status.value, "planned");
    assert.equal(await statusNow(), "planned");
    // 1.3 and 1.2 have no status on the wire: every update makes it active, a given one is ignored.
    for (const v of ["1.3", "1.2"]) {
      await s.api(url, { method: "PATCH", headers: at("1.6"), body: { status: "planned" } });
      const old = await s.api(url, {
        method: "PATCH",
        headers: at(v),
        body: { status: "failed", mtu: 1500 },
      });
      assert.equal(old.status, 200, JSON.stringify(old.body));
      assert.equal("status" in old.body, false);
      assert.equal(await statusNow(), "active", `after a PATCH at ${v}`);
    }
    // The bulk PATCH as well.
    await s.api(url, { method: "PATCH", headers: at("1.6"), body: { status: "planned" } });
    const bulk = await s.api("/api/virtualization/interfaces/", {
      method: "PATCH",
      headers: at("1.2"),
      body: [{ id: made.body.id, description: "bulk" }],
    });
    assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
    assert.equal(await statusNow(), "active");
    // A 1.6 PUT still has to name the (required) status.
    const put = await s.api(url, {
      method: "PUT",
      headers: at("1.6"),
      body: { name: "eth0", virtual_machine: vm },
    });
    assert.equal(put.status, 400);
    assert.deepEqual(put.body, { status: ["This field is required."] });
  });

  it("a custom field's slug comes from its label at 1.2/1.3 and must be given from 1.4", async () => {
    const cf = (v: string, body: Record<string, unknown>) =>
      s.api("/api/extras/custom-fields/", {
        method: "POST",
        headers: at(v),
        body: { type: "text", content_types: ["dcim.site"], ...body },
      });
    const labelled = await cf("1.2", { name: "sf_one", label: "Rack Owner" });
    assert.equal(labelled.status, 201, JSON.stringify(labelled.body));
    assert.equal(labelled.body.slug, "rack_owner");
    const dashes = await cf("1.3", { name: "sf_two", label: "uplink-speed x" });
    assert.equal(dashes.body.slug, "uplink_speed_x");
    const bare = await cf("1.2", { name: "sf_three" });
    assert.deepEqual([bare.body.label, bare.body.slug], ["sf_three", "sf_three"]);
    const given = await cf("1.3", { name: "sf_four", label: "Four", slug: "sf_custom" });
    assert.equal(given.body.slug, "sf_custom");
    const noSlug = await cf("1.6", { label: "Only a label" });
    assert.equal(noSlug.status, 400);
    assert.deepEqual(noSlug.body, { slug: ["This field is required."] });
    const both = await cf("1.6", { label: "Both", slug: "sf_both" });
    assert.equal(both.status, 201, JSON.stringify(both.body));
    const seen = await s.api(`/api/extras/custom-fields/${both.body.id}/?api_version=1.2`);
    assert.deepEqual([seen.body.name, seen.body.slug, seen.body.label], ["sf_both", "sf_both", "Both"]);
  });
});
