/**
 * Issue 13, `--database-replica`: list, detail and GraphQL reads go to a real PostgreSQL streaming replica
 * (a throwaway primary and replica made with initdb and pg_basebackup), while a client that just wrote is
 * not served older data than it wrote. Replay on the replica is paused to tell the two apart: the writer
 * still sees its new object (read from the primary), another user does not until replay resumes.
 * PostgreSQL only (TEST_DB=postgres).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createToken, ensureSuperuser } from "../../src/service/accounts.ts";
import { type ReplicaPair, startReplicaPair } from "../helpers/pg-replica.ts";
import { ENGINE, startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

describe("read replica", { skip: ENGINE !== "postgres" && "PostgreSQL only" }, () => {
  let pair: ReplicaPair;
  let s: TestServer;
  let reader: string;
  let standby: pg.Client;
  before(async () => {
    pair = startReplicaPair();
    const schema = `r_${Date.now().toString(36)}`;
    s = await startServer(
      { databaseReplicaUrl: `${pair.replicaUrl}?schema=${schema}` },
      { databaseUrl: `${pair.primaryUrl}?schema=${schema}` },
    );
    const { id } = await ensureSuperuser(s.store, "reader", "pw-reader-1");
    reader = await createToken(s.store, id);
    standby = new pg.Client({ connectionString: pair.replicaUrl });
    await standby.connect();
    // The replica has the schema and the reader before replay is paused.
    await waitUntil(
      async () => (await s.api("/api/users/users/?username=reader", { token: reader })).status === 200,
    );
  });
  after(async () => {
    await standby?.query("SELECT pg_wal_replay_resume()").catch(() => {});
    await standby?.end().catch(() => {});
    await s?.close();
    pair?.stop();
  });

  it("reads go to the replica; the writer reads its own writes from the primary", async () => {
    await standby.query("SELECT pg_wal_replay_pause()");
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "After pause", status: "active" },
    });
    assert.equal(made.status, 201);
    // The writer: list, detail and GraphQL all show it at once.
    assert.equal((await s.api("/api/dcim/sites/?name=After%20pause")).body.count, 1);
    assert.equal((await s.api(`/api/dcim/sites/${made.body.id}/`)).status, 200);
    const gql = await s.api("/api/graphql/", {
      method: "POST",
      body: { query: '{ sites(name: "After pause") { name } }' },
    });
    assert.deepEqual(gql.body.data.sites, [{ name: "After pause" }]);
    // Another user reads the paused replica: not there yet.
    const other = await s.api("/api/dcim/sites/?name=After%20pause", { token: reader });
    assert.equal(other.body.count, 0, JSON.stringify(other.body));
    assert.equal((await s.api(`/api/dcim/sites/${made.body.id}/`, { token: reader })).status, 404);
    const status = await s.api("/api/status/");
    assert.equal(typeof status.body.database.replica["lag-seconds"], "number");
    await standby.query("SELECT pg_wal_replay_resume()");
    await waitUntil(
      async () => (await s.api("/api/dcim/sites/?name=After%20pause", { token: reader })).body.count === 1,
    );
  });
});
