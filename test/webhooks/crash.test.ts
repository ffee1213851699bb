/**
 * Issue 4: killing the worker (SIGKILL) in the middle of a batch loses nothing. A separate
 * `inventory worker` process delivers to a slow receiver; it is killed while requests are in flight and
 * restarted; every queued delivery then arrives, and only deliveries whose attempt was in flight may repeat
 * (receivers drop repeats by `X-Hook-Delivery`).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { ENGINE, startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const N = 30;

function startWorker(databaseUrl: string, pollSeconds = "0.1"): ChildProcess {
  return spawn(process.execPath, ["src/main.ts", "worker", "--database", databaseUrl, "--concurrency", "4"], {
    env: {
      ...process.env,
      INVENTORY_WEBHOOK_LEASE: "1.5",
      INVENTORY_WEBHOOK_TIMEOUT: "1",
      INVENTORY_WEBHOOK_POLL: pollSeconds,
      INVENTORY_WEBHOOK_RETRY_BASE: "0.1",
      INVENTORY_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

describe("worker crash", () => {
  let s: TestServer;
  let rcv: Receiver;
  let child: ChildProcess | undefined;
  before(async () => {
    s = await startServer();
    rcv = await startReceiver();
    rcv.respond = () => ({ status: 200, delayMs: 300 });
  });
  after(async () => {
    child?.kill("SIGKILL");
    await rcv.close();
    await s.close();
  });

  it("SIGKILL mid-batch loses nothing; repeats only for attempts in flight", async () => {
    const h = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "crash",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: `${rcv.url}/crash`,
      },
    });
    assert.equal(h.status, 201, JSON.stringify(h.body));
    const bulk = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: Array.from({ length: N }, (_, i) => ({ name: `Crash ${i}`, status: "active" })),
    });
    assert.equal(bulk.status, 201);
    child = startWorker(s.databaseUrl);
    await rcv.waitFor(6, 30000);
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    const atKill = rcv.requests.length;
    assert.ok(atKill < N, "killed before the end of the batch");
    child = startWorker(s.databaseUrl);
    let list: any[] = [];
    await waitUntil(
      async () => {
        const r = await s.api(`/api/extras/webhook-deliveries/?webhook_id=${h.body.id}&limit=1000`);
        list = r.body.results;
        return list.length === N && list.every((d) => d.state.value === "succeeded") ? true : undefined;
      },
      60000,
      () => `not all delivered: ${JSON.stringify(list.map((d) => d.state.value))}`,
      100,
    );
    const seen = new Map<string, number>();
    for (const r of rcv.requests) {
      const id = r.headers["x-hook-delivery"]!;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    assert.deepEqual([...seen.keys()].sort(), list.map((d) => d.id).sort(), "every delivery arrived");
    assert.deepEqual(new Set(rcv.requests.map((r) => r.json.data.name)).size, N, "every change arrived");
    const lost = new Set(
      list
        .filter((d) => d.attempt_log.some((a: any) => /lost its lease/.test(a.error ?? "")))
        .map((d) => d.id),
    );
    for (const [id, n] of seen) {
      if (n > 1) assert.ok(lost.has(id), `delivery ${id} repeated without a lost attempt`);
    }
    assert.ok(
      lost.size >= 1 && lost.size <= 4,
      `in-flight attempts at the kill: ${lost.size} (1..4 expected)`,
    );
  });

  it("a separate worker on PostgreSQL is woken by NOTIFY at commit, not by its poll", {
    skip: ENGINE !== "postgres",
  }, async () => {
    child?.kill("SIGKILL");
    child = startWorker(s.databaseUrl, "60");
    const h = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "notify",
        content_types: ["tenancy.tenant"],
        type_create: true,
        payload_url: `${rcv.url}/notify`,
      },
    });
    assert.equal(h.status, 201);
    await new Promise((r) => setTimeout(r, 1500)); // the worker is up and idle, next poll in a minute
    const before = rcv.requests.length;
    await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: "Notified" } });
    await rcv.waitFor(before + 1, 20000);
    assert.equal(rcv.requests.at(-1)!.json.data.name, "Notified");
  });
});
