/**
 * The change sequence, feed, stream and webhook replay (issue 26), black-box on SQLite and PostgreSQL:
 * the feed pages every committed change exactly once in seq order and nothing of a failed request; its
 * filters; permissions (object-change view, per type, constrained); 410 past retention; the SSE stream
 * resumed with Last-Event-ID; webhook replay as new deliveries carrying X-Inventory-Seq.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { waitUntil } from "../helpers/wait.ts";

type Entry = {
  seq: number;
  id: string;
  action: string;
  changed_object_type: string;
  changed_object_id: string;
  request_id: string;
  before: any;
  after: any;
};

/** Every entry of the feed after `from`, following `next` with pages of `limit`. */
async function readAll(s: TestServer, query: string, limit: number, token?: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let url = `/api/extras/object-changes/feed/?after=0&limit=${limit}${query}`;
  for (let i = 0; i < 10_000; i++) {
    const r = await s.api(url, token ? { token } : {});
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.push(...r.body.results);
    if (r.body.results.length < limit) return out;
    url = new URL(r.body.next).pathname + new URL(r.body.next).search;
  }
  throw new Error("feed did not end");
}

/** The change stream of `s` at `path`, as the admin. */
const openStream = (s: TestServer, path: string, headers: Record<string, string> = {}) =>
  openSse(`${s.url}${path}`, { Authorization: `Token ${s.token}`, ...headers });

describe("change feed (issue 26)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer(
      { changeFeed: { ...defaults(), heartbeatMs: 300, pollMs: 20 } },
      { worker: { pollMs: 50 } },
    );
  });
  after(async () => {
    await s?.close();
  });

  it("pages every committed change exactly once, in seq order, nothing of a failed request", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.api("/api/dcim/sites/", {
        method: "POST",
        body: { name: `feed-${i}`, slug: `feed-${i}`, status: "active" },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      made.push(r.body.id);
    }
    const bulk = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [5, 6, 7].map((i) => ({ name: `feed-${i}`, slug: `feed-${i}`, status: "active" })),
    });
    assert.equal(bulk.status, 201);
    const failed = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [
        { name: "feed-ok", slug: "feed-ok", status: "active" },
        { name: "feed-0", slug: "feed-0", status: "active" },
      ],
    });
    assert.equal(failed.status, 400);
    const upd = await s.api(`/api/dcim/sites/${made[0]}/`, {
      method: "PATCH",
      body: { description: "changed" },
    });
    assert.equal(upd.status, 200);
    assert.equal((await s.api(`/api/dcim/sites/${made[1]}/`, { method: "DELETE" })).status, 204);

    const log = await s.api("/api/extras/object-changes/?limit=1000");
    const all = await readAll(s, "", 3);
    const seqs = all.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      "seq ascending",
    );
    assert.equal(new Set(seqs).size, seqs.length, "no repeat");
    assert.deepEqual(
      new Set(all.map((e) => e.id)),
      new Set(log.body.results.map((r: any) => r.id)),
      "the feed holds exactly the change log",
    );
    assert.ok(!all.some((e) => e.after?.name === "feed-ok"), "nothing of the failed bulk");
    const u = all.find((e) => e.action === "update" && e.changed_object_id === made[0])!;
    assert.equal(u.before.description, "");
    assert.equal(u.after.description, "changed");
    const d = all.find((e) => e.action === "delete")!;
    assert.equal(d.before.id, made[1]);
    assert.equal(d.after, null);

    // next resumes exactly after the last one returned; filters
    const p1 = await s.api("/api/extras/object-changes/feed/?after=0&limit=4");
    assert.equal(p1.body.last_seq, p1.body.results[3].seq);
    const p2 = await s.api(new URL(p1.body.next).pathname + new URL(p1.body.next).search);
    assert.deepEqual(
      p2.body.results.map((e: Entry) => e.seq),
      seqs.slice(4, 8),
    );
    const dels = await readAll(s, "&action=delete&type=dcim.site", 100);
    assert.deepEqual(
      dels.map((e) => e.changed_object_id),
      [made[1]],
    );
    const ofBulk = await readAll(
      s,
      `&request_id=${all.find((e) => e.after?.name === "feed-6")!.request_id}`,
      100,
    );
    assert.equal(ofBulk.length, 3);
    const bad = await s.api("/api/extras/object-changes/feed/?after=-1");
    assert.equal(bad.status, 400);
    assert.ok(bad.body.after, JSON.stringify(bad.body));
    const badType = await s.api("/api/extras/object-changes/feed/?type=dcim.nothing");
    assert.equal(badType.status, 400);
    assert.ok(badType.body.type);
    const root = await s.api("/api/");
    assert.ok(String(root.body["changes-feed"]).endsWith("/api/extras/object-changes/feed/"));
    const doc = await s.api("/api/swagger.json");
    assert.ok(Object.keys(doc.body.paths).some((p) => p.includes("object-changes/feed")));
    assert.ok(Object.keys(doc.body.paths).some((p) => p.includes("webhooks/{id}/replay")));
  });

  it("shows only what the user may view", async () => {
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "feedy", password: "pw-feedy-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    const token = await createToken(s.store, u.body.id);
    const denied = await s.api("/api/extras/object-changes/feed/", { token });
    assert.equal(denied.status, 403);
    const perm = async (body: Record<string, unknown>) => {
      const r = await s.api("/api/users/permissions/", {
        method: "POST",
        body: { name: `p-${Math.random()}`, users: [u.body.id], actions: ["view"], ...body },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    };
    await perm({ object_types: ["extras.objectchange"] });
    const mfr = await s.api("/api/dcim/manufacturers/", {
      method: "POST",
      body: { name: "Feedco", slug: "feedco" },
    });
    assert.equal(mfr.status, 201);
    assert.deepEqual(await readAll(s, "", 1000, token), [], "no type viewable: nothing");
    await perm({ object_types: ["dcim.site"], constraints: { name: "feed-2" } });
    const some = await readAll(s, "", 1000, token);
    assert.ok(some.length >= 1);
    assert.ok(some.every((e) => e.changed_object_type === "dcim.site" && e.after?.name === "feed-2"));
    await perm({ object_types: ["dcim.manufacturer"] });
    const more = await readAll(s, "", 1000, token);
    assert.ok(more.some((e) => e.changed_object_id === mfr.body.id));
    assert.ok(!more.some((e) => e.changed_object_type === "dcim.site" && e.after?.name !== "feed-2"));
  });

  it("streams changes as server-sent events, resumable with Last-Event-ID", async () => {
    const start = (await s.api("/api/extras/object-changes/feed/?after=0&limit=1000")).body;
    const from = start.results.length ? start.results[start.results.length - 1].seq : 0;
    const one = openStream(s, `/api/extras/object-changes/stream/?after=${from}&type=dcim.site`);
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      names.push(`st-${i}`);
      const r = await s.api("/api/dcim/sites/", {
        method: "POST",
        body: { name: `st-${i}`, slug: `st-${i}`, status: "active" },
      });
      assert.equal(r.status, 201);
    }
    await waitUntil(
      async () => one.events.length >= 4,
      undefined,
      () => `${one.events.length} events`,
    );
    assert.equal(one.status(), 200);
    await waitUntil(async () => one.comments.some((c) => c.includes("heartbeat")));
    await one.close();
    const last = one.events[one.events.length - 1]!.id;
    for (let i = 4; i < 7; i++) {
      const r = await s.api("/api/dcim/sites/", {
        method: "POST",
        body: { name: `st-${i}`, slug: `st-${i}`, status: "active" },
      });
      assert.equal(r.status, 201);
    }
    const two = openStream(s, `/api/extras/object-changes/stream/?after=${from}&type=dcim.site`, {
      "Last-Event-ID": String(last),
    });
    await waitUntil(
      async () => two.events.length >= 3,
      undefined,
      () => `${two.events.length} events`,
    );
    await two.close();
    const got = [...one.events, ...two.events];
    assert.deepEqual(
      got.map((e) => e.data.after.name),
      ["st-0", "st-1", "st-2", "st-3", "st-4", "st-5", "st-6"],
    );
    const ids = got.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(got.every((e) => e.id === e.data.seq));
  });

  it("replays a webhook's events as new deliveries in order, each with X-Inventory-Seq", async () => {
    const rcv = await startReceiver();
    try {
      const h = await s.api("/api/extras/webhooks/", {
        method: "POST",
        body: {
          name: "replayed",
          content_types: ["dcim.region"],
          type_create: true,
          type_update: true,
          type_delete: true,
          payload_url: `${rcv.url}/hook`,
        },
      });
      assert.equal(h.status, 201, JSON.stringify(h.body));
      for (let i = 0; i < 3; i++)
        assert.equal(
          (await s.api("/api/dcim/regions/", { method: "POST", body: { name: `rr-${i}`, slug: `rr-${i}` } }))
            .status,
          201,
        );
      await rcv.waitFor(3);
      const feed = await readAll(s, "&type=dcim.region", 1000);
      assert.equal(feed.length, 3);
      const first = rcv.requests.slice(0, 3);
      assert.deepEqual(
        first.map((r) => Number(r.headers["x-inventory-seq"])),
        feed.map((e) => e.seq),
      );
      const bad = await s.api(`/api/extras/webhooks/${h.body.id}/replay/`, {
        method: "POST",
        body: { after: -1 },
      });
      assert.equal(bad.status, 400);
      assert.ok(bad.body.after);
      const r = await s.api(`/api/extras/webhooks/${h.body.id}/replay/`, {
        method: "POST",
        body: { after: feed[0]!.seq },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { queued: 2, next: feed[2]!.seq, more: false });
      await rcv.waitFor(5);
      const again = rcv.requests.slice(3);
      assert.deepEqual(
        again.map((x) => Number(x.headers["x-inventory-seq"])),
        [feed[1]!.seq, feed[2]!.seq],
      );
      assert.deepEqual(
        again.map((x) => x.json.data.name),
        ["rr-1", "rr-2"],
      );
      const since = await s.api(`/api/extras/webhooks/${h.body.id}/replay/`, {
        method: "POST",
        body: { since: "2000-01-01T00:00:00Z" },
      });
      assert.equal(since.body.queued, 3);
      await rcv.waitFor(8);
      assert.equal(
        (
          await s.api("/api/extras/webhooks/00000000-0000-4000-8000-000000000000/replay/", {
            method: "POST",
            body: { after: 0 },
          })
        ).status,
        404,
      );
    } finally {
      await rcv.close();
    }
  });
});

describe("change feed retention (issue 26)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ changeFeed: { ...defaults(), retentionDays: 2 / 86_400, purgeIntervalMs: 200 } });
  });
  after(async () => {
    await s?.close();
  });

  it("answers 410 Gone with the oldest available seq for a purged position", async () => {
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await s.api("/api/dcim/regions/", { method: "POST", body: { name: `old-${i}`, slug: `old-${i}` } }))
          .status,
        201,
      );
    const before = await readAll(s, "", 1000);
    assert.equal(before.length, 3);
    const r = await waitUntil(async () => {
      const x = await s.api("/api/extras/object-changes/feed/?after=0");
      return x.status === 410 ? x : undefined;
    });
    assert.ok(r.body.purged_through >= before[0]!.seq);
    const resumed = await s.api(`/api/extras/object-changes/feed/?after=${r.body.purged_through}`);
    assert.equal(resumed.status, 200);
    if (resumed.body.results.length) assert.equal(resumed.body.results[0].seq, r.body.oldest_seq);
    else assert.equal(r.body.oldest_seq, null);
    const stream = await fetch(`${s.url}/api/extras/object-changes/stream/?after=0`, {
      headers: { Authorization: `Token ${s.token}` },
    });
    assert.equal(stream.status, 410);
  });
});

function defaults() {
  return {
    maxStreams: 100,
    heartbeatMs: 15_000,
    streamBufferBytes: 1024 * 1024,
    drainTimeoutMs: 30_000,
    pollMs: 50,
    retentionDays: 0,
    purgeIntervalMs: 60_000,
    historyRetentionDays: 0,
  };
}
