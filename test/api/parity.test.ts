/**
 * Issue 9, parity fixes seen side by side with Nautobot 1.6.32: a PUT carries every required field (DRF),
 * `/health` answers, and a webhook's `http_method` is a plain string on the wire.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

describe("parity with Nautobot 1.6.32", () => {
  let s: TestServer;
  let site: string;
  before(async () => {
    s = await startServer();
    site = (await s.api("/api/dcim/sites/", { method: "POST", body: { name: "P", status: "active" } })).body
      .id;
  });
  after(async () => {
    await s.close();
  });

  it("PUT without a required field is a 400 naming it, single and bulk; nothing changes", async () => {
    const one = await s.api(`/api/dcim/sites/${site}/`, { method: "PUT", body: { name: "x" } });
    assert.equal(one.status, 400);
    assert.deepEqual(one.body, { status: ["This field is required."] });
    const bulk = await s.api("/api/dcim/sites/", { method: "PUT", body: [{ id: site, name: "x" }] });
    assert.equal(bulk.status, 400);
    // Nautobot 1.6.32 answers a bulk PUT with the failing item's errors, not a per-item list.
    assert.deepEqual(bulk.body, { status: ["This field is required."] });
    assert.equal((await s.api(`/api/dcim/sites/${site}/`)).body.name, "P");
    const full = await s.api(`/api/dcim/sites/${site}/`, {
      method: "PUT",
      body: { name: "x", status: "active" },
    });
    assert.equal(full.status, 200, JSON.stringify(full.body));
    assert.equal(full.body.slug, "p", "an omitted slug keeps its value");
  });

  it("/health answers without a database; /health/ is Nautobot's (test/api/small-parity.test.ts)", async () => {
    const r = await fetch(`${s.url}/health`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { status: "ok" });
  });

  it("a webhook's http_method is a plain string", async () => {
    const r = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "w",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: "http://192.0.2.1/x",
        http_method: "PUT",
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.http_method, "PUT");
    const bad = await s.api(`/api/extras/webhooks/${r.body.id}/`, {
      method: "PATCH",
      body: { http_method: "BREW" },
    });
    assert.equal(bad.status, 400);
    assert.ok(Array.isArray(bad.body.http_method));
  });

  it("/api/status/ counts running webhook workers where Nautobot counts Celery workers", async () => {
    const idle = await s.api("/api/status/");
    assert.equal(idle.body["celery-workers-running"], 0, "this test server runs no worker");
    const w = await startServer({}, { worker: {} });
    try {
      const n = await waitUntil(async () => {
        const r = await w.api("/api/status/");
        return r.body["celery-workers-running"] === 1 ? 1 : undefined;
      });
      assert.equal(n, 1);
      await w.worker!.stop();
      assert.equal(
        (await w.api("/api/status/")).body["celery-workers-running"],
        0,
        "a stopped worker leaves",
      );
    } finally {
      await w.close();
    }
  });

  it("at API 1.2 tags accept and ignore content_types; any tag tags any taggable object", async () => {
    const tag = await s.api("/api/extras/tags/", {
      method: "POST",
      body: { name: "OnlySites", slug: "onlysites", color: "ff0000", content_types: ["dcim.site"] },
    });
    assert.equal(tag.status, 201, JSON.stringify(tag.body));
    assert.equal(tag.body.content_types, undefined, "not on the wire at 1.2");
    const odd = await s.api("/api/extras/tags/", {
      method: "POST",
      body: { name: "Odd", slug: "odd", color: "00ff00", content_types: ["nope.nope"] },
    });
    assert.equal(odd.status, 201, "ignored, as Nautobot 1.6 at API 1.2 does");
    const vlan = await s.api("/api/ipam/vlans/", {
      method: "POST",
      body: { vid: 77, name: "v77", status: "active", tags: [tag.body.id] },
    });
    assert.equal(vlan.status, 201, JSON.stringify(vlan.body));
    assert.deepEqual(
      vlan.body.tags.map((t: { slug: string }) => t.slug),
      ["onlysites"],
    );
  });
});
