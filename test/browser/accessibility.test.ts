/**
 * Accessibility (issue 25): axe-core, the npm package, injected into the pages in Debian's Chromium
 * (playwright-core), on the main kinds of page — the login page, home, search results, a list, a detail
 * page and its interfaces tab, the edit form and a form with errors, the bulk edit form, the cable form
 * ("Connect"), the add components form, a delete confirmation, the cable trace page, the import page and
 * its preview, the profile page, a rack with its elevations, a prefix with its free ranges, the IP address
 * form, a webhook, its deliveries, the change log and an object change — in the light theme, the dark
 * theme of the browser's preference and the dark theme chosen in the header's Theme menu. No violation of
 * impact "serious" or "critical" is allowed; the minor and moderate ones are counted and printed (as test
 * diagnostics) so they can be followed. Rules: axe-core's defaults (WCAG 2.0/2.1 A and AA, best practices).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildDemoWorld, type DemoWorld, launchChromium, logIn } from "../helpers/ui-world.ts";
import { create } from "../helpers/world.ts";

/** axe-core's browser bundle, evaluated in the page (through the debugger protocol: the CSP stays on). */
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/** Hang detection only (a shared, busy machine is slow, not broken). */
const WAIT = 120_000;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string; html: string }[];
}

/** In the page: axe-core's run on the whole document, its violations in plain data. */
const RUN_AXE = `(async () => {
  const r = await window.axe.run(document, { resultTypes: ["violations"] });
  return r.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary, html: n.html })),
  }));
})()`;

/** Run axe on the loaded page (injecting it once per document); its violations. */
async function axe(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE);
  return (await page.evaluate(RUN_AXE)) as Violation[];
}

describe("accessibility: axe-core in Chromium (issue 25)", () => {
  let s: TestServer;
  let browser: Browser;
  let w: DemoWorld;
  let webhook: { id: string };
  let delivery: { id: string };
  let change: { id: string };
  /** An interface without a cable (its "Connect" opens the cable form). */
  let free: { id: string };
  before(async () => {
    s = await startServer();
    w = await buildDemoWorld(s);
    // A webhook and a change it queues a delivery for (no worker runs: the delivery stays pending).
    webhook = await create(s, "/api/extras/webhooks/", {
      name: "NOC receiver",
      content_types: ["dcim.site"],
      type_create: true,
      payload_url: "http://127.0.0.1:9/hook",
    });
    await create(s, "/api/dcim/sites/", { name: "PAR1", status: "staging" });
    const deliveries = await s.api(`/api/extras/webhook-deliveries/?webhook_id=${webhook.id}`);
    assert.equal(deliveries.status, 200, JSON.stringify(deliveries.body));
    assert.ok(deliveries.body.results.length >= 1, "a delivery was queued");
    delivery = deliveries.body.results[0];
    change = (await s.api("/api/extras/object-changes/?limit=1")).body.results[0];
    free = (await s.api(`/api/dcim/interfaces/?device_id=${w.device.id}&name=Ethernet2`)).body.results[0];
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  const pages: [string, () => string][] = [
    ["home", () => "/"],
    ["device list", () => "/dcim/devices/?status=active"],
    ["device page", () => `/dcim/devices/${w.device.id}/`],
    ["device interfaces tab", () => `/dcim/devices/${w.device.id}/interfaces/`],
    ["device edit form", () => `/dcim/devices/${w.device.id}/edit/`],
    ["list column chooser", () => "/dcim/devices/columns/?return_url=%2Fdcim%2Fdevices%2F"],
    [
      "cable form (Connect)",
      () => `/dcim/cables/add/?termination_a_type=dcim.interface&termination_a_id=${free.id}`,
    ],
    ["add components form", () => `/dcim/devices/${w.device.id}/components/interfaces/add/`],
    ["delete confirmation", () => `/dcim/devices/${w.device.id}/delete/`],
    ["cable trace", () => `/dcim/interfaces/${w.iface.id}/trace/`],
    ["device import", () => "/dcim/devices/import/"],
    ["profile", () => "/user/profile/"],
    ["rack page", () => `/dcim/racks/${w.rack.id}/`],
    ["prefix page", () => `/ipam/prefixes/${w.prefix.id}/`],
    ["IP address form", () => "/ipam/ip-addresses/add/"],
    ["search results", () => "/search/?q=lon1"],
    ["webhook page", () => `/extras/webhooks/${webhook.id}/`],
    ["webhook deliveries", () => "/extras/webhook-deliveries/"],
    ["delivery page", () => `/extras/webhook-deliveries/${delivery.id}/`],
    ["change log", () => "/extras/object-changes/"],
    ["object change page", () => `/extras/object-changes/${change.id}/`],
  ];

  /** The themes: the browser's preference with the Auto theme, and Dark chosen in the header's menu. */
  const themes = [
    { scheme: "light", os: "light", chosen: undefined },
    { scheme: "dark", os: "dark", chosen: undefined },
    { scheme: "dark", os: "light", chosen: "Dark" },
  ] as const;
  for (const { scheme, os, chosen } of themes) {
    const what = chosen ? `the ${scheme} theme chosen in the Theme menu` : `the ${scheme} theme (browser's)`;
    it(`finds no serious or critical violation in ${what}`, async (t) => {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        colorScheme: os,
      });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(WAIT);
        const serious: string[] = [];
        let pagesChecked = 0;
        /** Run axe on what `page` shows: serious and critical violations kept, the others counted. */
        const check = async (name: string) => {
          const found = await axe(page);
          pagesChecked++;
          const minor = found.filter((v) => v.impact === "minor").length;
          const moderate = found.filter((v) => v.impact === "moderate").length;
          t.diagnostic(
            `${scheme} ${name}: ${minor} minor, ${moderate} moderate` +
              (minor + moderate ? ` (${found.map((v) => `${v.id}×${v.nodes.length}`).join(", ")})` : ""),
          );
          for (const v of found)
            if (v.impact === "serious" || v.impact === "critical")
              for (const n of v.nodes)
                serious.push(
                  `${name}: [${v.impact}] ${v.id} (${v.help}) at ${n.target.join(" ")}: ${n.html}`,
                );
        };
        if (!chosen) {
          // The login page (before logging in; a remembered theme needs a login first).
          await page.goto(`${s.url}/login/`);
          await check("login page");
        }
        await logIn(page, s.url);
        if (chosen) {
          await page.click('summary:text-is("Theme")');
          await page.click(`button:text-is("${chosen}")`);
          await page.waitForSelector(`html[data-theme="${chosen.toLowerCase()}"]`);
        }
        for (const [name, path] of pages) {
          const res = await page.goto(`${s.url}${path()}`, { waitUntil: "load" });
          assert.equal(res?.status(), 200, `${name}: ${path()}`);
          // The page follows the theme (the browser's preference, or the choice remembered in a cookie).
          const bg = await page.evaluate("getComputedStyle(document.body).backgroundColor");
          assert.equal(
            bg,
            scheme === "dark" ? "rgb(15, 23, 32)" : "rgb(245, 247, 250)",
            `${name}: background`,
          );
          await check(name);
        }
        // The import preview (the answer to a POST): a pasted CSV of two devices.
        await page.goto(`${s.url}/dcim/devices/import/`);
        await page.fill(
          "#f-data",
          ["name,device_type,device_role,site,status", "ax-1,Patch-24,Access switch,LON1,active"].join("\n"),
        );
        await page.click('button:text-is("Preview")');
        await page.waitForSelector(".import-preview");
        await check("import preview");
        // The bulk edit form (the answer to a POST): one device selected on the list.
        await page.goto(`${s.url}/dcim/devices/?status=active`);
        await page.locator('input[name="pk"]').first().check();
        await page.click('button:text-is("Edit selected")');
        await page.waitForURL(`${s.url}/dcim/devices/edit/`);
        await check("bulk edit form");
        // A form with its validation errors (the answer to a POST): an IP address without an address.
        await page.goto(`${s.url}/ipam/ip-addresses/add/`);
        await page.click('form.edit button[type="submit"]');
        await page.waitForSelector(".field.has-error .error");
        await check("form with errors");
        assert.equal(pagesChecked, pages.length + 3 + (chosen ? 0 : 1));
        assert.deepEqual(serious, [], `${serious.length} serious or critical violations`);
      } finally {
        await context.close();
      }
    });
  }
});
