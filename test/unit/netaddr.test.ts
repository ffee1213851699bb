/**
 * src/net/netaddr.ts reads network filter values as Nautobot 1.6.32 does (netaddr 0.8.0 on CPython and glibc,
 * issue 24). Each row's expected answers were printed by netaddr 0.8.0 itself (the reference kit's
 * virtualenv): `IPNetwork(v)`, `IPAddress(v)` and the networks Nautobot's `q` searches for v
 * (`BaseNetworkQuerySet.string_search`); undefined where netaddr raises. The same comparison over 8,000
 * generated values found no difference when the module was written.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatAddress } from "../../src/net/ip.ts";
import {
  type NetValue,
  netaddrAddress,
  netaddrNetwork,
  pyStrip,
  searchNetworks,
} from "../../src/net/netaddr.ts";

const net = (n: NetValue | undefined) =>
  n ? `${formatAddress(n.family, n.value)}/${n.prefixLength}` : undefined;
const addr = (n: NetValue | undefined) => (n ? formatAddress(n.family, n.value) : undefined);

/** `[value, IPNetwork(value), IPAddress(value), q networks]` from netaddr 0.8.0 / Nautobot 1.6.32. */
const ROWS: readonly [string, string | undefined, string | undefined, string[]][] = [
  ["10", "10.0.0.0/32", "0.0.0.10", ["10.0.0.0/8", "10::/16"]],
  ["10.1", "10.1.0.0/32", "10.0.0.1", ["10.1.0.0/16"]],
  ["10.1/16", "10.1.0.0/16", undefined, ["10.1.0.0/16"]],
  ["010.1.2.3", "10.1.2.3/32", "8.1.2.3", ["10.1.2.3/32"]],
  ["10.0.0.0/255.0.0.0", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/0.0.255.255", "10.0.0.0/16", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/255.0.255.0", undefined, undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/+8", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/0_8", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/ 8", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/08", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/٨", "10.0.0.0/8", undefined, ["10.0.0.0/32"]],
  ["١٠.1", "10.1.0.0/32", undefined, ["10.1.0.0/16"]],
  ["-0.1", "0.1.0.0/32", undefined, ["0.1.0.0/16"]],
  ["10.", undefined, undefined, ["10.0.0.0/8"]],
  ["1.2.3.4.5", undefined, undefined, ["0.0.0.0/32"]],
  ["10.0.0.0/33", undefined, undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/", undefined, undefined, ["10.0.0.0/32"]],
  ["10.0.0.0/8/8", undefined, undefined, ["10.0.0.0/32"]],
  ["256.1", undefined, undefined, ["0.0.0.0/32"]],
  ["banana", undefined, undefined, ["0.0.0.0/32"]],
  ["0x0a.1", undefined, "10.0.0.1", ["0.0.0.0/32"]],
  ["012.1.2.3", "12.1.2.3/32", "10.1.2.3", ["12.1.2.3/32"]],
  ["1.2.65535", undefined, "1.2.255.255", ["0.0.0.0/32"]],
  ["4294967295", undefined, "255.255.255.255", ["::/128"]],
  ["08", "8.0.0.0/32", undefined, ["8.0.0.0/8", "8::/16"]],
  ["10.1.2.3 junk", undefined, "10.1.2.3", ["0.0.0.0/32"]],
  ["::", "::/128", "::", ["::/0"]],
  ["::1/128", "::1/128", undefined, ["::1/128"]],
  ["2001:db8::/32", "2001:db8::/32", undefined, ["2001:db8::/32"]],
  ["FE80::1", "fe80::1/128", "fe80::1", ["fe80::1/128"]],
  ["fe80::00001", undefined, undefined, ["::/128"]],
  ["1::2::3", undefined, undefined, ["::/128"]],
  ["::ffff:1.2.3.4", "::ffff:102:304/128", "::ffff:102:304", ["::/128"]],
  ["1.2.3.4::", undefined, undefined, ["::/128"]],
  ["2001:db8::1/ffff:ffff::", "2001:db8::1/32", undefined, ["2001:db8::1/128"]],
  ["2001:db8::/129", undefined, undefined, ["2001:db8::/32"]],
  ["fe80", undefined, undefined, ["fe80::/16"]],
  ["FE80", undefined, undefined, ["0.0.0.0/32"]],
  ["fe80:", undefined, undefined, ["fe80::/16"]],
  ["2001:db8", undefined, undefined, ["2001:db8::/32"]],
  ["0255", "255.0.0.0/32", "0.0.0.173", ["255.0.0.0/8", "255::/16"]],
  ["00000010", "10.0.0.0/32", "0.0.0.8", ["10.0.0.0/8", "::/128"]],
  ["300", undefined, "0.0.1.44", ["300::/16"]],
  ["abc", undefined, undefined, ["abc::/16"]],
  ["192.168", "192.168.0.0/32", "192.0.0.168", ["192.168.0.0/16"]],
];

describe("netaddr 0.8.0 as Nautobot 1.6.32 reads filter values", () => {
  it("IPNetwork, IPAddress and the q search networks match netaddr's answers", () => {
    const wrong = ROWS.filter(
      ([v, n, a, q]) =>
        net(netaddrNetwork(v)) !== n ||
        addr(netaddrAddress(v)) !== a ||
        JSON.stringify(searchNetworks(v).map(net)) !== JSON.stringify(q),
    ).map(([v]) => [v, net(netaddrNetwork(v)), addr(netaddrAddress(v)), searchNetworks(v).map(net)]);
    assert.deepEqual(wrong, []);
  });

  it("strips as Python's str.strip() does", () => {
    assert.equal(pyStrip("\u00a0\u3000\x1c 10.1\t\u2028"), "10.1");
    assert.equal(pyStrip("\ufeff10"), "\ufeff10");
  });
});
