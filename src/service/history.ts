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
import type { Model, Registry } from "../registry/index.ts";
import { joinTable } from "../store/ddl.ts";
import {
  COMMIT_TABLE,
  HISTORY_SINCE_KEY,
  HISTORY_SUFFIX,
  type LinkHistory,
  linkHistories,
  VERSION_TABLE,
  versioned,
} from "../store/history-schema.ts";
import { storedTime } from "../store/values.ts";
import type { Ctx } from "./context.ts";
import { AppError } from "./errors.ts";
import { changeList, chunks } from "./rows.ts";

/** Ids per statement. */
const CHUNK = 500;

export { versioned };

/** One entry of a transaction's change list, as far as history needs it. */
export interface VersionedChange {
  model: Model;
  id: string;
  action: "create" | "update" | "delete";
}

/**
 * What writing a version of each model takes, per registry: its history table, its columns and the link
 * tables whose rows it owns.
 */
const plans = new WeakMap<
  Registry,
  Map<string, { table: string; hist: string; cols: string; links: LinkHistory[] }>
>();

function planOf(reg: Registry, m: Model) {
  let byModel = plans.get(reg);
  if (!byModel) {
    byModel = new Map();
    plans.set(reg, byModel);
  }
  let plan = byModel.get(m.key);
  if (!plan) {
    plan = {
      table: `"${m.table}"`,
      hist: `"${m.table}${HISTORY_SUFFIX}"`,
      cols: m.columns.map((c) => `"${c.name}"`).join(", "),
      links: linkHistories(reg).filter((l) => l.models.some((o) => o.key === m.key)),
    };
    byModel.set(m.key, plan);
  }
  return plan;
}

/** Whether a change list holds a change of a versioned model (the transaction then needs a commit number). */
export function hasVersions(list: readonly VersionedChange[]): boolean {
  return list.some((c) => versioned(c.model));
}

/**
 * Queue the transaction's versions (see the module comment): per model a few statements whose text does
 * not depend on the number of objects (ids as one bound value, `Dialect.idList`), so SQLite
 * prepares each once. `seq` is the SQL expression of the transaction's commit number (`stampChanges`;
 * bound as a parameter when it is a plain number), `time` its stored time (ISO 8601).
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
  const d = ctx.store.dialect;
  // A statement of `parts`: text, a value bound at the next placeholder, or a list of ids bound as one
  // value and read back as rows (column `v`, `Dialect.idList`).
  const statement = (...parts: Array<string | { value: unknown } | { ids: readonly string[] }>) => {
    const params: unknown[] = [];
    const text = parts
      .map((p) => {
        if (typeof p === "string") return p;
        if ("ids" in p) {
          const list = d.idList(p.ids, params.length + 1);
          params.push(list.value);
          return list.sql;
        }
        params.push(p.value);
        return d.placeholder(params.length);
      })
      .join("");
    return CompiledQuery.raw(text, params);
  };
  const at = /^\d+$/.test(seq) ? { value: Number(seq) } : seq;
  const queries: CompiledQuery[] = [];
  for (const [key, actions] of last) {
    const { table, hist, cols, links } = planOf(ctx.reg, ctx.reg.models.get(key) ?? models.get(key)!);
    const live = [...actions].filter(([, a]) => a !== "delete").map(([id]) => id);
    const gone = [...actions].filter(([, a]) => a === "delete").map(([id]) => id);
    for (const part of chunks(live, CHUNK)) {
      const ids = { ids: part };
      queries.push(
        statement(
          `INSERT INTO ${hist} (${cols}, "_seq", "_deleted") SELECT ${cols}, `,
          at,
          `, 0 FROM ${table} WHERE "id" IN (`,
          ids,
          ")",
        ),
      );
      for (const l of links) {
        const lc = l.columns.map((c) => `"${c}"`).join(", ");
        queries.push(
          statement(
            `INSERT INTO "${l.table}${HISTORY_SUFFIX}" (${lc}, "_seq") SELECT ${lc}, `,
            at,
            ` FROM "${l.table}" WHERE "${l.owner}" IN (`,
            ids,
            ")",
          ),
        );
      }
    }
    for (const part of chunks(gone, CHUNK))
      queries.push(
        statement(
          `INSERT INTO ${hist} ("id", "_seq", "_deleted") SELECT v, `,
          at,
          ", 1 FROM (",
          { ids: part },
          ") AS x",
        ),
      );
    for (const [deleted, ids] of [
      [0, live],
      [1, gone],
    ] as const)
      for (const part of chunks(ids, CHUNK))
        queries.push(
          statement(
            `INSERT INTO ${VERSION_TABLE} (object_id, seq, deleted, content_type) SELECT v, `,
            at,
            `, ${deleted}, `,
            { value: key },
            " FROM (",
            { ids: part },
            ") AS x",
          ),
        );
  }
  queries.push(statement(`INSERT INTO ${COMMIT_TABLE} (seq, time) VALUES (`, at, ", ", { value: time }, ")"));
  await d.queueStatements(ctx.db, queries);
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
      for (const part of chunks(ids, CHUNK)) {
        const rows = await ctx.db
          .selectFrom(joinTable(rel.from, rel.field))
          .select("source_id")
          .where("target_id", "in", part)
          .execute();
        for (const r of rows)
          if (!doomed.get(rel.from.key)?.has(String(r.source_id))) owners.add(String(r.source_id));
      }
      noteSideEffects(ctx, rel.from, [...owners]);
    }
    if (key !== "extras.tag") continue;
    const byType = new Map<string, string[]>();
    for (const part of chunks(ids, CHUNK)) {
      const rows = await ctx.db
        .selectFrom("extras_taggeditem")
        .select(["content_type", "object_id"])
        .where("tag_id", "in", part)
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

/** The response header naming the point (commit sequence number) a read at a point reflects. */
export const AS_OF_HEADER = "X-Inventory-As-Of-Seq";

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
