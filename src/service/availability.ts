/**
 * The free space of a prefix between the objects a page lists, as Nautobot 1.6's prefix views show it
 * (`nautobot/ipam/utils/__init__.py` `add_available_ipaddresses` and `add_available_prefixes`): the listed
 * child IP addresses with the runs of free addresses between them, and the listed child prefixes with the
 * free blocks between them (service/allocation.ts `availablePrefixes`). Pure address arithmetic over what
 * the page already read, plus one read of the free blocks: never one query per row.
 */
import { formatAddress, parseCidr } from "../net/ip.ts";
import { availablePrefixes } from "./allocation.ts";
import type { Ctx } from "./context.ts";
import type { Row } from "./rows.ts";

/** A run of free addresses: first and last as `address/len` (the parent's length), and how many. */
export interface FreeRun {
  first: string;
  last: string;
  count: bigint;
}

/** A listed item or a free run, in address order. */
export type Slot<T> = { item: T } | { free: FreeRun };

/**
 * The listed addresses of a prefix with the free runs between them (`add_available_ipaddresses`): for a
 * non-pool IPv4 prefix shorter than /31 the network and broadcast addresses are not offered. When the page
 * holds only the first addresses of a longer list (`complete` false) nothing after the last one is offered,
 * since the next page may hold addresses there.
 * @param prefix the parent's `prefix` text (`10.0.0.0/24`) and whether it is a pool
 * @param items the listed objects with their `address` text (`10.0.0.5/24`), in any order
 */
export function addressSlots<T extends Record<string, unknown>>(
  prefix: { prefix: string; isPool: boolean },
  items: T[],
  complete = true,
): Array<Slot<T>> {
  const p = parseCidr(prefix.prefix);
  const skipEnds = p.family === 4 && p.prefixLength < 31 && !prefix.isPool;
  const lo = skipEnds ? p.start + 1n : p.start;
  const hi = skipEnds ? p.end - 1n : p.end;
  const text = (v: bigint) => `${formatAddress(p.family, v)}/${p.prefixLength}`;
  const run = (a: bigint, b: bigint): Slot<T> => ({
    free: { first: text(a), last: text(b), count: b - a + 1n },
  });
  const hosts = items
    .map((item) => ({ item, host: parseCidr(String(item.address)).hostInt }))
    .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  const out: Array<Slot<T>> = [];
  let next = lo;
  for (const { item, host } of hosts) {
    if (host > next && next <= hi) out.push(run(next, host - 1n < hi ? host - 1n : hi));
    out.push({ item });
    if (host + 1n > next) next = host + 1n;
  }
  if (complete && next <= hi) out.push(run(next, hi));
  return out;
}

/**
 * The listed child prefixes of a prefix with the free blocks of the parent between them
 * (`add_available_prefixes`, through `availablePrefixes`), in address order.
 * @param row the parent prefix's stored row; @param items listed children with their `prefix` text
 */
export async function prefixSlots<T extends Record<string, unknown>>(
  ctx: Ctx,
  row: Row,
  items: T[],
): Promise<Array<Slot<T> & { key: bigint }>> {
  const free = await availablePrefixes(ctx, row);
  const slots: Array<Slot<T> & { key: bigint }> = [
    ...items.map((item) => ({ item, key: parseCidr(String(item.prefix)).start * 2n })),
    ...free.map((f) => {
      const c = parseCidr(f.prefix);
      return {
        free: { first: f.prefix, last: f.prefix, count: c.end - c.start + 1n },
        key: c.start * 2n + 1n,
      };
    }),
  ];
  return slots.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
