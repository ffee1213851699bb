/**
 * Change feed benchmark (issue 26), against running servers:
 *
 * - Read: the feed from seq 0 in pages of 1,000 (`GET /api/extras/object-changes/feed/?after=N&limit=1000`,
 *   one request at a time, following `last_seq`) until `want` changes were read; changes/s. The walk then
 *   goes on, untimed, to the end of the feed, to learn the latest seq. Walked twice: the first walk is the
 *   feed's first read on this server (cold: its SQLite page cache holds none of the change log), the
 *   second warm. Besides wall time, the server process's CPU time during each timed part (/proc, user +
 *   system, every thread: GC included), as changes per CPU-second: the wall figure depends on what else
 *   runs on the machine, the CPU figure much less.
 * - Stream latency: a client follows the change stream of one process (`streamBase`) from the latest seq
 *   while `writes` tenants are created one at a time through another (`writeBase`: 2 processes, so the
 *   wake-up crosses processes: PostgreSQL LISTEN/NOTIFY, SQLite's poll of the highest seq). For each
 *   change, the event's arrival minus the change's recorded `time` (taken in the write transaction); p50/p99
 *   in ms.
 */

import { readFileSync } from "node:fs";

/** Figures of the feed benchmark. */
export interface FeedFigures {
  changesRead: number;
  readSeconds: number;
  /** Wall changes/s of the first (cold) walk. */
  changesPerSec: number;
  /** Wall changes/s of the second (warm) walk. */
  warmChangesPerSec: number;
  /** Server CPU ms per 1,000-change page, cold and warm walk (null without a server pid). */
  coldCpuMsPerPage: number | null;
  warmCpuMsPerPage: number | null;
  /** Changes per server CPU-second, cold and warm walk. */
  coldChangesPerCpuSec: number | null;
  warmChangesPerCpuSec: number | null;
  streamEvents: number;
  streamP50Ms: number;
  streamP99Ms: number;
}

const pct = (sorted: number[], p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : Number.NaN;

/** CPU ms (user + system, all threads) process `pid` used so far, from /proc (USER_HZ 100); 0 without. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * Walk the feed from 0; the first `want` changes timed (wall, and CPU of server `pid`).
 * @returns the figures and the latest seq.
 */
async function readWalk(base: string, headers: Record<string, string>, want: number, pid?: number) {
  let after = 0;
  let read = 0;
  let seconds = 0;
  let pages = 0;
  let cpu = 0;
  const c0 = cpuMs(pid);
  const t0 = performance.now();
  for (;;) {
    const r = await fetch(`${base}/api/extras/object-changes/feed/?after=${after}&limit=1000`, { headers });
    // The page is received whole but only its head is read (last_seq and count come before the results):
    // the figure is the server's, not this client's JSON parsing.
    const body = new Uint8Array(await r.arrayBuffer());
    const head = new TextDecoder().decode(body.subarray(0, 2000));
    const m = /"last_seq":(-?\d+),"count":(\d+)/.exec(head);
    if (r.status !== 200 || !m) throw new Error(`feed: ${r.status} ${head.slice(0, 300)}`);
    const count = Number(m[2]);
    if (read < want) {
      read += count;
      pages++;
      if (read >= want || count < 1000) {
        seconds = (performance.now() - t0) / 1000;
        cpu = cpuMs(pid) - c0;
      }
    }
    after = Number(m[1]);
    if (count < 1000) break;
  }
  return {
    read,
    seconds,
    latest: after,
    cpuMsPerPage: pid === undefined ? null : cpu / Math.max(1, pages),
    perCpuSec: pid === undefined || cpu <= 0 ? null : read / (cpu / 1000),
  };
}

/** Follow the stream of `base` from `after`; calls `onEvent(arrivalMs, data)` per change. */
function follow(
  base: string,
  headers: Record<string, string>,
  after: number,
  onEvent: (at: number, data: any) => void,
) {
  const ac = new AbortController();
  const done = (async () => {
    const r = await fetch(`${base}/api/extras/object-changes/stream/?after=${after}`, {
      headers: { ...headers, Accept: "text/event-stream" },
      signal: ac.signal,
    });
    if (r.status !== 200 || !r.body) throw new Error(`stream: ${r.status}`);
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of r.body) {
      const at = Date.now();
      buf += dec.decode(chunk as Uint8Array, { stream: true });
      for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split("\n").find((l) => l.startsWith("data: "));
        if (data && block.includes("event: change")) onEvent(at, JSON.parse(data.slice(6)));
      }
    }
  })().catch((e) => {
    if (!ac.signal.aborted) throw e;
  });
  return { close: () => ac.abort(), done };
}

/** Run the feed benchmark: read `want` changes through `streamBase`'s feed, then `writes` stream latencies. */
export async function feedBench(
  streamBase: string,
  writeBase: string,
  headers: Record<string, string>,
  opts: { want: number; writes: number; serverPid?: number },
): Promise<FeedFigures> {
  const walk = await readWalk(streamBase, headers, opts.want, opts.serverPid);
  const warm = await readWalk(streamBase, headers, opts.want, opts.serverPid);
  const latencies: number[] = [];
  const names = new Set<string>();
  const stream = follow(streamBase, headers, walk.latest, (at, data) => {
    if (data.changed_object_type !== "tenancy.tenant" || !names.has(data.object_repr)) return;
    latencies.push(at - Date.parse(data.time));
  });
  const tag = Math.random().toString(36).slice(2, 8);
  for (let i = 0; i < opts.writes; i++) {
    const name = `feed bench ${tag} ${i}`;
    names.add(name);
    const r = await fetch(`${writeBase}/api/tenancy/tenants/`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name }),
    });
    await r.arrayBuffer();
    if (r.status !== 201) throw new Error(`tenant: ${r.status}`);
    // Wait for this change's event (at most 5 s), so each latency is one change's, not a queue's.
    for (const t0 = Date.now(); latencies.length <= i && Date.now() - t0 < 5000; )
      await new Promise((r) => setTimeout(r, 1));
  }
  stream.close();
  await stream.done;
  const sorted = latencies.sort((a, b) => a - b);
  return {
    changesRead: walk.read,
    readSeconds: walk.seconds,
    changesPerSec: walk.read / walk.seconds,
    warmChangesPerSec: warm.read / warm.seconds,
    coldCpuMsPerPage: walk.cpuMsPerPage,
    warmCpuMsPerPage: warm.cpuMsPerPage,
    coldChangesPerCpuSec: walk.perCpuSec,
    warmChangesPerCpuSec: warm.perCpuSec,
    streamEvents: latencies.length,
    streamP50Ms: pct(sorted, 50),
    streamP99Ms: pct(sorted, 99),
  };
}
