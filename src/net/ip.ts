/**
 * IP parsing, normalisation and range keys (IPv4 and IPv6).
 *
 * Parsing is done by ipaddr.js; the arithmetic (network/last address, sortable keys) is ours, on BigInt.
 * Storage: every IP field is stored with a fixed-width hex key of its first and last address
 * (`start`/`end`: 8 hex digits for IPv4, 32 for IPv6) plus the family, so containment queries
 * (`within`, `parent`, `contains`) are indexed range predicates on both SQLite and PostgreSQL.
 */
import ipaddr from "ipaddr.js";

export type Family = 4 | 6;

/** A parsed CIDR value. `start`/`end` are the first and last addresses of the network. */
export interface Cidr {
  family: Family;
  /** The address as given (host bits kept), e.g. 10.0.0.5. */
  host: string;
  /** The network address (host bits cleared), e.g. 10.0.0.0. */
  network: string;
  prefixLength: number;
  hostInt: bigint;
  start: bigint;
  end: bigint;
}

/** Error raised for an unparsable address; message is Nautobot's "Invalid IP address format: …". */
export class IpParseError extends Error {
  override name = "IpParseError";
}

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

function toBigInt(addr: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  let v = 0n;
  if (addr.kind() === "ipv4") {
    for (const o of (addr as ipaddr.IPv4).octets) v = (v << 8n) | BigInt(o);
  } else {
    for (const p of (addr as ipaddr.IPv6).parts) v = (v << 16n) | BigInt(p);
  }
  return v;
}

/** Format an integer address of a family as text (IPv6 compressed, lower-case). */
export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join(".");
  }
  const parts: number[] = [];
  for (let i = 7; i >= 0; i--) parts.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  return ipaddr.IPv6.parse(parts.map((p) => p.toString(16)).join(":")).toString();
}

/**
 * Parse `addr[/len]`. A bare address is a host route (/32 or /128).
 * @throws IpParseError with "Invalid IP address format: <value>"
 */
export function parseCidr(input: unknown): Cidr {
  if (typeof input !== "string" || input.trim() === "")
    throw new IpParseError(`Invalid IP address format: ${String(input)}`);
  const text = input.trim();
  const slash = text.indexOf("/");
  const addrText = slash >= 0 ? text.slice(0, slash) : text;
  const lenText = slash >= 0 ? text.slice(slash + 1) : undefined;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    if (!ipaddr.isValid(addrText)) throw new Error("bad");
    addr = ipaddr.parse(addrText);
    if (addr.kind() === "ipv4" && !ipaddr.IPv4.isValidFourPartDecimal(addrText)) throw new Error("bad");
  } catch {
    throw new IpParseError(`Invalid IP address format: ${text}`);
  }
  // An IPv4-mapped IPv6 address stays IPv6 (as netaddr does).
  const family: Family = addr.kind() === "ipv4" ? 4 : 6;
  const bits = BITS[family];
  let prefixLength = bits;
  if (lenText !== undefined) {
    if (!/^\d{1,3}$/.test(lenText)) throw new IpParseError(`Invalid IP address format: ${text}`);
    prefixLength = Number(lenText);
    if (prefixLength > bits) throw new IpParseError(`Invalid IP address format: ${text}`);
  }
  const hostInt = toBigInt(addr);
  const hostBits = BigInt(bits - prefixLength);
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << hostBits) - 1n);
  const start = hostInt & mask;
  const end = start | ((1n << hostBits) - 1n);
  return {
    family,
    host: formatAddress(family, hostInt),
    network: formatAddress(family, start),
    prefixLength,
    hostInt,
    start,
    end,
  };
}

/** Fixed-width lower-case hex key of an address (8 digits IPv4, 32 digits IPv6); sorts like the address. */
export function ipKey(family: Family, value: bigint): string {
  return value.toString(16).padStart(family === 4 ? 8 : 32, "0");
}

/** `network/len` text of a CIDR (host bits cleared). */
export function networkText(c: Cidr): string {
  return `${c.network}/${c.prefixLength}`;
}

/** `host/len` text of a CIDR (host bits kept). */
export function hostText(c: Cidr): string {
  return `${c.host}/${c.prefixLength}`;
}

/** Number of addresses in the CIDR. */
export function size(c: Cidr): bigint {
  return c.end - c.start + 1n;
}

/** True when `inner` lies within `outer` (equal allowed). */
export function containsCidr(outer: Cidr, inner: Cidr): boolean {
  return outer.family === inner.family && outer.start <= inner.start && outer.end >= inner.end;
}
