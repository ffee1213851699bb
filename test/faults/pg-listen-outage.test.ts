/**
 * Issue 26: `Store.listen` asked while PostgreSQL is down (a change stream's first LISTEN when the database
 * stopped right after the stream's first read; a process's first stream during an outage). It must resolve
 * and connect by itself once the database is back, waking its caller, then receive notifications; its stop
 * function must leave no connection behind. Before, the first LISTEN's failure rejected, and the change
 * stream kept that rejection: every later stream of that API process failed until it was restarted.
 * Runs on a private cluster this test starts and stops (helpers/pg-private.ts), never the shared one.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { openStore, type Store } from "../../src/store/db.ts";
import { type PrivateCluster, privateClusterAvailable, startPrivateCluster } from "../helpers/pg-private.ts";
import { ENGINE } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const CHANNEL = "inventory_listen_outage_test";

describe("LISTEN asked while PostgreSQL is down", {
  skip: (ENGINE !== "postgres" || !privateClusterAvailable()) && "PostgreSQL runs only",
}, () => {
  let pg: PrivateCluster;
  let store: Store;
  before(async () => {
    pg = await startPrivateCluster("listen-outage");
    store = await openStore(pg.url);
  });
  after(async () => {
    await store?.close();
    await pg?.destroy();
  });

  const listeners = async () =>
    Number(
      (
        await sql<{
          n: unknown;
        }>`SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE ${`LISTEN "${CHANNEL}"%`}`.execute(
          store.db,
        )
      ).rows[0]!.n,
    );

  it("resolves, listens once the database is back, and stops cleanly", async () => {
    await pg.stop();
    let events = 0;
    const stop = await store.listen(CHANNEL, () => events++); // rejected before the fix
    await pg.start();
    // The caller is woken once the connection is listening (notifications sent meanwhile are gone).
    await waitUntil(
      async () => events >= 1,
      undefined,
      () => `woken ${events} times`,
    );
    assert.equal(await listeners(), 1, "one LISTEN connection");
    const woken = events;
    await sql.raw(`NOTIFY "${CHANNEL}"`).execute(store.db);
    await waitUntil(
      async () => events > woken,
      undefined,
      () => `woken ${events} times after NOTIFY`,
    );
    await stop();
    await waitUntil(
      async () => (await listeners()) === 0,
      undefined,
      () => "LISTEN connection left open",
    );
  });
});
