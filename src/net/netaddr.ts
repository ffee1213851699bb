/**
 * Network filter values read as Nautobot 1.6.32 reads them: with netaddr 0.8.0 (the version it pins) on
 * CPython and glibc (issue 24). One place for every filter that takes a network or an address (`prefix`,
 * `within`, `within_include`, `contains`, `parent`, `address`, `q` on aggregates, prefixes and IP
 * addresses), REST and GraphQL alike (both go through the filter compiler).
 *
 * netaddr is lenient in ways a strict parser is not, and Nautobot's answers follow it:
 * - `IPNetwork("10.1")` is 10.1.0.0/32 (a partial IPv4 address is padded with zero octets, the prefix is
 *   the full width), `IPNetwork("010.1/16")` is 10.1.0.0/16 (octets of a partial address are Python
 *   `int()`s: leading zeros, `+`, `_`, surrounding spaces and Unicode digits accepted);
 * - the prefix is a Python `int()` or a netmask (`/255.255.0.0`) or hostmask (`/0.0.255.255`);
 * - `IPAddress("10")` (the `contains` filter without a `/`) is glibc's `inet_aton`: 0.0.0.10, and
 *   `012.1` (octal), `0x0a.1` (hex), `10.1 anything` (text after a space ignored) are addresses too;
 * - the `q` search pads a partial address to a network (`10.10` → 10.10.0.0/16, `fe80` → fe80::/16), and
 *   when that fails searches 0.0.0.0/32 (or ::/128) instead of nothing (`BaseNetworkQuerySet.string_search`).
 * The expected answers were taken from netaddr 0.8.0 itself (test/unit/netaddr.test.ts).
 */

/** A network or address as netaddr holds it: the value keeps its host bits. */
export interface NetValue {
  family: 4 | 6;
  value: bigint;
  prefixLength: number;
}

/** Python's `str.isspace()` characters: what `str.strip()` and `int()` drop around a value. */
const PY_SPACE =
  "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "gu");

/** Python `str.strip()` (Django's `CharField` strips filter values with it). */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, "");
}

/** The value 0–9 of a Unicode decimal digit (`\p{Nd}` come in runs of ten, zero first). */
function digitValue(ch: string): number {
  const cp = ch.codePointAt(0)!;
  let start = cp;
  while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/** Python `int(s)` in base 10, or undefined where it raises ValueError. */
export function pyInt(s: string): bigint | undefined {
  const m = /^([+-]?)(\p{Nd}+(?:_\p{Nd}+)*)$/u.exec(pyStrip(s));
  if (!m) return undefined;
  let v = 0n;
  for (const ch of m[2]!.replace(/_/g, ""))
    v = v * 10n + BigInt(/[0-9]/.test(ch) ? Number(ch) : digitValue(ch));
  return m[1] === "-" ? -v : v;
}

/** glibc `inet_pton(AF_INET)`: exactly four decimal octets, no leading zeros. */
function inetPton4(s: string): bigint | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(p);
  }
  return v;
}

/** glibc `inet_pton(AF_INET6)`: up to eight hex groups of 1–4 digits, one `::`, a dotted quad last. */
function inetPton6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (text: string): number[] | undefined => {
    if (text === "") return [];
    const out: number[] = [];
    const items = text.split(":");
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (i === items.length - 1 && it.includes(".")) {
        const v4 = inetPton4(it);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(it)) out.push(Number.parseInt(it, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  // A dotted quad ends the address: it may not sit before `::`.
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined;
  const n = head.length + tail.length;
  if (halves.length === 2 ? n > 7 : n !== 8) return undefined;
  const all = [...head, ...Array(8 - n).fill(0), ...tail];
  return all.reduce((v, g) => (v << 16n) | BigInt(g), 0n);
}

/**
 * glibc `inet_aton`: one to four parts, each C-style decimal, octal (`0…`) or hex (`0x…`), the last part
 * filling the remaining bytes; anything after an ASCII space is ignored.
 */
function inetAton(s: string): bigint | undefined {
  const m = /^([^\t\n\v\f\r ]*)(?:[\t\n\v\f\r ]|$)/.exec(s);
  const parts = m![1]!.split(".");
  if (parts.length > 4) return undefined;
  const vals: bigint[] = [];
  for (const p of parts) {
    let v: bigint;
    if (/^0[xX][0-9a-fA-F]+$/.test(p)) v = BigInt(p.replace(/^0[xX]/, "0x"));
    else if (/^0[0-7]*$/.test(p)) v = p.length > 1 ? BigInt(`0o${p.slice(1)}`) : 0n;
    else if (/^[1-9]\d*$/.test(p)) v = BigInt(p);
    else return undefined;
    if (v > 0xffffffffn) return undefined;
    vals.push(v);
  }
  const last = vals.pop()!;
  if (vals.some((v) => v > 255n) || last >= 1n << BigInt(8 * (4 - vals.length))) return undefined;
  return vals.reduce((acc, v, i) => acc | (v << BigInt(24 - 8 * i)), 0n) | last;
}

/** netaddr `expand_partial_address`: `10.1` → `10.1.0.0` (octets through Python `int()`). */
function expandPartial4(s: string): bigint | undefined {
  if (s.includes(":")) return undefined;
  const tokens = s.split(".").map(pyInt);
  if (tokens.some((t) => t === undefined) || tokens.length > 4) return undefined;
  while (tokens.length < 4) tokens.push(0n);
  return inetPton4(tokens.map(String).join("."));
}

const WIDTH = { 4: 32, 6: 128 } as const;

/** The prefix length of a netmask or hostmask address, or undefined for any other address. */
function maskLength(family: 4 | 6, mask: bigint): number | undefined {
  const width = BigInt(WIDTH[family]);
  const max = (1n << width) - 1n;
  const isRun = (x: bigint) => (x & (x - 1n)) === 0n;
  const bitLength = (x: bigint) => x.toString(2).length - (x === 0n ? 1 : 0);
  // netaddr tries the netmask first (`255.255.255.255` is /32, `0.0.0.0` is /0).
  if (isRun((mask ^ max) + 1n)) return WIDTH[family] - bitLength(mask ^ max);
  if (isRun(mask + 1n)) return WIDTH[family] - bitLength(mask);
  return undefined;
}

/** netaddr 0.8.0 `parse_ip_network` for one family. */
function parseNetworkAs(family: 4 | 6, text: string): NetValue | undefined {
  const slash = text.indexOf("/");
  const addr = slash >= 0 ? text.slice(0, slash) : text;
  const len = slash >= 0 ? text.slice(slash + 1) : undefined;
  const pton = family === 4 ? inetPton4 : inetPton6;
  const value = pton(addr) ?? (family === 4 ? expandPartial4(addr) : undefined);
  if (value === undefined) return undefined;
  let prefixLength: number = WIDTH[family];
  if (len !== undefined) {
    const n = pyInt(len);
    if (n !== undefined) {
      if (n < 0n || n > BigInt(WIDTH[family])) return undefined;
      prefixLength = Number(n);
    } else {
      const mask = pton(len);
      const l = mask === undefined ? undefined : maskLength(family, mask);
      if (l === undefined) return undefined;
      prefixLength = l;
    }
  }
  return { family, value, prefixLength };
}

/** netaddr 0.8.0 `IPNetwork(text)`: IPv4 first, then IPv6; undefined where it raises. */
export function netaddrNetwork(text: string): NetValue | undefined {
  return parseNetworkAs(4, text) ?? parseNetworkAs(6, text);
}

/** netaddr 0.8.0 `IPAddress(text)`: `inet_aton` for IPv4, then `inet_pton` for IPv6; no `/` allowed. */
export function netaddrAddress(text: string): NetValue | undefined {
  if (text.includes("/") || text === "") return undefined;
  const v4 = inetAton(text);
  if (v4 !== undefined) return { family: 4, value: v4, prefixLength: 32 };
  const v6 = inetPton6(text);
  return v6 === undefined ? undefined : { family: 6, value: v6, prefixLength: 128 };
}

/** The first and last address of a network (host bits cleared / set). */
export function netRange(n: NetValue): { start: bigint; end: bigint } {
  const host = (1n << BigInt(WIDTH[n.family] - n.prefixLength)) - 1n;
  return { start: n.value & ~host, end: (n.value & ~host) | host };
}

/** Python `str.isdigit()` for the values Nautobot's search treats as ambiguous (decimal digits only). */
const isDigits = (s: string) => /^\p{Nd}+$/u.test(s);

/** `BaseNetworkQuerySet._check_and_prep_ipv6`: make a partial IPv6 address end in `::`. */
function prepIpv6(s: string): string {
  if (s.endsWith(":") && !s.endsWith("::")) return `${s}:`;
  if (!s.endsWith(":") && s.includes(":") && !s.includes("::")) return `${s}:`;
  if (
    (isDigits(s) && pyInt(s)! > 255n) ||
    /^(?:[a-f0-9]{4}|0?[a-f0-9]{3}|0{0,2}[a-f0-9]{2}|0{0,3}[a-f0-9])$/.test(s)
  )
    return `${s}::`;
  return s;
}

/** `parse_ipv4` / `parse_ipv6` of the search, falling back to 0/32 or ::/128 (`_safe_parse_network_string`). */
function searchParse(s: string, family: 4 | 6): NetValue {
  let net: NetValue | undefined;
  if (family === 4) {
    const octets = s.split(".").filter((o) => o !== "");
    const len = 8 * octets.length;
    while (octets.length < 4) octets.push("0");
    net = netaddrNetwork(`${octets.join(".")}/${len}`);
  } else {
    let hextets = s.split(":");
    let len = 128;
    if (!/^[\p{L}\p{N}]+$/u.test(hextets[hextets.length - 1]!)) {
      hextets = hextets.filter((h) => h !== "");
      len = 16 * hextets.length;
      while (hextets.length < 8) hextets.push("0");
    }
    net = netaddrNetwork(`${hextets.join(":")}/${len}`);
  }
  return (
    net ??
    (family === 4 ? { family: 4, value: 0n, prefixLength: 32 } : { family: 6, value: 0n, prefixLength: 128 })
  );
}

/**
 * The networks Nautobot's `q` searches for a (stripped, non-blank) value on aggregates, prefixes and IP
 * addresses (`BaseNetworkQuerySet.string_search`): a number below 256 is both an IPv4 first octet and an
 * IPv6 first hextet; anything else one network, the text after a `/` ignored.
 */
export function searchNetworks(s: string): NetValue[] {
  if (isDigits(s) && pyInt(s)! < 256n) return [searchParse(s, 4), searchParse(prepIpv6(s), 6)];
  let head = s.split("/")[0]!;
  if (!(isDigits(head) && pyInt(head)! < 256n)) head = prepIpv6(head);
  return [searchParse(head, head.includes(":") ? 6 : 4)];
}
