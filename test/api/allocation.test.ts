/**
 * Issue 9, IP allocation: `available-ips` and `available-prefixes` on prefixes as Nautobot 1.6.32 answers
 * them (each expectation below was seen on the reference server), plus what Nautobot does not promise:
 * 20 concurrent allocators from one /24 get 20 distinct addresses, never a 5xx.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("IP allocation (available-ips, available-prefixes)", () => {
  let s: TestServer;
  let vrf: string;
  let p29: string;
  before(async () => {
    s = await startServer();
    vrf = (await s.api("/api/ipam/vrfs/", { method: "POST", body: { name: "alloc", rd: "65000:99" } })).body
      .id;
    p29 = (
      await s.api("/api/ipam/prefixes/", {
        method: "POST",
        body: { prefix: "10.99.0.0/29", status: "active", vrf },
      })
    ).body.id;
    // One in the parent's VRF (taken), one in the global table (does not count).
    await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "10.99.0.2/32", status: "active", vrf },
    });
    await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "10.99.0.3/24", status: "active" },
    });
  });
  after(async () => {
    await s.close();
  });

  const addrs = (body: Array<{ address: string }>) => body.map((x) => x.address);

  it("lists free addresses with the parent's mask and VRF, honouring limit", async () => {
    const r = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`);
    assert.equal(r.status, 200);
    assert.deepEqual(addrs(r.body), [
      "10.99.0.1/29",
      "10.99.0.3/29",
      "10.99.0.4/29",
      "10.99.0.5/29",
      "10.99.0.6/29",
    ]);
    assert.equal(r.body[0].family, 4);
    assert.equal(r.body[0].vrf.id, vrf);
    assert.equal(r.body[0].vrf.display, "alloc (65000:99)");
    assert.deepEqual(Object.keys(r.body[0]), ["family", "address", "vrf"]);
    assert.equal((await s.api(`/api/ipam/prefixes/${p29}/available-ips/?limit=2`)).body.length, 2);
    assert.equal((await s.api(`/api/ipam/prefixes/${p29}/available-ips/?limit=abc`)).body.length, 5);
  });

  it("allocates one object or a list, validates like a create, 204 when there is no room", async () => {
    const missing = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, { method: "POST", body: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { status: ["This field is required."] });
    const one = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: { status: "active", description: "one" },
    });
    assert.equal(one.status, 201, JSON.stringify(one.body));
    assert.equal(one.body.address, "10.99.0.1/29");
    assert.equal(one.body.vrf.id, vrf);
    assert.equal(one.body.description, "one");
    const bad = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: [{ status: "active" }, { status: "bogus" }],
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.length, 2);
    assert.deepEqual(bad.body[0], {});
    assert.ok(bad.body[1].status, JSON.stringify(bad.body));
    const two = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: [{ status: "active" }, { status: "active" }],
    });
    assert.equal(two.status, 201);
    assert.deepEqual(addrs(two.body), ["10.99.0.3/29", "10.99.0.4/29"]);
    const full = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: [{ status: "active" }, { status: "active" }, { status: "active" }],
    });
    assert.equal(full.status, 204);
    const empty = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, { method: "POST", body: [] });
    assert.equal(empty.status, 201);
    assert.deepEqual(empty.body, []);
    const notObject = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: "abc",
    });
    assert.equal(notObject.status, 400, "Nautobot answers a 500 here");
    const ips = await s.api(`/api/ipam/ip-addresses/?parent=10.99.0.0/29&vrf_id=${vrf}`);
    assert.equal(ips.body.count, 4, "nothing was created by the failed calls");
    const changes = await s.api(`/api/extras/object-changes/?changed_object_id=${one.body.id}`);
    assert.equal(changes.body.count, 1, "allocation is change-logged");
    const put = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, { method: "PUT", body: {} });
    assert.equal(put.status, 405);
    const nope = await s.api("/api/ipam/prefixes/00000000-0000-0000-0000-000000000000/available-ips/");
    assert.equal(nope.status, 404);
  });

  it("IPv6, /31 and pools use every address", async () => {
    const mk = async (prefix: string, extra: Record<string, unknown> = {}) =>
      (await s.api("/api/ipam/prefixes/", { method: "POST", body: { prefix, status: "active", ...extra } }))
        .body.id;
    const v6 = await mk("2001:db8::/126");
    assert.deepEqual(addrs((await s.api(`/api/ipam/prefixes/${v6}/available-ips/`)).body), [
      "2001:db8::/126",
      "2001:db8::1/126",
      "2001:db8::2/126",
      "2001:db8::3/126",
    ]);
    const p31 = await mk("10.98.0.0/31");
    assert.deepEqual(addrs((await s.api(`/api/ipam/prefixes/${p31}/available-ips/`)).body), [
      "10.98.0.0/31",
      "10.98.0.1/31",
    ]);
    const pool = await mk("10.97.0.0/30", { is_pool: true });
    assert.equal((await s.api(`/api/ipam/prefixes/${pool}/available-ips/`)).body.length, 4);
    const big = await mk("2001:db8:1::/64");
    const page = await s.api(`/api/ipam/prefixes/${big}/available-ips/?limit=3`);
    assert.deepEqual(addrs(page.body), ["2001:db8:1::/64", "2001:db8:1::1/64", "2001:db8:1::2/64"]);
  });

  it("available-prefixes: free blocks of a global container, allocation by prefix_length", async () => {
    const c = (
      await s.api("/api/ipam/prefixes/", {
        method: "POST",
        body: { prefix: "10.99.1.0/24", status: "container" },
      })
    ).body.id;
    // A global container counts children of every VRF.
    await s.api("/api/ipam/prefixes/", {
      method: "POST",
      body: { prefix: "10.99.1.64/26", status: "active", vrf },
    });
    await s.api("/api/ipam/prefixes/", {
      method: "POST",
      body: { prefix: "10.99.1.8/29", status: "active" },
    });
    const free = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`);
    assert.equal(free.status, 200);
    assert.deepEqual(free.body, [
      { family: 4, prefix: "10.99.1.0/29", vrf: null },
      { family: 4, prefix: "10.99.1.16/28", vrf: null },
      { family: 4, prefix: "10.99.1.32/27", vrf: null },
      { family: 4, prefix: "10.99.1.128/25", vrf: null },
    ]);
    const one = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`, {
      method: "POST",
      body: { prefix_length: 28, status: "active" },
    });
    assert.equal(one.status, 201, JSON.stringify(one.body));
    assert.equal(one.body.prefix, "10.99.1.16/28");
    const two = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`, {
      method: "POST",
      body: [
        { prefix_length: 30, status: "active" },
        { prefix_length: 25, status: "active" },
      ],
    });
    assert.equal(two.status, 201);
    assert.deepEqual(
      two.body.map((p: { prefix: string }) => p.prefix),
      ["10.99.1.0/30", "10.99.1.128/25"],
    );
    const tooBig = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`, {
      method: "POST",
      body: { prefix_length: 20, status: "active" },
    });
    assert.equal(tooBig.status, 204);
    const errors: Array<[unknown, unknown]> = [
      [{ status: "active" }, [{ prefix_length: "this field can not be missing" }]],
      [{ prefix_length: "28", status: "active" }, [{ prefix_length: "this field must be int type" }]],
      [{ prefix_length: 33, status: "active" }, [{ prefix_length: "Invalid prefix length (33) for IPv4" }]],
      [{ prefix_length: 30 }, { status: ["This field is required."] }],
      [
        [{ prefix_length: 30, status: "active" }, { prefix_length: 40 }],
        [{}, { prefix_length: "Invalid prefix length (40) for IPv4" }],
      ],
    ];
    for (const [body, expected] of errors) {
      const r = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`, { method: "POST", body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.body, expected, JSON.stringify(body));
    }
    const after = await s.api(`/api/ipam/prefixes/${c}/available-prefixes/`);
    assert.deepEqual(
      after.body.map((p: { prefix: string }) => p.prefix),
      ["10.99.1.4/30", "10.99.1.32/27"],
    );
  });

  it("20 concurrent allocators from one /24 get 20 distinct addresses, no 5xx", async () => {
    const p = (
      await s.api("/api/ipam/prefixes/", {
        method: "POST",
        body: { prefix: "10.50.0.0/24", status: "active" },
      })
    ).body.id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.api(`/api/ipam/prefixes/${p}/available-ips/`, {
          method: "POST",
          body: { status: "active", description: `c${i}` },
        }),
      ),
    );
    for (const r of results) assert.equal(r.status, 201, JSON.stringify(r.body));
    const got = results.map((r) => r.body.address as string);
    assert.equal(new Set(got).size, 20, got.join(" "));
    // Concurrent allocators skip each other's addresses but leave no hole: the first 20 are taken.
    assert.deepEqual(
      [...got].sort(
        (a, b) => Number(a.split(".")[3]!.split("/")[0]) - Number(b.split(".")[3]!.split("/")[0]),
      ),
      Array.from({ length: 20 }, (_, i) => `10.50.0.${i + 1}/24`),
    );
    const listed = await s.api("/api/ipam/ip-addresses/?parent=10.50.0.0/24&limit=100");
    assert.equal(listed.body.count, 20);
    const blocks = await Promise.all(
      Array.from({ length: 8 }, () =>
        s.api(`/api/ipam/prefixes/${p}/available-prefixes/`, {
          method: "POST",
          body: { prefix_length: 29, status: "active" },
        }),
      ),
    );
    for (const r of blocks) assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(new Set(blocks.map((r) => r.body.prefix)).size, 8);
  });

  it("the next free address stays the first free one after addresses are freed, moved or taken elsewhere", async () => {
    // The allocator remembers where the first free address was; deleting or moving an address, or creating
    // one by hand, must never make it skip a free address or hand out a taken one.
    const p = (await create(s, "/api/ipam/prefixes/", { prefix: "10.51.0.0/24", status: "active" })).id;
    const next = async () => {
      const r = await s.api(`/api/ipam/prefixes/${p}/available-ips/`, {
        method: "POST",
        body: { status: "active" },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { id: string; address: string };
    };
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await next());
    assert.deepEqual(
      first.map((x) => x.address),
      ["10.51.0.1/24", "10.51.0.2/24", "10.51.0.3/24", "10.51.0.4/24", "10.51.0.5/24"],
    );
    // Freed by a delete: handed out again first.
    assert.equal((await s.api(`/api/ipam/ip-addresses/${first[1]!.id}/`, { method: "DELETE" })).status, 204);
    assert.equal((await next()).address, "10.51.0.2/24");
    // Freed by moving the address elsewhere.
    const moved = await s.api(`/api/ipam/ip-addresses/${first[2]!.id}/`, {
      method: "PATCH",
      body: { address: "10.52.0.3/24" },
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal((await next()).address, "10.51.0.3/24");
    // Taken by a plain create just above: skipped.
    await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: { address: "10.51.0.6/24", status: "active" },
    });
    assert.equal((await next()).address, "10.51.0.7/24");
    // Freed by a bulk delete, and listed again by GET.
    const bulk = await s.api("/api/ipam/ip-addresses/", {
      method: "DELETE",
      body: [{ id: first[0]!.id }, { id: first[3]!.id }],
    });
    assert.equal(bulk.status, 204);
    const free = await s.api(`/api/ipam/prefixes/${p}/available-ips/?limit=3`);
    assert.deepEqual(addrs(free.body), ["10.51.0.1/24", "10.51.0.4/24", "10.51.0.8/24"]);
    assert.equal((await next()).address, "10.51.0.1/24");
  });

  it("two servers allocating from one prefix: stale hints are caught, a rejected item leaves no hole", async () => {
    // Each server claims the addresses after its own hint ahead of reading (allocation.ts `claimAfterHint`);
    // a hint the other server made stale must be caught, and a rejected request must not move it for good.
    const b = await startServer({}, { databaseUrl: s.databaseUrl });
    try {
      const p = (await create(s, "/api/ipam/prefixes/", { prefix: "10.53.0.0/24", status: "active" })).id;
      const next = async (server: TestServer, body: unknown = { status: "active" }) => {
        const r = await server.api(`/api/ipam/prefixes/${p}/available-ips/`, { method: "POST", body });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return Array.isArray(r.body) ? addrs(r.body) : (r.body.address as string);
      };
      assert.equal(await next(s), "10.53.0.1/24");
      assert.equal(await next(b), "10.53.0.2/24");
      assert.equal(await next(s), "10.53.0.3/24", "a hint the other server made stale");
      assert.equal(await next(b), "10.53.0.4/24");
      const bad = await s.api(`/api/ipam/prefixes/${p}/available-ips/`, {
        method: "POST",
        body: { status: "no-such-status" },
      });
      assert.equal(bad.status, 400, JSON.stringify(bad.body));
      assert.ok(bad.body.status, JSON.stringify(bad.body));
      assert.equal(await next(s), "10.53.0.5/24", "no hole after the rejected request");
      assert.deepEqual(await next(b, [{ status: "active" }, { status: "active" }]), [
        "10.53.0.6/24",
        "10.53.0.7/24",
      ]);
      // Both servers at once: distinct addresses, the next 20 in order, no 5xx.
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? b : s).api(`/api/ipam/prefixes/${p}/available-ips/`, {
            method: "POST",
            body: { status: "active" },
          }),
        ),
      );
      for (const r of results) assert.equal(r.status, 201, JSON.stringify(r.body));
      const last = (a: string) => Number(a.split(".")[3]!.split("/")[0]);
      assert.deepEqual(
        results.map((r) => last(r.body.address)).sort((x, y) => x - y),
        Array.from({ length: 20 }, (_, i) => i + 8),
      );
    } finally {
      await b.close();
    }
  });

  it("needs add permission on IP addresses to allocate", async () => {
    const user = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "viewer", password: "pw-12345678" },
    });
    await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "view ipam",
        object_types: ["ipam.prefix", "ipam.ipaddress"],
        actions: ["view"],
        users: [user.body.id],
      },
    });
    const key = await createToken(s.store, user.body.id);
    const get = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, { token: key });
    assert.equal(get.status, 200);
    const post = await s.api(`/api/ipam/prefixes/${p29}/available-ips/`, {
      method: "POST",
      body: { status: "active" },
      token: key,
    });
    assert.equal(post.status, 403);
  });
});
