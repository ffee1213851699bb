/**
 * Issue 26, the feed consumer test: two API processes serving one database and eight writers for WRITE_MS
 * (60 s): creates, updates, single and bulk deletes, bulk creates, and requests that fail or roll back
 * (an invalid PATCH, a bulk create whose second item clashes with its first, a bulk PATCH whose second
 * item clashes with its first: all refused whole). One API process is SIGKILLed at a sixth of the time and
 * restarted on its port at a third; on PostgreSQL the database is stopped (`pg_ctl stop -m fast`) for
 * OUTAGE_MS (10 s) at half time while the writers keep writing. PostgreSQL runs on a private cluster this
 * test starts (helpers/pg-private.ts), never the shared one.
 *
 * A consumer tails the stream (reconnecting by itself with Last-Event-ID to either process when its stream
 * ends, and every RECONNECT_MS anyway, so also during the outage, when new streams get 503), another polls
 * `after=` through both processes, and a third disconnects a quarter of the way in and resumes at the end
 * from its last id. The truth is the change log as stored (`extras_objectchange`, read from the database
 * once writing stopped): a request whose answer was lost (the process killed under it, or a 503 during
 * the outage) may or may not have committed. Each consumer must have received exactly the stored changes
 * (seq and change id), each once, in seq order; every write answered 2xx must be there, nothing of a
 * request that fails or rolls back whatever happens. Servers answer only 503 while the database is down.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { type PrivateCluster, privateClusterAvailable, startPrivateCluster } from "../helpers/pg-private.ts";
import { freePort, waitForOutput } from "../helpers/process.ts";
import { ENGINE, startServer, type TestServer } from "../helpers/server.ts";
import { openSse, type SseEvent } from "../helpers/sse.ts";
import { waitUntil } from "../helpers/wait.ts";

/** How long the writers write (ms). */
const WRITE_MS = 60_000;
const WRITERS = 8;
/** How long PostgreSQL is down (ms), from the end of `pg_ctl stop` to the start of `pg_ctl start`. */
const OUTAGE_MS = 10_000;
const OUTAGE = ENGINE === "postgres";
/** The stream consumer drops its connection after this long (ms) and reconnects with Last-Event-ID. */
const RECONNECT_MS = 7_000;

/** Where `got` first departs from `want`, for a readable failure ("" when equal). */
function departure(got: readonly string[], want: readonly string[]): string {
  for (let i = 0; i < Math.max(got.length, want.length); i++)
    if (got[i] !== want[i])
      return `at index ${i}: got ${got.slice(Math.max(0, i - 2), i + 3).join(",")} want ${want.slice(Math.max(0, i - 2), i + 3).join(",")} (lengths ${got.length}/${want.length})`;
  return "";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A feed entry as consumers see it. */
interface Entry {
  seq: number;
  id: string;
  action: string;
  changed_object_id: string;
  before: any;
  after: any;
}

describe("change feed consumers across API processes (issue 26)", {
  skip: OUTAGE && !privateClusterAvailable() && "no PostgreSQL server binaries for a private cluster",
}, () => {
  let pg: PrivateCluster | undefined;
  let s: TestServer;
  const ports: number[] = [];
  const children: Array<ChildProcess | undefined> = [];

  const spawnApi = async (i: number) => {
    const c = spawn(
      process.execPath,
      ["src/main.ts", "serve", "--port", String(ports[i]), "--no-worker", "--database", s.databaseUrl],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, INVENTORY_LOG_LEVEL: "warn", INVENTORY_FEED_HEARTBEAT_MS: "1000" },
      },
    );
    c.stderr!.resume();
    children[i] = c;
    await waitForOutput(c, "inventory listening");
    c.stdout!.resume();
  };

  before(async () => {
    if (OUTAGE) pg = await startPrivateCluster("feed-outage");
    s = await startServer({}, pg ? { databaseUrl: pg.url } : {});
    for (let i = 0; i < 2; i++) {
      ports.push(await freePort());
      await spawnApi(i);
    }
  });
  after(async () => {
    for (const c of children) if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
    await Promise.all(
      children.map((c) =>
        c && c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once("exit", r)) : undefined,
      ),
    );
    await s?.close();
    await pg?.destroy();
  });

  const call = async (port: number, path: string, method = "GET", body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        Authorization: `Token ${s.token}`,
        "Content-Type": "application/json",
        Accept: "application/json",
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await r.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: r.status, body: parsed };
  };

  it("stream and poll consumers receive every committed change once, in order, nothing failed", async (t) => {
    const start = Date.now();
    let stop = false;
    let gaveUp = false; // the test failed: background consumers stop too
    t.after(() => {
      stop = true;
      gaveUp = true;
    });
    // What 2xx answers promise is stored.
    const createdIds = new Set<string>();
    const updated = new Map<string, string>(); // description marker -> region id
    const deletedIds = new Set<string>();
    // Markers of requests that fail or roll back whatever happens: none may appear in the change log.
    const neverNames = new Set<string>();
    const neverDescriptions = new Set<string>();
    /** Answers by kind of request: "good 201", "failing 400", "good 503", … and "… lost" for no answer. */
    const statuses = new Map<string, number>();
    const unexpected: string[] = [];
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    const pick = () => ports[Math.floor(Math.random() * ports.length)]!;

    /**
     * One request of a writer. `ok` is the status of success (for a failing request the status it fails
     * with): any other answer but 503, or a lost answer, is recorded as unexpected.
     */
    const send = async (
      kind: string,
      ok: number,
      port: number,
      path: string,
      method: string,
      body?: unknown,
    ) => {
      try {
        const r = await call(port, path, method, body);
        count(`${kind} ${r.status}`);
        if (r.status !== ok && r.status !== 503)
          unexpected.push(
            `${method} ${path} (${kind}) answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`,
          );
        if (r.status === 503) await sleep(100);
        return r;
      } catch {
        count(`${kind} lost`); // the process was killed under the request: its outcome is unknown
        await sleep(100);
        return { status: 0, body: null };
      }
    };

    const writer = async (w: number) => {
      let n = 0;
      const mine: string[] = [];
      while (!stop) {
        n++;
        const port = pick();
        const tag = `w${w}-${n}`;
        switch (n % 6) {
          case 0:
          case 1: {
            const r = await send("good", 201, port, "/api/dcim/regions/", "POST", { name: tag, slug: tag });
            if (r.status === 201) {
              createdIds.add(r.body.id);
              mine.push(r.body.id);
            }
            break;
          }
          case 2: {
            if (!mine.length) break;
            const id = mine[Math.floor(Math.random() * mine.length)]!;
            const d = `u-${tag}`;
            const r = await send("good", 200, port, `/api/dcim/regions/${id}/`, "PATCH", { description: d });
            if (r.status === 200) updated.set(d, id);
            neverDescriptions.add(`bad-${tag}`);
            await send("failing", 400, pick(), `/api/dcim/regions/${id}/`, "PATCH", {
              description: `bad-${tag}`,
              parent: "not-a-region",
            });
            break;
          }
          case 3: {
            const r = await send("good", 201, port, "/api/dcim/regions/", "POST", [
              { name: `${tag}-a`, slug: `${tag}-a` },
              { name: `${tag}-b`, slug: `${tag}-b` },
            ]);
            if (r.status === 201)
              for (const o of r.body) {
                createdIds.add(o.id);
                mine.push(o.id);
              }
            // Rolled back: the first item is written, the second clashes with it.
            neverNames.add(`fail-${tag}`);
            await send("failing", 400, pick(), "/api/dcim/regions/", "POST", [
              { name: `fail-${tag}`, slug: `fail-${tag}` },
              { name: `fail-${tag}`, slug: `fail-${tag}` },
            ]);
            break;
          }
          case 4: {
            if (mine.length < 2) break;
            // Rolled back: the first item is renamed, the second clashes with it.
            neverNames.add(`rb-${tag}`);
            await send("failing", 400, port, "/api/dcim/regions/", "PATCH", [
              { id: mine[0], name: `rb-${tag}`, slug: `rb-${tag}` },
              { id: mine[1], name: `rb-${tag}`, slug: `rb-${tag}` },
            ]);
            break;
          }
          case 5: {
            if (mine.length < 6) break;
            if (n % 12 === 5) {
              const id = mine.shift()!;
              const r = await send("good", 204, port, `/api/dcim/regions/${id}/`, "DELETE");
              if (r.status === 204) deletedIds.add(id);
            } else {
              const ids = [mine.shift()!, mine.shift()!];
              const r = await send(
                "good",
                204,
                port,
                "/api/dcim/regions/",
                "DELETE",
                ids.map((id) => ({ id })),
              );
              if (r.status === 204) for (const id of ids) deletedIds.add(id);
            }
            break;
          }
        }
      }
    };

    // Consumer 1: tails the stream, reconnecting with Last-Event-ID to either process when its stream ends
    // and, as a client going away now and then, every RECONNECT_MS (so also while the database is down).
    const streamed: SseEvent[] = [];
    let reconnects = 0;
    const streamStatuses = new Map<number, number>();
    const tail = async () => {
      let i = 0;
      while (!gaveUp && (!stop || !caughtUp(streamed))) {
        const last = streamed.length ? streamed[streamed.length - 1]!.id : 0;
        const st = openSse(`http://127.0.0.1:${ports[i++ % 2]}/api/extras/object-changes/stream/`, {
          Authorization: `Token ${s.token}`,
          "Last-Event-ID": String(last),
        });
        let taken = 0;
        const dropAt = Date.now() + RECONNECT_MS;
        while (!gaveUp && !st.ended() && Date.now() < dropAt && (!stop || !caughtUp(streamed))) {
          while (taken < st.events.length) streamed.push(st.events[taken++]!);
          await sleep(20);
        }
        while (taken < st.events.length) streamed.push(st.events[taken++]!);
        await st.close();
        streamStatuses.set(st.status(), (streamStatuses.get(st.status()) ?? 0) + 1);
        reconnects++;
        await sleep(100);
      }
    };
    // Consumer 2: polls after= through both processes.
    const polled: Entry[] = [];
    const pollStatuses = new Map<number, number>();
    const poll = async () => {
      let i = 0;
      while (!gaveUp && (!stop || !caughtUpPolled())) {
        const after = polled.length ? polled[polled.length - 1]!.seq : 0;
        let status = 0; // 0: no answer (that process is down; the other one answers next time)
        try {
          const r = await call(ports[i++ % 2]!, `/api/extras/object-changes/feed/?after=${after}&limit=200`);
          status = r.status;
          if (r.status === 200) polled.push(...r.body.results);
        } catch {}
        pollStatuses.set(status, (pollStatuses.get(status) ?? 0) + 1);
        await sleep(30);
      }
    };
    let finalSeq = Number.POSITIVE_INFINITY;
    const caughtUp = (list: SseEvent[]) => list.length > 0 && list[list.length - 1]!.id >= finalSeq;
    const caughtUpPolled = () => polled.length > 0 && polled[polled.length - 1]!.seq >= finalSeq;

    // Consumer 3 connects now, is disconnected a quarter of the way in and resumes at the end from its last id.
    const early = openSse(`http://127.0.0.1:${ports[1]}/api/extras/object-changes/stream/?after=0`, {
      Authorization: `Token ${s.token}`,
    });

    const at = (fraction: number) => sleep(Math.max(0, start + WRITE_MS * fraction - Date.now()));
    const tailing = tail();
    const polling = poll();
    const writing = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await at(1 / 6);
    children[0]!.kill("SIGKILL");
    await new Promise((r) => children[0]!.once("exit", r));
    await at(1 / 4);
    await early.close();
    const earlyFirst = [...early.events];
    await at(1 / 3);
    await spawnApi(0);
    let outage = "none (SQLite)";
    if (pg) {
      await at(1 / 2);
      const t0 = Date.now();
      await pg.stop();
      const down = Date.now();
      await sleep(OUTAGE_MS);
      const t1 = Date.now();
      await pg.start();
      outage = `stop took ${down - t0} ms, down ${t1 - down} ms before pg_ctl start, start took ${Date.now() - t1} ms`;
    }
    await at(1);
    stop = true;
    await Promise.all(writing);

    // The truth: the change log as stored, read once writing stopped.
    const stored = (
      await sql<{ seq: unknown; id: string }>`SELECT seq, id FROM extras_objectchange ORDER BY seq`.execute(
        s.store.db,
      )
    ).rows;
    assert.deepEqual(
      stored.filter((r) => r.seq === null).map((r) => r.id),
      [],
      "every stored change has a seq",
    );
    const truth = stored.map((r) => `${Number(r.seq)}:${r.id}`);
    const seqs = stored.map((r) => Number(r.seq));
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, "seq strictly increasing");
    finalSeq = seqs.length ? seqs[seqs.length - 1]! : 0;

    const resumed = openSse(`http://127.0.0.1:${ports[0]}/api/extras/object-changes/stream/`, {
      Authorization: `Token ${s.token}`,
      "Last-Event-ID": String(earlyFirst.length ? earlyFirst[earlyFirst.length - 1]!.id : 0),
    });
    try {
      await waitUntil(
        async () => caughtUp(resumed.events) && caughtUp(streamed) && caughtUpPolled(),
        undefined,
        () =>
          `at ${finalSeq}: resumed consumer at ${resumed.events.at(-1)?.id} (status ${resumed.status()}), stream consumer at ${streamed.at(-1)?.id}, polling consumer at ${polled.at(-1)?.seq}`,
      );
    } finally {
      await resumed.close();
    }
    await Promise.all([tailing, polling]);

    assert.deepEqual(unexpected, [], "every answer is the expected one or a 503");
    assert.equal(
      departure(
        streamed.map((e) => `${e.id}:${e.data.id}`),
        truth,
      ),
      "",
      "the stream consumer got every stored change once, in order",
    );
    assert.equal(
      departure(
        polled.map((e) => `${e.seq}:${e.id}`),
        truth,
      ),
      "",
      "the polling consumer got every stored change once, in order",
    );
    assert.ok(earlyFirst.length > 0, "the third consumer got events before it disconnected");
    assert.equal(
      departure(
        [...earlyFirst, ...resumed.events].map((e) => `${e.id}:${e.data.id}`),
        truth,
      ),
      "",
      "the consumer disconnected mid-way resumed without gap or repeat",
    );

    // Every 2xx answer is in the log; nothing of a failing or rolled-back request is.
    const creates = new Set(polled.filter((e) => e.action === "create").map((e) => e.changed_object_id));
    const deletes = new Set(polled.filter((e) => e.action === "delete").map((e) => e.changed_object_id));
    const descriptions = new Map(
      polled.filter((e) => e.action === "update").map((e) => [e.after?.description, e.changed_object_id]),
    );
    for (const id of createdIds) assert.ok(creates.has(id), `the create of ${id} (answered 201) is stored`);
    for (const id of deletedIds) assert.ok(deletes.has(id), `the delete of ${id} (answered 204) is stored`);
    for (const [d, id] of updated)
      assert.equal(descriptions.get(d), id, `the update ${d} of ${id} (answered 200) is stored`);
    for (const e of polled)
      for (const data of [e.after, e.before]) {
        assert.ok(!neverNames.has(data?.name), `nothing of a rolled-back request: ${JSON.stringify(e)}`);
        assert.ok(
          !neverDescriptions.has(data?.description),
          `nothing of a failed request: ${JSON.stringify(e)}`,
        );
      }
    const seen = (kind: string, status: string) => statuses.get(`${kind} ${status}`) ?? 0;
    assert.ok(seen("failing", "400") > 0 && seen("good", "201") > 0, JSON.stringify([...statuses]));
    if (pg) {
      const n503 = seen("good", "503") + seen("failing", "503");
      assert.ok(n503 > 0, `the writers saw the outage: ${JSON.stringify([...statuses])}`);
    }
    t.diagnostic(`${seqs.length} stored changes (seq ${seqs[0]}..${finalSeq}); outage: ${outage}`);
    t.diagnostic(
      `received: stream ${streamed.length} (${reconnects} connections, statuses ${JSON.stringify([...streamStatuses])}), poll ${polled.length} (answers ${JSON.stringify([...pollStatuses])}), resumed ${earlyFirst.length} + ${resumed.events.length} (from ${resumed.events[0]?.id})`,
    );
    t.diagnostic(
      `writes: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; 2xx creates ${createdIds.size}, updates ${updated.size}, deletes ${deletedIds.size}; never-committable requests ${neverNames.size + neverDescriptions.size}`,
    );
  });
});
