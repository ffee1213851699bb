/**
 * The change feed's bytes (issue 26, feed read speed: the page is built by the database, on SQLite as one
 * BLOB written to the socket as it is): black-box on SQLite and PostgreSQL, pages of 1,000 changes whose
 * text holds quotes, backslashes, control characters, U+2028, CJK and non-BMP characters are valid JSON
 * with the declared Content-Length; `count`, `last_seq` and `next` agree with the results; and the change
 * stream's event data are, byte for byte, the feed's entries (the results array of each page is the
 * stream's data texts joined by commas).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { HANG_MS } from "../helpers/wait.ts";

const TRICKY = 'q"uote \\back\\slash \u0001\u001f tab\t nl\n \u2028 中文 😀 é';

describe("change feed bytes (issue 26)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({
      changeFeed: {
        maxStreams: 10,
        heartbeatMs: 15_000,
        streamBufferBytes: 1024 * 1024,
        drainTimeoutMs: 30_000,
        pollMs: 20,
        retentionDays: 0,
        purgeIntervalMs: 60_000,
        historyRetentionDays: 0,
      },
    });
  });
  after(async () => {
    await s?.close();
  });

  it("pages of 1,000 with hard text are exact JSON, and the stream carries the same entry bytes", async () => {
    const total = 2500;
    for (let b = 0; b < total; b += 500) {
      const r = await s.api("/api/tenancy/tenants/", {
        method: "POST",
        body: Array.from({ length: 500 }, (_, i) => ({
          name: `bytes ${b + i} 😀 "${b + i}"`,
          description: `${TRICKY} ${b + i}`,
        })),
      });
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    }
    // The feed, raw: pages of 1,000 filtered to tenants.
    const auth = { Authorization: `Token ${s.token}` };
    let url = `${s.url}/api/extras/object-changes/feed/?type=tenancy.tenant&after=0&limit=1000`;
    const results: string[] = [];
    const entries: any[] = [];
    for (let page = 0; page < 10; page++) {
      const r = await fetch(url, { headers: { ...auth, Accept: "application/json" } });
      const bytes = new Uint8Array(await r.arrayBuffer());
      assert.equal(r.status, 200);
      assert.equal(Number(r.headers.get("content-length")), bytes.length);
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      const body = JSON.parse(text);
      assert.equal(body.count, body.results.length);
      const last = body.results.length
        ? body.results[body.results.length - 1].seq
        : Number(new URL(url).searchParams.get("after"));
      assert.equal(body.last_seq, last);
      const next = new URL(body.next);
      assert.equal(next.searchParams.get("after"), String(last));
      assert.equal(next.searchParams.get("type"), "tenancy.tenant");
      assert.equal(next.searchParams.get("limit"), "1000");
      const open = text.indexOf('"results":[') + '"results":['.length;
      assert.ok(text.endsWith("]}"));
      if (body.results.length) results.push(text.slice(open, -2));
      entries.push(...body.results);
      if (body.results.length < 1000) break;
      url = body.next;
    }
    assert.equal(entries.length, total);
    for (let i = 0; i < total; i++) {
      const e = entries[i];
      if (i) assert.ok(e.seq > entries[i - 1].seq);
      assert.equal(e.action, "create");
      assert.equal(e.before, null);
      const n = Number(/^bytes (\d+) /.exec(e.object_repr)?.[1]);
      assert.equal(e.object_repr, `bytes ${n} 😀 "${n}"`);
      assert.equal(e.after.description, `${TRICKY} ${n}`);
    }
    // The stream from 0, raw, until every tenant change arrived: its data texts joined by commas are the
    // feed's results arrays.
    const ac = new AbortController();
    const r = await fetch(`${s.url}/api/extras/object-changes/stream/?type=tenancy.tenant&after=0`, {
      headers: { ...auth, Accept: "text/event-stream" },
      signal: ac.signal,
    });
    assert.equal(r.status, 200);
    const data: string[] = [];
    const ids: number[] = [];
    const dec = new TextDecoder("utf-8", { fatal: true });
    let buf = "";
    const deadline = Date.now() + HANG_MS;
    const reader = r.body!.getReader();
    while (data.length < total) {
      assert.ok(Date.now() < deadline, `stream hung at ${data.length} events`);
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const m = /^id: (\d+)\nevent: change\ndata: (.*)$/s.exec(block);
        if (!m) continue; // the position comment, heartbeats
        ids.push(Number(m[1]));
        data.push(m[2]!);
      }
    }
    ac.abort();
    assert.equal(data.length, total);
    assert.deepEqual(
      ids,
      entries.map((e) => e.seq),
    );
    const pages: string[] = [];
    for (let i = 0; i < total; i += 1000) pages.push(data.slice(i, i + 1000).join(","));
    assert.deepEqual(pages, results);
  });

  it("an empty page after a large position gives that position as an integer (schemathesis case)", async () => {
    const r = await fetch(`${s.url}/api/extras/object-changes/feed/?action=update&limit=193&after=21877310`, {
      headers: { Authorization: `Token ${s.token}`, Accept: "application/json" },
    });
    assert.equal(r.status, 200);
    const text = await r.text();
    assert.match(text, /"last_seq":21877310,"count":0,"results":\[\]\}$/);
    assert.match(text, /after=21877310"/);
    assert.equal(JSON.parse(text).last_seq, 21877310);
  });
});
