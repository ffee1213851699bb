/**
 * Allocation inside a parent prefix: the free addresses and free child prefixes of a prefix, and creating
 * the next free ones (Nautobot 1.6 `PrefixViewSet.available_ips` / `available_prefixes`,
 * `Prefix.get_available_ips` / `get_available_prefixes`; shared/reference/nautobot-models.md §3.4).
 *
 * Free space is computed from the stored range keys with index range scans, walking occupied hosts in
 * batches, so a /8 or an IPv6 /64 is never enumerated. Creating goes through `createObject` (validation,
 * change log, webhooks) inside one transaction. Addresses are claimed one by one (`Dialect.claim`), so
 * concurrent allocators, in any process, never hand out the same address and do not wait for each other;
 * prefixes are allocated under one lock (`Dialect.transactionLock`), which serialises their allocators.
 * Nautobot holds a cache lock with a 5 s wait and promises neither.
 */
import { sql } from "kysely";
import { type Family, formatAddress, ipKey } from "../net/ip.ts";
import type { Model } from "../registry/index.ts";
import { ADDRESS_SPACE_KEY } from "../store/db.ts";
import type { Claimed } from "../store/dialect.ts";
import type { Ctx } from "./context.ts";
import { AppError, ClaimAheadFailed, ValidationError } from "./errors.ts";
import { prefetchRows, type Row, statusesById } from "./rows.ts";
import { createMany, createObject, inTransaction } from "./write.ts";

/** 204 with Nautobot's `detail` when the parent has no room; nothing is created. */
export class InsufficientSpaceError extends AppError {
  override name = "InsufficientSpaceError";
  constructor(detail: string) {
    super(204, detail);
  }
}

/** A parent prefix as the allocator sees it. */
interface Parent {
  id: string;
  family: Family;
  bits: number;
  start: bigint;
  end: bigint;
  length: number;
  vrfId: string | null;
  /** Global-table container: children in every VRF count (Nautobot `get_child_prefixes`/`get_child_ips`). */
  anyVrf: boolean;
  isPool: boolean;
  text: string;
}

/** One free address (Nautobot `AvailableIPSerializer`: the parent's mask length). */
export interface FreeAddress {
  family: Family;
  address: string;
  vrf: string | null;
}

/** One free block (Nautobot `AvailablePrefixSerializer`). */
export interface FreePrefix {
  family: Family;
  prefix: string;
  vrf: string | null;
}

const LOCK_PREFIXES = "available-prefixes";
/** Occupied hosts read per query while walking a prefix. */
const HOST_BATCH = 1000;

async function parentOf(ctx: Ctx, row: Row): Promise<Parent> {
  const family = Number(row.prefix_family) as Family;
  const status = (await statusesById(ctx)).get(row.status_id as string);
  return {
    id: String(row.id),
    family,
    bits: family === 4 ? 32 : 128,
    start: BigInt(`0x${row.prefix_start}`),
    end: BigInt(`0x${row.prefix_end}`),
    length: Number(row.prefix_len),
    vrfId: (row.vrf_id as string | null) ?? null,
    anyVrf: !row.vrf_id && status?.slug === "container",
    isPool: !!row.is_pool,
    text: String(row.prefix),
  };
}

/** The VRF scope of children: the parent's VRF (or the global table), or every VRF for a global container. */
function inScope<Q extends { where: (...a: any[]) => Q }>(q: Q, p: Parent): Q {
  if (p.anyVrf) return q;
  return p.vrfId === null ? q.where("vrf_id", "is", null) : q.where("vrf_id", "=", p.vrfId);
}

/** Ascending order of addresses (bigint: `a - b` is not a sort comparator's number). */
const byValue = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** First and last address that may be handed out: IPv4 shorter than /31 and not a pool loses both ends. */
function usable(p: Parent): [bigint, bigint] {
  if (p.family === 4 && !p.isPool && p.length < 31) return [p.start + 1n, p.end - 1n];
  return [p.start, p.end];
}

/**
 * Where this process last found the first free address of a parent: every usable address below `next` was
 * taken when the address-space token (store/db.ts ADDRESS_SPACE_KEY) read `space`. While the token keeps that
 * value no address has been freed since, so the next scan may start at `next` instead of at the parent's
 * first address (one short scan per allocation, instead of one over every allocated address: 3,000 taken
 * addresses cost about 3 ms of scanning per allocation on PostgreSQL). A hint never makes an allocation pick a
 * taken address: the scan still reads what is taken from `next` on. Per store, keyed by the parent's id and
 * the range and scope it had; bounded in size. `next` moves on as this process's allocations hand addresses
 * out (`handedOut`), and an allocation claims the addresses from `next` on that no other one of this process
 * is claiming (`claimAfterHint`), so concurrent allocators of one process do not collide.
 */
type Hint = {
  next: bigint;
  space: string | null;
  /** Addresses at or above `next` that allocations of this process are claiming ahead now (`claimAfterHint`). */
  inFlight: Set<bigint>;
  /** Addresses above `next` that allocations of this process handed out (`handedOut`), passed once reached. */
  done: Set<bigint>;
};
const hints = new WeakMap<object, Map<string, Hint>>();

/** The map of `ctx`'s store in a per-store registry (created empty on first use). */
function ofStore<V>(registry: WeakMap<object, Map<string, V>>, ctx: Ctx): Map<string, V> {
  let m = registry.get(ctx.store);
  if (!m) {
    m = new Map();
    registry.set(ctx.store, m);
  }
  return m;
}

/** This process's hints for the parents of the context's store (parent key → hint). */
function hintsOf(ctx: Ctx): Map<string, Hint> {
  return ofStore(hints, ctx);
}
const MAX_HINTS = 10_000;

/**
 * Record where the parent's first free address is. Never behind the hint under the same address-space token:
 * this transaction's view may predate what allocations of this process handed out since.
 */
function setHint(byParent: Map<string, Hint>, key: string, next: bigint, space: string | null): void {
  const now = byParent.get(key);
  if (now && now.space === space && now.next >= next) return;
  if (now) {
    now.next = next;
    now.space = space;
    advance(now);
    return;
  }
  if (byParent.size >= MAX_HINTS) byParent.clear();
  byParent.set(key, { next, space, inFlight: new Set(), done: new Set() });
}

/** Move the hint past the addresses handed out from `next` on, and forget those below it. */
function advance(h: Hint): void {
  while (h.done.delete(h.next)) h.next++;
  for (const v of h.done) if (v < h.next) h.done.delete(v);
  if (h.done.size > MAX_HINTS) h.done.clear();
}

/**
 * `hosts` were handed out by an allocation of this process whose transaction is about to commit: the hint
 * moves past them once every address below them is taken (a failed COMMIT after this leaves a hole that a
 * later allocation skips until an address of the parent is freed).
 */
function handedOut(ctx: Ctx, p: Parent, hosts: readonly bigint[]): void {
  const h = hintsOf(ctx).get(hintKey(p));
  if (!h) return;
  for (const v of hosts) if (v >= h.next) h.done.add(v);
  advance(h);
}

function hintKey(p: Parent): string {
  return `${p.id}|${p.start}|${p.end}|${p.vrfId}|${p.anyVrf}|${p.isPool}`;
}

/**
 * Occupied hosts of the parent from `from` on (at most HOST_BATCH, distinct, ascending) and, read in the same
 * statement, the address-space token.
 */
async function takenFrom(
  ctx: Ctx,
  p: Parent,
  from: bigint,
  hi: bigint,
): Promise<{ taken: bigint[]; space: string | null }> {
  const hosts = inScope(
    ctx.db
      .selectFrom("ipam_ipaddress")
      .select("address_host as h")
      .distinct()
      .where("address_family", "=", p.family)
      .where("address_host", ">=", ipKey(p.family, from > hi ? hi : from))
      .where("address_host", "<=", ipKey(p.family, hi)),
    p,
  )
    .orderBy("address_host")
    .limit(HOST_BATCH);
  const rows: Array<{ h: string | null; s: unknown }> = await ctx.db
    .selectFrom(hosts.as("taken"))
    .select(["h", sql<null>`NULL`.as("s")])
    .unionAll(
      ctx.db
        .selectFrom("inventory_meta")
        .select([sql<null>`NULL`.as("h"), "value as s"])
        .where("key", "=", ADDRESS_SPACE_KEY),
    )
    .execute();
  const taken: bigint[] = [];
  let space: string | null = null;
  for (const row of rows) {
    if (row.h !== null) taken.push(BigInt(`0x${row.h}`));
    else space = row.s === null ? null : String(row.s);
  }
  return { taken: taken.sort(byValue), space };
}

/**
 * Free addresses of the parent in address order (lazily; stop iterating when you have enough), starting at
 * this process's hint for the parent when it still holds. Finding the first free address records the hint.
 */
async function* freeHosts(ctx: Ctx, p: Parent): AsyncGenerator<bigint> {
  const [lo, hi] = usable(p);
  const byParent = hintsOf(ctx);
  const key = hintKey(p);
  const hint = byParent.get(key);
  let cursor = hint && hint.next > lo ? hint.next : lo;
  let batch = await takenFrom(ctx, p, cursor, hi);
  if (cursor !== lo && batch.space !== hint?.space) {
    cursor = lo; // an address may have been freed since the hint: scan from the start
    batch = await takenFrom(ctx, p, cursor, hi);
  }
  const space = batch.space;
  let first = true;
  const found = (v: bigint) => {
    if (!first) return;
    first = false;
    setHint(byParent, key, v, space);
  };
  while (cursor <= hi) {
    for (const taken of batch.taken) {
      while (cursor < taken) {
        found(cursor);
        yield cursor++;
      }
      if (taken >= cursor) cursor = taken + 1n;
    }
    if (batch.taken.length < HOST_BATCH) break;
    batch = await takenFrom(ctx, p, cursor, hi);
  }
  found(cursor);
  while (cursor <= hi) yield cursor++;
}

/**
 * The parents this process allocated from, by id (per store, bounded): an allocation claims addresses of the
 * parent as last seen while reading it again, and checks it is the same (`allocateIps`).
 */
const parents = new WeakMap<object, Map<string, Parent>>();

function seenParents(ctx: Ctx): Map<string, Parent> {
  return ofStore(parents, ctx);
}

function rememberParent(ctx: Ctx, p: Parent): void {
  const byId = seenParents(ctx);
  if (byId.size >= MAX_HINTS) byId.clear();
  byId.set(p.id, p);
}

/** Whether two readings of a parent allocate alike (same range, scope and pool flag). */
function sameParent(a: Parent, b: Parent): boolean {
  return hintKey(a) === hintKey(b) && a.family === b.family && a.length === b.length && a.text === b.text;
}

/** Free addresses tried per claim beyond those still needed (concurrent allocators take the first ones). */
const SPARE_CANDIDATES = 16;

/** The claim key of an address of the parent: the new address's VRF and host (`Dialect.claim`). */
const claimKey = (p: Parent, host: string) => `ipam.ipaddress:${p.vrfId ?? ""}:${host}`;

/**
 * The query answering the claim keys (column `k`) of `hosts` that are taken in the parent's scope, and ""
 * when the address-space token no longer reads `space` (given): an address may have been freed since the
 * hint the candidates come from, so they may not be the first free ones (`Dialect.claim`'s veto).
 */
function takenQuery(ctx: Ctx, p: Parent, hosts: readonly bigint[], space?: { value: string | null }) {
  // Consecutive candidates (always so after a hint) are one index range, not a probe per candidate.
  const consecutive = hosts.every((v, i) => i === 0 || v === hosts[i - 1]! + 1n);
  const base = ctx.db
    .selectFrom("ipam_ipaddress")
    .select(sql<string>`${claimKey(p, "")} || address_host`.as("k"))
    .where("address_family", "=", p.family);
  const taken = inScope(
    consecutive
      ? base
          .where("address_host", ">=", ipKey(p.family, hosts[0]!))
          .where("address_host", "<=", ipKey(p.family, hosts.at(-1)!))
      : base.where(
          "address_host",
          "in",
          hosts.map((v) => ipKey(p.family, v)),
        ),
    p,
  );
  if (space === undefined) return taken.compile();
  const token = ctx.db.selectFrom("inventory_meta").select("value").where("key", "=", ADDRESS_SPACE_KEY);
  const changed = ctx.db
    .selectFrom(sql`(SELECT 1)`.as("one"))
    .select(sql<string>`''`.as("k"))
    .where(token, "is distinct from", space.value);
  return taken.unionAll(changed).compile();
}

/** Claim up to `want` of the candidate hosts (`Dialect.claim`). */
function claimHosts(
  ctx: Ctx,
  p: Parent,
  hosts: readonly bigint[],
  want: number,
  space?: { value: string | null },
) {
  const keys = hosts.map((v) => claimKey(p, ipKey(p.family, v)));
  return ctx.store.dialect.claim(ctx.db, keys, want, takenQuery(ctx, p, hosts, space));
}

/**
 * The first `want` addresses from this process's hint for the parent that no allocation of this process is
 * claiming or has handed out, claimed ahead (`Dialect.claimAhead`): the claim goes out with the
 * transaction's next statement, so an allocation whose hint holds costs no round trip of its own for it
 * (`allocateIps`). They are in flight until `finish`, so concurrent allocations of this process take the
 * following ones. `settle` tells whether every one was claimed (free at the claim and at its recheck, the
 * address-space token unchanged); `finish(true)` records them as handed out (`handedOut`), `finish(false)`
 * as free again.
 * @returns undefined without a hint, or when fewer than `want` such addresses are left in the parent
 */
async function claimAfterHint(
  ctx: Ctx,
  p: Parent,
  want: number,
): Promise<
  { hosts: bigint[]; settle: () => Promise<boolean>; finish: (handed: boolean) => void } | undefined
> {
  const [lo, hi] = usable(p);
  const hint = hintsOf(ctx).get(hintKey(p));
  if (!hint || want <= 0 || hint.next < lo) return undefined;
  const hosts: bigint[] = [];
  for (let v = hint.next; v <= hi && hosts.length < want; v++)
    if (!hint.inFlight.has(v) && !hint.done.has(v)) hosts.push(v);
  if (hosts.length < want) return undefined;
  for (const v of hosts) hint.inFlight.add(v);
  const keys = hosts.map((v) => claimKey(p, ipKey(p.family, v)));
  let claimed: () => Promise<Claimed>;
  try {
    claimed = await ctx.store.dialect.claimAhead(
      ctx.db,
      keys,
      want,
      takenQuery(ctx, p, hosts, { value: hint.space }),
    );
  } catch (e) {
    for (const v of hosts) hint.inFlight.delete(v);
    throw e;
  }
  return {
    hosts,
    settle: () =>
      claimed().then(
        (r) => !r.vetoed && r.claimed.length === want,
        () => false,
      ),
    finish: (handed) => {
      for (const v of hosts) hint.inFlight.delete(v);
      if (handed) handedOut(ctx, p, hosts);
    },
  };
}

/**
 * The next `want` free addresses of the parent, each claimed for the caller's transaction (`claimHosts`),
 * so concurrent allocators never hand out the same address and none waits for another: an address another
 * transaction has claimed is skipped, and a claimed one is checked again in a statement that starts after
 * the claim, which sees every allocation committed before it (a scan made earlier may not). Fewer when the
 * parent has no more room.
 *
 * With a hint (`hints`), the addresses right after it are claimed first, with no scan: one round trip on
 * PostgreSQL when they are free and the address-space token still reads the hint's value (else the claim
 * is vetoed and the parent is scanned).
 */
async function claimFreeHosts(ctx: Ctx, p: Parent, want: number): Promise<bigint[]> {
  const chosen: bigint[] = [];
  const [lo, hi] = usable(p);
  const byParent = hintsOf(ctx);
  const hint = byParent.get(hintKey(p));
  if (hint && hint.next >= lo && hint.next <= hi) {
    const hosts: bigint[] = [];
    for (let v = hint.next; v <= hi && hosts.length < want + SPARE_CANDIDATES; v++) hosts.push(v);
    const r = await claimHosts(ctx, p, hosts, want, { value: hint.space });
    if (!r.vetoed) {
      // Every candidate before the first free one was taken while the token read the hint's value.
      const next = r.firstFree < hosts.length ? hosts[r.firstFree]! : hosts.at(-1)! + 1n;
      setHint(byParent, hintKey(p), next, hint.space);
      chosen.push(...r.claimed.map((i) => hosts[i]!));
      if (chosen.length === want) return chosen;
    }
  }
  const mine = new Set(chosen);
  const hostsFree = freeHosts(ctx, p);
  let exhausted = false;
  // Candidates not tried yet: claiming stops at the last one it needs, so those after it are tried next.
  let candidates: bigint[] = [];
  while (chosen.length < want) {
    while (!exhausted && candidates.length < want - chosen.length + SPARE_CANDIDATES) {
      const n = await hostsFree.next();
      if (n.done) exhausted = true;
      else if (!mine.has(n.value)) candidates.push(n.value);
    }
    if (!candidates.length) break;
    const r = await claimHosts(ctx, p, candidates, want - chosen.length);
    chosen.push(...r.claimed.map((i) => candidates[i]!));
    candidates = candidates.slice(r.tried);
  }
  await hostsFree.return(undefined);
  return chosen.sort(byValue);
}

/** How many addresses of the parent are free (for the "insufficient" message). */
async function freeCount(ctx: Ctx, p: Parent): Promise<bigint> {
  const [lo, hi] = usable(p);
  if (hi < lo) return 0n;
  const q = ctx.db
    .selectFrom("ipam_ipaddress")
    .select((eb: any) => eb.fn.count("address_host").distinct().as("n"))
    .where("address_family", "=", p.family)
    .where("address_host", ">=", ipKey(p.family, lo))
    .where("address_host", "<=", ipKey(p.family, hi));
  const r: any = await inScope(q, p).executeTakeFirst();
  return hi - lo + 1n - BigInt(r?.n ?? 0);
}

/**
 * Up to `limit` free addresses of a prefix, each with the parent's mask length and VRF id
 * (Nautobot `available_ips` GET). @param row the stored prefix row
 */
export async function availableIps(ctx: Ctx, row: Row, limit: number): Promise<FreeAddress[]> {
  const p = await parentOf(ctx, row);
  const out: FreeAddress[] = [];
  if (limit <= 0) return out;
  for await (const v of freeHosts(ctx, p)) {
    out.push({ family: p.family, address: `${formatAddress(p.family, v)}/${p.length}`, vrf: p.vrfId });
    if (out.length >= limit) break;
  }
  return out;
}

/** Free ranges of the parent after removing its child prefixes, in address order. */
async function freeRanges(ctx: Ctx, p: Parent): Promise<Array<[bigint, bigint]>> {
  const q = ctx.db
    .selectFrom("ipam_prefix")
    .select(["prefix_start", "prefix_end"])
    .where("prefix_family", "=", p.family)
    .where("prefix_start", ">=", ipKey(p.family, p.start))
    .where("prefix_end", "<=", ipKey(p.family, p.end))
    .where("prefix_len", ">", p.length);
  const children = await inScope(q, p).orderBy("prefix_start").execute();
  const out: Array<[bigint, bigint]> = [];
  let cursor = p.start;
  for (const c of children) {
    const s = BigInt(`0x${c.prefix_start}`);
    const e = BigInt(`0x${c.prefix_end}`);
    if (s > cursor) out.push([cursor, s - 1n]);
    if (e + 1n > cursor) cursor = e + 1n;
  }
  if (cursor <= p.end) out.push([cursor, p.end]);
  return out;
}

/** The minimal CIDR blocks covering a range, in address order (netaddr `IPSet.iter_cidrs`). */
function cidrsOf(range: [bigint, bigint], bits: number): Array<{ start: bigint; length: number }> {
  const out: Array<{ start: bigint; length: number }> = [];
  let [s] = range;
  const e = range[1];
  while (s <= e) {
    let hostBits = 0;
    while (hostBits < bits) {
      const size = 1n << BigInt(hostBits + 1);
      if (s % size !== 0n || s + size - 1n > e) break;
      hostBits++;
    }
    out.push({ start: s, length: bits - hostBits });
    s += 1n << BigInt(hostBits);
  }
  return out;
}

/** Free child prefixes of a prefix (Nautobot `available_prefixes` GET). */
export async function availablePrefixes(ctx: Ctx, row: Row): Promise<FreePrefix[]> {
  const p = await parentOf(ctx, row);
  return (await freeRanges(ctx, p)).flatMap((r) =>
    cidrsOf(r, p.bits).map((c) => ({
      family: p.family,
      prefix: `${formatAddress(p.family, c.start)}/${c.length}`,
      vrf: p.vrfId,
    })),
  );
}

/** How much of a prefix is used, as counts of addresses (Nautobot 1.6 `UtilizationData`). */
export interface Utilization {
  used: bigint;
  size: bigint;
}

/**
 * The utilisation of a prefix (Nautobot 1.6 `Prefix.get_utilization`): a container counts the addresses
 * its child prefixes cover; any other prefix counts its distinct child IP addresses against its size, less
 * the network and broadcast addresses for IPv4 shorter than /31 that is not a pool. Children are those of
 * the prefix's VRF (every VRF for a global container). Two index range scans, whatever the prefix size.
 */
export async function prefixUtilization(ctx: Ctx, row: Row): Promise<Utilization> {
  const p = await parentOf(ctx, row);
  const size = p.end - p.start + 1n;
  const status = (await statusesById(ctx)).get(row.status_id as string);
  if (status?.slug === "container") {
    const free = (await freeRanges(ctx, p)).reduce((n, [s, e]) => n + (e - s + 1n), 0n);
    return { used: size - free, size };
  }
  const q = ctx.db
    .selectFrom("ipam_ipaddress")
    .select((eb: any) => eb.fn.count("address_host").distinct().as("n"))
    .where("address_family", "=", p.family)
    .where("address_host", ">=", ipKey(p.family, p.start))
    .where("address_host", "<=", ipKey(p.family, p.end));
  const r: any = await inScope(q, p).executeTakeFirst();
  const usableSize = p.family === 4 && !p.isPool && p.length < 31 ? size - 2n : size;
  return { used: BigInt(r?.n ?? 0), size: usableSize };
}

/** DRF's message for a list item that is not an object. */
function notADict(v: unknown): string {
  const t = v === null ? "NoneType" : Array.isArray(v) ? "list" : typeof v === "string" ? "str" : typeof v;
  return `Invalid data. Expected a dictionary, but got ${t}.`;
}

/** The request body as a list of objects; 400 in DRF's words for anything else. */
function itemsOf(body: unknown): { items: Array<Record<string, unknown>>; many: boolean } {
  const many = Array.isArray(body);
  const list = many ? (body as unknown[]) : [body];
  const bad = list.map((v) =>
    v && typeof v === "object" && !Array.isArray(v) ? {} : { non_field_errors: [notADict(v)] },
  );
  if (bad.some((b) => Object.keys(b).length)) throw new ValidationError(many ? bad : bad[0]!);
  return { items: list.map((v) => ({ ...(v as Record<string, unknown>) })), many };
}

/** Create each item; a list body goes through `createMany` (positional errors, as DRF's ListSerializer). */
async function createAll(ctx: Ctx, model: Model, items: Array<Record<string, unknown>>, many: boolean) {
  return many ? createMany(ctx, model, items) : [await createObject(ctx, model, items[0])];
}

/**
 * Create one IP address per body item at the next free addresses of the prefix `parentId` (Nautobot
 * `available_ips` POST): `address` and `vrf` are set from the parent, every other IPAddress field is taken
 * from the item and validated as a normal create. `readParent` reads the prefix row inside the transaction
 * (404 when the user may not see it). The addresses are claimed (`claimFreeHosts`), never handed out twice.
 * With this process's hint for the parent, the addresses after it are claimed ahead and created in the same
 * round trip (`claimAfterHint`); when that claim does not hold (another allocator took them, an address was
 * freed, the parent changed) the outermost transaction is rolled back and runs again with the claim first
 * (`ClaimAheadFailed`, `Ctx.claimFirst`). A transaction that fails at its COMMIT after a claim ahead leaves
 * the hint past its addresses, which a later allocation then skips until an address of the parent is freed.
 * @returns the new ids, in body order; `many` tells whether the body was a list.
 * @throws InsufficientSpaceError (204) when fewer addresses are free than items were sent;
 *   ValidationError (400) for a body item that is not an object or does not validate.
 */
export async function allocateIps(
  ctx: Ctx,
  body: unknown,
  parentId: string,
  readParent: (t: Ctx) => Promise<Row>,
): Promise<{ ids: string[]; many: boolean }> {
  const { items, many } = itemsOf(body);
  const ipModel = ctx.reg.get("ipam.ipaddress");
  const prefixModel = ctx.reg.get("ipam.prefix");
  const withAddresses = (p: Parent, hosts: readonly bigint[]) =>
    items.map((item, i) => ({
      ...item,
      address: `${formatAddress(p.family, hosts[i]!)}/${p.length}`,
      vrf: p.vrfId,
    }));
  return inTransaction(ctx, async (t) => {
    // The parent as this process last saw it: its addresses are claimed in the round trip that reads it
    // again (`prefetchRows`), and claimed again if it changed. Users with constraints read it first.
    const seen = t.grants ? undefined : seenParents(t).get(parentId);
    if (seen) await prefetchRows(t, prefixModel, "id", [parentId]);
    // With a hint, the addresses after it are claimed ahead and created at once: the claim, its recheck
    // and the parent's read go out with the create's statements, so the claim costs no round trip. If it
    // did not hold, or the parent changed, the outermost transaction runs again with the claim first.
    const claim = seen && !t.claimFirst ? await claimAfterHint(t, seen, items.length) : undefined;
    if (seen && claim) {
      let ids: string[] | undefined;
      let failure: unknown;
      try {
        ids = await createAll(t, ipModel, withAddresses(seen, claim.hosts), many);
      } catch (e) {
        failure = e;
      }
      // The response's read of the new rows goes out with the claim, which is then settled in that round trip.
      if (ids) await prefetchRows(t, ipModel, "id", ids);
      const held = await claim.settle();
      if (failure !== undefined) {
        claim.finish(false);
        // A 4xx may come from the address (a duplicate in a VRF that enforces uniqueness) unless it held.
        if (failure instanceof AppError && !held) throw new ClaimAheadFailed();
        throw failure;
      }
      const p = held
        ? await readParent(t).then(
            (row) => parentOf(t, row),
            () => undefined,
          )
        : undefined;
      if (!held || !p || !sameParent(p, seen)) {
        claim.finish(false);
        throw new ClaimAheadFailed();
      }
      claim.finish(true);
      rememberParent(t, p);
      return { ids: ids!, many };
    }
    let p = seen ?? (await parentOf(t, await readParent(t)));
    let free = items.length ? await claimFreeHosts(t, p, items.length) : [];
    if (seen) {
      p = await parentOf(t, await readParent(t));
      if (!sameParent(p, seen)) free = items.length ? await claimFreeHosts(t, p, items.length) : [];
    }
    rememberParent(t, p);
    if (free.length < items.length) {
      throw new InsufficientSpaceError(
        `An insufficient number of IP addresses are available within the prefix ${p.text} (${items.length} requested, ${await freeCount(t, p)} available)`,
      );
    }
    const ids = await createAll(t, ipModel, withAddresses(p, free), many);
    handedOut(t, p, free);
    return { ids, many };
  });
}

/**
 * Create one child prefix per body item in the first free block that fits its `prefix_length` (Nautobot
 * `available_prefixes` POST and `PrefixLengthSerializer`): `prefix` and `vrf` are set by the allocator.
 * @throws ValidationError (400, always a list, Nautobot's wording) for a missing, non-integer or too long
 *   `prefix_length`; InsufficientSpaceError (204) when any item does not fit; ValidationError for items
 *   that do not validate as prefixes.
 */
export async function allocatePrefixes(
  ctx: Ctx,
  body: unknown,
  readParent: (t: Ctx) => Promise<Row>,
): Promise<{ ids: string[]; many: boolean }> {
  const { items, many } = itemsOf(body);
  const prefixModel = ctx.reg.get("ipam.prefix");
  return inTransaction(ctx, async (t) => {
    // The parent is read before the lock, which is then held only for the scan and the writes.
    const parent = await readParent(t);
    await t.store.dialect.transactionLock(t.db, LOCK_PREFIXES);
    const p = await parentOf(t, parent);
    const lengthErrors = items.map((item): Record<string, string> => {
      const len = item.prefix_length;
      if (len === undefined || len === null) return { prefix_length: "this field can not be missing" };
      if (typeof len !== "number" || !Number.isInteger(len))
        return { prefix_length: "this field must be int type" };
      if (len > p.bits || len < 0)
        return { prefix_length: `Invalid prefix length (${len}) for IPv${p.family}` };
      return {};
    });
    if (lengthErrors.some((e) => Object.keys(e).length)) throw new ValidationError(lengthErrors);
    let ranges = await freeRanges(t, p);
    for (const item of items) {
      const want = item.prefix_length as number;
      const block = ranges.flatMap((r) => cidrsOf(r, p.bits)).find((c) => c.length <= want);
      if (!block)
        throw new InsufficientSpaceError(
          "Insufficient space is available to accommodate the requested prefix size(s)",
        );
      const taken: [bigint, bigint] = [block.start, block.start + (1n << BigInt(p.bits - want)) - 1n];
      ranges = ranges.flatMap(([s, e]): Array<[bigint, bigint]> => {
        if (taken[1] < s || taken[0] > e) return [[s, e]];
        const rest: Array<[bigint, bigint]> = [];
        if (s < taken[0]) rest.push([s, taken[0] - 1n]);
        if (taken[1] < e) rest.push([taken[1] + 1n, e]);
        return rest;
      });
      delete item.prefix_length;
      item.prefix = `${formatAddress(p.family, block.start)}/${want}`;
      item.vrf = p.vrfId;
    }
    return { ids: await createAll(t, prefixModel, items, many), many };
  });
}
