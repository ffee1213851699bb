/**
 * History (issue 27): every version of every versioned object, written by the transaction that made it, and
 * the points reads may ask for.
 *
 * At commit (`flushChanges`, after the change sequence numbered the transaction's changes) the final state of
 * each object the transaction touched is copied from its live row into `<table>__hist` under the
 * transaction's commit number, with its link rows (M2M, content types, tags); a deleted object gets a
 * deletion version. The copy is `INSERT … SELECT` from the live tables, so a version is exactly what the
 * transaction committed, whatever code path wrote it (also components created from templates, which the
 * change log leaves out as Nautobot does). Tables and views: store/history-schema.ts; reads at a point:
 * store/as-of.ts.
 */
import { CompiledQuery, sql } from "kysely";
import type { Model } from "../registry/index.ts";
import { joinTable } from "../store/ddl.ts";
import {
  COMMIT_TABLE,
  HISTORY_SINCE_KEY,
  HISTORY_SUFFIX,
  linkHistories,
  VERSION_TABLE,
  versioned,
} from "../store/history-schema.ts";
import { storedTime } from "../store/values.ts";
import type { Ctx } from "./context.ts";
import { AppError } from "./errors.ts";
import { changeList } from "./rows.ts";

export { versioned };

/** One entry of a transaction's change list, as far as history needs it. */
export interface VersionedChange {
  model: Model;
  id: string;
  action: "create" | "update" | "delete";
}

/** Ids per statement. */
const CHUNK = 500;

/** `ids` as SQL string literals (UUIDs and content-type-like ids only: they are written into the text). */
function literals(ids: readonly string[]): string {
  return ids
    .map((id) => {
      if (!/^[0-9A-Za-z._-]{1,64}$/.test(id)) throw new Error(`history: unexpected id ${id}`);
      return `'${id}'`;
    })
    .join(",");
}

/** Whether a change list holds a change of a versioned model (the transaction then needs a commit number). */
export function hasVersions(list: readonly VersionedChange[]): boolean {
  return list.some((c) => versioned(c.model));
}

/**
 * Queue the transaction's versions (see the module comment). `seq` is the SQL expression of the
 * transaction's commit number (`stampChanges`), `time` its stored time (ISO 8601).
 */
export async function recordVersions(
  ctx: Ctx,
  list: readonly VersionedChange[],
  seq: string,
  time: string,
): Promise<void> {
  // The last action per object decides: deleted, or its live row as committed.
  const last = new Map<string, Map<string, VersionedChange["action"]>>();
  const models = new Map<string, Model>();
  for (const c of list) {
    if (!versioned(c.model)) continue;
    models.set(c.model.key, c.model);
    const m = last.get(c.model.key) ?? new Map<string, VersionedChange["action"]>();
    last.set(c.model.key, m);
    m.delete(c.id);
    m.set(c.id, c.action);
  }
  if (!last.size) return;
  const run = (text: string) => ctx.store.dialect.queueStatement(ctx.db, CompiledQuery.raw(text, []));
  const links = linkHistories(ctx.reg);
  const versions: string[] = [];
  for (const [key, actions] of last) {
    const m = ctx.reg.models.get(key) ?? models.get(key)!;
    const hist = `"${m.table}${HISTORY_SUFFIX}"`;
    const live = [...actions].filter(([, a]) => a !== "delete").map(([id]) => id);
    const gone = [...actions].filter(([, a]) => a === "delete").map(([id]) => id);
    const cols = m.columns.map((c) => `"${c.name}"`).join(", ");
    for (let i = 0; i < live.length; i += CHUNK) {
      const part = literals(live.slice(i, i + CHUNK));
      await run(
        `INSERT INTO ${hist} (${cols}, "_seq", "_deleted") SELECT ${cols}, ${seq}, 0 FROM "${m.table}" WHERE "id" IN (${part})`,
      );
      for (const l of links) {
        if (!l.models.some((o) => o.key === key)) continue;
        const lc = l.columns.map((c) => `"${c}"`).join(", ");
        await run(
          `INSERT INTO "${l.table}${HISTORY_SUFFIX}" (${lc}, "_seq") SELECT ${lc}, ${seq} FROM "${l.table}" WHERE "${l.owner}" IN (${part})`,
        );
      }
    }
    for (let i = 0; i < gone.length; i += CHUNK) {
      const values = literals(gone.slice(i, i + CHUNK))
        .split(",")
        .map((v) => `(${v})`)
        .join(",");
      await run(
        `INSERT INTO ${hist} ("id", "_seq", "_deleted") SELECT column1, ${seq}, 1 FROM (VALUES ${values}) AS x`,
      );
    }
    for (const [id, a] of actions)
      versions.push(`(${literals([id])}, ${seq}, ${a === "delete" ? 1 : 0}, ${literals([key])})`);
  }
  for (let i = 0; i < versions.length; i += CHUNK)
    await run(
      `INSERT INTO ${VERSION_TABLE} (object_id, seq, deleted, content_type) VALUES ${versions.slice(i, i + CHUNK).join(",")}`,
    );
  if (!/^[0-9T:.+\- Z]+$/.test(time)) throw new Error(`history: unexpected time ${time}`);
  await run(`INSERT INTO ${COMMIT_TABLE} (seq, time) VALUES (${seq}, '${time}')`);
}

/**
 * Note rows a write changed as a side effect, which the change log leaves out as Nautobot does (SET_NULL
 * of a deleted object's referrers, link rows removed with it): they get a version at commit all the same.
 */
export function noteSideEffects(ctx: Ctx, model: Model, ids: readonly string[]): void {
  if (!versioned(model)) return;
  const list = changeList(ctx);
  for (const id of ids) list.push({ model, id, action: "update", logged: false });
}

/**
 * Before a delete removes the link rows pointing at the doomed objects (other objects' M2M rows, the tagged
 * items of a deleted tag), note their owners' new versions (`noteSideEffects`). One query per relation
 * that may hold such rows.
 */
export async function linkOwnersOfDoomed(
  ctx: Ctx,
  doomed: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<void> {
  for (const [key, set] of doomed) {
    const ids = [...set];
    for (const rel of ctx.reg.reverseOf(key)) {
      if (rel.def.kind !== "m2m" || !versioned(rel.from)) continue;
      const owners = new Set<string>();
      for (let i = 0; i < ids.length; i += CHUNK) {
        const rows = await ctx.db
          .selectFrom(joinTable(rel.from, rel.field))
          .select("source_id")
          .where("target_id", "in", ids.slice(i, i + CHUNK))
          .execute();
        for (const r of rows)
          if (!doomed.get(rel.from.key)?.has(String(r.source_id))) owners.add(String(r.source_id));
      }
      noteSideEffects(ctx, rel.from, [...owners]);
    }
    if (key !== "extras.tag") continue;
    const byType = new Map<string, string[]>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await ctx.db
        .selectFrom("extras_taggeditem")
        .select(["content_type", "object_id"])
        .where("tag_id", "in", ids.slice(i, i + CHUNK))
        .execute();
      for (const r of rows) {
        const t = String(r.content_type);
        if (doomed.get(t)?.has(String(r.object_id))) continue;
        byType.set(t, [...(byType.get(t) ?? []), String(r.object_id)]);
      }
    }
    for (const [t, owners] of byType) {
      const m = ctx.reg.models.get(t);
      if (m) noteSideEffects(ctx, m, [...new Set(owners)]);
    }
  }
}

/** Error for a point history cannot answer (400). */
export class AsOfError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

/** The range of points reads may ask for: from the first backfill to the last committed transaction. */
export async function historyRange(ctx: Ctx): Promise<{ since: number; latest: number }> {
  const r = await sql<{ since: unknown; latest: unknown }>`SELECT
      (SELECT value FROM inventory_meta WHERE key = ${HISTORY_SINCE_KEY}) AS since,
      (SELECT max(seq) FROM ${sql.table(COMMIT_TABLE)}) AS latest`.execute(ctx.db);
  const row = r.rows[0];
  const since = row?.since === null || row?.since === undefined ? 0 : Number(row.since);
  const latest = row?.latest === null || row?.latest === undefined ? since : Number(row.latest);
  return { since, latest: Math.max(since, latest) };
}

/**
 * The point (a commit sequence number) a read asks for: `as_of_seq=<N>` as it is, `as_of=<RFC 3339 time>`
 * as the last transaction committed at or before that time. @throws AsOfError (400) for a malformed value,
 * both at once, a point before history begins (`history-since`) or after the last commit, or a time in
 * the future.
 */
export async function resolvePoint(
  ctx: Ctx,
  asOf: string | undefined,
  asOfSeq: string | undefined,
): Promise<number> {
  if (asOf !== undefined && asOfSeq !== undefined) throw new AsOfError("Give as_of or as_of_seq, not both.");
  const { since, latest } = await historyRange(ctx);
  if (asOfSeq !== undefined) {
    if (!/^\d{1,15}$/.test(asOfSeq)) throw new AsOfError("as_of_seq: a change sequence number is required.");
    const n = Number(asOfSeq);
    if (n < since)
      throw new AsOfError(`as_of_seq: history begins at ${since}; ${n} is before it (retention).`);
    if (n > latest) throw new AsOfError(`as_of_seq: ${n} is in the future; the last change is ${latest}.`);
    return n;
  }
  const text = asOf ?? "";
  const t = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (Number.isNaN(t)) throw new AsOfError("as_of: an RFC 3339 date-time is required.");
  if (t > Date.now()) throw new AsOfError("as_of: the time is in the future.");
  const iso = storedTime(t);
  const r = await sql<{ seq: unknown }>`SELECT max(seq) AS seq FROM ${sql.table(COMMIT_TABLE)}
    WHERE time <= ${iso}`.execute(ctx.db);
  const found = r.rows[0]?.seq;
  if (found === null || found === undefined || Number(found) < since)
    throw new AsOfError(`as_of: history begins at ${await sinceTime(ctx, since)}; ${text} is before it.`);
  return Number(found);
}

/** The time of the first point history answers for. */
async function sinceTime(ctx: Ctx, since: number): Promise<string> {
  const r = await sql<{ time: unknown }>`SELECT time FROM ${sql.table(COMMIT_TABLE)} WHERE seq >= ${since}
    ORDER BY seq LIMIT 1`.execute(ctx.db);
  return String(r.rows[0]?.time ?? "its start");
}
