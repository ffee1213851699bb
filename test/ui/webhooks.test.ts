/**
 * Webhooks in the web interface (issue 10): configured through the generated form (every field of the
 * configuration record), "Send test" shows the receiver's answer, a change is delivered and its delivery
 * and attempts are visible, a dead target fails, and "Retry" after the receiver is back succeeds.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { waitUntil } from "../helpers/wait.ts";
import { create } from "../helpers/world.ts";

describe("webhooks in the web interface", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer(
      {},
      // Request timeout and lease far above a loopback answer (issue 24: a busy machine is slow, not broken).
      { worker: { retryBaseMs: 60_000, timeoutMs: 20_000, leaseMs: 60_000, pollMs: 100 } },
    );
  });
  after(async () => {
    await s.close();
  });

  it("configure, send a test, deliver, fail on a dead port, retry after the receiver is back", async () => {
    const rx = await startReceiver();
    const web = await webClient(s);
    const form = await web.get("/extras/webhooks/add/");
    for (const f of [
      "name",
      "content_types",
      "type_create",
      "payload_url",
      "http_method",
      "secret",
      "body_template",
      "ca_file_path",
      "ssl_verification",
      "additional_headers",
      "enabled",
    ])
      assert.match(form.html, new RegExp(`id="f-${f}"`), f);
    const bad = await web.post("/extras/webhooks/add/", {
      name: "hook",
      content_types: "dcim.site",
      payload_url: "not a url",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Enter a valid URL/);
    assert.match(bad.html, /You must select at least one type/);
    const made = await web.post("/extras/webhooks/add/", {
      name: "hook",
      content_types: "dcim.site",
      type_create: "on",
      enabled: "on",
      payload_url: `${rx.url}/in`,
      http_method: "POST",
      http_content_type: "application/json",
      secret: "s3cret",
      body_template: '{"site": "{{ data.name }}", "event": "{{ event }}"}',
      ssl_verification: "on",
    });
    assert.equal(made.status, 302, made.html.slice(0, 2000));
    const hookId = String(/\/extras\/webhooks\/([0-9a-f-]{36})\//.exec(made.location ?? "")?.[1]);
    const detail = await web.get(`/extras/webhooks/${hookId}/`);
    assert.match(detail.html, />Send test</);
    assert.equal(detail.html.includes("s3cret"), false, "the secret is never shown");

    const test = await web.post(`/extras/webhooks/${hookId}/test/`, {});
    assert.equal(test.status, 200);
    assert.match(test.html, /Delivered/);
    assert.match(test.html, /HTTP 200/);
    assert.match(test.html, /X-Hook-Signature: &lt;redacted&gt;/);
    assert.equal(rx.requests.length, 1);
    assert.ok(rx.requests[0]!.headers["x-hook-signature"]);

    await create(s, "/api/dcim/sites/", { name: "Hooked", status: "active" });
    await rx.waitFor(2);
    assert.equal(rx.requests[1]!.json.site, "Hooked");
    await waitUntil(
      async () =>
        (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hookId}&state=succeeded`)).body.count ===
        1,
    );
    const list = await web.get(`/extras/webhook-deliveries/?webhook_id=${hookId}`);
    assert.match(list.html, /Succeeded/);
    // The delivery's page: its attempt (number, status 200) and the request with the signature redacted.
    const done = (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hookId}&state=succeeded`)).body
      .results[0];
    const donePage = await web.get(`/extras/webhook-deliveries/${done.id}/`);
    assert.match(donePage.html, /<figcaption>Attempts<\/figcaption>/);
    assert.match(donePage.html, /<tr><td class="num">1<\/td><td>[^<]+<\/td><td class="num">200<\/td>/);
    assert.match(donePage.html, /<th>X-Hook-Signature<\/th><td><code>&lt;redacted&gt;<\/code><\/td>/);
    assert.match(donePage.html, /&quot;site&quot;: &quot;Hooked&quot;/, "the body as sent, escaped");

    // A dead target: the delivery fails (one attempt, then waits to retry).
    const deadPort = rx.port;
    await rx.close();
    await create(s, "/api/dcim/sites/", { name: "Lost", status: "active" });
    await waitUntil(
      async () =>
        (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hookId}&state=retry`)).body.count === 1,
    );
    const waiting = (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hookId}&state=retry`)).body
      .results[0];
    const page = await web.get(`/extras/webhook-deliveries/${waiting.id}/`);
    assert.match(page.html, />Retry now</);
    assert.match(page.html, /ECONNREFUSED|connect|refused/i);
    // The receiver is back on the same port; "Retry now" delivers at once.
    const rx2 = await startReceiver(deadPort);
    try {
      assert.equal((await web.post(`/extras/webhook-deliveries/${waiting.id}/retry/`, {})).status, 302);
      await rx2.waitFor(1);
      await waitUntil(
        async () =>
          (await s.api(`/api/extras/webhook-deliveries/${waiting.id}/`)).body.state.value === "succeeded",
      );
    } finally {
      await rx2.close();
    }
    // Disable from the page.
    assert.equal((await web.post(`/extras/webhooks/${hookId}/toggle/`, {})).status, 302);
    assert.equal((await s.api(`/api/extras/webhooks/${hookId}/`)).body.enabled, false);
  });
});
