/**
 * Issue 23, the size bounds of client filter input (query/filter-input.ts: 1,000 characters per value,
 * 16,384 in all) apply where client input enters — REST query parameters, GraphQL arguments, object-
 * permission constraints, dynamic-group filters (test/hostile/dynamic-groups.test.ts) — and never to the
 * service's own lookups (ids it resolved, ids of a bulk request: test/api/bulk.test.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { configFromEnv } from "../../src/config.ts";
import { buildApp } from "../../src/http/app.ts";
import { registry } from "../../src/registry/index.ts";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";

/** Values of parameter `name` whose size, as the bound counts it (name, values, one separator each), is `total`. */
function valuesOfSize(name: string, total: number): string[] {
  const out: string[] = [];
  let left = total - name.length - 1;
  while (left > 0) {
    const n = Math.min(1000, left - 1);
    out.push("v".repeat(n));
    left -= n + 1;
  }
  return out;
}

describe("client filter bounds (issue 23)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("REST: a filter of 16,385 characters is a 400 naming the parameter; 16,384 are served", async () => {
    // Node's HTTP parser refuses a request head over 16 KiB (431), so the bound is checked in-process.
    const app = await buildApp({ store: s.store, reg: registry(), config: configFromEnv({}), logger: false });
    try {
      const get = (total: number) => {
        const q = new URLSearchParams(valuesOfSize("name", total).map((v): [string, string] => ["name", v]));
        return app.inject({ url: `/api/dcim/sites/?${q}`, headers: { authorization: `Token ${s.token}` } });
      };
      const over = await get(16_385);
      assert.equal(over.statusCode, 400, over.body.slice(0, 300));
      assert.deepEqual(JSON.parse(over.body), {
        name: ["The filters hold more than 16384 characters in all."],
      });
      const within = await get(16_384);
      assert.equal(within.statusCode, 200, within.body.slice(0, 300));
      assert.equal(JSON.parse(within.body).count, 0);
    } finally {
      await app.close();
    }
  });

  it("GraphQL: arguments have the same bounds, the error naming the parameter", async () => {
    const gql = (n: string[], q?: string) =>
      s.api("/api/graphql/", {
        method: "POST",
        body: {
          query: "query ($n: [String], $q: String) { sites(name: $n, q: $q) { name } }",
          variables: { n, q },
        },
      });
    const over = await gql(valuesOfSize("name", 16_385));
    assert.equal(
      over.body.errors?.[0]?.message,
      "{'name': ['The filters hold more than 16384 characters in all.']}",
    );
    assert.deepEqual(over.body.data, { sites: null });
    const within = await gql(valuesOfSize("name", 16_384));
    assert.equal(within.body.errors, undefined, JSON.stringify(within.body).slice(0, 300));
    assert.deepEqual(within.body.data, { sites: [] });
    const long = await gql([], "x".repeat(1001));
    assert.equal(
      long.body.errors?.[0]?.message,
      "{'q': ['Ensure this value has at most 1000 characters (it has 1001).']}",
    );
  });

  it("the web interface: list, export, search, lookup and CSV-import queries have the same bounds", async () => {
    const ui = await webClient(s);
    const long = "x".repeat(1001);
    const list = await ui.get(`/dcim/sites/?name=${long}`);
    assert.equal(list.status, 200);
    assert.match(list.html, /name: Ensure this value has at most 1000 characters \(it has 1001\)\./);
    const exp = await ui.get(`/dcim/sites/export/?name=${long}`);
    assert.equal(exp.status, 400);
    assert.match(exp.html, /at most 1000 characters/);
    const search = await ui.get(`/search/?q=${long}`);
    assert.equal(search.status, 400);
    // A CSV import's cell and its header's lookup are client input: beyond the bound the reference is
    // left unresolved (SQLite refuses a LIKE pattern of 60,000 characters; it is never built).
    const group = await s.api("/api/tenancy/tenant-groups/", { method: "POST", body: { name: "G" } });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    const data = `name,group.name__ic\nimp-1,${"g".repeat(60_000)}`;
    const preview = await ui.post("/tenancy/tenants/import/", { format: "csv", data });
    assert.equal(preview.status, 200, preview.html.slice(0, 300));
    assert.match(preview.html, /\(not found\)/);
    const lookup = await ui.get(`/ui-api/lookup/?model=dcim.site&q=${long}`);
    assert.equal(lookup.status, 400, lookup.html.slice(0, 300));
    assert.deepEqual(JSON.parse(lookup.html), {
      name__ic: ["Ensure this value has at most 1000 characters (it has 1001)."],
    });
  });

  it("ids the service resolved are not a client filter: a connection list naming 450 devices", async () => {
    const post = async (path: string, body: unknown) => {
      const r = await s.api(path, { method: "POST", body });
      assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.body).slice(0, 300)}`);
      return r.body;
    };
    const mf = await post("/api/dcim/manufacturers/", { name: "M", slug: "m" });
    const dt = await post("/api/dcim/device-types/", { manufacturer: mf.id, model: "T", slug: "t" });
    const role = await post("/api/dcim/device-roles/", { name: "R", slug: "r" });
    const site = await post("/api/dcim/sites/", { name: "S", slug: "s", status: "active" });
    const names = Array.from({ length: 450 }, (_, i) => `d${i}`);
    await post(
      "/api/dcim/devices/",
      names.map((name) => ({
        name,
        device_type: dt.id,
        device_role: role.id,
        site: site.id,
        status: "active",
      })),
    );
    // 450 names (under 3,000 characters) resolve to 450 ids (16,650 characters): served, not a 400.
    const q = new URLSearchParams(names.map((n): [string, string] => ["device", n]));
    const r = await s.api(`/api/dcim/interface-connections/?${q}`);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.count, 0);
    // The names themselves are client input.
    const long = await s.api(`/api/dcim/interface-connections/?device=${"d".repeat(1001)}`);
    assert.equal(long.status, 400, JSON.stringify(long.body).slice(0, 300));
    assert.ok(Array.isArray(long.body.device), JSON.stringify(long.body).slice(0, 300));
  });

  it("permission constraints: bounded when saved; one stored beyond the bounds matches nothing", async () => {
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "carol", password: "pw-c-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    const perm = (constraints: unknown) =>
      s.api("/api/users/permissions/", {
        method: "POST",
        body: {
          name: `p-${Math.random()}`,
          users: [u.body.id],
          object_types: ["dcim.site"],
          actions: ["view"],
          constraints,
        },
      });
    // A site to filter: SQLite evaluates a LIKE pattern only against a row.
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Carol's", slug: "carols", status: "active" },
    });
    assert.equal(site.status, 201, JSON.stringify(site.body));
    const refused = await perm({ q: "x".repeat(1001) });
    assert.equal(refused.status, 400, JSON.stringify(refused.body).slice(0, 300));
    assert.match(
      refused.body.constraints.join(" "),
      /Invalid constraint for dcim.site: q: Ensure this value has at most 1000/,
    );
    const ok = await perm({ q: "x" });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    // Stored behind the service's back (a row older than the check): SQLite refuses such a LIKE pattern.
    await s.store.db
      .updateTable("users_objectpermission")
      .set({ constraints: JSON.stringify({ q: "x".repeat(100_000) }) })
      .where("id", "=", ok.body.id)
      .execute();
    const carol = await createToken(s.store, u.body.id);
    const list = await s.api("/api/dcim/sites/", { token: carol });
    assert.equal(list.status, 200, JSON.stringify(list.body).slice(0, 300));
    assert.equal(list.body.count, 0);
  });
});
