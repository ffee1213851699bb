/**
 * Issue 26, conditional requests: every object has a version raised by every write to it (side effects
 * included), shown as a strong ETag; If-None-Match answers 304 without a body (detail and list, JSON and
 * the browsable API); If-Match on PUT/PATCH/DELETE answers 412 and changes nothing; bulk items name their
 * version under `_version`, and one stale item makes the whole request a 412 naming it, with no row, change
 * record or webhook delivery written.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("conditional requests (ETag, If-None-Match, If-Match, bulk _version)", () => {
  let s: TestServer;
  let site: any;
  let device: any;
  let deviceType: any;
  let role: any;
  before(async () => {
    s = await startServer();
    site = await create(s, "/api/dcim/sites/", { name: "cond-site", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "cond-mfr" });
    deviceType = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "cond-dt" });
    role = await create(s, "/api/dcim/device-roles/", { name: "cond-role" });
    device = await create(s, "/api/dcim/devices/", {
      name: "cond-dev",
      site: site.id,
      device_type: deviceType.id,
      device_role: role.id,
      status: "active",
    });
  });
  after(async () => {
    await s.close();
  });

  const etag = async (path: string, headers: Record<string, string> = {}) => {
    const r = await s.api(path, { headers });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const tag = r.headers.get("etag");
    assert.ok(tag, `no ETag on ${path}`);
    return tag;
  };
  const count = async (path: string) =>
    (await s.api(`${path}${path.includes("?") ? "&" : "?"}limit=1`)).body.count;

  it("GET of an object returns a strong ETag that every write changes, and If-None-Match answers 304", async () => {
    const path = `/api/dcim/sites/${site.id}/`;
    const first = await etag(path);
    assert.match(first, /^"[^"]+"$/, "a strong (unweighted), quoted tag");
    assert.equal(await etag(path), first, "stable while nothing changes");
    const hit = await s.api(path, { headers: { "If-None-Match": first } });
    assert.equal(hit.status, 304);
    assert.equal(hit.body, null, "no body on 304");
    assert.equal(hit.headers.get("etag"), first);
    const weak = await s.api(path, { headers: { "If-None-Match": `"other", W/${first}` } });
    assert.equal(weak.status, 304, "If-None-Match compares weakly and takes a list");
    assert.equal((await s.api(path, { method: "PATCH", body: { description: "v2" } })).status, 200);
    const second = await etag(path);
    assert.notEqual(second, first);
    const miss = await s.api(path, { headers: { "If-None-Match": first } });
    assert.equal(miss.status, 200);
    assert.equal(miss.body.description, "v2");
    // A write that changes only tags still changes the version.
    const tag = await create(s, "/api/extras/tags/", { name: "cond-tag", content_types: ["dcim.site"] });
    await s.api(path, { method: "PATCH", body: { tags: [tag.id] } });
    assert.notEqual(await etag(path), second);
    // The browsable API (HTML) revalidates too.
    const html = await s.api(path, { headers: { Accept: "text/html" } });
    assert.equal(html.status, 200);
    const htmlHit = await s.api(path, {
      headers: { Accept: "text/html", "If-None-Match": html.headers.get("etag")! },
    });
    assert.equal(htmlHit.status, 304);
    assert.equal(htmlHit.body, null);
  });

  it("side effects raise the version of the objects they change (a cable's interface)", async () => {
    const a = await create(s, "/api/dcim/interfaces/", {
      device: device.id,
      name: "se-a",
      type: "1000base-t",
    });
    const b = await create(s, "/api/dcim/interfaces/", {
      device: device.id,
      name: "se-b",
      type: "1000base-t",
    });
    const before = await etag(`/api/dcim/interfaces/${a.id}/`);
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: a.id,
      termination_b_type: "dcim.interface",
      termination_b_id: b.id,
      status: "connected",
    });
    assert.notEqual(
      await etag(`/api/dcim/interfaces/${a.id}/`),
      before,
      "cable endpoint written: new version",
    );
  });

  it("If-Match on PATCH, PUT and DELETE: 412 naming the current ETag when stale, nothing changed", async () => {
    const t = await create(s, "/api/tenancy/tenants/", { name: "im-tenant" });
    const path = `/api/tenancy/tenants/${t.id}/`;
    const v1 = await etag(path);
    const ok = await s.api(path, {
      method: "PATCH",
      body: { description: "a" },
      headers: { "If-Match": v1 },
    });
    assert.equal(ok.status, 200);
    const v2 = await etag(path);
    const changesBefore = await count(`/api/extras/object-changes/?changed_object_id=${t.id}`);
    for (const [method, body] of [
      ["PATCH", { description: "lost" }],
      ["PUT", { name: "im-tenant", description: "lost" }],
      ["DELETE", undefined],
    ] as const) {
      const stale = await s.api(path, { method, body, headers: { "If-Match": v1 } });
      assert.equal(stale.status, 412, `${method}: ${JSON.stringify(stale.body)}`);
      assert.equal(stale.body.etag, v2, "the body names the current ETag");
      assert.match(stale.body.detail, /changed/);
      assert.equal(stale.headers.get("etag"), v2);
    }
    const now = await s.api(path);
    assert.equal(now.status, 200, "not deleted");
    assert.equal(now.body.description, "a", "not changed");
    assert.equal(await etag(path), v2);
    assert.equal(
      await count(`/api/extras/object-changes/?changed_object_id=${t.id}`),
      changesBefore,
      "no change record",
    );
    // A list of tags matches if any does; `*` matches any version; no header behaves as Nautobot.
    const list = await s.api(path, {
      method: "PATCH",
      body: { description: "b" },
      headers: { "If-Match": `${v1}, ${v2}` },
    });
    assert.equal(list.status, 200);
    assert.equal(
      (await s.api(path, { method: "PATCH", body: { description: "c" }, headers: { "If-Match": "*" } }))
        .status,
      200,
    );
    assert.equal((await s.api(path, { method: "PATCH", body: { description: "d" } })).status, 200);
    const weak = await s.api(path, {
      method: "PATCH",
      body: { description: "e" },
      headers: { "If-Match": `W/${await etag(path)}` },
    });
    assert.equal(weak.status, 412, "If-Match compares strongly: a weak tag never matches");
    const del = await s.api(path, { method: "DELETE", headers: { "If-Match": await etag(path) } });
    assert.equal(del.status, 204);
    const gone = await s.api(path, {
      method: "PATCH",
      body: { description: "f" },
      headers: { "If-Match": v1 },
    });
    assert.equal(gone.status, 404, "a missing object is a 404 as without the header");
  });

  it("a bulk PATCH of 500 interfaces with one stale _version: 412 naming exactly that item, nothing written", async () => {
    await create(s, "/api/extras/webhooks/", {
      name: "cond-hook",
      content_types: ["dcim.interface"],
      type_create: true,
      type_update: true,
      type_delete: true,
      payload_url: "http://127.0.0.1:9/cond",
    });
    const made = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      body: Array.from({ length: 500 }, (_, i) => ({
        device: device.id,
        name: `bulk${i}`,
        type: "1000base-t",
      })),
    });
    assert.equal(made.status, 201);
    const ids: string[] = made.body.map((o: any) => o.id);
    const listPath = `/api/dcim/interfaces/?device_id=${device.id}&name__isw=bulk&limit=1000`;
    const pageBefore = await etag(listPath);
    const versions = new Map<string, number>();
    for (const id of ids) {
      const tag = await etag(`/api/dcim/interfaces/${id}/`);
      versions.set(id, Number(/:(\d+)"$/.exec(tag)![1]));
    }
    const staleAt = 317;
    const staleId = ids[staleAt]!;
    assert.equal(
      (await s.api(`/api/dcim/interfaces/${staleId}/`, { method: "PATCH", body: { description: "other" } }))
        .status,
      200,
    );
    const pageAfterOther = await etag(listPath);
    assert.notEqual(pageAfterOther, pageBefore, "the page's ETag changes when one row on it does");
    const changes = await count("/api/extras/object-changes/?changed_object_type=dcim.interface");
    const deliveries = await count("/api/extras/webhook-deliveries/");
    const r = await s.api("/api/dcim/interfaces/", {
      method: "PATCH",
      body: ids.map((id) => ({ id, _version: versions.get(id), description: "bulk" })),
    });
    assert.equal(r.status, 412, JSON.stringify(r.body).slice(0, 500));
    assert.equal(r.body.stale.length, 1);
    assert.equal(r.body.stale[0].index, staleAt);
    assert.equal(r.body.stale[0].id, staleId);
    assert.equal(r.body.stale[0]._version, versions.get(staleId));
    assert.equal(r.body.stale[0].current, versions.get(staleId)! + 1);
    assert.match(r.body.detail, new RegExp(`item ${staleAt}, id ${staleId}`));
    assert.equal(await etag(listPath), pageAfterOther, "0 rows changed (no version moved)");
    assert.equal(
      await count(`/api/dcim/interfaces/?device_id=${device.id}&description=bulk`),
      0,
      "0 rows changed",
    );
    assert.equal(
      await count("/api/extras/object-changes/?changed_object_type=dcim.interface"),
      changes,
      "no ObjectChange",
    );
    assert.equal(await count("/api/extras/webhook-deliveries/"), deliveries, "no webhook delivery");
    // With the current version the same bulk succeeds, and items without `_version` expect nothing.
    versions.set(staleId, versions.get(staleId)! + 1);
    const ok = await s.api("/api/dcim/interfaces/", {
      method: "PATCH",
      body: ids.map((id, i) =>
        i % 2 ? { id, description: "bulk" } : { id, _version: versions.get(id), description: "bulk" },
      ),
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 500));
    assert.equal(await count(`/api/dcim/interfaces/?device_id=${device.id}&description=bulk`), 500);
    assert.ok(!("_version" in ok.body[0]), "bodies unchanged: no version key");
    // A `_version` that is not a positive integer is a 400 naming the field at its item.
    const bad = await s.api("/api/dcim/interfaces/", {
      method: "PATCH",
      body: [
        { id: ids[0], description: "x" },
        { id: ids[1], _version: "2", description: "x" },
      ],
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body[0], {});
    assert.ok(bad.body[1]._version, JSON.stringify(bad.body));
    // Bulk DELETE: a stale item refuses the whole delete.
    const del = await s.api("/api/dcim/interfaces/", {
      method: "DELETE",
      body: [{ id: ids[0] }, { id: ids[1], _version: 1 }],
    });
    assert.equal(del.status, 412);
    assert.deepEqual(
      del.body.stale.map((x: any) => [x.index, x.id]),
      [[1, ids[1]]],
    );
    assert.equal((await s.api(`/api/dcim/interfaces/${ids[0]}/`)).status, 200, "nothing deleted");
  });

  it("If-None-Match of an unchanged page of 1,000 devices: 304 with no body; any change on it: 200", async () => {
    const made = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: Array.from({ length: 1000 }, (_, i) => ({
        name: `page-dev-${String(i).padStart(4, "0")}`,
        site: site.id,
        device_type: deviceType.id,
        device_role: role.id,
        status: "active",
      })),
    });
    assert.equal(made.status, 201);
    const path = "/api/dcim/devices/?name__isw=page-dev-&limit=1000";
    const full = await s.api(path);
    assert.equal(full.body.results.length, 1000);
    const tag = full.headers.get("etag")!;
    assert.ok(tag);
    const hit = await s.api(path, { headers: { "If-None-Match": tag } });
    assert.equal(hit.status, 304);
    assert.equal(hit.body, null, "no body");
    assert.equal(hit.headers.get("etag"), tag);
    // Another page, another format: other tags.
    assert.equal(
      (await s.api(path.replace("limit=1000", "limit=999"), { headers: { "If-None-Match": tag } })).status,
      200,
    );
    const html = await s.api(path, { headers: { Accept: "text/html", "If-None-Match": tag } });
    assert.equal(html.status, 200, "the HTML page has its own tag");
    const htmlHit = await s.api(path, {
      headers: { Accept: "text/html", "If-None-Match": html.headers.get("etag")! },
    });
    assert.equal(htmlHit.status, 304);
    // A change of one row on the page, or of the set of rows, changes the tag.
    await s.api(`/api/dcim/devices/${made.body[500].id}/`, { method: "PATCH", body: { serial: "changed" } });
    const changed = await s.api(path, { headers: { "If-None-Match": tag } });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.results.length, 1000);
    const tag2 = changed.headers.get("etag")!;
    assert.notEqual(tag2, tag);
    await s.api(`/api/dcim/devices/${made.body[999].id}/`, { method: "DELETE" });
    const fewer = await s.api(path, { headers: { "If-None-Match": tag2 } });
    assert.equal(fewer.status, 200);
    assert.equal(fewer.body.count, 999);
  });
});
