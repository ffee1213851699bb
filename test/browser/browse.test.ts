/**
 * The web interface in a real browser (issue 10): Debian's Chromium driven by playwright-core (never a
 * downloaded browser). Logs in, browses from the home page to a site, its rack and the rack's elevation, a
 * device, creates and edits a device through the forms, searches for an IP address and lands on it, logs out. Screenshots of each page go to `test-results/` (not committed).
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";

describe("web interface in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const w: Record<string, any> = {};
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "AMS1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Juniper" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "QFX5120" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    w.rack = await create(s, "/api/dcim/racks/", {
      name: "R1",
      site: w.site.id,
      status: "active",
      u_height: 12,
    });
    w.device = await create(s, "/api/dcim/devices/", {
      name: "ams1-leaf1",
      device_type: dt.id,
      device_role: role.id,
      site: w.site.id,
      rack: w.rack.id,
      position: 10,
      face: "front",
      status: "active",
    });
    w.ip = await create(s, "/api/ipam/ip-addresses/", { address: "198.51.100.7/24", status: "active" });
    w.iface = await create(s, "/api/dcim/interfaces/", {
      device: w.device.id,
      name: "et-0/0/48",
      type: "100gbase-x-qsfp28",
    });
    w.loopback = await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.1/32",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.iface.id,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it("logs in, browses site → device, searches an IP, logs out", async () => {
    await page.goto(`${s.url}/`);
    assert.match(page.url(), /\/login\/\?next=/);
    assert.equal(await page.title(), "Log in · inventory");
    await page.screenshot({ path: `${SHOTS}/login.png` });
    // Keyboard only: the username box has the focus, Tab goes to the password, Enter submits.
    await page.keyboard.type("admin");
    await page.keyboard.press("Tab");
    await page.keyboard.type("wrong");
    await page.keyboard.press("Enter");
    await page.waitForSelector(".error");
    assert.match((await page.textContent(".error")) ?? "", /correct username and password/);
    await page.fill('input[name="password"]', "admin");
    await page.click('button[type="submit"]');
    await page.waitForURL(`${s.url}/`);
    assert.equal(await page.title(), "Home · inventory");
    // The first Tab on a page reaches the skip link, which leads past the header to the content.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate("document.activeElement.textContent"), "Skip to content");
    await page.screenshot({ path: `${SHOTS}/home.png`, fullPage: true });

    await page.click(`main a[href="/dcim/sites/"]`);
    await page.waitForURL(`${s.url}/dcim/sites/`);
    await page.screenshot({ path: `${SHOTS}/site-list.png` });
    await page.click("text=AMS1");
    await page.waitForURL(`${s.url}/dcim/sites/${w.site.id}/`);
    assert.equal(await page.textContent("h1"), "AMS1");
    await page.screenshot({ path: `${SHOTS}/site-detail.png`, fullPage: true });
    // Related objects link to the filtered list: the site's devices.
    await page.click(`a[href="/dcim/devices/?site_id=${w.site.id}"]`);
    await page.waitForURL(`${s.url}/dcim/devices/?site_id=${w.site.id}`);

    // The site's racks, a rack's elevation, a device drawn in it.
    await page.goBack();
    await page.click(`a[href="/dcim/racks/?site_id=${w.site.id}"]`);
    await page.click(`a[href="/dcim/racks/${w.rack.id}/"]`);
    await page.waitForURL(`${s.url}/dcim/racks/${w.rack.id}/`);
    await page.waitForSelector(".elevations svg");
    await page.screenshot({ path: `${SHOTS}/rack-elevation.png`, fullPage: true });
    await page.click(`.elevations a[href="/dcim/devices/${w.device.id}/"] >> nth=0`);
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/`);
    // The device's interfaces (its Interfaces tab, ui/tabs.ts), an interface's IP address, and back through
    // the change log.
    await page.click('nav.tabs a:has-text("Interfaces")');
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/interfaces/`);
    await page.screenshot({ path: `${SHOTS}/device-interfaces.png`, fullPage: true });
    await page.click(`a[href="/dcim/interfaces/${w.iface.id}/"]`);
    await page.waitForURL(`${s.url}/dcim/interfaces/${w.iface.id}/`);
    await page.click(`a[href="/ipam/ip-addresses/${w.loopback.id}/"] >> nth=0`);
    await page.waitForURL(`${s.url}/ipam/ip-addresses/${w.loopback.id}/`);
    assert.equal(await page.textContent("h1"), "192.0.2.1/32");
    await page.click("section.card table.changes a >> nth=0");
    await page.waitForURL(/\/extras\/object-changes\/[0-9a-f-]{36}\/$/);
    assert.match((await page.textContent("main")) ?? "", /Created with/);
    await page.screenshot({ path: `${SHOTS}/object-change.png`, fullPage: true });
    await page.click(`table.attrs a[href="/ipam/ip-addresses/${w.loopback.id}/"]`);
    await page.waitForURL(`${s.url}/ipam/ip-addresses/${w.loopback.id}/`);

    await page.goto(`${s.url}/dcim/devices/`);
    await page.click("text=ams1-leaf1");
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/`);
    assert.equal(await page.textContent("h1"), "ams1-leaf1");
    // The device's site is a link back to the site page.
    await page.click(`a[href="/dcim/sites/${w.site.id}/"]`);
    await page.waitForURL(`${s.url}/dcim/sites/${w.site.id}/`);

    // Create a device through the form: a validation error first, shown beside its field.
    await page.goto(`${s.url}/dcim/devices/add/`);
    await page.fill("#f-name", "ams1-leaf2");
    await page.click('form.edit button[type="submit"]');
    await page.waitForSelector(".field.has-error");
    await page.screenshot({ path: `${SHOTS}/device-form-errors.png`, fullPage: true });
    await page.selectOption("#f-device_type", w.device.device_type.id);
    await page.selectOption("#f-device_role", w.device.device_role.id);
    await page.selectOption("#f-site", w.site.id);
    await page.selectOption("#f-status", "planned");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/devices\/[0-9a-f-]{36}\/$/);
    assert.equal(await page.textContent("h1"), "ams1-leaf2");
    await page.click("text=Edit");
    await page.fill("#f-serial", "SN-123");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/devices\/[0-9a-f-]{36}\/$/);
    assert.match((await page.textContent("table.attrs")) ?? "", /SN-123/);
    await page.screenshot({ path: `${SHOTS}/device-detail.png`, fullPage: true });

    await page.fill('header input[name="q"]', "198.51.100.7");
    await page.press('header input[name="q"]', "Enter");
    await page.waitForURL(`${s.url}/ipam/ip-addresses/${w.ip.id}/`);
    assert.equal(await page.textContent("h1"), "198.51.100.7/24");
    await page.screenshot({ path: `${SHOTS}/ip-detail.png`, fullPage: true });

    // A narrow screen (a phone): the same pages stay usable, tables scroll inside their cards.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${s.url}/dcim/devices/${w.device.id}/`);
    const overflow = Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"));
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: `${SHOTS}/narrow-device.png`, fullPage: true });
    await page.goto(`${s.url}/dcim/devices/`);
    await page.screenshot({ path: `${SHOTS}/narrow-device-list.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.click("text=Log out");
    await page.waitForURL(/\/login\//);
    await page.goto(`${s.url}/dcim/sites/`);
    assert.match(page.url(), /\/login\/\?next=/);
  });

  it("sets relationships through the forms' typeaheads: one-to-one and many-to-many (issue 25)", async () => {
    const provider = await create(s, "/api/circuits/providers/", { name: "Uplink Telecom" });
    const v10 = await create(s, "/api/ipam/vlans/", { vid: 10, name: "users", status: "active" });
    const v20 = await create(s, "/api/ipam/vlans/", { vid: 20, name: "voice", status: "active" });
    await create(s, "/api/extras/relationships/", {
      name: "Uplink provider",
      slug: "uplink_provider",
      type: "one-to-one",
      source_type: "dcim.device",
      destination_type: "circuits.provider",
      source_label: "Uplink provider",
      description: "Who carries this device's uplink",
    });
    await create(s, "/api/extras/relationships/", {
      name: "Site VLANs",
      slug: "site_vlans",
      type: "many-to-many",
      source_type: "dcim.site",
      destination_type: "ipam.vlan",
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await context.newPage();
    try {
      await p.goto(`${s.url}/login/`);
      await p.fill('input[name="username"]', "admin");
      await p.fill('input[name="password"]', "admin");
      await p.click('button[type="submit"]');
      await p.waitForURL(`${s.url}/`);
      /** Choose `text` in the typeahead of control `name` after typing `typed`. */
      const choose = async (name: string, typed: string, text: string) => {
        const answered = p.waitForResponse(
          (r) => r.url().includes("/ui-api/lookup/") && new URL(r.url()).searchParams.get("q") === typed,
        );
        // The box around the input (a single select showing "—" hides its input until it has the focus).
        await p.click(`.ts-control:has(#f-${name}-ts-control)`);
        // Typed only once the box has the focus (keys typed before would be lost).
        await p.waitForFunction(`document.activeElement?.id === "f-${name}-ts-control"`);
        await p.keyboard.type(typed);
        await answered;
        await p.locator(`#f-${name}-ts-dropdown .option`, { hasText: text }).first().click();
      };

      // One-to-one: the device's uplink provider, a single choice.
      await p.goto(`${s.url}/dcim/devices/${w.device.id}/edit/`);
      // Tom Select points the label at its own control (`…-ts-label`); the label is the relationship's.
      assert.equal(
        (await p.textContent("#f-cr_uplink_provider__destination-ts-label"))?.trim(),
        "Uplink provider",
      );
      assert.match((await p.textContent("form.edit")) ?? "", /Who carries this device's uplink/);
      await choose("cr_uplink_provider__destination", "Uplink", "Uplink Telecom");
      await p.screenshot({ path: `${SHOTS}/relationship-form.png`, fullPage: true });
      await p.click('form.edit button[type="submit"]');
      await p.waitForURL(`${s.url}/dcim/devices/${w.device.id}/`);
      const row = p.locator("table.attrs tr", { hasText: "Uplink provider" });
      assert.equal(
        await row.locator(`a[href="/circuits/providers/${provider.id}/"]`).textContent(),
        "Uplink Telecom",
      );
      const device = await s.api(`/api/dcim/devices/${w.device.id}/?include=relationships`);
      assert.deepEqual(
        device.body.relationships.uplink_provider.destination.objects.map((o: { id: string }) => o.id),
        [provider.id],
      );

      // Many-to-many: two VLANs for the site, chosen one after the other in the same control.
      await p.goto(`${s.url}/dcim/sites/${w.site.id}/edit/`);
      await choose("cr_site_vlans__destination", "users", "users");
      await choose("cr_site_vlans__destination", "voice", "voice");
      await p.click('form.edit button[type="submit"]');
      await p.waitForURL(`${s.url}/dcim/sites/${w.site.id}/`);
      const vlans = p.locator("table.attrs tr", { hasText: "VLANs" });
      assert.equal(await vlans.locator("a").count(), 2);
      await p.screenshot({ path: `${SHOTS}/relationship-detail.png`, fullPage: true });
      const site = await s.api(`/api/dcim/sites/${w.site.id}/?include=relationships`);
      assert.deepEqual(
        site.body.relationships.site_vlans.destination.objects.map((o: { id: string }) => o.id).sort(),
        [v10.id, v20.id].sort(),
      );
    } finally {
      await context.close();
    }
  });
});
