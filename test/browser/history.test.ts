/**
 * Issue 27 in a real browser (Debian's Chromium driven by playwright-core): an object's History page lists
 * its versions; "View" shows the object as it was, with a banner, no write controls and links that stay at
 * the point; "Diff" shows the fields that changed; the time picker opens the object as of a time; "Revert
 * this request" shows the dry run's plan before the confirm button, and confirming restores a deleted
 * object with its old id (flash message).
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { expectFlash } from "../helpers/ui.ts";
import { launchChromium, logIn } from "../helpers/ui-world.ts";
import { create } from "../helpers/world.ts";

const SHOTS = "test-results";

describe("history in Chromium (issue 27)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await logIn(page, s.url);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it("History tab: view as it was, diff, time picker", async () => {
    const group = await create(s, "/api/tenancy/tenant-groups/", { name: "h-group" });
    const t = await create(s, "/api/tenancy/tenants/", { name: "h-tenant", description: "first words" });
    const r = await s.api(`/api/tenancy/tenants/${t.id}/`, {
      method: "PATCH",
      body: { description: "second words", group: group.id },
    });
    assert.equal(r.status, 200);
    await page.goto(`${s.url}/tenancy/tenants/${t.id}/`);
    await page.click('.toolbar a:text("History")');
    await page.waitForURL(`${s.url}/tenancy/tenants/${t.id}/history/`);
    const rows = page.locator("table.history tbody tr");
    assert.equal(await rows.count(), 2);
    assert.match((await rows.nth(0).textContent()) ?? "", /updated/);
    assert.match((await rows.nth(1).textContent()) ?? "", /created/);
    await page.screenshot({ path: `${SHOTS}/history-tab.png`, fullPage: true });

    // The diff of the update.
    await rows.nth(0).locator('a:text("Diff")').click();
    const diff = (await page.locator("#diff").textContent()) ?? "";
    assert.match(diff, /first words/);
    assert.match(diff, /second words/);
    assert.match(diff, /h-group/);

    // The first version as it was: banner, old value, no Edit, links keep the point.
    await page.locator("table.history tbody tr").nth(1).locator('a:text("View")').click();
    await page.waitForURL(/as_of_seq=\d+/);
    const body = (await page.locator("main").textContent()) ?? "";
    assert.match(body, /You are looking at the state after change \d+/);
    assert.match(body, /first words/);
    assert.doesNotMatch(body, /second words/);
    assert.equal(await page.locator('.toolbar a:text("Edit")').count(), 0, "no write controls at a point");
    const crumb = await page.locator("p.crumbs a").first().getAttribute("href");
    assert.match(crumb ?? "", /as_of_seq=\d+/);
    await page.screenshot({ path: `${SHOTS}/history-as-of.png`, fullPage: true });
    await page.click('a:text("Back to now")');
    assert.match((await page.locator("main").textContent()) ?? "", /second words/);

    // The time picker: now shows the current state.
    await page.goto(`${s.url}/tenancy/tenants/${t.id}/history/`);
    // The picker has seconds: a time a second after the last change, not in the future.
    await new Promise((r) => setTimeout(r, 1100));
    const now = new Date().toISOString().slice(0, 19);
    await page.fill("#as-of", now);
    await page.click('form.inline button:text("View")');
    await page.waitForURL(/as_of=/);
    assert.match((await page.locator("main").textContent()) ?? "", /second words/);
  });

  it("Revert this request: the dry run first, then confirmed", async () => {
    const site = await create(s, "/api/dcim/sites/", {
      name: "h-site",
      status: "active",
      description: "kept",
    });
    const del = await s.api(`/api/dcim/sites/${site.id}/`, { method: "DELETE" });
    assert.equal(del.status, 204);
    await page.goto(`${s.url}/dcim/sites/${site.id}/history/`);
    await page.locator("table.history tbody tr").nth(0).locator('a:text("Revert this request")').click();
    await page.waitForURL(/\/history\/revert\/\?request_id=/);
    const plan = (await page.locator("table.plan").textContent()) ?? "";
    assert.match(plan, /create/);
    assert.match(plan, new RegExp(site.id));
    assert.equal((await s.api(`/api/dcim/sites/${site.id}/`)).status, 404, "the dry run wrote nothing");
    await page.screenshot({ path: `${SHOTS}/history-revert.png`, fullPage: true });
    await page.click('button:text("Revert")');
    await page.waitForURL(`${s.url}/dcim/sites/${site.id}/history/`);
    await expectFlash(page, /Reverted the request: 1 change/);
    const back = await s.api(`/api/dcim/sites/${site.id}/`);
    assert.equal(back.status, 200);
    assert.equal(back.body.description, "kept");
  });
});
