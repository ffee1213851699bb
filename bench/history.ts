/**
 * History benchmark (issue 27): record `changes` changes (bulk PATCHes of the given interfaces, 1,000 per
 * request), then time the 1,000-device page live and at the point (`as_of_seq`), one request at a time, and
 * report what the history tables grew by on disk (per 100,000 changes).
 */
import { registry } from "../src/registry/index.ts";
import { openStore } from "../src/store/db.ts";
import { historySizes } from "../src/store/history-maintenance.ts";

/** What the history benchmark measured. */
export interface HistoryFigures {
  changes: number;
  /** Seconds the bulk PATCHes took (the write side of recording them). */
  writeSeconds: number;
  point: number;
  /** Median ms of the 1,000-device page, live and at the point; their ratio. */
  liveMs: number;
  asOfMs: number;
  ratio: number;
  /** History bytes on disk before and after, and per 100,000 changes. */
  bytesBefore: number;
  bytesAfter: number;
  bytesPer100k: number;
}

async function historyBytes(dbUrl: string): Promise<number> {
  const store = await openStore(dbUrl);
  try {
    return (await historySizes(store, registry())).reduce((n, s) => n + s.bytes, 0);
  } finally {
    await store.close();
  }
}

/** Median ms of `n` sequential GETs of `url`. */
async function median(url: string, headers: Record<string, string>, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function historyBench(
  base: string,
  headers: Record<string, string>,
  dbUrl: string,
  interfaces: readonly string[],
  opts: { changes: number; samples: number },
): Promise<HistoryFigures> {
  const bytesBefore = await historyBytes(dbUrl);
  const per = Math.min(1000, interfaces.length);
  const rounds = Math.ceil(opts.changes / per);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) {
    const r = await fetch(`${base}/api/dcim/interfaces/`, {
      method: "PATCH",
      headers,
      body: JSON.stringify(
        interfaces.slice(0, per).map((id, j) => ({ id, description: `history ${i}.${j}` })),
      ),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`bulk PATCH: ${r.status}`);
  }
  const writeSeconds = (performance.now() - t0) / 1000;
  const now = await fetch(
    `${base}/api/dcim/devices/?limit=1&as_of=${encodeURIComponent(new Date().toISOString())}`,
    {
      headers,
    },
  );
  await now.arrayBuffer();
  const point = Number(now.headers.get("x-inventory-as-of-seq"));
  const page = `${base}/api/dcim/devices/?limit=1000`;
  // Warm both, then measure.
  await median(page, headers, 3);
  await median(`${page}&as_of_seq=${point}`, headers, 3);
  const liveMs = await median(page, headers, opts.samples);
  const asOfMs = await median(`${page}&as_of_seq=${point}`, headers, opts.samples);
  const bytesAfter = await historyBytes(dbUrl);
  const changes = rounds * per;
  return {
    changes,
    writeSeconds,
    point,
    liveMs,
    asOfMs,
    ratio: asOfMs / liveMs,
    bytesBefore,
    bytesAfter,
    bytesPer100k: ((bytesAfter - bytesBefore) / changes) * 100_000,
  };
}
