/**
 * Cabling in a real browser (issue 25, Debian's Chromium through playwright-core): two interfaces connected
 * through a pair of patch panels with the forms' typeaheads (interface A → front port of panel 1, rear port
 * of panel 1 → rear port of panel 2, front port of panel 2 → interface B), the trace page of interface A
 * with every hop, the error shown when connecting a port that already has a cable, and an IP address
 * assigned to an interface through the IP address form. Screenshots go to `test-results/`.
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

/** Choose `text` in the typeahead of control `name`: focus, type, click the answer. */
async function choose(page: Page, name: string, typed: string, text: string): Promise<void> {
  // The answer to what is typed (or, with nothing typed, the list asked for on focus) before choosing.
  const answered = page.waitForResponse(
    (r) => r.url().includes("/ui-api/lookup/") && new URL(r.url()).searchParams.get("q") === (typed || null),
  );
  await page.click(`#f-${name}-ts-control`);
  await page.keyboard.type(typed);
  await answered;
  const option = page.locator(`#f-${name}-ts-dropdown .option`, { hasText: text }).first();
  await option.click();
  // The dropdown closed: the next control gets the click.
  await page.locator(`.ts-wrapper:has(#f-${name}-ts-control).dropdown-active`).waitFor({ state: "detached" });
}

describe("cabling in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const w: Record<string, any> = {};
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    const site = await create(s, "/api/dcim/sites/", { name: "LON1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Cisco" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "N9K" });
    const pt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "Patch-48" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Access" });
    const dev = (name: string, type: string) =>
      create(s, "/api/dcim/devices/", {
        name,
        device_type: type,
        device_role: role.id,
        site: site.id,
        status: "active",
      });
    w.d1 = await dev("lon1-sw1", dt.id);
    w.d2 = await dev("lon1-sw2", dt.id);
    w.p1 = await dev("lon1-pp1", pt.id);
    w.p2 = await dev("lon1-pp2", pt.id);
    w.a = await create(s, "/api/dcim/interfaces/", {
      device: w.d1.id,
      name: "Ethernet1/1",
      type: "10gbase-t",
    });
    w.a2 = await create(s, "/api/dcim/interfaces/", {
      device: w.d1.id,
      name: "Ethernet1/2",
      type: "10gbase-t",
    });
    w.b = await create(s, "/api/dcim/interfaces/", {
      device: w.d2.id,
      name: "Ethernet2/7",
      type: "10gbase-t",
    });
    for (const [k, d] of [
      ["1", w.p1],
      ["2", w.p2],
    ] as const) {
      w[`rp${k}`] = await create(s, "/api/dcim/rear-ports/", {
        device: d.id,
        name: `RP${k}`,
        type: "8p8c",
        positions: 1,
      });
      w[`fp${k}`] = await create(s, "/api/dcim/front-ports/", {
        device: d.id,
        name: `FP${k}`,
        type: "8p8c",
        rear_port: w[`rp${k}`].id,
      });
    }
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

  /** "Connect" on a port's page, then the B side chosen by type, device and port with the typeaheads. */
  async function connect(from: string, bType: string, device: string, port: string, label: string) {
    await page.goto(`${s.url}${from}`);
    await page.click('.toolbar a:text-is("Connect")');
    await page.waitForURL(/\/dcim\/cables\/add\/\?termination_a_type=/);
    await page.selectOption("#f-termination_b_type", bType);
    await choose(page, "termination_b_parent", device.slice(-3), device);
    await choose(page, "termination_b_id", "", port);
    await page.selectOption("#f-status", "connected");
    await page.fill("#f-label", label);
  }

  it("connects two interfaces through two patch panels and traces the path", async () => {
    await connect(`/dcim/interfaces/${w.a.id}/`, "dcim.frontport", "lon1-pp1", "FP1", "PATCH-1");
    // The A side came pre-filled from the interface.
    assert.match(
      (await page.textContent("#f-termination_a_id-ts-control >> xpath=..")) ?? "",
      /Ethernet1\/1/,
    );
    await page.screenshot({ path: `${SHOTS}/cable-form.png`, fullPage: true });
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/cables\/[0-9a-f-]{36}\/$/);
    assert.equal(await page.textContent("h1"), "PATCH-1");
    await expectFlash(page, "Created cable PATCH-1");

    await connect(`/dcim/rear-ports/${w.rp1.id}/`, "dcim.rearport", "lon1-pp2", "RP2", "TRUNK-1");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/cables\/[0-9a-f-]{36}\/$/);
    await expectFlash(page, "Created cable TRUNK-1");

    await connect(`/dcim/front-ports/${w.fp2.id}/`, "dcim.interface", "lon1-sw2", "Ethernet2/7", "PATCH-2");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/dcim\/cables\/[0-9a-f-]{36}\/$/);
    await expectFlash(page, "Created cable PATCH-2");

    // The device page shows the peer of Ethernet1/1 and links to its trace.
    await page.goto(`${s.url}/dcim/devices/${w.d1.id}/`);
    await page.click('nav.tabs a:has-text("Interfaces")');
    await page.waitForURL(`${s.url}/dcim/devices/${w.d1.id}/interfaces/`);
    await page.click(`a[href="/dcim/interfaces/${w.a.id}/trace/"]`);
    await page.waitForURL(`${s.url}/dcim/interfaces/${w.a.id}/trace/`);
    await page.waitForSelector("svg.trace");
    await page.screenshot({ path: `${SHOTS}/cable-trace.png`, fullPage: true });
    const drawn = (await page.textContent("svg.trace")) ?? "";
    for (const hop of [
      "lon1-sw1",
      "Ethernet1/1",
      "PATCH-1",
      "lon1-pp1",
      "FP1",
      "RP1",
      "TRUNK-1",
      "lon1-pp2",
      "RP2",
      "FP2",
      "PATCH-2",
      "lon1-sw2",
      "Ethernet2/7",
    ])
      assert.ok(drawn.includes(hop), `${hop} on the trace`);
    await page.click(`svg.trace a[href="/dcim/devices/${w.d2.id}/"]`);
    await page.waitForURL(`${s.url}/dcim/devices/${w.d2.id}/`);
  });

  it("shows the error beside the B side when the port already has a cable", async () => {
    await connect(`/dcim/interfaces/${w.a2.id}/`, "dcim.frontport", "lon1-pp1", "FP1", "DUP");
    await page.click('form.edit button[type="submit"]');
    await page.waitForSelector(".field.has-error .error");
    const error = (await page.textContent(".field.has-error")) ?? "";
    assert.match(error, /Another cable already has this termination b/);
    assert.match(page.url(), /\/dcim\/cables\/add\//);
    await page.screenshot({ path: `${SHOTS}/cable-form-error.png`, fullPage: true });
  });

  it("assigns an IP address to an interface through the IP address form", async () => {
    await page.goto(`${s.url}/ipam/ip-addresses/add/`);
    await page.fill("#f-address", "203.0.113.9/24");
    await page.selectOption("#f-status", "active");
    await page.selectOption("#f-assigned_object_type", "dcim.interface");
    await choose(page, "assigned_object_parent", "sw2", "lon1-sw2");
    await choose(page, "assigned_object_id", "Eth", "Ethernet2/7");
    await page.screenshot({ path: `${SHOTS}/ip-form-assign.png`, fullPage: true });
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/ipam\/ip-addresses\/[0-9a-f-]{36}\/$/);
    const ip = await s.api("/api/ipam/ip-addresses/?address=203.0.113.9/24");
    assert.equal(ip.body.results[0].assigned_object_id, w.b.id);
    await expectFlash(page, "Created IP address 203.0.113.9/24");
    assert.match((await page.textContent("main")) ?? "", /Ethernet2\/7/);
  });
});
