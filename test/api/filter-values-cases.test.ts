/**
 * Issue 24: filter values Nautobot 1.6.32 reads in its own way — partial and odd networks as netaddr 0.8.0
 * reads them, content types as each content-type filter does — answer here as there. The table and its
 * fixture are in filter-values-cases.ts, checked against the reference with
 * `node scripts/filter-values.ts --cases`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildFixture, CASES } from "./filter-values-cases.ts";

describe("filter values as Nautobot reads them (partial networks, content types)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
    await buildFixture((path, init) => s.api(path, init));
  });
  after(async () => {
    await s.close();
  });

  it("every case of the table answers its status and count", async () => {
    const wrong: string[] = [];
    for (const [q, status, count] of CASES) {
      const r = await s.api(q);
      const n = r.status === 200 ? r.body.count : undefined;
      if (r.status !== status || (count !== undefined && n !== count))
        wrong.push(`${q}: ${r.status} ${n ?? JSON.stringify(r.body)} (expected ${status} ${count ?? ""})`);
    }
    assert.deepEqual(wrong, []);
  });
});
