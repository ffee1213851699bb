/**
 * Webhook target policy (issue 12, "SSRF with read-back"): which addresses a webhook may be sent to.
 *
 * An address is *restricted* when ipaddr.js classifies it as anything but global unicast (loopback,
 * private, link-local, unique-local, carrier-grade NAT, unspecified, multicast, broadcast, reserved, …;
 * IPv4-mapped IPv6 is judged as its IPv4 address), unless it lies in one of the allowed networks.
 * Restricted targets need a webhook saved by a superuser (or `allowPrivate`): non-superusers get a 400 at
 * save time, and at send time the connection of an untrusted webhook re-checks every resolved address, so
 * DNS that changes after saving (rebinding) cannot reach a restricted address either.
 */
import { promises as dns, lookup as dnsLookup, type LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";

/** Settings: `INVENTORY_WEBHOOK_ALLOW_PRIVATE` (bool) and `INVENTORY_WEBHOOK_ALLOWED_NETWORKS` (CIDR list). */
export interface TargetPolicy {
  /** Any user may target restricted addresses (a deployment whose receivers are all internal). */
  allowPrivate: boolean;
  /** Networks that are never restricted, e.g. `10.20.0.0/16` for an internal receiver farm. */
  allowedNetworks: readonly string[];
}

/** Policy from the environment; a malformed network in the list throws (startup error). */
export function targetPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): TargetPolicy {
  const allowedNetworks = (env.INVENTORY_WEBHOOK_ALLOWED_NETWORKS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of allowedNetworks) {
    if (!ipaddr.isValidCIDR(n))
      throw new Error(`INVENTORY_WEBHOOK_ALLOWED_NETWORKS: "${n}" is not a network`);
  }
  const v = (env.INVENTORY_WEBHOOK_ALLOW_PRIVATE ?? "").toLowerCase();
  return { allowPrivate: ["1", "true", "yes", "on"].includes(v), allowedNetworks };
}

/** True when `address` (an IP literal) may not be targeted by an untrusted webhook. */
export function isRestricted(address: string, policy: TargetPolicy): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address.replace(/^\[|\]$/g, ""));
  } catch {
    return true;
  }
  for (const n of policy.allowedNetworks) {
    const [net, bits] = ipaddr.parseCIDR(n);
    if (net.kind() === ip.kind() && ip.match([net, bits] as never)) return false;
  }
  return ip.range() !== "unicast";
}

/** The message of a refused target (400 on `payload_url`, or the failed attempt's error). */
export const RESTRICTED_TARGET =
  "Webhook targets in loopback, link-local, private and other special-purpose networks need a superuser " +
  "(or INVENTORY_WEBHOOK_ALLOW_PRIVATE / INVENTORY_WEBHOOK_ALLOWED_NETWORKS).";

/**
 * Save-time check of a host name or IP literal: resolves it and refuses it when any address is restricted.
 * @returns an error message, or undefined when the target is allowed.
 */
export async function targetProblem(host: string, policy: TargetPolicy): Promise<string | undefined> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(bare)) return isRestricted(bare, policy) ? RESTRICTED_TARGET : undefined;
  let addrs: LookupAddress[];
  try {
    addrs = await dns.lookup(bare, { all: true, verbatim: true });
  } catch {
    return undefined; // unresolvable now: checked again at every connection
  }
  return addrs.some((a) => isRestricted(a.address, policy)) ? RESTRICTED_TARGET : undefined;
}

/**
 * A `lookup` for outgoing connections of untrusted webhooks (net.connect / undici `connect.lookup`):
 * resolves as usual, then fails with RESTRICTED_TARGET when a resolved address is restricted.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (
    hostname: string,
    options: object,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!list.length || list.some((a) => isRestricted(a.address, policy)))
        return callback(new Error(RESTRICTED_TARGET), []);
      if ((options as { all?: boolean }).all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
