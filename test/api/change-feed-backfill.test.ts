/**
 * Changes recorded before the change sequence existed (issue 26): `migrate` numbers them in time order then
 * id, below every numbered change (store/migrate.ts backfillChangeSeq), so the feed from 0 replays them
 * first, in order, once; a second migrate changes nothing. Rows are written raw through the store with no
 * seq, as an older release left them. On SQLite and PostgreSQL.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";
import { migrate } from "../../src/store/migrate.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

type Entry = { seq: number; id: string; action: string; after: any };

/** Every entry of the feed from 0, in pages of 2 (so paging crosses the old and new history). */
async function feedFromZero(s: TestServer): Promise<Entry[]> {
  const out: Entry[] = [];
  let after = 0;
  for (let i = 0; i < 1000; i++) {
    const r = await s.api(`/api/extras/object-changes/feed/?after=${after}&limit=2`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.push(...r.body.results);
    if (r.body.results.length < 2) return out;
    after = r.body.last_seq;
  }
  throw new Error("feed did not end");
}

/** Write one unnumbered ObjectChange (a site created at `time`), as a release before the sequence did. */
async function oldChange(s: TestServer, time: string, id: string = randomUUID()): Promise<string> {
  const objectId = randomUUID();
  await s.store.db
    .insertInto("extras_objectchange")
    .values({
      id,
      time,
      user_id: null,
      user_name: "admin",
      request_id: randomUUID(),
      action: "create",
      changed_object_type: "dcim.site",
      changed_object_id: objectId,
      object_repr: `old-${time}`,
      object_data: JSON.stringify({ id: objectId, name: `old-${time}` }),
      prechange_data: null,
    })
    .execute();
  return id;
}

const seqless = async (s: TestServer) =>
  (await s.store.db.selectFrom("extras_objectchange").select("id").where("seq", "is", null).execute()).length;

describe("change seq backfill (issue 26)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s?.close();
  });

  it("numbers an old history first, in time then id order, once; migrate again changes nothing", async () => {
    // Two changes share a time: the id decides (ids chosen so that insertion order is not the answer).
    const late = await oldChange(s, "2023-05-02T10:00:00.000000Z");
    const tieB = await oldChange(s, "2023-05-01T10:00:00.000000Z", `bbbbbbbb-${randomUUID().slice(9)}`);
    const tieA = await oldChange(s, "2023-05-01T10:00:00.000000Z", `aaaaaaaa-${randomUUID().slice(9)}`);
    const early = await oldChange(s, "2023-04-30T23:59:59.999999Z");
    assert.equal(await seqless(s), 4);
    assert.equal((await feedFromZero(s)).length, 0, "unnumbered changes are not in the feed");

    await migrate(s.store, registry());
    assert.equal(await seqless(s), 0);
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "after-backfill", slug: "after-backfill", status: "active" },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));

    const feed = await feedFromZero(s);
    assert.deepEqual(
      feed.map((e) => e.id),
      [early, tieA, tieB, late, feed[4]?.id],
    );
    assert.equal(feed.length, 5);
    assert.equal(feed[4]!.after.id, made.body.id, "the new change follows the history");
    assert.deepEqual(
      feed.map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );

    await migrate(s.store, registry());
    assert.deepEqual(await feedFromZero(s), feed, "a second migrate changes nothing");
  });

  it("with numbered changes from 1, older changes found later go below them all (the numbered move up)", async () => {
    const before = await feedFromZero(s);
    const a = await oldChange(s, "2022-01-01T00:00:00.000000Z");
    const b = await oldChange(s, "2024-01-01T00:00:00.000000Z"); // newer than the first history: still older than seq
    await migrate(s.store, registry());
    assert.equal(await seqless(s), 0);
    const feed = await feedFromZero(s);
    assert.deepEqual(
      feed.map((e) => e.id),
      [a, b, ...before.map((e) => e.id)],
    );
    const seqs = feed.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
    );
    // The sequence moved up with them: the next change is numbered after every one.
    const made = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "after-shift", slug: "after-shift", status: "active" },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const next = await s.api(`/api/extras/object-changes/feed/?after=${seqs.length}`);
    assert.deepEqual(
      next.body.results.map((e: Entry) => e.after?.id),
      [made.body.id],
    );
  });
});
