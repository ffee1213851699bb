/**
 * Issue 5, bulk operations (seed, Bulk operations 1–4): all-or-none for every verb, errors aligned with
 * the input, request order kept, 409 naming the blocking objects, one change-log event per object with the
 * request's request_id.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("bulk operations", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("bulk create keeps request order; a failing item creates nothing and errors align with the input", async () => {
    const bad = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: [{ name: "t-a" }, {}, { name: "t-c" }],
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body[0], {});
    assert.deepEqual(Object.keys(bad.body[1]), ["name"]);
    assert.deepEqual(bad.body[2], {});
    assert.equal((await s.api("/api/tenancy/tenants/?name=t-a")).body.count, 0);
    const ok = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: ["zz", "aa", "mm"].map((n) => ({ name: `order-${n}` })),
    });
    assert.equal(ok.status, 201);
    assert.deepEqual(
      ok.body.map((t: any) => t.name),
      ["order-zz", "order-aa", "order-mm"],
    );
  });

  it("bulk PUT/PATCH update all or none, in request order", async () => {
    const created = (
      await s.api("/api/tenancy/tenants/", {
        method: "POST",
        body: ["b1", "b2", "b3"].map((n) => ({ name: n })),
      })
    ).body;
    const patch = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [
        { id: created[2].id, description: "third" },
        { id: created[0].id, description: "first" },
      ],
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    assert.deepEqual(
      patch.body.map((t: any) => t.description),
      ["third", "first"],
    );
    const failing = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [
        { id: created[0].id, description: "changed" },
        { id: created[1].id, name: "" },
      ],
    });
    assert.equal(failing.status, 400);
    assert.equal((await s.api(`/api/tenancy/tenants/${created[0].id}/`)).body.description, "first", "none");
    const put = await s.api("/api/tenancy/tenants/", {
      method: "PUT",
      body: [{ id: created[1].id, name: "b2-renamed" }],
    });
    assert.equal(put.status, 200);
    assert.equal(put.body[0].name, "b2-renamed");
    const missing = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [{ id: created[0].id }, { description: "no id" }],
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body[1], { id: ["This field is required."] });
    const unknown = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [{ id: "00000000-0000-4000-8000-000000000000", description: "x" }],
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body[0].id[0], /00000000-0000-4000-8000-000000000000/);
  });

  it("bulk writes sent together (PostgreSQL batches their rows) behave as one by one", async () => {
    // A duplicate within one bulk is caught by the uniqueness check of the later item: the earlier row
    // must be visible to it although its INSERT was queued.
    const dup = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: [{ name: "q-dup" }, { name: "q-other" }, { name: "q-dup" }],
    });
    assert.equal(dup.status, 400, JSON.stringify(dup.body));
    assert.deepEqual(dup.body[0], {});
    assert.deepEqual(Object.keys(dup.body[2]), ["name"]);
    assert.equal((await s.api("/api/tenancy/tenants/?name=q-other")).body.count, 0, "none written");
    // Rows of different shapes (with and without optional columns) in one bulk, in request order.
    const mixed = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: [{ name: "q-1" }, { name: "q-2", description: "two", comments: "c" }, { name: "q-3" }],
    });
    assert.equal(mixed.status, 201, JSON.stringify(mixed.body));
    const [a, b, c] = mixed.body;
    const read = async (id: string) => (await s.api(`/api/tenancy/tenants/${id}/`)).body;
    assert.equal((await read(b.id)).comments, "c");
    // One object listed twice in a bulk PATCH: the later item wins, as it would one by one; the change log
    // has one update per object.
    const twice = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: [
        { id: a.id, description: "first" },
        { id: c.id, description: "c" },
        { id: a.id, description: "second" },
        { id: b.id, comments: "" },
      ],
    });
    assert.equal(twice.status, 200, JSON.stringify(twice.body));
    assert.equal((await read(a.id)).description, "second");
    assert.equal((await read(c.id)).description, "c");
    assert.equal((await read(b.id)).comments, "");
    assert.equal((await read(b.id)).description, "two");
    const oc = await s.api(`/api/extras/object-changes/?changed_object_id=${a.id}&action=update`);
    assert.equal(oc.body.count, 1, JSON.stringify(oc.body).slice(0, 600));
    assert.equal(oc.body.results[0].object_data.description, "second");
  });

  it("a bulk create whose unique fields are checked together gives what one-by-one creates give", async () => {
    // The items' unique fields are checked together after their rows are written; a clash runs the bulk
    // again item by item, so generated slugs and positional errors are those of one-by-one creates.
    const first = await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: "Dz Alpha" } });
    assert.equal(first.body.slug, "dz-alpha");
    const slugs = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: [{ name: "dz alpha" }, { name: "Dz Beta" }, { name: "dz beta" }, { name: "Dz Gamma" }],
    });
    assert.equal(slugs.status, 201, JSON.stringify(slugs.body));
    assert.deepEqual(
      slugs.body.map((t: any) => t.slug),
      ["dz-alpha-2", "dz-beta", "dz-beta-2", "dz-gamma"],
    );
    // A name stored before, then one given twice: the later of the two fails, and nothing is written.
    const clash = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: [
        { name: "Dz Delta" },
        { name: "Dz Alpha" },
        { name: "Dz Eps", slug: "dz-e" },
        { name: "Dz Zeta", slug: "dz-e" },
      ],
    });
    assert.equal(clash.status, 400, JSON.stringify(clash.body));
    assert.deepEqual(clash.body[0], {});
    assert.deepEqual(clash.body[1], { name: ["tenant with this name already exists."] });
    assert.deepEqual(clash.body[2], {});
    assert.deepEqual(clash.body[3], { slug: ["tenant with this slug already exists."] });
    assert.equal((await s.api("/api/tenancy/tenants/?name=Dz Delta")).body.count, 0, "none written");
    const oc = await s.api(`/api/extras/object-changes/?changed_object_type=tenancy.tenant&limit=1000`);
    const logged = oc.body.results.filter((c: any) => /^dz /i.test(String(c.object_data?.name ?? "")));
    assert.equal(logged.length, 5, "one change per tenant created, none for the bulk that ran twice");
  });

  it("text of every kind is stored exactly, one by one and in bulk", async () => {
    // PostgreSQL sends a transaction's first statement with BEGIN, its values written in as literals, and
    // bulk rows as JSON: quotes, backslashes, placeholders-lookalikes and non-ASCII must come back unchanged.
    const texts = [
      "it's",
      "back\\slash \\' E'x'",
      "$1 $2::text $$ $10",
      "'; DROP TABLE tenancy_tenant; --",
      "línea\nnueva\ttab — ünïcödé 🛰️",
      '"double" \\u0000 literally',
    ];
    const one: string[] = [];
    for (const [i, t] of texts.entries()) {
      const r = await s.api("/api/tenancy/tenants/", {
        method: "POST",
        // The name is the first value sent (the uniqueness check), so it is the one written in as a literal.
        body: { name: `${t} #${i}`, description: t, comments: t },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      one.push(r.body.id as string);
    }
    const bulk = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: texts.map((t, i) => ({ name: `txt-bulk-${i}`, description: t })),
    });
    assert.equal(bulk.status, 201, JSON.stringify(bulk.body));
    const patched = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: one.map((id, i) => ({ id, comments: texts[texts.length - 1 - i] })),
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    for (const [i, t] of texts.entries()) {
      const a = (await s.api(`/api/tenancy/tenants/${one[i]}/`)).body;
      assert.equal(a.name, `${t} #${i}`);
      assert.equal(a.description, t);
      assert.equal(a.comments, texts[texts.length - 1 - i]);
      const b = (await s.api(`/api/tenancy/tenants/${bulk.body[i].id}/`)).body;
      assert.equal(b.description, t);
    }
    const again = await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: `${texts[3]} #3` } });
    assert.equal(again.status, 400, "the uniqueness check found the stored name");
  });

  it("bulk DELETE is all or none; a dependent object makes it a 409 naming it; one event per object", async () => {
    const tenants = (
      await s.api("/api/tenancy/tenants/", { method: "POST", body: [{ name: "d1" }, { name: "d2" }] })
    ).body;
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Blocker", status: "active", tenant: tenants[1].id },
    });
    assert.equal(site.status, 201);
    const group = await s.api("/api/tenancy/tenant-groups/", { method: "POST", body: { name: "g-del" } });
    await s.api(`/api/tenancy/tenants/${tenants[0].id}/`, {
      method: "PATCH",
      body: { group: group.body.id },
    });
    const blocked = await s.api("/api/tenancy/tenant-groups/", {
      method: "DELETE",
      body: [{ id: group.body.id }],
    });
    // Tenant.group is SET_NULL in Nautobot: deleting the group is allowed.
    assert.equal(blocked.status, 204);
    const del = await s.api("/api/tenancy/tenants/", {
      method: "DELETE",
      body: [{ id: tenants[0].id }, { id: tenants[1].id }],
    });
    assert.equal(del.status, 409, JSON.stringify(del.body));
    assert.match(del.body.detail, /Blocker/);
    assert.equal((await s.api(`/api/tenancy/tenants/${tenants[0].id}/`)).status, 200, "nothing deleted");
    await s.api(`/api/dcim/sites/${site.body.id}/`, { method: "DELETE" });
    const ok = await s.api("/api/tenancy/tenants/", {
      method: "DELETE",
      body: [{ id: tenants[0].id }, { id: tenants[1].id }],
    });
    assert.equal(ok.status, 204);
    const oc = await s.api(`/api/extras/object-changes/?action=delete&changed_object_type=tenancy.tenant`);
    const mine = oc.body.results.filter((r: any) =>
      [tenants[0].id, tenants[1].id].includes(r.changed_object_id),
    );
    assert.equal(mine.length, 2);
    assert.equal(new Set(mine.map((r: any) => r.request_id)).size, 1);
  });

  it("bulk PATCH and DELETE of 1,000 ids, unrestricted and under a constraint; others' tokens stay unfound", async () => {
    // The ids are looked up by id, not as a client filter: 1,000 × 36 characters is beyond the filter
    // bound (16,384 characters), which never applies to them.
    const made = await s.api("/api/tenancy/tenants/", {
      method: "POST",
      body: Array.from({ length: 1000 }, (_, i) => ({ name: `k-${i}` })),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body).slice(0, 300));
    const ids: string[] = made.body.map((t: { id: string }) => t.id);
    const patch = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: ids.map((id) => ({ id, description: "one" })),
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body).slice(0, 300));
    assert.equal(patch.body.length, 1000);
    // A user whose change and delete permissions carry a constraint: the ids are read under it.
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "bulk-bob", password: "pw-b-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    const perm = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "bulk-k",
        users: [u.body.id],
        object_types: ["tenancy.tenant"],
        actions: ["view", "change", "delete"],
        constraints: { name__isw: "k-" },
      },
    });
    assert.equal(perm.status, 201, JSON.stringify(perm.body));
    const bob = await createToken(s.store, u.body.id);
    const constrained = await s.api("/api/tenancy/tenants/", {
      method: "PATCH",
      body: ids.map((id) => ({ id, description: "two" })),
      token: bob,
    });
    assert.equal(constrained.status, 200, JSON.stringify(constrained.body).slice(0, 300));
    assert.deepEqual(
      new Set(constrained.body.map((t: { description: string }) => t.description)),
      new Set(["two"]),
    );
    const outside = await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: "not-k" } });
    const refused = await s.api("/api/tenancy/tenants/", {
      method: "DELETE",
      body: [...ids.slice(1), outside.body.id].map((id) => ({ id })),
      token: bob,
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.body).slice(0, 300));
    assert.deepEqual(refused.body.at(-1), { id: [`Object with id ${outside.body.id} does not exist.`] });
    const del = await s.api("/api/tenancy/tenants/", {
      method: "DELETE",
      body: ids.map((id) => ({ id })),
      token: bob,
    });
    assert.equal(del.status, 204, JSON.stringify(del.body).slice(0, 300));
    assert.equal((await s.api("/api/tenancy/tenants/?name__isw=k-&limit=1")).body.count, 0);
    // Tokens are read through their owner: another user's token is not found, even by a superuser.
    const theirs = await s.store.db
      .selectFrom("users_token")
      .select("id")
      .where("user_id", "=", u.body.id)
      .executeTakeFirstOrThrow();
    const foreign = await s.api("/api/users/tokens/", { method: "DELETE", body: [{ id: theirs.id }] });
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(
      (await s.api("/api/tenancy/tenants/?limit=1", { token: bob })).status,
      200,
      "the token is kept",
    );
  });
});
