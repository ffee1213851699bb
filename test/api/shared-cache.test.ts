/**
 * Issue 13: the cross-request read cache (nested objects, statuses, custom fields) is shared by requests on
 * both engines and never stale across processes: a change committed through one server is seen by the very
 * next read through another server on the same database (SQLite: `PRAGMA data_version`; PostgreSQL: the
 * transaction snapshot read when each request arrives).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
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
      const rest = await b.api(`/api/dcim/sites/?name=Cached`);
      assert.equal(rest.body.results[0].region.name, `R-${i}`, `REST read ${i} is fresh`);
      const gql = await b.api("/api/graphql/", {
        method: "POST",
        body: { query: '{ sites(name: "Cached") { region { name } } }' },
      });
      assert.equal(gql.body.data.sites[0].region.name, `R-${i}`, `GraphQL read ${i} is fresh`);
    }
  });
});
