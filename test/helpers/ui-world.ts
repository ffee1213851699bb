/**
 * A small network to look at in the browser (issue 25): what the accessibility test (test/browser/
 * accessibility.test.ts) checks and what `npm run screenshots` photographs. Built through the API of a
 * running server; the pages then have real content (statuses, racks, cables, a traced path, a prefix with
 * used and free addresses).
 */
import { type Browser, chromium, type Page } from "playwright-core";
import type { TestServer } from "./server.ts";
import { create } from "./world.ts";

/** Debian's Chromium (never a downloaded browser), or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The objects of the demo network the pages are opened on (API representations). */
export interface DemoWorld {
  site: any;
  /** The access switch: rack position, primary IPv4, 8 interfaces, one cabled through a patch panel. */
  device: any;
  /** The switch's first interface (cabled: sw1 → patch panel → sw2), the one whose trace is drawn. */
  iface: any;
  /** 10.10.0.0/24 with a child /26 and a few addresses (free ranges between them). */
  prefix: any;
  /** The rack holding the switches and the patch panel (its page draws the elevations). */
  rack: any;
}

/**
 * Build the demo network: two sites, a tenant, a rack, two switches and a patch panel pair of front/rear
 * ports, three cables forming one path, a prefix with addresses, one of them the switch's primary IPv4.
 * @throws AssertionError when the API refuses one of the creates (see `create`).
 */
export async function buildDemoWorld(s: TestServer): Promise<DemoWorld> {
  const region = await create(s, "/api/dcim/regions/", { name: "Europe" });
  const tenant = await create(s, "/api/tenancy/tenants/", { name: "Acme Networks" });
  const site = await create(s, "/api/dcim/sites/", {
    name: "LON1",
    status: "active",
    region: region.id,
    tenant: tenant.id,
    facility: "Docklands",
    description: "London data centre",
  });
  await create(s, "/api/dcim/sites/", { name: "AMS1", status: "planned", region: region.id });
  const rack = await create(s, "/api/dcim/racks/", { name: "R101", site: site.id, status: "active" });
  const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
  const swType = await create(s, "/api/dcim/device-types/", {
    manufacturer: mfr.id,
    model: "DCS-7050SX3-48YC8",
    u_height: 1,
  });
  const ppType = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "Patch-24" });
  const role = await create(s, "/api/dcim/device-roles/", { name: "Access switch", color: "2196f3" });
  const dev = (name: string, type: string, position?: number) =>
    create(s, "/api/dcim/devices/", {
      name,
      device_type: type,
      device_role: role.id,
      site: site.id,
      rack: rack.id,
      tenant: tenant.id,
      status: "active",
      ...(position ? { position, face: "front" } : {}),
    });
  const device = await dev("lon1-sw1", swType.id, 40);
  const sw2 = await dev("lon1-sw2", swType.id, 38);
  const panel = await dev("lon1-pp1", ppType.id, 42);
  await create(s, "/api/dcim/devices/", {
    name: "lon1-sw3",
    device_type: swType.id,
    device_role: role.id,
    site: site.id,
    status: "planned",
  });
  const ifaces: any[] = [];
  for (let i = 1; i <= 8; i++)
    ifaces.push(
      await create(s, "/api/dcim/interfaces/", {
        device: device.id,
        name: `Ethernet${i}`,
        type: "10gbase-x-sfpp",
        description: i === 1 ? "uplink to lon1-sw2 via patch panel" : "",
      }),
    );
  const peer = await create(s, "/api/dcim/interfaces/", {
    device: sw2.id,
    name: "Ethernet48",
    type: "10gbase-x-sfpp",
  });
  const rear = await create(s, "/api/dcim/rear-ports/", {
    device: panel.id,
    name: "Rear 1",
    type: "lc",
    positions: 1,
  });
  const front = await create(s, "/api/dcim/front-ports/", {
    device: panel.id,
    name: "Front 1",
    type: "lc",
    rear_port: rear.id,
  });
  const cable = (a: [string, string], b: [string, string], label: string) =>
    create(s, "/api/dcim/cables/", {
      termination_a_type: a[0],
      termination_a_id: a[1],
      termination_b_type: b[0],
      termination_b_id: b[1],
      status: "connected",
      label,
    });
  await cable(["dcim.interface", ifaces[0].id], ["dcim.frontport", front.id], "PATCH-1");
  await cable(["dcim.rearport", rear.id], ["dcim.interface", peer.id], "TRUNK-1");
  const prefix = await create(s, "/api/ipam/prefixes/", {
    prefix: "10.10.0.0/24",
    status: "active",
    site: site.id,
    tenant: tenant.id,
    description: "LON1 management",
  });
  await create(s, "/api/ipam/prefixes/", { prefix: "10.10.0.64/26", status: "reserved", site: site.id });
  const ip = await create(s, "/api/ipam/ip-addresses/", {
    address: "10.10.0.1/24",
    status: "active",
    dns_name: "lon1-sw1.example.net",
    assigned_object_type: "dcim.interface",
    assigned_object_id: ifaces[0].id,
  });
  for (const a of ["10.10.0.2/24", "10.10.0.3/24", "10.10.0.10/24"])
    await create(s, "/api/ipam/ip-addresses/", { address: a, status: "active" });
  const r = await s.api(`/api/dcim/devices/${device.id}/`, {
    method: "PATCH",
    body: { primary_ip4: ip.id },
  });
  if (r.status !== 200) throw new Error(`primary IP: ${r.status} ${JSON.stringify(r.body)}`);
  return { site, device: r.body, iface: ifaces[0], prefix, rack };
}

/** Start Debian's Chromium headless (no sandbox: the tests run as root). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/** Log `page` in as `username` through the login form; resolves on the home page. */
export async function logIn(page: Page, url: string, username = "admin", password = "admin"): Promise<void> {
  await page.goto(`${url}/login/`);
  await page.fill('input[name="username"]', username);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${url}/`);
}
