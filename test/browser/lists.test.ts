/**
 * Issue 25 in a real browser (helper U1: navigation, lists, feedback, export, dark mode): Debian's Chromium
 * driven by playwright-core. The menu reaches every model the admin may view (a sample clicked through);
 * a view-only user sees no write controls and gets 403 on write URLs; the filtered device list exported as
 * CSV equals the API's data for the same filter; an edit shows a flash message; dark mode follows
 * `prefers-color-scheme` and the header's toggle; a create, a delete, a bulk edit and a bulk delete each show
 * their flash message, and the bulk actions return to the list with the same filters. Screenshots go to `test-results/` (not committed).
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { parse } from "csv-parse/sync";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { expectFlash } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";
const reg = registry();

/** The documented CSV cell of an API value: null empty, choices by value, objects by display, lists joined. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(cell).join(",");
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    if ("value" in o && "label" in o && Object.keys(o).length === 2) return cell(o.value);
    if ("display" in o) return String(o.display);
    return JSON.stringify(o);
  }
  return String(v);
}

/** A computed style of the page's body (`backgroundColor`, `color`). */
const bodyStyle = (page: Page, prop: "backgroundColor" | "color") =>
  page.evaluate(`getComputedStyle(document.body).${prop}`) as Promise<string>;

/** Relative luminance (0 black – 1 white) of a CSS `rgb(r, g, b)` colour. */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((n) => {
    const c = Number(n) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

describe("lists, navigation, feedback, export and dark mode in Chromium (issue 25)", () => {
  let s: TestServer;
  let browser: Browser;
  const w: Record<string, any> = {};
  const contexts: BrowserContext[] = [];

  async function loggedIn(
    username: string,
    password: string,
    opts: Parameters<Browser["newContext"]>[0] = {},
  ) {
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      acceptDownloads: true,
      ...opts,
    });
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login/`);
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${s.url}/`);
    return page;
  }

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "AMS1", status: "active" });
    w.other = await create(s, "/api/dcim/sites/", { name: "FRA1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Juniper" });
    w.type = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "QFX5120" });
    w.role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    const body = (name: string, site: string, status: string) => ({
      name,
      device_type: w.type.id,
      device_role: w.role.id,
      site,
      status,
      serial: `S-${name}`,
    });
    const r = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: [
        ...Array.from({ length: 30 }, (_, i) =>
          body(`ams1-leaf${i + 1}`, w.site.id, i % 3 ? "active" : "planned"),
        ),
        body("fra1-leaf1", w.other.id, "active"),
      ],
    });
    assert.equal(r.status, 201);
    w.device = r.body[1];
    const u = await create(s, "/api/users/users/", { username: "viewer", password: "pw-viewer-1" });
    await create(s, "/api/users/permissions/", {
      name: "view-dcim",
      users: [u.id],
      object_types: ["dcim.device", "dcim.site"],
      actions: ["view"],
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await s?.close();
  });

  it("the menu lists every model the admin may view, and a sample of its entries opens their lists", async () => {
    const page = await loggedIn("admin", "admin");
    const hrefs = await page.$$eval("nav.menu a", (as) => as.map((a) => a.getAttribute("href")));
    const expected = [...reg.models.values()]
      .filter((m) => m.key !== "extras.contenttype")
      .map((m) => `/${m.app}/${m.path}/`)
      .sort();
    assert.deepEqual([...hrefs].sort(), expected);
    const sample: Array<[string, string, string]> = [
      ["Devices", "Devices", "/dcim/devices/"],
      ["IPAM", "Prefixes", "/ipam/prefixes/"],
      ["Connections", "Cables", "/dcim/cables/"],
      ["Power", "Power Feeds", "/dcim/power-feeds/"],
      ["Extensibility", "Webhooks", "/extras/webhooks/"],
      ["Admin", "Users", "/users/users/"],
      ["Organization", "Sites", "/dcim/sites/"],
    ];
    for (const [group, title, url] of sample) {
      await page.click(`nav.menu summary:text-is("${group}")`);
      if (group === "Devices") await page.screenshot({ path: `${SHOTS}/menu-devices.png` });
      await page.click(`nav.menu a:text-is("${title}")`);
      await page.waitForURL(`${s.url}${url}`);
      assert.match((await page.textContent("h1")) ?? "", new RegExp(`^${title}`));
    }
  });

  it("a view-only user sees no write controls and gets 403 on write URLs", async () => {
    const page = await loggedIn("viewer", "pw-viewer-1");
    assert.deepEqual(await page.$$eval("nav.menu a", (as) => as.map((a) => a.getAttribute("href"))), [
      "/dcim/sites/",
      "/dcim/devices/",
    ]);
    await page.goto(`${s.url}/dcim/devices/`);
    assert.equal(await page.locator("text=+ Add").count(), 0);
    assert.equal(
      await page.locator('button:has-text("Edit selected"), button:has-text("Delete selected")').count(),
      0,
    );
    assert.equal(await page.locator('input[name="pk"]').count(), 0);
    await page.goto(`${s.url}/dcim/devices/${w.device.id}/`);
    assert.equal(await page.locator('main a:text-is("Edit"), main a:text-is("Delete")').count(), 0);
    await page.screenshot({ path: `${SHOTS}/viewer-device.png`, fullPage: true });
    for (const url of [
      "/dcim/devices/add/",
      `/dcim/devices/${w.device.id}/edit/`,
      `/dcim/devices/${w.device.id}/delete/`,
    ]) {
      const res = await page.goto(`${s.url}${url}`);
      assert.equal(res?.status(), 403, url);
    }
  });

  it("Export CSV of the filtered device list equals the API's data for the same filter", async () => {
    const page = await loggedIn("admin", "admin");
    await page.goto(`${s.url}/dcim/devices/`);
    await page.selectOption('form.filters select[name="status"]', "active");
    await page.selectOption('form.filters select[name="site_id"]', w.site.id);
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/status=active/);
    assert.equal(await page.locator("li.chip").count(), 2);
    await page.screenshot({ path: `${SHOTS}/device-list-filtered.png`, fullPage: true });
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Export CSV")]);
    const records: string[][] = parse(readFileSync((await download.path())!, "utf8"));
    const api = (
      await s.api(`/api/dcim/devices/?status=active&site_id=${w.site.id}&limit=1000&exclude=config_context`)
    ).body.results as any[];
    assert.equal(api.length, 20);
    const [header, ...rows] = records;
    assert.deepEqual(
      header,
      Object.keys(api[0]).filter((k) => k !== "config_context"),
    );
    assert.deepEqual(
      rows,
      api.map((d) => header!.map((k) => cell(d[k]))),
    );
  });

  it("the column chooser: a user picks and orders columns in the Configure form, resets them; others keep the defaults", async () => {
    const u = await create(s, "/api/users/users/", { username: "picker", password: "pw-picker-1" });
    await create(s, "/api/users/permissions/", {
      name: "view-devices-picker",
      users: [u.id],
      object_types: ["dcim.device"],
      actions: ["view"],
    });
    const headers = (page: Page) =>
      page.$$eval("table.list thead th", (ths) =>
        ths
          .map((th) => (th.textContent ?? "").replace(/[▲▼]/g, "").trim())
          .filter((t) => t && t !== "Select"),
      );
    const page = await loggedIn("picker", "pw-picker-1");
    await page.goto(`${s.url}/dcim/devices/?site_id=${w.site.id}`);
    const defaults = await headers(page);
    await page.click("a.button:text-is('Configure')");
    await page.waitForURL(/\/dcim\/devices\/columns\//);
    for (const box of await page.$$('input[name="column"]:checked')) await box.uncheck();
    await page.check("#col-serial");
    await page.check("#col-status");
    await page.fill('input[name="order_status"]', "1");
    await page.fill('input[name="order_serial"]', "2");
    await page.screenshot({ path: `${SHOTS}/column-chooser.png` });
    await page.click('button:text-is("Save")');
    await page.waitForURL(`${s.url}/dcim/devices/?site_id=${w.site.id}`);
    assert.deepEqual(await headers(page), ["Device", "Status", "Serial"]);
    assert.equal(await page.textContent(".flash.success"), "Saved columns");
    assert.equal(await page.locator("table.list tbody tr").count(), 30, "every AMS1 device");
    // The admin's list keeps Nautobot's defaults.
    const admin = await loggedIn("admin", "admin");
    await admin.goto(`${s.url}/dcim/devices/?site_id=${w.site.id}`);
    assert.deepEqual(await headers(admin), defaults);
    await page.click("a.button:text-is('Configure')");
    await page.click('button:text-is("Reset to default")');
    await page.waitForURL(`${s.url}/dcim/devices/?site_id=${w.site.id}`);
    assert.deepEqual(await headers(page), defaults);
  });

  it("an edit shows a flash message once", async () => {
    const page = await loggedIn("admin", "admin");
    await page.goto(`${s.url}/dcim/devices/${w.device.id}/edit/`);
    await page.fill("#f-serial", "SERIAL-EDITED");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(`${s.url}/dcim/devices/${w.device.id}/`);
    assert.equal(await page.textContent(".flash.success"), `Modified device ${w.device.name}`);
    await page.screenshot({ path: `${SHOTS}/flash-after-edit.png` });
    await page.reload();
    assert.equal(await page.locator(".flash").count(), 0);
  });

  it("a create, a delete, a bulk edit and a bulk delete show flash messages; bulk ones keep the filters", async () => {
    const page = await loggedIn("admin", "admin");
    await page.goto(`${s.url}/dcim/sites/add/`);
    await page.fill("#f-name", "LON9");
    await page.selectOption("#f-status", "active");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/sites\/[0-9a-f-]{36}\/$/);
    await expectFlash(page, "Created site LON9");
    await page.click('main a:text-is("Delete")');
    await page.click('main button:text-is("Delete")');
    await page.waitForURL(`${s.url}/dcim/sites/`);
    await expectFlash(page, "Deleted site LON9");

    // The filtered list: the 10 planned devices of AMS1 (issue 25: "return to the list with the same filters").
    const filtered = `/dcim/devices/?status=planned&site_id=${w.site.id}`;
    const boxes = page.locator('table.list input[name="pk"]');
    const pick = async () => {
      await page.goto(`${s.url}${filtered}`);
      const ids = [await boxes.nth(0).getAttribute("value"), await boxes.nth(1).getAttribute("value")];
      await boxes.nth(0).check();
      await boxes.nth(1).check();
      return ids as string[];
    };
    const edited = await pick();
    await page.click('button:text-is("Edit selected")');
    await page.fill("#f-serial", "BULK-EDITED");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(`${s.url}${filtered}`);
    await expectFlash(page, "Updated 2 devices");
    for (const id of edited)
      assert.equal((await s.api(`/api/dcim/devices/${id}/`)).body.serial, "BULK-EDITED");

    const deleted = await pick();
    await page.click('button:text-is("Delete selected")');
    await page.click('main button:text-is("Delete")');
    await page.waitForURL(`${s.url}${filtered}`);
    await expectFlash(page, "Deleted 2 devices");
    for (const id of deleted) assert.equal((await s.api(`/api/dcim/devices/${id}/`)).status, 404);
    assert.equal(await boxes.count(), 8);
  });

  it("dark mode: prefers-color-scheme dark paints dark pages; the toggle is remembered", async () => {
    const dark = await loggedIn("admin", "admin", { colorScheme: "dark" });
    await dark.goto(`${s.url}/dcim/devices/?sort=-name`);
    const bg = await bodyStyle(dark, "backgroundColor");
    const fg = await bodyStyle(dark, "color");
    assert.ok(luminance(bg) < 0.05, `dark background (${bg})`);
    assert.ok((luminance(fg) + 0.05) / (luminance(bg) + 0.05) >= 7, `text contrast (${fg} on ${bg})`);
    await dark.click('nav.menu summary:text-is("IPAM")');
    await dark.screenshot({ path: `${SHOTS}/dark-device-list.png`, fullPage: true });

    const light = await loggedIn("admin", "admin", { colorScheme: "light" });
    await light.goto(`${s.url}/dcim/sites/`);
    assert.ok(luminance(await bodyStyle(light, "backgroundColor")) > 0.8);
    await light.click("details.theme summary");
    await light.click('.theme-choice button[value="dark"]');
    await light.waitForURL(`${s.url}/dcim/sites/`);
    await light.goto(`${s.url}/dcim/devices/`);
    assert.equal(await light.getAttribute("html", "data-theme"), "dark");
    assert.ok(luminance(await bodyStyle(light, "backgroundColor")) < 0.05);
    await light.screenshot({ path: `${SHOTS}/dark-toggle.png` });
  });
});
