/**
 * Issue 25 (helper U4) in Chromium (Debian's, driven by playwright-core): create an API token on the
 * profile page (its key shown once, gone after a reload), run a GraphiQL query (the bundle served by this
 * server, the query answered through the session), edit and delete a note from an object's notes panel.
 * Screenshots go to `test-results/` (not committed).
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
/** Hang detection only (a shared, busy machine is slow, not broken). */
const WAIT = 60_000;

describe("profile, GraphiQL and notes in Chromium (issue 25)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  let site: { id: string };
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer();
    site = await create(s, "/api/dcim/sites/", { name: "GQL1", status: "active" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(WAIT);
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      // Failed loads are reported with their URL below.
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
    });
    page.on("response", (r) => {
      if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${s.url}/login/`);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill("admin");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${s.url}/`);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it("creates a token on the profile page: the key is shown once and works on the API", async () => {
    await page.locator('header a[href="/user/profile/"]').click();
    await page.waitForURL(`${s.url}/user/profile/`);
    await page.getByLabel("Description").fill("browser token");
    await page.getByRole("button", { name: "Create token" }).click();
    const key = (await page.locator("#new-key").textContent())?.trim() ?? "";
    assert.match(key, /^[0-9a-f]{40}$/);
    await expectFlash(page, "Created token");
    await page.screenshot({ path: `${SHOTS}/u4-profile-token.png`, fullPage: true });
    const status = await fetch(`${s.url}/api/status/`, { headers: { authorization: `Token ${key}` } });
    assert.equal(status.status, 200);
    await page.goto(`${s.url}/user/profile/`);
    assert.equal(await page.locator("#new-key").count(), 0);
    assert.equal((await page.content()).includes(key), false, "the key is not shown again");
    assert.equal(await page.getByRole("cell", { name: "browser token" }).count(), 1);
  });

  it("runs a GraphiQL query through the session", async () => {
    await page.locator('header a[href="/graphql/"]').click();
    await page.waitForURL(`${s.url}/graphql/`);
    await page.locator(".graphiql-execute-button").click();
    const result = page.locator(".result-window");
    await result.getByText('"GQL1"').waitFor();
    const text = (await result.textContent()) ?? "";
    assert.match(text, /"sites"/);
    assert.match(text, /"name": "Active"/);
    await page.screenshot({ path: `${SHOTS}/u4-graphiql.png` });
    assert.deepEqual(errors, [], "no script or CSP errors, no failed load");
  });

  it("edits and deletes a note from the notes panel", async () => {
    await page.goto(`${s.url}/dcim/sites/${site.id}/`);
    await page.getByLabel("Add a note").fill("first *draft*");
    await page.getByRole("button", { name: "Add note" }).click();
    const notes = page.locator("#notes");
    await notes.locator("em", { hasText: "draft" }).waitFor();
    await expectFlash(page, "Created note");
    await notes.getByRole("link", { name: /^Edit note/ }).click();
    await page.getByLabel("Note").fill("final **text**");
    await page.getByRole("button", { name: "Save" }).click();
    await notes.locator("strong", { hasText: "text" }).waitFor();
    assert.equal(await notes.getByText("draft").count(), 0);
    await expectFlash(page, "Modified note");
    await page.screenshot({ path: `${SHOTS}/u4-note-edited.png`, fullPage: true });
    await notes.getByRole("link", { name: /^Delete note/ }).click();
    await page.getByRole("button", { name: "Delete" }).click();
    await page.locator("#notes h2", { hasText: "Notes (0)" }).waitFor();
    await expectFlash(page, "Deleted note");
    const api = await s.api(`/api/dcim/sites/${site.id}/notes/`);
    assert.equal(api.body.count, 0);
  });
});
