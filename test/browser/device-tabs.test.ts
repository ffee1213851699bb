/**
 * Issue 25 in Chromium (Debian's, driven by playwright-core): a device page's tabs. Open a device, switch to
 * its Interfaces tab by the tab bar, see the peer (far device › port) of a connected interface, then use
 * "Add components → Interfaces" to add `eth[1-4]` and land back on the tab with the new count. Screenshots
 * go to `test-results/` (not committed).
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";

describe("device page tabs in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const w: Record<string, any> = {};
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    const site = await create(s, "/api/dcim/sites/", { name: "AMS1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Juniper" });
    const type = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "QFX5120" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    const mk = (name: string) =>
      create(s, "/api/dcim/devices/", {
        name,
        device_type: type.id,
        device_role: role.id,
        site: site.id,
        status: "active",
      });
    w.leaf = await mk("ams1-leaf1");
    w.spine = await mk("ams1-spine1");
    w.up = await create(s, "/api/dcim/interfaces/", {
      device: w.leaf.id,
      name: "xe-0/0/48",
      type: "10gbase-x-sfpp",
    });
    w.down = await create(s, "/api/dcim/interfaces/", {
      device: w.spine.id,
      name: "xe-0/0/1",
      type: "10gbase-x-sfpp",
    });
    await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: w.up.id,
      termination_b_type: "dcim.interface",
      termination_b_id: w.down.id,
      status: "connected",
    });
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

  it("switches to the Interfaces tab, shows the peer, and adds eth[1-4] through Add components", async () => {
    const base = `${s.url}/dcim/devices/${w.leaf.id}/`;
    await page.goto(base);
    assert.equal(await page.getAttribute('nav.tabs a[aria-current="page"]', "href"), new URL(base).pathname);
    assert.equal((await page.textContent('nav.tabs a[href$="/interfaces/"]'))?.trim(), "Interfaces (1)");
    await page.screenshot({ path: `${SHOTS}/device-tabs-main.png`, fullPage: true });

    await page.click('nav.tabs a:has-text("Interfaces")');
    await page.waitForURL(`${base}interfaces/`);
    assert.equal((await page.textContent('nav.tabs a[aria-current="page"]'))?.trim(), "Interfaces (1)");
    const row = page.locator("#tab-table tbody tr", { hasText: "xe-0/0/48" });
    const connection = (await row.locator("td").nth(11).textContent())?.trim();
    assert.equal(connection, "ams1-spine1 › xe-0/0/1");
    assert.equal(
      await row.locator(`a[href="/dcim/devices/${w.spine.id}/"]`).count(),
      1,
      "the peer device links to its page",
    );
    await page.screenshot({ path: `${SHOTS}/device-tabs-interfaces.png`, fullPage: true });

    await page.click("details.add-menu > summary");
    await page.click('details.add-menu a:text-is("Interfaces")');
    await page.waitForURL(`${base}components/interfaces/add/`);
    await page.fill("#f-name_pattern", "eth[1-4]");
    await page.selectOption("#f-type", "1000base-t");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(`${base}interfaces/`);
    assert.equal((await page.textContent('nav.tabs a[aria-current="page"]'))?.trim(), "Interfaces (5)");
    const names = await page.locator("#tab-table tbody tr td:first-child").allTextContents();
    assert.deepEqual(
      names.map((n) => n.trim()),
      ["eth1", "eth2", "eth3", "eth4", "xe-0/0/48"],
    );
    await page.screenshot({ path: `${SHOTS}/device-tabs-added.png`, fullPage: true });
    const api = await s.api(`/api/dcim/interfaces/?device_id=${w.leaf.id}&limit=10`);
    assert.equal(api.body.count, 5);
  });
});
