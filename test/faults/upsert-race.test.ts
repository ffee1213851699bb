/**
 * Issue 28, upsert under concurrency: upserts of the same new natural key sent at once through two API
 * processes serving one database never both create. Each round sends 4 upserts (2 per process) of a new IP
 * address (host + VRF: no unique constraint backs it, in Nautobot 1.6 or here) and of a new prefix (prefix +
 * VRF, likewise): exactly one answer is `created`, the others `unchanged` with the same id, and the table
 * holds one row of that key. PostgreSQL serialises upserts of a model with an advisory lock taken before
 * matching; SQLite's write transactions are serialised from their BEGIN IMMEDIATE.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ApiProcesses, startApiProcesses } from "../helpers/process.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const ROUNDS = 20;
/** Concurrent upserts per round, alternating between the two processes. */
const RACERS = 4;

describe("concurrent upserts of one new natural key across two API processes", () => {
  let s: TestServer;
  let api: ApiProcesses;

  before(async () => {
    s = await startServer();
    api = await startApiProcesses(s.databaseUrl, 2);
  });
  after(async () => {
    await api?.stop();
    await s.close();
  });

  const upsert = async (port: number, path: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}/api/${path}/upsert/`, {
      method: "POST",
      headers: {
        Authorization: `Token ${s.token}`,
        "Content-Type": "application/json",
        Accept: "application/json",
      },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };

  /** Race RACERS upserts of `body`; assert one created, the rest unchanged, all the same object. */
  const race = async (round: number, path: string, body: unknown) => {
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) => upsert(api.ports[i % 2]!, path, body)),
    );
    for (const a of answers) assert.equal(a.status, 200, `round ${round} ${path}: ${JSON.stringify(a.body)}`);
    const results = answers.map((a) => a.body[0].result as string).sort();
    assert.deepEqual(
      results,
      ["created", ...Array(RACERS - 1).fill("unchanged")],
      `round ${round} ${path}: ${JSON.stringify(results)}`,
    );
    assert.equal(new Set(answers.map((a) => a.body[0].object.id)).size, 1, `round ${round}: one object`);
  };

  it("exactly one created per round, the others unchanged; one row per key", async () => {
    const vrf = await s.api("/api/ipam/vrfs/", {
      method: "POST",
      body: { name: "race-vrf", rd: "65000:28" },
    });
    assert.equal(vrf.status, 201, JSON.stringify(vrf.body));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate between the global table and a VRF (a key field given as NULL and as a reference).
      const inVrf = round % 2 ? { vrf: { name: "race-vrf" } } : {};
      await race(round, "ipam/ip-addresses", { address: `10.28.${round}.1/24`, status: "active", ...inVrf });
      await race(round, "ipam/prefixes", { prefix: `10.29.${round}.0/24`, status: "active", ...inVrf });
    }
    const ips = await s.api("/api/ipam/ip-addresses/?limit=0");
    assert.equal(ips.status, 200);
    assert.equal(ips.body.count, ROUNDS, "one IP address per round");
    assert.equal(new Set(ips.body.results.map((r: any) => r.address)).size, ROUNDS);
    const prefixes = await s.api("/api/ipam/prefixes/?limit=0");
    assert.equal(prefixes.body.count, ROUNDS, "one prefix per round");
    assert.equal(new Set(prefixes.body.results.map((r: any) => r.prefix)).size, ROUNDS);
  });
});
