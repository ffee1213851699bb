/**
 * Issue 13: the cross-request read cache (nested objects, statuses, custom fields) is shared by requests on
 * both engines and never stale across processes: a change committed through one server is seen by the very
 * next read through another server on the same database (SQLite: `PRAGMA data_version`; PostgreSQL: the
 * transaction snapshot read when each request arrives). Definitions (statuses, custom fields, webhooks) are
 * cached apart from the data, under the definitions token that every change of one rewrites: reads and
 * writes through another server see a new definition at once.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("cross-request cache across processes", () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    a = await startServer();
    b = await startServer({}, { databaseUrl: a.databaseUrl });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  it("a write through one server is read at once through the other (REST nested objects and GraphQL)", async () => {
    const region = await create(a, "/api/dcim/regions/", { name: "R-0" });
    const site = await create(a, "/api/dcim/sites/", { name: "Cached", status: "active", region: region.id });
    for (let i = 1; i <= 25; i++) {
      // Warm B's cache with the current name, then rename through A and read through B immediately.
      const warm = await b.api(`/api/dcim/sites/${site.id}/`);
      assert.equal(warm.body.region.name, `R-${i - 1}`);
      const patched = await a.api(`/api/dcim/regions/${region.id}/`, {
        method: "PATCH",
        body: { name: `R-${i}` },
      });
      assert.equal(patched.status, 200);
      // A detail read takes its tokens in the row's own statement on PostgreSQL (kit.rowFor).
      const detail = await b.api(`/api/dcim/sites/${site.id}/`);
      assert.equal(detail.body.region.name, `R-${i}`, `REST detail read ${i} is fresh`);
      const brief = await b.api(`/api/dcim/regions/${region.id}/?brief=1`);
      assert.equal(brief.body.display, `R-${i}`, `REST brief read ${i} is fresh`);
      const rest = await b.api(`/api/dcim/sites/?name=Cached`);
      assert.equal(rest.body.results[0].region.name, `R-${i}`, `REST read ${i} is fresh`);
      const gql = await b.api("/api/graphql/", {
        method: "POST",
        body: { query: '{ sites(name: "Cached") { region { name } } }' },
      });
      assert.equal(gql.body.data.sites[0].region.name, `R-${i}`, `GraphQL read ${i} is fresh`);
    }
  });

  it("a cable changed through one server is traced fresh at once through the other", async () => {
    const site = await create(a, "/api/dcim/sites/", { name: "TraceSite", status: "active" });
    const man = await create(a, "/api/dcim/manufacturers/", { name: "TraceMan" });
    const dt = await create(a, "/api/dcim/device-types/", { model: "TraceT", manufacturer: man.id });
    const role = await create(a, "/api/dcim/device-roles/", { name: "TraceRole" });
    const ends = [];
    for (const name of ["trace-a", "trace-b"]) {
      const device = await create(a, "/api/dcim/devices/", {
        name,
        site: site.id,
        device_type: dt.id,
        device_role: role.id,
        status: "active",
      });
      ends.push(
        await create(a, "/api/dcim/interfaces/", { device: device.id, name: "eth0", type: "1000base-t" }),
      );
    }
    const cable = await create(a, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: ends[0].id,
      termination_b_type: "dcim.interface",
      termination_b_id: ends[1].id,
      status: "connected",
      label: "L-0",
    });
    for (let i = 1; i <= 10; i++) {
      // Warm B's traced cable, relabel it through A, and trace through B at once (kit.rowFor's tokens).
      const warm = await b.api(`/api/dcim/interfaces/${ends[0].id}/trace/`);
      assert.equal(warm.body[0][1].label, `L-${i - 1}`);
      const patched = await a.api(`/api/dcim/cables/${cable.id}/`, {
        method: "PATCH",
        body: { label: `L-${i}` },
      });
      assert.equal(patched.status, 200);
      const traced = await b.api(`/api/dcim/interfaces/${ends[0].id}/trace/`);
      assert.equal(traced.body[0][1].label, `L-${i}`, `trace ${i} is fresh`);
      assert.equal(traced.body[0][2].device.name, "trace-b");
    }
  });

  it("a new or changed definition through one server is used at once by the other's reads and writes", async () => {
    const site = await create(b, "/api/dcim/sites/", { name: "Defs", status: "active" });
    const warm = async () => {
      // Warm B's definitions: a write (validation, change log, webhooks) and a read of sites.
      const w = await b.api(`/api/dcim/sites/${site.id}/`, {
        method: "PATCH",
        body: { description: "warm" },
      });
      assert.equal(w.status, 200, JSON.stringify(w.body));
      assert.equal((await b.api(`/api/dcim/sites/${site.id}/`)).status, 200);
    };
    await warm();
    // A custom field created through A: B accepts it on a write and shows it on a read.
    const cf = await create(a, "/api/extras/custom-fields/", {
      name: "rack_owner",
      label: "Rack owner",
      type: "text",
      content_types: ["dcim.site"],
    });
    const withCf = await b.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { rack_owner: "ops" } },
    });
    assert.equal(withCf.status, 200, JSON.stringify(withCf.body));
    assert.equal(withCf.body.custom_fields.rack_owner, "ops");
    // A custom field with a default, created through A: B's next create, valid either way, gets the default
    // (on PostgreSQL B's write assumed the definitions it last read; its transaction's check finds them stale).
    await warm();
    await create(a, "/api/extras/custom-fields/", {
      name: "power_feed",
      type: "text",
      default: "A+B",
      content_types: ["dcim.site"],
    });
    const defaulted = await b.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Dflt", status: "active" },
    });
    assert.equal(defaulted.status, 201, JSON.stringify(defaulted.body));
    assert.equal(defaulted.body.custom_fields.power_feed, "A+B");
    const stored = await a.api(`/api/dcim/sites/${defaulted.body.id}/`);
    assert.equal(stored.body.custom_fields.power_feed, "A+B");
    // A status created through A for sites: B accepts it.
    await warm();
    await create(a, "/api/extras/statuses/", {
      name: "Burning",
      slug: "burning",
      content_types: ["dcim.site"],
    });
    const burning = await b.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { status: "burning" },
    });
    assert.equal(burning.status, 200, JSON.stringify(burning.body));
    assert.equal(burning.body.status.value, "burning");
    // A webhook created through A: B's next write queues a delivery for it.
    await warm();
    const rx = await startReceiver();
    try {
      const hook = await create(a, "/api/extras/webhooks/", {
        name: "defs hook",
        content_types: ["dcim.site"],
        type_update: true,
        payload_url: `${rx.url}/hook`,
      });
      await b.api(`/api/dcim/sites/${site.id}/`, { method: "PATCH", body: { description: "hooked" } });
      const queued = await a.api(`/api/extras/webhook-deliveries/?webhook_id=${hook.id}`);
      assert.equal(queued.body.count, 1, "B queued a delivery for A's new webhook");
    } finally {
      await rx.close();
    }
    // The custom field deleted through A: B's reads no longer show it.
    await warm();
    assert.equal((await a.api(`/api/extras/custom-fields/${cf.id}/`, { method: "DELETE" })).status, 204);
    const gone = await b.api(`/api/dcim/sites/${site.id}/`);
    assert.equal("rack_owner" in gone.body.custom_fields, false, JSON.stringify(gone.body.custom_fields));
    // A definition written through B itself is used by B's next request too.
    await create(b, "/api/extras/custom-fields/", {
      name: "floor",
      type: "integer",
      content_types: ["dcim.site"],
    });
    const own = await b.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { floor: 3 } },
    });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.custom_fields.floor, 3);
  });

  it("the first tag on a model, through one server, shows in the other's reads and its writes' responses", async () => {
    // Which models carry tags is kept with the definitions: B must not keep skipping the tag query.
    const names = (r: { body: { tags: Array<{ name: string }> } }) => r.body.tags.map((t) => t.name);
    const vrf = await create(b, "/api/ipam/vrfs/", { name: "tag-first" });
    assert.deepEqual((await b.api(`/api/ipam/vrfs/${vrf.id}/`)).body.tags, []);
    const tag = await create(a, "/api/extras/tags/", { name: "first-vrf-tag", slug: "first-vrf-tag" });
    const tagged = await a.api(`/api/ipam/vrfs/${vrf.id}/`, { method: "PATCH", body: { tags: [tag.id] } });
    assert.equal(tagged.status, 200, JSON.stringify(tagged.body));
    assert.deepEqual(names(tagged), ["first-vrf-tag"]);
    assert.deepEqual(names(await b.api(`/api/ipam/vrfs/${vrf.id}/`)), ["first-vrf-tag"]);
    const written = await b.api(`/api/ipam/vrfs/${vrf.id}/`, { method: "PATCH", body: { description: "x" } });
    assert.deepEqual(names(written), ["first-vrf-tag"]);
  });
});
