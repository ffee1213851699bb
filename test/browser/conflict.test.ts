/**
 * Issue 26, edit conflicts in a real browser (Debian's Chromium driven by playwright-core): two sessions
 * open one site's edit form; the first saves; the second's save overwrites nothing and shows a conflict
 * message naming what changed meanwhile, with the form redrawn from the current values (saving it again
 * then works). The bulk-edit form does the same for the objects it was drawn from.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";

describe("edit conflicts in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await s?.close();
  });

  /** A new browser session logged in as admin. */
  async function session(): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`${s.url}/login/`);
    await page.fill('input[name="username"]', "admin");
    await page.fill('input[name="password"]', "admin");
    await page.click('button[type="submit"]');
    await page.waitForURL(`${s.url}/`);
    return page;
  }

  it("two sessions edit one site: the second save shows the conflict and overwrites nothing", async () => {
    const site = await create(s, "/api/dcim/sites/", { name: "conflict-site", status: "active" });
    const edit = `${s.url}/dcim/sites/${site.id}/edit/`;
    const first = await session();
    const second = await session();
    await first.goto(edit);
    await second.goto(edit);
    await first.fill("#f-description", "from the first session");
    await first.click('form.edit button[type="submit"]');
    await first.waitForURL(`${s.url}/dcim/sites/${site.id}/`);
    await second.fill("#f-description", "from the second session");
    await second.fill("#f-facility", "second facility");
    const [res] = await Promise.all([
      second.waitForResponse((r) => r.url() === edit && r.request().method() === "POST"),
      second.click('form.edit button[type="submit"]'),
    ]);
    assert.equal(res.status(), 409);
    assert.equal(second.url(), edit, "still on the form");
    const message = (await second.locator("form.edit .error").allTextContents()).join(" ");
    assert.match(message, /Conflict/);
    assert.match(message, /conflict-site/);
    assert.match(message, /admin changed [^;)]*description/, message);
    assert.match(message, /Nothing was saved/);
    await second.screenshot({ path: `${SHOTS}/edit-conflict.png`, fullPage: true });
    const stored = (await s.api(`/api/dcim/sites/${site.id}/`)).body;
    assert.equal(stored.description, "from the first session", "the first save stands");
    assert.equal(stored.facility, "", "nothing of the second save was written");
    // The form now shows the current values and version: saving it again works.
    assert.equal(await second.inputValue("#f-description"), "from the first session");
    await second.fill("#f-facility", "second facility");
    await second.click('form.edit button[type="submit"]');
    await second.waitForURL(`${s.url}/dcim/sites/${site.id}/`);
    const after = (await s.api(`/api/dcim/sites/${site.id}/`)).body;
    assert.equal(after.facility, "second facility");
    assert.equal(after.description, "from the first session");
  });

  it("a bulk edit over a change made since the form was drawn shows the conflict and changes nothing", async () => {
    const tenants = await Promise.all(
      ["bc-1", "bc-2", "bc-3"].map((name) =>
        create(s, "/api/tenancy/tenants/", { name, description: "old" }),
      ),
    );
    const page = await session();
    await page.goto(`${s.url}/tenancy/tenants/?q=bc-`);
    for (const t of tenants) await page.check(`input[name="pk"][value="${t.id}"]`);
    await page.click('button:has-text("Edit selected")');
    await page.waitForSelector('input[name="_apply"]', { state: "attached" });
    // Meanwhile, someone changes one of them through the API.
    assert.equal(
      (
        await s.api(`/api/tenancy/tenants/${tenants[1].id}/`, {
          method: "PATCH",
          body: { comments: "meanwhile" },
        })
      ).status,
      200,
    );
    await page.fill("#f-description", "bulk");
    const [res] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().endsWith("/tenancy/tenants/edit/") && r.request().method() === "POST",
      ),
      page.click('form.edit button[type="submit"]'),
    ]);
    assert.equal(res.status(), 409);
    const message = (await page.locator("form.edit .error").allTextContents()).join(" ");
    assert.match(message, /Conflict: tenant bc-2/, message);
    assert.match(message, /comments/);
    for (const t of tenants)
      assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/`)).body.description, "old", "nothing changed");
    // Applied again from the redrawn form (current versions), it goes through.
    await page.fill("#f-description", "bulk");
    await page.click('form.edit button[type="submit"]');
    await page.waitForURL(/\/tenancy\/tenants\//);
    for (const t of tenants)
      assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/`)).body.description, "bulk");
  });
});
