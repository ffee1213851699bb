/**
 * Issue 25 in a real browser (Debian's Chromium driven by playwright-core): add 48 interfaces to a device
 * with `eth[1-48]` from its "Add components" menu; allocate the next free IP of a prefix from the prefix's
 * page, assign it to an interface through the API, and make it the device's primary IPv4 address; import
 * 100 devices from CSV with 2 bad rows (nothing created, both rows' errors shown with their row numbers),
 * then fixed (100 created). Screenshots of each step go to `test-results/` (not committed).
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { expectFlash } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";

describe("components in bulk, IP allocation and import in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const w: Record<string, any> = {};
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "FRA1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
    w.type = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "7050SX3" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "Spine" });
    w.device = await create(s, "/api/dcim/devices/", {
      name: "fra1-spine1",
      device_type: w.type.id,
      device_role: w.role.id,
      site: w.site.id,
      status: "active",
    });
    w.prefix = await create(s, "/api/ipam/prefixes/", { prefix: "10.20.0.0/24", status: "active" });
    await create(s, "/api/ipam/ip-addresses/", { address: "10.20.0.1/24", status: "active" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${s.url}/login/`);
    await page.fill('input[name="username"]', "admin");
    await page.fill('input[name="password"]', "admin");
    await page.click('button[type="submit"]');
    await page.waitForURL(`${s.url}/`);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it("adds 48 interfaces with eth[1-48] from the device's Add components menu", async () => {
    await page.goto(`${s.url}/dcim/devices/${w.device.id}/`);
    await page.click("details.add-menu > summary");
    await page.screenshot({ path: `${SHOTS}/u3-add-components-menu.png` });
    await page.click('details.add-menu a:text-is("Interfaces")');
    await page.fill("#f-name_pattern", "eth[1-48]");
    await page.selectOption("#f-type", "10gbase-x-sfpp");
    await page.screenshot({ path: `${SHOTS}/u3-add-interfaces-form.png`, fullPage: true });
    await page.click('form.edit button[type="submit"]');
    // Back on the device's Interfaces tab (issue 25, ui/tabs.ts).
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/interfaces/`);
    assert.match((await page.textContent("main")) ?? "", /Interfaces \(48\)/);
    await expectFlash(page, "Created 48 interfaces");
    await page.screenshot({ path: `${SHOTS}/u3-device-48-interfaces.png` });
    const list = await s.api(`/api/dcim/interfaces/?device_id=${w.device.id}&limit=100`);
    assert.equal(list.body.count, 48);
    assert.deepEqual(
      list.body.results.map((i: any) => i.name),
      Array.from({ length: 48 }, (_, i) => `eth${i + 1}`),
    );
  });

  it("allocates the next available IP of a prefix and makes it the device's primary", async () => {
    await page.goto(`${s.url}/ipam/prefixes/${w.prefix.id}/`);
    const main = (await page.textContent("main")) ?? "";
    assert.match(main, /10\.20\.0\.2\/24 – 10\.20\.0\.254\/24/);
    assert.match(main, /253 IPs available/);
    await page.screenshot({ path: `${SHOTS}/u3-prefix-available.png`, fullPage: true });
    await page.click('button:text-is("Add next available IP")');
    await page.waitForURL(/\/ipam\/ip-addresses\/[0-9a-f-]{36}\/edit\/$/);
    assert.equal(await page.inputValue("#f-address"), "10.20.0.2/24");
    await expectFlash(page, /^Created IP address 10\.20\.0\.2\/24$/);
    const ipId = page.url().split("/")[5]!;
    const iface = (await s.api(`/api/dcim/interfaces/?device_id=${w.device.id}&name=eth1`)).body.results[0];
    const patched = await s.api(`/api/ipam/ip-addresses/${ipId}/`, {
      method: "PATCH",
      body: { assigned_object_type: "dcim.interface", assigned_object_id: iface.id },
    });
    assert.equal(patched.status, 200);
    await page.goto(`${s.url}/ipam/ip-addresses/${ipId}/`);
    await page.click('button:text-is("Make primary")');
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/`);
    assert.match((await page.textContent("main")) ?? "", /10\.20\.0\.2\/24/);
    await expectFlash(page, `Set 10.20.0.2/24 as primary IP of ${w.device.name}`);
    await page.screenshot({ path: `${SHOTS}/u3-device-primary-ip.png` });
    const dev = await s.api(`/api/dcim/devices/${w.device.id}/`);
    assert.equal(dev.body.primary_ip4?.id, ipId);
  });

  it("imports 100 devices from CSV: 2 bad rows refuse all with their row numbers, then all 100", async () => {
    const row = (i: number, site = "FRA1", role = "Spine") =>
      `fra1-leaf${String(i).padStart(3, "0")},7050SX3,${role},${site},active`;
    const rows = Array.from({ length: 100 }, (_, i) => row(i + 1));
    rows[6] = row(7, "NOWHERE");
    rows[88] = row(89, "fra1", "No role");
    const csv = (r: string[]) => ["name,device_type,device_role,site,status", ...r].join("\n");
    await page.goto(`${s.url}/dcim/devices/`);
    await page.click('a:text-is("Import")');
    await page.fill("#f-data", csv(rows));
    await page.click('button:text-is("Preview")');
    assert.match((await page.textContent(".import-preview h2")) ?? "", /100 to create/);
    assert.match((await page.textContent(".import-preview table")) ?? "", /NOWHERE \(not found\)/);
    await page.screenshot({ path: `${SHOTS}/u3-import-preview.png`, fullPage: true });
    await page.click('button:text-is("Import 100")');
    await page.waitForSelector(".import-errors");
    const errors = (await page.textContent(".import-errors")) ?? "";
    assert.match(errors, /Row 7\s*site: Related object not found/);
    assert.match(errors, /Row 89\s*device_role: Related object not found/);
    assert.match((await page.textContent("main")) ?? "", /2 records failed validation; nothing was imported/);
    await page.screenshot({ path: `${SHOTS}/u3-import-errors.png`, fullPage: true });
    assert.equal((await s.api("/api/dcim/devices/?name__isw=fra1-leaf&limit=1")).body.count, 0);
    rows[6] = row(7);
    rows[88] = row(89, "fra1");
    await page.fill("#f-data", csv(rows));
    await page.click('button:text-is("Preview")');
    await page.click('button:text-is("Import 100")');
    await page.waitForURL(`${s.url}/dcim/devices/`);
    await expectFlash(page, "Imported 100 devices.");
    await page.screenshot({ path: `${SHOTS}/u3-import-done.png` });
    assert.equal((await s.api("/api/dcim/devices/?name__isw=fra1-leaf&limit=1")).body.count, 100);
  });
});
