/** Unit tests of IP parsing, normalisation and range keys (src/net/ip.ts). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { containsCidr, hostText, ipKey, networkText, parseCidr } from "../../src/net/ip.ts";

describe("parseCidr", () => {
  it("clears host bits for the network and keeps them for the host", () => {
    const c = parseCidr("10.0.0.5/24");
    assert.equal(networkText(c), "10.0.0.0/24");
    assert.equal(hostText(c), "10.0.0.5/24");
    assert.equal(c.family, 4);
    assert.equal(ipKey(4, c.start), "0a000000");
    assert.equal(ipKey(4, c.end), "0a0000ff");
  });
  it("treats a bare address as a host route", () => {
    assert.equal(parseCidr("192.0.2.1").prefixLength, 32);
    assert.equal(parseCidr("2001:db8::1").prefixLength, 128);
  });
  it("normalises IPv6 text", () => {
    const c = parseCidr("2001:DB8:0:0::1/64");
    assert.equal(networkText(c), "2001:db8::/64");
    assert.equal(hostText(c), "2001:db8::1/64");
    assert.equal(ipKey(6, c.start).length, 32);
  });
  it("rejects garbage with Nautobot's message", () => {
    assert.throws(() => parseCidr("10.0.0.300/24"), /Invalid IP address format: 10.0.0.300\/24/);
    assert.throws(() => parseCidr("10.0.0.0/33"), /Invalid IP address format/);
    assert.throws(() => parseCidr("10.1/8"), /Invalid IP address format/);
    assert.throws(() => parseCidr(""), /Invalid IP address format/);
    assert.throws(() => parseCidr(42), /Invalid IP address format/);
  });
  it("handles /31, /32, /127, /0 ranges", () => {
    const a = parseCidr("10.0.0.1/31");
    assert.equal(a.end - a.start, 1n);
    const z = parseCidr("0.0.0.0/0");
    assert.equal(ipKey(4, z.end), "ffffffff");
    const v6 = parseCidr("::/0");
    assert.equal(ipKey(6, v6.end), "f".repeat(32));
  });
  it("orders keys like addresses", () => {
    const keys = ["10.0.0.10", "10.0.0.9", "9.255.255.255"].map((a) => ipKey(4, parseCidr(a).start)).sort();
    assert.deepEqual(keys, ["09ffffff", "0a000009", "0a00000a"]);
  });
  it("computes containment", () => {
    assert.ok(containsCidr(parseCidr("10.0.0.0/8"), parseCidr("10.1.0.0/16")));
    assert.ok(!containsCidr(parseCidr("10.1.0.0/16"), parseCidr("10.0.0.0/8")));
    assert.ok(!containsCidr(parseCidr("10.0.0.0/8"), parseCidr("2001:db8::/32")));
  });
});
