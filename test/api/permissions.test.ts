/**
 * Issue 5, permissions: object permissions as Nautobot 1.6 (nautobot-api-core.md §8) with constraints in
 * the API's query language; OPTIONS and Allow follow what the user may do.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("object permissions", () => {
  let s: TestServer;
  let alice: { id: string; token: string };
  const as = (path: string, init: { method?: string; body?: unknown } = {}) =>
    s.api(path, { ...init, token: alice.token });

  before(async () => {
    s = await startServer();
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "alice", password: "pw-alice-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    alice = { id: u.body.id, token: await createToken(s.store, u.body.id) };
    for (const [name, status] of [
      ["Active 1", "active"],
      ["Planned 1", "planned"],
    ])
      assert.equal((await s.api("/api/dcim/sites/", { method: "POST", body: { name, status } })).status, 201);
  });
  after(async () => {
    await s.close();
  });

  async function grant(body: Record<string, unknown>): Promise<string> {
    const r = await s.api("/api/users/permissions/", {
      method: "POST",
      body: { name: `p-${Math.random()}`, users: [alice.id], ...body },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id;
  }

  it("without a permission: 403 on reads and writes, OPTIONS without actions, Allow without methods", async () => {
    assert.equal((await as("/api/dcim/sites/")).status, 403);
    assert.equal(
      (await as("/api/dcim/sites/", { method: "POST", body: { name: "x", status: "active" } })).status,
      403,
    );
    const o = await as("/api/dcim/sites/", { method: "OPTIONS" });
    assert.equal(o.status, 200);
    assert.equal("actions" in o.body, false);
    assert.equal(o.headers.get("allow"), "OPTIONS");
  });

  it("view constraints restrict lists and details (404 outside)", async () => {
    await grant({ object_types: ["dcim.site"], actions: ["view"], constraints: { status: "active" } });
    const list = await as("/api/dcim/sites/");
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.results.map((r: any) => r.name),
      ["Active 1"],
    );
    assert.equal(list.body.count, 1);
    const planned = await s.api("/api/dcim/sites/?name=Planned 1");
    assert.equal((await as(`/api/dcim/sites/${planned.body.results[0].id}/`)).status, 404);
    const o = await as("/api/dcim/sites/", { method: "OPTIONS" });
    assert.equal("actions" in o.body, false, "no POST choices without add permission");
    assert.equal(o.headers.get("allow"), "GET, HEAD, OPTIONS");
    assert.equal(
      (await as("/api/dcim/sites/", { method: "POST", body: { name: "x", status: "active" } })).status,
      403,
    );
  });

  it("add/change constraints: writes landing outside are 403 with nothing changed", async () => {
    await grant({
      object_types: ["dcim.site"],
      actions: ["add", "change"],
      constraints: [{ status: "active" }],
    });
    const bad = await as("/api/dcim/sites/", { method: "POST", body: { name: "Sneaky", status: "planned" } });
    assert.equal(bad.status, 403);
    assert.equal((await s.api("/api/dcim/sites/?name=Sneaky")).body.count, 0, "rolled back");
    const bulkBad = await as("/api/dcim/sites/", {
      method: "POST",
      body: [
        { name: "Ok A", status: "active" },
        { name: "Bad B", status: "planned" },
      ],
    });
    assert.equal(bulkBad.status, 403);
    assert.equal((await s.api("/api/dcim/sites/?name=Ok A")).body.count, 0, "bulk rolled back");
    const ok = await as("/api/dcim/sites/", { method: "POST", body: { name: "Fine", status: "active" } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const move = await as(`/api/dcim/sites/${ok.body.id}/`, { method: "PATCH", body: { status: "planned" } });
    assert.equal(move.status, 403);
    assert.equal((await s.api(`/api/dcim/sites/${ok.body.id}/`)).body.status.value, "active");
    const o = await as("/api/dcim/sites/", { method: "OPTIONS" });
    assert.ok(o.body.actions.POST.status.choices.length > 0, "choices listed with add permission");
    assert.ok(o.body.actions.PUT);
    assert.equal(o.headers.get("allow"), "GET, POST, PUT, PATCH, HEAD, OPTIONS");
  });

  it("permissions through a group; bulk delete of an object outside the constraints is a 400 naming it", async () => {
    const g = await s.api("/api/users/groups/", { method: "POST", body: { name: "ops" } });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    assert.equal(
      (await s.api(`/api/users/users/${alice.id}/`, { method: "PATCH", body: { groups: [g.body.id] } }))
        .status,
      200,
    );
    const p = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "ops-delete",
        groups: [g.body.id],
        object_types: ["dcim.site"],
        actions: ["delete"],
        constraints: { name__isw: "Del" },
      },
    });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    const a = await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Del 1", status: "active" } });
    const b = await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Keep 1", status: "active" } });
    const bulk = await as("/api/dcim/sites/", {
      method: "DELETE",
      body: [{ id: a.body.id }, { id: b.body.id }],
    });
    assert.equal(bulk.status, 400);
    assert.deepEqual(bulk.body[0], {});
    assert.match(bulk.body[1].id[0], new RegExp(b.body.id));
    assert.equal((await s.api(`/api/dcim/sites/${a.body.id}/`)).status, 200, "nothing deleted");
    assert.equal((await as(`/api/dcim/sites/${b.body.id}/`, { method: "DELETE" })).status, 404);
    assert.equal((await as(`/api/dcim/sites/${a.body.id}/`, { method: "DELETE" })).status, 204);
  });

  it("retrying webhook deliveries needs change permission on webhooks", async () => {
    const none = "00000000-0000-4000-8000-000000000000";
    assert.equal((await as(`/api/extras/webhook-deliveries/${none}/retry/`, { method: "POST" })).status, 403);
    assert.equal((await as(`/api/extras/webhooks/${none}/retry-failed/`, { method: "POST" })).status, 403);
    await grant({ object_types: ["extras.webhook"], actions: ["change"] });
    assert.equal((await as(`/api/extras/webhooks/${none}/retry-failed/`, { method: "POST" })).status, 404);
  });

  it("constraints and actions are checked when a permission is saved", async () => {
    const bad = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "bad",
        object_types: ["dcim.site"],
        actions: ["view", "fly"],
        constraints: { nonsense: "x", status: "active" },
      },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.actions, ['Invalid action "fly".']);
    assert.deepEqual(bad.body.constraints, [
      "Invalid constraint for dcim.site: nonsense: Unknown filter field",
    ]);
  });

  it("$user in constraints means the requesting user; read-only tokens cannot write", async () => {
    await grant({ object_types: ["extras.objectchange"], actions: ["view"], constraints: { user: "$user" } });
    const mine = await as("/api/extras/object-changes/");
    assert.equal(mine.status, 200);
    assert.ok(mine.body.count >= 1);
    assert.ok(mine.body.results.every((r: any) => r.user_name === "alice"));
    const ro = await createToken(s.store, alice.id, { writeEnabled: false });
    const r = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "RO", status: "active" },
      token: ro,
    });
    assert.equal(r.status, 403);
  });
});
