/**
 * Issue 24: starting a template renderer process is not rendering. In this test file every renderer process
 * starts 8 s late (NODE_OPTIONS makes it import a module that sleeps first, as a process start on a loaded
 * machine may take), and a render's budget is 6 s: the first computed field and the first webhook body, each
 * on a new process, still render. Before, the budget's clock ran from the fork, so both ran out while the
 * process was starting. The budget is far above a render's need (a few ms idle) so that the test checks where
 * the clock starts, not speed: with half a second, a clean-clone run beside stress-ng at load 19 rendered the
 * fallback.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/** Sleeps 8 s without using the CPU (a module given to `--import`; no spaces: NODE_OPTIONS splits on them). */
const SLOW_START =
  "--import=data:text/javascript,Atomics.wait(new(Int32Array)(new(SharedArrayBuffer)(4)),0,0,8000)";
/** A render's budget (s): shorter than the slow start, so a clock started at the fork runs out. */
const BUDGET_S = 6;

describe("a renderer process slow to start (issue 24)", () => {
  let s: TestServer;
  let rx: Receiver;
  const saved = {
    NODE_OPTIONS: process.env.NODE_OPTIONS,
    INVENTORY_TEMPLATE_TIMEOUT: process.env.INVENTORY_TEMPLATE_TIMEOUT,
  };

  before(async () => {
    // Read by renderers forked from now on (the server runs in this process) and by each computed-field read.
    process.env.NODE_OPTIONS = [saved.NODE_OPTIONS, SLOW_START].filter(Boolean).join(" ");
    process.env.INVENTORY_TEMPLATE_TIMEOUT = String(BUDGET_S);
    s = await startServer(
      { webhookMaxAttempts: 1 },
      {
        worker: {
          render: { timeoutMs: BUDGET_S * 1000, maxBytes: 1024 * 1024, heapMb: 64 },
          timeoutMs: 20_000,
          leaseMs: 60_000,
          pollMs: 100,
        },
      },
    );
    rx = await startReceiver();
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await rx.close();
    await s.close();
  });

  it("the first computed field renders: the budget counts from the renderer's readiness", async () => {
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Slow", status: "active" },
    });
    assert.equal(site.status, 201, JSON.stringify(site.body));
    const field = await s.api("/api/extras/computed-fields/", {
      method: "POST",
      body: { content_type: "dcim.site", label: "Shout", template: "{{ obj.name }}!", fallback_value: "fb" },
    });
    assert.equal(field.status, 201, JSON.stringify(field.body));
    const got = await s.api(`/api/dcim/sites/${site.body.id}/?include=computed_fields`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.deepEqual(got.body.computed_fields, { shout: "Slow!" });
  });

  it("the first webhook body renders and is delivered at the first attempt", async () => {
    const hook = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "slow start",
        content_types: ["tenancy.tenant"],
        type_create: true,
        payload_url: `${rx.url}/tenants`,
        body_template: '{"tenant": "{{ data.name }}"}',
      },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const t = await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: "Acme" } });
    assert.equal(t.status, 201, JSON.stringify(t.body));
    const [delivery] = await waitUntil(async () => {
      const r = await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hook.body.id}`);
      const list = r.body.results as any[];
      return list.length && ["succeeded", "failed"].includes(list[0].state.value) ? list : undefined;
    });
    assert.equal(delivery.state.value, "succeeded", JSON.stringify(delivery));
    assert.equal(rx.requests[0]?.json?.tenant, "Acme");
  });
});
