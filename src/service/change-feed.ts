/**
 * The change sequence and the change feed (issue 26). Every ObjectChange gets `seq`, a number taken at
 * commit under one lock (`Dialect.stampCommitOrder`), so seq order is commit order and a reader that has
 * seen `seq = N` can never later see a change below N: the feed pages by `seq > after` with no gap and no
 * repeat. Generic over the registry: the feed is the change log, filtered by what the user may view.
 *
 * Retention: `purgeChanges` deletes changes older than a cutoff (in bounded batches) and records the highest
 * purged seq (`inventory_meta` row `change-feed-purged-through`); a feed position below it is gone
 * (`FeedGone`, answered 410 with the oldest available seq).
 */
import { sql } from "kysely";
import type { Model } from "../registry/index.ts";
import {
  CHANGE_SEQUENCE_LOCK as CHANGE_LOCK,
  CHANGE_SEQUENCE,
  CHANGES_PURGED_KEY,
} from "../store/migrate.ts";
import type { Ctx } from "./context.ts";
import { mayDo, restriction } from "./permissions.ts";

/** The named sequence of change numbers and its lock (store/migrate.ts). */
export { CHANGE_SEQUENCE };
/** Channel signalled at the commit of every change-logged transaction (PostgreSQL NOTIFY). */
export const CHANGES_CHANNEL = "inventory_changes";
/** `inventory_meta` row holding the highest purged seq (absent until something was purged). */
export const PURGED_KEY = CHANGES_PURGED_KEY;
/** Most changes one feed page returns (the `limit` bound). */
export const FEED_MAX_LIMIT = 1000;

/**
 * Number the ObjectChange rows `ids` (written by this transaction, in that order) at its commit.
 * Called by `flushChanges` as the transaction's last statement before COMMIT. With `always`, the transaction
 * gets a number even without changes (it wrote history only). Resolves to the SQL expression of the
 * transaction's commit number (`Dialect.stampCommitOrder`).
 */
export async function stampChanges(
  ctx: Ctx,
  ids: readonly string[],
  always = false,
): Promise<string | undefined> {
  return ctx.store.dialect.stampCommitOrder(ctx.db, {
    always,
    table: ctx.reg.get("extras.objectchange").table,
    column: "seq",
    ids,
    sequence: CHANGE_SEQUENCE,
    lock: CHANGE_LOCK,
    channel: CHANGES_CHANNEL,
  });
}

/** What a feed read asks for. */
export interface FeedQuery {
  /** Changes with seq strictly greater than this (0: from the start). */
  after: number;
  /** Most entries returned, 1..FEED_MAX_LIMIT. */
  limit: number;
  /** Content types (`dcim.device`); empty or absent: every type. */
  types?: readonly string[];
  /** Actions (`create`, `update`, `delete`); empty or absent: every action. */
  actions?: readonly string[];
  /** Only changes of this request. */
  requestId?: string;
}

/**
 * What a feed read returns as its body. `events`: one `text/event-stream` event per entry (`id: <seq>\nevent:
 * change\ndata: <JSON text>\n\n`, the change stream's). `page`: the whole feed page document
 * `{"next":<next URL>,"last_seq":N,"count":n,"results":[<entries>]}`, where the next URL is `nextUrl`
 * with `nextUrl.afterToken` replaced by the next position (a token that occurs once in it).
 */
export type FeedFormat = "events" | { page: { nextUrl: string; afterToken: string } };

/** One page of the feed, built by the database (no per-entry string in the process). */
export interface FeedPage {
  /**
   * The body `format` asked for, its entries in seq order ('' for none with `events`). Each entry's JSON
   * text is {seq, id (the ObjectChange's), time, user, user_name, request_id, action, changed_object_type,
   * changed_object_id, object_repr, before, after}. UTF-8 bytes on SQLite, text on PostgreSQL
   * (`Dialect.wireText`); either is written to the socket as it is.
   */
  body: Uint8Array | string;
  /** How many entries the page holds (0..limit). */
  count: number;
  /** Where the next page starts (`after` of the next read): the last seq returned, else `after`. */
  next: number;
}

/** A feed position below what retention kept (answered 410 Gone). */
export class FeedGone extends Error {
  override name = "FeedGone";
  /** The oldest seq still available (null when none). */
  readonly oldest: number | null;
  /** The highest purged seq. */
  readonly purgedThrough: number;
  constructor(oldest: number | null, purgedThrough: number) {
    super(`Changes up to ${purgedThrough} were purged; the oldest available is ${oldest ?? "none"}.`);
    this.oldest = oldest;
    this.purgedThrough = purgedThrough;
  }
}

/** The highest purged seq (0 when nothing was ever purged). */
export async function purgedThrough(ctx: Ctx): Promise<number> {
  const row = await ctx.db
    .selectFrom("inventory_meta")
    .select("value")
    .where("key", "=", PURGED_KEY)
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** The oldest seq still available above `above` (the purged position), or null. */
export async function oldestSeq(ctx: Ctx, above = 0): Promise<number | null> {
  const r = await ctx.db
    .selectFrom("extras_objectchange")
    .select((eb: any) => eb.fn.min("seq").as("m"))
    .where("seq", ">", above)
    .executeTakeFirst();
  const m = (r as { m?: unknown } | undefined)?.m;
  return m === null || m === undefined ? null : Number(m);
}

/** The highest seq committed so far (0 when none): the stream's cheap "anything new?" probe. */
export async function latestSeq(ctx: Ctx): Promise<number> {
  const r = await ctx.db
    .selectFrom("extras_objectchange")
    .select((eb: any) => eb.fn.max("seq").as("m"))
    .executeTakeFirst();
  const m = (r as { m?: unknown } | undefined)?.m;
  return m === null || m === undefined ? 0 : Number(m);
}

/**
 * The user's view restriction over the change log (alias `c`), or undefined for no restriction: the
 * object-change view permission (with its constraints) and, per changed object type, its view permission;
 * with a constrained view, only changes of objects that currently fall inside it (so changes of deleted
 * objects are shown only to users with an unconstrained view of their type).
 */
async function feedRestriction(ctx: Ctx): Promise<ReturnType<typeof sql<boolean>> | undefined> {
  if (!ctx.grants) return undefined;
  const oc = ctx.reg.get("extras.objectchange");
  const parts: Array<ReturnType<typeof sql<boolean>>> = [];
  const ocCond = await restriction(ctx, oc, "view");
  if (ocCond)
    parts.push(sql<boolean>`c.id IN (SELECT t.id FROM ${sql.table(oc.table)} AS t WHERE ${ocCond})`);
  const open: string[] = [];
  const constrained: Array<ReturnType<typeof sql<boolean>>> = [];
  for (const m of ctx.reg.models.values() as Iterable<Model>) {
    if (!m.changeLogged || !mayDo(ctx.grants, m, "view")) continue;
    const cond = await restriction(ctx, m, "view");
    if (!cond) open.push(m.key);
    else
      constrained.push(
        sql<boolean>`(c.changed_object_type = ${m.key} AND c.changed_object_id IN (SELECT t.id FROM ${sql.table(m.table)} AS t WHERE ${cond}))`,
      );
  }
  const anyType = [
    ...(open.length ? [sql<boolean>`c.changed_object_type IN (${sql.join(open)})`] : []),
    ...constrained,
  ];
  parts.push(anyType.length ? sql<boolean>`(${sql.join(anyType, sql` OR `)})` : sql<boolean>`1 = 0`);
  return sql<boolean>`${sql.join(parts, sql` AND `)}`;
}

/**
 * Read one page of the feed: the changes after `q.after` the user may view, in seq order, joined as
 * `format` asks. One statement: the page's rows (`seq > after ORDER BY seq LIMIT n` on the seq index)
 * aggregated into (count, last seq, body), so the process handles one value per page, not one per change
 * (where the dialect has `wireText`, SQLite; on PostgreSQL the page's rows, joined in the process).
 * The body is joined in the order the sorted rows reach the aggregate (an ORDER BY inside SQLite's
 * group_concat sorts the 1.5 MB of entries again and costs ~4× the whole read); the same aggregate step
 * lists the seqs, and a list that is not ascending makes the page be read again with the ordered aggregate.
 * @throws FeedGone when `q.after` is below the purged position.
 */
export async function readFeed(ctx: Ctx, q: FeedQuery, format: FeedFormat): Promise<FeedPage> {
  const purged = await purgedThrough(ctx);
  if (q.after < purged) throw new FeedGone(await oldestSeq(ctx, purged), purged);
  const conds = [sql<boolean>`c.seq > ${q.after}`];
  if (q.types?.length) conds.push(sql<boolean>`c.changed_object_type IN (${sql.join([...q.types])})`);
  if (q.actions?.length) conds.push(sql<boolean>`c.action IN (${sql.join([...q.actions])})`);
  if (q.requestId !== undefined) conds.push(sql<boolean>`c.request_id = ${q.requestId}`);
  const perm = await feedRestriction(ctx);
  if (perm) conds.push(perm);
  const entry =
    format === "events"
      ? sql`concat(${sql.lit("id: ")}, c.seq, ${sql.lit("\nevent: change\ndata: ")}, ${entrySql(ctx)}, ${sql.lit("\n\n")})`
      : entrySql(ctx);
  const limit = Math.max(1, Math.min(FEED_MAX_LIMIT, q.limit));
  const d = ctx.store.dialect;
  const page = format === "events" ? undefined : format.page;
  const [urlHead, urlTail] = page ? JSON.stringify(page.nextUrl).split(page.afterToken) : ["", ""];
  const rows = sql`SELECT c.seq AS s, ${entry} AS e FROM extras_objectchange AS c
    WHERE ${sql.join(conds, sql` AND `)} ORDER BY c.seq LIMIT ${limit}`;
  if (!d.wireText) {
    // PostgreSQL: the page's rows, joined here (its driver hands over text only; see Dialect.wireText).
    const r = await sql<{ s: unknown; e: string }>`${rows}`.execute(ctx.db);
    const n = r.rows.length;
    const next = n ? Number(r.rows[n - 1]!.s) : q.after;
    const entries = r.rows.map((x) => x.e);
    const body = page
      ? `{"next":${urlHead}${next}${urlTail},"last_seq":${next},"count":${n},"results":[${entries.join(",")}]}`
      : entries.join("");
    return { body, count: n, next };
  }
  const wire = d.wireText;
  const read = async (ordered: boolean) => {
    const by = ordered ? sql.ref("p.s") : undefined;
    const joined = sql`coalesce(${d.joinedText(sql.ref("p.e"), format === "events" ? "" : ",", by)}, '')`;
    let body = joined;
    if (page) {
      // The page document around the entries; the next position is spliced into the next URL's JSON text.
      const text = (s: string) => sql`CAST(${s} AS TEXT)`;
      // An integer, also when bound: node:sqlite binds a JS number as a REAL, which concat() writes as
      // "21877310.0" (schemathesis: an empty page after a large position gave that `last_seq`).
      const next = sql`coalesce(max(p.s), CAST(${q.after} AS INTEGER))`;
      body = sql`concat(${text(`{"next":${urlHead}`)}, ${next}, ${text(`${urlTail},"last_seq":`)}, ${next},
        ${sql.lit(',"count":')}, count(*), ${sql.lit(',"results":[')}, ${joined}, ${sql.lit("]}")})`;
    }
    const r = await sql<{ n: unknown; seqs: string | null; body: Uint8Array | string }>`SELECT
      count(*) AS n, ${d.joinedText(sql.ref("p.s"), ",", by)} AS seqs, ${wire(body)} AS body
      FROM (${rows}) AS p`.execute(ctx.db);
    const row = r.rows[0];
    const count = Number(row?.n ?? 0);
    return { count, last: lastOfAscending(row?.seqs ?? "", count, q.after), body: row?.body ?? "" };
  };
  let got = await read(false);
  if (got.last < 0) got = await read(true);
  return { body: got.body, count: got.count, next: got.last };
}

/**
 * The last of `count` comma-separated decimal seqs when they are strictly
 * ascending and all above `after`; -1 otherwise (the aggregate met the rows out of order).
 */
function lastOfAscending(list: string, count: number, after: number): number {
  if (count === 0) return after;
  let prev = after;
  let n = 0;
  let cur = -1;
  for (let i = 0; i <= list.length; i++) {
    const c = i < list.length ? list.charCodeAt(i) : 44;
    if (c === 44) {
      if (cur <= prev) return -1;
      prev = cur;
      cur = -1;
      n++;
    } else if (c >= 48 && c <= 57) cur = (cur < 0 ? 0 : cur * 10) + (c - 48);
    else return -1;
  }
  return n === count ? prev : -1;
}

/**
 * One feed entry's JSON text, built by the database (issue 26, feed read speed: no row objects of twelve
 * columns, no per-row JSON work in the process): {seq, id, time, user, user_name, request_id, action,
 * changed_object_type, changed_object_id, object_repr, before, after}. `before`/`after` are the stored
 * representations spliced in unparsed (JSON text written by us; "null" when empty): a delete's data is
 * its before, an update's prechange data its before, a create has no before.
 */
function entrySql(ctx: Ctx): ReturnType<typeof sql<string>> {
  const q = (col: string) => ctx.store.dialect.jsonQuote(sql.ref(`c.${col}`));
  const data = sql`CASE WHEN c.object_data IS NULL OR c.object_data = '' THEN 'null' ELSE c.object_data END`;
  const pre = sql`CASE WHEN c.prechange_data IS NULL OR c.prechange_data = '' THEN 'null' ELSE c.prechange_data END`;
  const before = sql`CASE c.action WHEN 'delete' THEN ${data} WHEN 'update' THEN ${pre} ELSE 'null' END`;
  const after = sql`CASE c.action WHEN 'delete' THEN 'null' ELSE ${data} END`;
  return sql<string>`concat('{"seq":', c.seq, ',"id":', ${q("id")}, ',"time":', ${q("time")}, ',"user":', ${q("user_id")},
    ',"user_name":', ${q("user_name")}, ',"request_id":', ${q("request_id")}, ',"action":', ${q("action")},
    ',"changed_object_type":', ${q("changed_object_type")}, ',"changed_object_id":', ${q("changed_object_id")},
    ',"object_repr":', ${ctx.store.dialect.jsonQuote(sql`coalesce(c.object_repr, '')`)}, ',"before":', ${before},
    ',"after":', ${after}, '}')`;
}

/**
 * Delete changes older than `cutoff` (stored time text), at most `batch` per call, oldest seq first, and
 * record the highest purged seq. Changes a webhook delivery still waits for are kept.
 * @returns how many changes were deleted.
 */
export async function purgeChanges(ctx: Ctx, cutoff: string, batch = 5000): Promise<number> {
  const rows = await sql<{ seq: unknown }>`SELECT c.seq FROM extras_objectchange AS c
    WHERE c.time < ${cutoff} AND c.seq IS NOT NULL ORDER BY c.seq LIMIT ${batch}`.execute(ctx.db);
  if (!rows.rows.length) return 0;
  const top = Number(rows.rows[rows.rows.length - 1]!.seq);
  const prev = await purgedThrough(ctx);
  const del = await sql`DELETE FROM extras_objectchange WHERE seq <= ${top} AND time < ${cutoff}
    AND NOT EXISTS (SELECT 1 FROM extras_webhookdelivery d WHERE d.object_change_id = extras_objectchange.id
      AND d.state IN ('queued', 'sending', 'retry'))`.execute(ctx.db);
  const value = String(Math.max(prev, top));
  await ctx.db
    .insertInto("inventory_meta")
    .values({ key: PURGED_KEY, value })
    .onConflict((oc: any) => oc.column("key").doUpdateSet({ value }))
    .execute();
  return Number(del.numAffectedRows ?? 0);
}
