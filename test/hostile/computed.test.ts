/**
 * Issue 23 and 24, computed fields under hostile templates: a request's computed fields render within one
 * budget (fallback values past it) in renderers of their own, so a page of template bombs neither takes
 * minutes nor delays webhook delivery; any render error, including an attribute of an undefined value,
 * gives the fallback value as Nautobot's Jinja2 `Undefined` does.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

/** A template that renders for as long as it is let (10^10 iterations), well within 500 characters. */
const BOMB = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}never";
const ROWS = 1000;
/** Concurrent readers of the bomb page: more than the renderers the old shared pool had. */
const READERS = 6;

describe("hostile computed fields", () => {
  let s: TestServer;
  let rx: Receiver;
  let device: string;

  before(async () => {
    s = await startServer(
      {},
      {
        worker: { timeoutMs: 5000, retryBaseMs: 50, leaseMs: 30000, pollMs: 100 },
        // Six 1,000-row pages at once: each costs about 100 ms of CPU today (issue 29 brings a page to 30 ms),
        // together they keep the loop busy for up to ~400 ms though no single request holds it that long (seen
        // in CI: 418 ms). The guard still catches the old code's freezes (a page took ~35 min).
        healthFloorMs: 600,
      },
    );
    rx = await startReceiver();
    const site = await create(s, "/api/dcim/sites/", { name: "Site C", status: "active" });
    const mf = await create(s, "/api/dcim/manufacturers/", { name: "Maker" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mf.id, model: "Box" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Leaf" });
    device = (
      await create(s, "/api/dcim/devices/", {
        name: "dev1",
        device_type: dt.id,
        device_role: role.id,
        site: site.id,
        status: "active",
      })
    ).id;
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it("a render error gives the fallback value, an undefined attribute renders empty (Jinja2 Undefined)", async () => {
    await create(s, "/api/dcim/sites/", { name: "Alpha", status: "active" });
    const field = async (label: string, template: string, fallback_value = "fb") =>
      create(s, "/api/extras/computed-fields/", {
        content_type: "dcim.site",
        label,
        template,
        fallback_value,
      });
    await field("Deeper", "{{ obj.name.nosuch.deeper }}");
    await field("Undefined deeper", "{{ obj.nosuch.deeper }}");
    await field("Undefined item", "{{ obj.nosuch['x'] }}");
    await field("Missing", "{{ obj.nosuch }}");
    await field("Missing of string", "{{ obj.name.nosuch }}");
    await field("Call", "{{ obj.nosuch() }}");
    await field("Fine", "{{ obj.name }}!");
    const got = await s.api("/api/dcim/sites/?name=Alpha&include=computed_fields");
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.deepEqual(got.body.results[0].computed_fields, {
      deeper: "fb",
      undefined_deeper: "fb",
      undefined_item: "fb",
      missing: "",
      missing_of_string: "",
      call: "fb",
      fine: "Alpha!",
    });
  });

  it("a page of template bombs answers within the request budget with fallbacks; webhooks still deliver at once", async () => {
    const items = Array.from({ length: ROWS }, (_, i) => ({ device, name: `eth${i}`, type: "1000base-t" }));
    const made = await s.api("/api/dcim/interfaces/", { method: "POST", body: items });
    assert.equal(made.status, 201, JSON.stringify(made.body).slice(0, 500));
    const page = `/api/dcim/interfaces/?device_id=${device}&limit=${ROWS}`;
    const getAll = async (path: string) => {
      const t0 = performance.now();
      const r = await s.api(path, { headers: {} });
      return { ...r, ms: performance.now() - t0 };
    };

    // Batches: a fast template renders for every row of the page, each with its own object.
    await create(s, "/api/extras/computed-fields/", {
      content_type: "dcim.interface",
      label: "Tag",
      template: "{{ obj.name }}@{{ obj.device.name }}",
    });
    // This check is about batches, not speed: the request's computed-field budget (2 s by default) is raised
    // for this one read, as a loaded machine can miss it (issue 24: at load 8–11 under stress-ng, rows from
    // 863 of 1,000 on got their fallback). The bomb reads below keep the default budget.
    const before = process.env.INVENTORY_COMPUTED_TIMEOUT;
    process.env.INVENTORY_COMPUTED_TIMEOUT = "120";
    const fast = await getAll(`${page}&include=computed_fields`).finally(() => {
      if (before === undefined) delete process.env.INVENTORY_COMPUTED_TIMEOUT;
      else process.env.INVENTORY_COMPUTED_TIMEOUT = before;
    });
    assert.equal(fast.status, 200);
    assert.equal(fast.body.results.length, ROWS);
    for (const o of fast.body.results) assert.equal(o.computed_fields.tag, `${o.name}@dev1`);

    // Baseline: the same concurrent reads without computed fields, on this machine, now.
    const plain = await Promise.all(Array.from({ length: READERS }, () => getAll(page)));
    const baseline = Math.max(...plain.map((r) => r.ms));

    await create(s, "/api/extras/computed-fields/", {
      content_type: "dcim.interface",
      label: "Bomb",
      template: BOMB,
      fallback_value: "slow",
      weight: 50,
    });
    await create(s, "/api/extras/webhooks/", {
      name: "tenants",
      content_types: ["tenancy.tenant"],
      type_create: true,
      payload_url: `${rx.url}/tenants`,
      body_template: '{"tenant": "{{ data.name }}"}',
    });
    // Webhook latency when idle (this also starts the webhook renderer, as on a running server).
    rx.requests.length = 0;
    const w0 = Date.now();
    await create(s, "/api/tenancy/tenants/", { name: "Warm" });
    const idle = ((await rx.waitFor(1, 60_000))[0]?.at ?? Date.now()) - w0;
    rx.requests.length = 0;

    // Readers hang on to the renderers; past the old code's deadlines they would take ~35 min each.
    const readers = Array.from({ length: READERS }, () =>
      (async () => {
        const t0 = performance.now();
        const r = await fetch(`${s.url}${page}&include=computed_fields`, {
          headers: { Authorization: `Token ${s.token}`, Accept: "application/json" },
          signal: AbortSignal.timeout(90_000),
        });
        return { status: r.status, body: (await r.json()) as any, ms: performance.now() - t0 };
      })(),
    );
    await new Promise((r) => setTimeout(r, 500));
    const t0 = Date.now();
    await create(s, "/api/tenancy/tenants/", { name: "Acme" });
    const posted = Date.now() - t0;
    const [hit] = await rx.waitFor(1, 60_000);
    const latency = (hit?.at ?? Date.now()) - t0;
    assert.equal(hit?.json?.tenant, "Acme");

    const answers = await Promise.all(readers);
    const budgetMs = 2000;
    const bound = budgetMs + 2 * baseline + 5000;
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.body.results.length, ROWS);
      for (const o of a.body.results) assert.equal(o.computed_fields.bomb, "slow");
      assert.ok(
        a.ms < bound,
        `a page of ${ROWS} bombs answered in ${Math.round(a.ms)} ms, over ${Math.round(bound)} ms (baseline ${Math.round(baseline)} ms)`,
      );
    }
    assert.ok(
      latency < 3000,
      `webhook delivered ${latency} ms after the change, while readers rendered bombs`,
    );
    console.log(
      `# ${ROWS} bomb rows x ${READERS} readers: ${answers.map((a) => Math.round(a.ms)).join(", ")} ms (plain ${Math.round(baseline)} ms); webhook ${latency} ms (POST ${posted} ms; idle ${idle} ms)`,
    );
  });
});
