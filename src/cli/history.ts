/**
 * `inventory history prune --before <time|seq>` and `inventory history size` (issue 27): history retention
 * by hand (the API processes prune by INVENTORY_HISTORY_RETENTION_DAYS), and what history takes on disk.
 */
import { registry } from "../registry/index.ts";
import { makeCtx } from "../service/context.ts";
import { resolvePoint } from "../service/history.ts";
import { historySizes, pruneHistory } from "../store/history-maintenance.ts";
import { type DbOpts, open } from "./commands.ts";

/** `inventory history prune --before X`: X is a change sequence number or an RFC 3339 time. */
export async function runHistoryPrune(opts: DbOpts & { before: string }): Promise<void> {
  const store = await open(opts);
  try {
    const reg = registry();
    const ctx = makeCtx({ store, reg, settings: { enforceGlobalUnique: false, changelog: false } });
    const isSeq = /^\d+$/.test(opts.before);
    const point = await resolvePoint(ctx, isSeq ? undefined : opts.before, isSeq ? opts.before : undefined);
    const r = await pruneHistory(store, reg, point);
    process.stdout.write(`history begins at ${r.since}; ${r.removed} version rows removed\n`);
  } finally {
    await store.close();
  }
}

/** `inventory history size`: rows and bytes of each history table, and the total. */
export async function runHistorySize(opts: DbOpts): Promise<void> {
  const store = await open(opts);
  try {
    const sizes = await historySizes(store, registry());
    let rows = 0;
    let bytes = 0;
    for (const s of sizes) {
      rows += s.rows;
      bytes += s.bytes;
      if (s.rows) process.stdout.write(`${s.table}\t${s.rows} rows\t${s.bytes} bytes\n`);
    }
    process.stdout.write(`total\t${rows} rows\t${bytes} bytes\n`);
  } finally {
    await store.close();
  }
}
