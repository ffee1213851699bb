/**
 * Webhooks through the web interface in Chromium (issue 10): create a webhook with a secret and a body
 * template through the form, make a change, see the successful delivery with its attempt; point the
 * webhook at a dead port and see the failure; start a receiver there, press "Retry now", see success. Then
 * a user with a constrained permission sees only their objects.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { expectFlash } from "../helpers/ui.ts";
import { waitUntil } from "../helpers/wait.ts";
import { create } from "../helpers/world.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = "test-results";

describe("webhooks and permissions in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startServer(
      {},
      // Request timeout and lease far above a loopback answer (issue 24: a busy machine is slow, not broken).
      { worker: { retryBaseMs: 60_000, timeoutMs: 20_000, leaseMs: 60_000, pollMs: 100 } },
    );
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

  const login = async (username: string, password: string) => {
    await page.goto(`${s.url}/login/`);
    await page.fill('input[name="username"]', username);
    await page.fill('input[name="password"]', password);
    await page.click('main button[type="submit"]');
    await page.waitForURL(`${s.url}/`);
  };
  const save = () => page.click('form.edit button[type="submit"]');

  it("configures a webhook, sees a delivery, a failure and a retried success", async () => {
    const rx = await startReceiver();
    try {
      await flow(rx);
    } finally {
      await rx.close().catch(() => {});
    }
  });

  const flow = async (rx: Awaited<ReturnType<typeof startReceiver>>) => {
    await login("admin", "admin");
    await page.goto(`${s.url}/extras/webhooks/add/`);
    await page.fill("#f-name", "to receiver");
    await page.selectOption("#f-content_types", ["tenancy.tenant"]);
    await page.check("#f-type_create");
    await page.fill("#f-payload_url", `${rx.url}/hook`);
    await page.fill("#f-secret", "s3cret");
    await page.fill("#f-body_template", '{"tenant": "{{ data.name }}", "x": "<script>alert(1)</script>"}');
    await save();
    await page.waitForURL(/\/extras\/webhooks\/[0-9a-f-]{36}\/$/);
    await expectFlash(page, "Created webhook to receiver");
    const hookUrl = page.url();
    assert.equal(
      (await page.content()).includes("<script>alert(1)</script>"),
      false,
      "templates are escaped",
    );
    await page.screenshot({ path: `${SHOTS}/webhook-detail.png`, fullPage: true });

    await create(s, "/api/tenancy/tenants/", { name: "Acme" });
    await rx.waitFor(1);
    assert.equal(rx.requests[0]!.json.tenant, "Acme");
    await page.goto(`${s.url}/extras/webhook-deliveries/`);
    await page.waitForSelector("table >> text=Succeeded");
    await page.click("table.list tbody tr >> nth=0 >> a >> nth=0");
    await page.waitForSelector("figcaption >> text=Attempts");
    const attempt = await page.textContent("figure:has(figcaption:text('Attempts')) tbody tr");
    assert.match(attempt ?? "", /^1.*200/, "the first attempt answered 200");
    const signature = await page.textContent(
      "figure:has(figcaption:text('Request')) tr:has(th:text('X-Hook-Signature')) td",
    );
    assert.equal(signature, "<redacted>");
    await page.screenshot({ path: `${SHOTS}/delivery-succeeded.png`, fullPage: true });

    // Dead port: the next change fails and waits to retry.
    const port = rx.port;
    await rx.close();
    await create(s, "/api/tenancy/tenants/", { name: "Lost" });
    await waitUntil(
      async () =>
        (await s.api("/api/extras/webhook-deliveries/?state=retry")).body.count === 1 ? true : undefined,
      10000,
    );
    const waiting = (await s.api("/api/extras/webhook-deliveries/?state=retry")).body.results[0];
    await page.goto(`${s.url}/extras/webhook-deliveries/${waiting.id}/`);
    await page.waitForSelector("text=Waiting to retry");
    await page.screenshot({ path: `${SHOTS}/delivery-failed.png`, fullPage: true });
    const rx2 = await startReceiver(port);
    try {
      await page.click("text=Retry now");
      await page.waitForSelector(".flash.success");
      await expectFlash(page, /^Delivery queued again/);
      await rx2.waitFor(1);
      await waitUntil(
        async () =>
          (await s.api(`/api/extras/webhook-deliveries/${waiting.id}/`)).body.state.value === "succeeded"
            ? true
            : undefined,
        10000,
      );
      await page.reload();
      await page.waitForSelector("table >> text=Succeeded");
    } finally {
      await rx2.close();
    }
    await page.goto(hookUrl);
    await page.click("text=Log out");
  };

  it("a user with a constrained permission sees only their objects", async () => {
    await create(s, "/api/tenancy/tenants/", { name: "Visible" });
    const user = await create(s, "/api/users/users/", { username: "bob", password: "bob-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "bob tenants",
      object_types: ["tenancy.tenant"],
      actions: ["view"],
      users: [user.id],
      constraints: { name: "Visible" },
    });
    await login("bob", "bob-pass-1");
    await page.goto(`${s.url}/tenancy/tenants/`);
    const text = (await page.textContent("table.list")) ?? "";
    assert.match(text, /Visible/);
    assert.equal(text.includes("Acme"), false);
    await page.screenshot({ path: `${SHOTS}/constrained-user.png` });
  });
});
