/**
 * Issue 28, non-atomic bulk writes (`?atomic=false`, an extension): each item of a bulk POST/PATCH/DELETE
 * or upsert is written in its own transaction, with its own change log entry and webhook delivery, and the
 * 207 answer lists each item's index, status and object or errors. Without the switch a bulk write stays all
 * or none (seed, Bulk operations 4).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Ajv } from "ajv";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("non-atomic bulk writes (?atomic=false)", () => {
  let s: TestServer;
  const count = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.count as number;
  };
  const changes = () => count("/api/extras/object-changes/?limit=1");
  const deliveries = () => count("/api/extras/webhook-deliveries/?limit=1");
  const sites = () => count("/api/dcim/sites/?limit=1");
  const site = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    slug: name,
    status: "active",
    ...extra,
  });

  before(async () => {
    s = await startServer();
    // Deliveries are queued with the change rows (no worker runs: they stay in the outbox to be counted).
    const r = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "bp-hook",
        content_types: ["dcim.site"],
        type_create: true,
        type_update: true,
        type_delete: true,
        payload_url: "http://127.0.0.1:9/bp",
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await s.close();
  });

  it("100 items with 7 invalid: 93 created, 7 errors naming their index and field", async () => {
    const bad = new Map<number, [Record<string, unknown>, string]>([
      [3, [{ slug: "bp-nameless", status: "active" }, "name"]],
      [17, [site("bp-17", { status: "no-such-status" }), "status"]],
      [29, [site("bp-00"), "name"]], // the name of item 0, already committed
      [41, [site("bp-41", { latitude: "north" }), "latitude"]],
      [58, [site("bp-58", { slug: "not a slug!" }), "slug"]],
      [77, [site("bp-77", { tenant: randomUUID() }), "tenant"]],
      [99, [site("bp-99", { asn: -5 }), "asn"]],
    ]);
    const items = Array.from(
      { length: 100 },
      (_, i) => bad.get(i)?.[0] ?? site(`bp-${String(i).padStart(2, "0")}`),
    );
    const [oc, dl, n] = [await changes(), await deliveries(), await sites()];
    const r = await s.api("/api/dcim/sites/?atomic=false", { method: "POST", body: items });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.equal(r.body.length, 100);
    for (const [i, res] of r.body.entries()) {
      assert.equal(res.index, i);
      const b = bad.get(i);
      if (b) {
        assert.equal(res.status, "failed", `item ${i}: ${JSON.stringify(res)}`);
        assert.ok(Array.isArray(res.errors[b[1]]), `item ${i} names ${b[1]}: ${JSON.stringify(res.errors)}`);
        assert.equal(res.object, undefined);
      } else {
        assert.equal(res.status, "created", `item ${i}: ${JSON.stringify(res)}`);
        assert.equal(res.object.name, items[i]!.name);
        assert.match(res.object.id, /^[0-9a-f-]{36}$/);
      }
    }
    assert.equal(await sites(), n + 93);
    assert.equal(await changes(), oc + 93, "one ObjectChange per created item");
    assert.equal(await deliveries(), dl + 93, "one webhook delivery per created item");
    const one = r.body[5].object;
    const log = await s.api(`/api/extras/object-changes/?changed_object_id=${one.id}`);
    assert.deepEqual(
      log.body.results.map((c: any) => c.action.value ?? c.action),
      ["create"],
    );
  });

  it("an item is judged as if alone after the earlier ones: a failed item's name is free for a later one", async () => {
    const r = await s.api("/api/dcim/sites/?atomic=false", {
      method: "POST",
      body: [site("bp-dep", { status: "bogus" }), site("bp-dep"), site("bp-dep")],
    });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => x.status),
      ["failed", "created", "failed"],
    );
    assert.ok(r.body[0].errors.status, JSON.stringify(r.body[0]));
    assert.ok(r.body[2].errors.name, JSON.stringify(r.body[2]));
    assert.equal(await count("/api/dcim/sites/?name=bp-dep"), 1);
  });

  it("PATCH: found items are updated, missing ids and invalid items fail on their own", async () => {
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: Array.from({ length: 8 }, (_, i) => site(`bp-patch-${i}`)),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const ids: string[] = made.body.map((o: any) => o.id);
    const missing = [randomUUID(), randomUUID()];
    const body = [
      ...ids.slice(0, 7).map((id) => ({ id, description: "patched" })),
      { id: missing[0], description: "x" },
      { id: ids[7], status: "bogus" },
      { id: missing[1], description: "y" },
      { description: "no id" },
    ];
    const [oc, dl] = [await changes(), await deliveries()];
    const r = await s.api("/api/dcim/sites/?atomic=false", { method: "PATCH", body });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.index, x.status]),
      body.map((_, i) => [i, i < 7 ? "updated" : "failed"]),
    );
    for (const x of r.body.slice(0, 7)) assert.equal(x.object.description, "patched");
    assert.deepEqual(r.body[7].errors, { id: [`Object with id ${missing[0]} does not exist.`] });
    assert.ok(r.body[8].errors.status, JSON.stringify(r.body[8]));
    assert.ok(r.body[9].errors.id, JSON.stringify(r.body[9]));
    assert.deepEqual(r.body[10].errors, { id: ["This field is required."] });
    assert.equal(await changes(), oc + 7);
    assert.equal(await deliveries(), dl + 7);
    const still = await s.api(`/api/dcim/sites/${ids[7]}/`);
    assert.equal(still.body.status.value, "active");
    assert.equal(still.body.description, "");
  });

  it("DELETE: found items are deleted, missing and malformed ids fail on their own", async () => {
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: Array.from({ length: 5 }, (_, i) => site(`bp-del-${i}`)),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const ids: string[] = made.body.map((o: any) => o.id);
    const missing = randomUUID();
    const body = [{ id: ids[0] }, { id: missing }, ...ids.slice(1).map((id) => ({ id })), { id: "nope" }];
    const [oc, dl, n] = [await changes(), await deliveries(), await sites()];
    const r = await s.api("/api/dcim/sites/?atomic=false", { method: "DELETE", body });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.index, x.status]),
      body.map((_, i) => [i, i === 1 || i === 6 ? "failed" : "deleted"]),
    );
    assert.deepEqual(r.body[1].errors, { id: [`Object with id ${missing} does not exist.`] });
    assert.deepEqual(r.body[6].errors, { id: ["Must be a valid UUID."] });
    assert.equal(await sites(), n - 5);
    assert.equal(await changes(), oc + 5);
    assert.equal(await deliveries(), dl + 5);
    for (const id of ids) assert.equal((await s.api(`/api/dcim/sites/${id}/`)).status, 404);
    // A protected delete (a manufacturer with a device type) fails on its own with the 409's detail.
    const mf = await s.api("/api/dcim/manufacturers/", {
      method: "POST",
      body: [
        { name: "bp-mf", slug: "bp-mf" },
        { name: "bp-mf2", slug: "bp-mf2" },
      ],
    });
    assert.equal(mf.status, 201, JSON.stringify(mf.body));
    const dt = await s.api("/api/dcim/device-types/", {
      method: "POST",
      body: { manufacturer: mf.body[0].id, model: "bp-dt", slug: "bp-dt" },
    });
    assert.equal(dt.status, 201, JSON.stringify(dt.body));
    const p = await s.api("/api/dcim/manufacturers/?atomic=false", {
      method: "DELETE",
      body: mf.body.map((m: any) => ({ id: m.id })),
    });
    assert.equal(p.status, 207, JSON.stringify(p.body));
    assert.deepEqual(
      p.body.map((x: any) => x.status),
      ["failed", "deleted"],
    );
    assert.match(p.body[0].errors.detail, /dependent objects/);
    assert.equal((await s.api(`/api/dcim/manufacturers/${mf.body[0].id}/`)).status, 200);
  });

  it("upsert: created, unchanged and failed items side by side", async () => {
    const first = await s.api("/api/dcim/sites/upsert/", { method: "POST", body: site("bp-up-0") });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const [oc, dl] = [await changes(), await deliveries()];
    const r = await s.api("/api/dcim/sites/upsert/?atomic=false", {
      method: "POST",
      body: [
        site("bp-up-0"),
        site("bp-up-1"),
        site("bp-up-2", { status: "bogus" }),
        site("bp-up-0", { description: "d" }),
      ],
    });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.index, x.status]),
      [
        [0, "unchanged"],
        [1, "created"],
        [2, "failed"],
        [3, "updated"],
      ],
    );
    assert.equal(r.body[0].object.id, first.body[0].object.id);
    assert.equal(r.body[3].object.description, "d");
    assert.ok(r.body[2].errors.status, JSON.stringify(r.body[2]));
    assert.equal(await changes(), oc + 2);
    assert.equal(await deliveries(), dl + 2);
    // A model without a natural key is one 400 for the request, not a failure per item.
    const note = await s.api("/api/extras/notes/upsert/?atomic=false", {
      method: "POST",
      body: [{ note: "x" }],
    });
    assert.equal(note.status, 400, JSON.stringify(note.body));
    assert.match(note.body.detail, /not supported/);
  });

  it("PUT: a complete item is replaced, one without a required field fails naming it", async () => {
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [site("bp-put-0"), site("bp-put-1")],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const [a, b] = made.body.map((o: any) => o.id);
    const oc = await changes();
    const r = await s.api("/api/dcim/sites/?atomic=false", {
      method: "PUT",
      body: [
        { id: a, ...site("bp-put-0", { description: "put" }) },
        { id: b, slug: "bp-put-1", status: "active" },
      ],
    });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.index, x.status]),
      [
        [0, "updated"],
        [1, "failed"],
      ],
    );
    assert.equal(r.body[0].object.description, "put");
    assert.deepEqual(r.body[1].errors, { name: ["This field is required."] });
    assert.equal(await changes(), oc + 1);
  });

  it("a stale _version fails that item with the 412's detail; a current one is updated", async () => {
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [site("bp-ver-0"), site("bp-ver-1")],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const [a, b] = made.body.map((o: any) => o.id);
    // The ETag is `"<id>:<version>"` (issue 26).
    const etag = (await s.api(`/api/dcim/sites/${b}/`)).headers.get("etag") ?? "";
    const current = Number(/:(\d+)"$/.exec(etag)?.[1]);
    assert.ok(current >= 1, etag);
    const r = await s.api("/api/dcim/sites/?atomic=false", {
      method: "PATCH",
      body: [
        { id: a, _version: 999, description: "stale" },
        { id: b, _version: current, description: "fresh" },
      ],
    });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => x.status),
      ["failed", "updated"],
    );
    assert.match(r.body[0].errors.detail, /Precondition failed/);
    assert.equal(r.body[1].object.description, "fresh");
    assert.equal((await s.api(`/api/dcim/sites/${a}/`)).body.description, "");
  });

  it("permissions: the model-level right is checked for the request, constraints per item", async () => {
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "bp-user", password: "pw-bp-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    const token = await createToken(s.store, u.body.id);
    const perm = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "bp-change-a",
        users: [u.body.id],
        object_types: ["dcim.site"],
        actions: ["view", "change"],
        constraints: { slug: "bp-perm-a" },
      },
    });
    assert.equal(perm.status, 201, JSON.stringify(perm.body));
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [site("bp-perm-a"), site("bp-perm-b")],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const [a, b] = made.body.map((o: any) => o.id);
    const [oc, n] = [await changes(), await sites()];
    const post = await s.api("/api/dcim/sites/?atomic=false", {
      method: "POST",
      body: [site("bp-perm-a2")],
      token,
    });
    assert.equal(post.status, 403, "a create needs add, for the whole request");
    const patch = await s.api("/api/dcim/sites/?atomic=false", {
      method: "PATCH",
      body: [
        { id: b, description: "outside" },
        { id: a, description: "inside" },
      ],
      token,
    });
    assert.equal(patch.status, 207, JSON.stringify(patch.body));
    assert.deepEqual(
      patch.body.map((x: any) => x.status),
      ["failed", "updated"],
    );
    assert.deepEqual(patch.body[0].errors, { id: [`Object with id ${b} does not exist.`] });
    const up = await s.api("/api/dcim/sites/upsert/?atomic=false", {
      method: "POST",
      body: [
        { name: "bp-perm-a", description: "again" },
        { name: "bp-perm-new", slug: "bp-perm-new", status: "active" },
      ],
      token,
    });
    assert.equal(up.status, 207, JSON.stringify(up.body));
    assert.deepEqual(
      up.body.map((x: any) => x.status),
      ["updated", "failed"],
    );
    assert.match(up.body[1].errors.detail, /permission/);
    assert.equal(await sites(), n);
    assert.equal(await changes(), oc + 2);
    assert.equal((await s.api(`/api/dcim/sites/${b}/`)).body.description, "");
  });

  it("is documented in the OpenAPI document, and a real 207 answer fits its schema", async () => {
    const doc = (await s.api("/api/swagger.json")).body;
    const sites = doc.paths["/dcim/sites/"];
    for (const op of [
      sites.post,
      sites.put,
      sites.patch,
      sites.delete,
      doc.paths["/dcim/sites/upsert/"].post,
    ]) {
      assert.ok(
        op.parameters.some((p: any) => p.name === "atomic" && p.in === "query"),
        op.operationId,
      );
      assert.ok(op.responses["207"], op.operationId);
    }
    assert.equal(sites.get.parameters.filter((p: any) => p.name === "atomic").length, 0);
    assert.equal(doc.paths["/extras/object-changes/"].post, undefined);
    const multi = sites.post.responses["207"].content["application/json"].schema;
    assert.equal(multi.items.$ref, "#/components/schemas/BulkItemResult");
    const validate = new Ajv({ strict: false }).compile({
      type: "array",
      items: doc.components.schemas.BulkItemResult,
    });
    const r = await s.api("/api/dcim/sites/?atomic=false", {
      method: "POST",
      body: [site("bp-doc-0"), site("bp-doc-1", { status: "bogus" })],
    });
    assert.equal(r.status, 207, JSON.stringify(r.body));
    assert.ok(validate(r.body), JSON.stringify(validate.errors));
    assert.ok(!validate([{ index: 0, status: "exploded" }]), "the schema can fail");
  });

  it("without the switch, one invalid item still writes nothing; a bad switch value is a 400", async () => {
    const [oc, dl, n] = [await changes(), await deliveries(), await sites()];
    const body = [site("bp-atomic-0"), site("bp-atomic-1", { status: "bogus" }), site("bp-atomic-2")];
    for (const q of ["", "?atomic=true"]) {
      const r = await s.api(`/api/dcim/sites/${q}`, { method: "POST", body });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.length, 3);
      assert.deepEqual(r.body[0], {});
      assert.ok(r.body[1].status);
    }
    assert.equal(await sites(), n);
    assert.equal(await changes(), oc);
    assert.equal(await deliveries(), dl);
    const bad = await s.api("/api/dcim/sites/?atomic=maybe", { method: "POST", body });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.ok(bad.body.atomic, JSON.stringify(bad.body));
    assert.equal(await sites(), n);
  });
});
