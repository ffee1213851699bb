/**
 * `npm run screenshots` (issue 25): the pictures of the web interface in docs/screenshots/, taken from a
 * fresh server (the tests' `startServer`, SQLite unless TEST_DB says otherwise) with a small demo network
 * (test/helpers/ui-world.ts) in Debian's Chromium (playwright-core, never a downloaded browser), logged in
 * as `admin`. 1280 × 800 pixels each, the top of the page; the dark one with the dark theme chosen.
 * Writes to SCREENSHOTS_DIR when set. Exits non-zero when a page does not answer 200.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { startServer } from "../test/helpers/server.ts";
import { buildDemoWorld, launchChromium, logIn } from "../test/helpers/ui-world.ts";

const OUT = process.env.SCREENSHOTS_DIR ?? "docs/screenshots";
const VIEWPORT = { width: 1280, height: 800 };

const s = await startServer();
const browser = await launchChromium();
try {
  const w = await buildDemoWorld(s);
  mkdirSync(OUT, { recursive: true });
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: "light" });
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  await logIn(page, s.url);

  /** Open `path` (200 expected), let `prepare` act on the page, then write `<name>.png`. */
  const shot = async (name: string, path: string, prepare?: (p: Page) => Promise<void>) => {
    const res = await page.goto(`${s.url}${path}`, { waitUntil: "load" });
    if (res?.status() !== 200) throw new Error(`${path}: ${res?.status()}`);
    await prepare?.(page);
    const file = join(OUT, `${name}.png`);
    await page.screenshot({ path: file });
    process.stdout.write(`${file}\n`);
  };

  await shot("home", "/");
  await shot("device-list", "/dcim/devices/?status=active");
  await shot("device", `/dcim/devices/${w.device.id}/`);
  await shot("interface-trace", `/dcim/interfaces/${w.iface.id}/trace/`);
  await shot("prefix", `/ipam/prefixes/${w.prefix.id}/`, async (p) => {
    // The child prefixes and addresses, free ranges as rows (below the prefix's own card).
    await p.evaluate("window.scrollTo(0, document.body.scrollHeight)");
  });
  await shot("ip-address-form", "/ipam/ip-addresses/add/", async (p) => {
    await p.fill("#f-address", "10.10.0.20/24");
    await p.selectOption("#f-status", "active");
    await p.selectOption("#f-assigned_object_type", "dcim.interface");
    // Device, then interface, through the typeaheads.
    const pick = async (name: string, typed: string, text: string) => {
      // The answer to what was typed (not the list asked for on focus), then the dropdown closed.
      const answered = p.waitForResponse(
        (r) => r.url().includes("/ui-api/lookup/") && new URL(r.url()).searchParams.get("q") === typed,
      );
      await p.click(`#f-${name}-ts-control`);
      await p.keyboard.type(typed);
      await answered;
      await p.locator(`#f-${name}-ts-dropdown .option`, { hasText: text }).first().click();
      await p
        .locator(`.ts-wrapper:has(#f-${name}-ts-control).dropdown-active`)
        .waitFor({ state: "detached" });
    };
    await pick("assigned_object_parent", "sw1", "lon1-sw1");
    const answered = p.waitForResponse((r) => r.url().includes("/ui-api/lookup/"));
    await p.click("#f-assigned_object_id-ts-control");
    await answered;
    await p.locator("#f-assigned_object_id-ts-dropdown .option").first().waitFor();
  });
  await shot("import-preview", "/dcim/devices/import/", async (p) => {
    const rows = Array.from(
      { length: 12 },
      (_, i) => `lon1-leaf${String(i + 1).padStart(2, "0")},DCS-7050SX3-48YC8,Access switch,LON1,active`,
    );
    await p.fill("#f-data", ["name,device_type,device_role,site,status", ...rows].join("\n"));
    await p.click('button:text-is("Preview")');
    await p.waitForSelector(".import-preview");
  });
  await context.close();

  const dark = await browser.newContext({ viewport: VIEWPORT, colorScheme: "dark" });
  const darkPage = await dark.newPage();
  darkPage.setDefaultTimeout(120_000);
  await logIn(darkPage, s.url);
  const res = await darkPage.goto(`${s.url}/dcim/racks/${w.rack.id}/`, { waitUntil: "load" });
  if (res?.status() !== 200) throw new Error(`rack page: ${res?.status()}`);
  await darkPage.screenshot({ path: join(OUT, "dark-mode.png") });
  process.stdout.write(`${join(OUT, "dark-mode.png")}\n`);
  await dark.close();
} finally {
  await browser.close();
  await s.close();
}
