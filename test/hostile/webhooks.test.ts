/**
 * Issue 12, webhooks under hostile configuration: template bombs are bounded and never stall other
 * webhooks or the API; CA files are read safely; receivers' answers are read only as far as kept; targets
 * in restricted networks need a superuser; the retry actions and receivers' answers follow object
 * permissions.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const NESTED = "{% for a in range(100000) %}{% for b in range(100000) %}{{ a }}{% endfor %}{% endfor %}";

describe("hostile webhooks", () => {
  let s: TestServer;
  let rx: Receiver;
  let dir: string;
  let bob: { id: string; token: string };
  const as = (path: string, init: { method?: string; body?: unknown } = {}) =>
    s.api(path, { ...init, token: bob.token });

  before(async () => {
    s = await startServer(
      { webhookMaxAttempts: 1 },
      // Request timeout and lease far above a loopback answer (issue 24: a busy machine is slow, not broken).
      { worker: { timeoutMs: 20_000, retryBaseMs: 50, leaseMs: 60_000, pollMs: 100 } },
    );
    rx = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), "inventory-hostile-"));
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "bob", password: "pw-bob-12" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    bob = { id: u.body.id, token: await createToken(s.store, u.body.id) };
  });
  after(async () => {
    await rx.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const hook = async (name: string, extra: Record<string, unknown>) => {
    const r = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name,
        content_types: ["tenancy.tenant"],
        type_create: true,
        payload_url: `${rx.url}/${name}`,
        ...extra,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const deliveries = async (webhookId: string) =>
    (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${webhookId}`)).body.results as any[];

  it("a template bomb is a failed attempt within its budget; other webhooks and the API keep going", async () => {
    // Baseline: saving a plain webhook on this machine, now (issue 24: a busy machine is slower).
    const g0 = Date.now();
    const good = await hook("good", {});
    const baseline = Date.now() - g0;
    const t0 = Date.now();
    const bomb = await hook("bomb", { body_template: NESTED });
    const range = await hook("range", { body_template: "{% for i in range(100000000) %}x{% endfor %}" });
    const saving = Date.now() - t0;
    assert.ok(
      saving < Math.max(2000, 20 * baseline),
      `saving a bomb template does not run it (${saving} ms)`,
    );
    rx.requests.length = 0;
    const healthTimes: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const h0 = performance.now();
        assert.equal((await fetch(`${s.url}/health`)).status, 200);
        healthTimes.push(performance.now() - h0);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    for (let i = 0; i < 5; i++)
      assert.equal(
        (await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: `t${i}` } })).status,
        201,
      );
    const got = await rx.waitFor(5, 20000);
    assert.ok(
      got.every((r) => r.path === "/good"),
      "only the good webhook reaches the receiver",
    );
    const failed = await waitUntil(
      async () => {
        const list = [...(await deliveries(bomb)), ...(await deliveries(range))];
        return list.length === 10 && list.every((d) => d.state.value === "failed") ? list : undefined;
      },
      30000,
      () => "bomb deliveries did not fail",
    );
    assert.ok(
      failed.some((d) => /exceeded 2 s/.test(d.last_error)),
      failed.map((d) => d.last_error).join("\n"),
    );
    assert.ok(failed.some((d) => /range\(\) of 100000000 items exceeds/.test(d.last_error)));
    polling = false;
    await poll;
    // A bomb rendered on the event loop would hold it for minutes; a busy machine answers within seconds.
    assert.ok(Math.max(...healthTimes) < 10_000, `health took up to ${Math.max(...healthTimes)} ms`);
    assert.equal((await deliveries(good)).filter((d) => d.state.value === "succeeded").length, 5);
    for (const id of [bomb, range, good]) await s.api(`/api/extras/webhooks/${id}/`, { method: "DELETE" });
  });

  it("CA files: devices, directories, FIFOs, missing and non-certificate files get one and the same 400", async () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const messages = new Set<string>();
    for (const path of ["/dev/zero", "/dev/urandom", dir, fifo, join(dir, "missing.pem"), "/etc/passwd"]) {
      const r = await s.api("/api/extras/webhooks/", {
        method: "POST",
        body: {
          name: `ca-${path}`,
          content_types: ["tenancy.tenant"],
          type_create: true,
          payload_url: `${rx.url}/ca`,
          ca_file_path: path,
        },
      });
      assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
      messages.add(JSON.stringify(r.body.ca_file_path));
    }
    assert.equal(messages.size, 1, [...messages].join(" | "));
  });

  it("a receiver streaming 10 MB answers is read only as far as kept (500 bytes)", async () => {
    let sent = 0;
    const streamer = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "Content-Type": "text/plain" });
        const chunk = Buffer.alloc(64 * 1024, "y");
        const push = () => {
          while (sent < 10 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", push);
          }
          res.end();
        };
        push();
      });
    });
    await new Promise<void>((r) => streamer.listen(0, "127.0.0.1", r));
    const port = (streamer.address() as AddressInfo).port;
    const id = await hook("stream", { payload_url: `http://127.0.0.1:${port}/stream` });
    assert.equal(
      (await s.api("/api/tenancy/tenants/", { method: "POST", body: { name: "streamed" } })).status,
      201,
    );
    const d = await waitUntil(
      async () => (await deliveries(id)).find((x) => x.state.value === "succeeded"),
      15000,
      () => "streamed delivery did not succeed",
    );
    const response = d.attempt_log.at(-1).response as string;
    assert.equal(response, "y".repeat(500));
    assert.ok(sent < 10 * 1024 * 1024, `the receiver could push ${sent} bytes: reading stopped early`);
    streamer.closeAllConnections();
    streamer.close();
    await s.api(`/api/extras/webhooks/${id}/`, { method: "DELETE" });
  });

  it("restricted targets need a superuser; a trusted webhook stays trusted when others edit it", async () => {
    const perm = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "bob-webhooks",
        users: [bob.id],
        object_types: ["extras.webhook"],
        actions: ["view", "add", "change"],
      },
    });
    assert.equal(perm.status, 201, JSON.stringify(perm.body));
    for (const url of [
      "http://127.0.0.1:9/x",
      "http://[::1]:9/x",
      "http://localhost:9/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://10.1.2.3/x",
      "http://192.168.0.1/x",
      "http://[::ffff:127.0.0.1]/x",
      "http://0.0.0.0/x",
    ]) {
      const r = await as("/api/extras/webhooks/", {
        method: "POST",
        body: { name: `ssrf ${url}`, content_types: ["dcim.site"], type_create: true, payload_url: url },
      });
      assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      assert.match(String(r.body.payload_url), /need a superuser/);
    }
    const pub = await as("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "public",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: "http://192.0.2.10/x",
      },
    });
    assert.equal(pub.status, 400, "TEST-NET is special-purpose too");
    // A superuser's local webhook: bob may edit other fields, but not point it elsewhere in a private range.
    const mine = await hook("trusted", { content_types: ["dcim.site"] });
    assert.equal(
      (await as(`/api/extras/webhooks/${mine}/`, { method: "PATCH", body: { enabled: false } })).status,
      200,
    );
    const moved = await as(`/api/extras/webhooks/${mine}/`, {
      method: "PATCH",
      body: { payload_url: "http://10.9.9.9/" },
    });
    assert.equal(moved.status, 400);
  });

  it("retry actions and receivers' answers follow object permissions", async () => {
    rx.respond = (_n, r) => ({ status: r.path.startsWith("/secret") ? 500 : 200 });
    // dave: a user of his own (bob holds unconstrained webhook permissions from the test above).
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "dave", password: "pw-dave-12" },
    });
    const dave = { id: u.body.id as string, token: await createToken(s.store, u.body.id) };
    const as = (path: string, init: { method?: string; body?: unknown } = {}) =>
      s.api(path, { ...init, token: dave.token });
    const a = await hook("bob-a", {
      content_types: ["dcim.manufacturer"],
      additional_headers: "Authorization: Bearer A",
    });
    const b = await hook("secret-b", {
      content_types: ["dcim.manufacturer"],
      additional_headers: "Authorization: Bearer B",
    });
    assert.equal(
      (await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "M1" } })).status,
      201,
    );
    const failedB = await waitUntil(
      async () => (await deliveries(b)).find((d) => d.state.value === "failed"),
      15000,
      () => "delivery of b did not fail",
    );
    const pa = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "dave-a-only",
        users: [dave.id],
        object_types: ["extras.webhook"],
        actions: ["view", "change"],
        constraints: { name: "bob-a" },
      },
    });
    assert.equal(pa.status, 201, JSON.stringify(pa.body));
    const pd = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "dave-deliveries",
        users: [dave.id],
        object_types: ["extras.webhookdelivery"],
        actions: ["view"],
      },
    });
    assert.equal(pd.status, 201, JSON.stringify(pd.body));
    const retryB = await as(`/api/extras/webhook-deliveries/${failedB.id}/retry/`, { method: "POST" });
    assert.ok([403, 404].includes(retryB.status), `retry of another webhook's delivery: ${retryB.status}`);
    assert.equal(JSON.stringify(retryB.body).includes("Bearer B"), false);
    const all = await as(`/api/extras/webhooks/${b}/retry-failed/`, { method: "POST" });
    assert.equal(all.status, 404);
    assert.equal(
      (await deliveries(b)).find((d) => d.id === failedB.id).state.value,
      "failed",
      "nothing retried",
    );
    // dave sees deliveries only with their webhook (registry viewThrough), the receiver's answers too.
    const seen = (await as("/api/extras/webhook-deliveries/?event=created")).body.results as any[];
    assert.equal(
      seen.find((d) => d.id === failedB.id),
      undefined,
      "a delivery of a webhook dave may not view",
    );
    assert.equal(JSON.stringify(seen).includes("Bearer B"), false);
    const ofA = seen.find((d) => d.webhook.id === a);
    assert.ok(
      ofA.attempt_log.some((x: any) => x.response !== ""),
      "dave reads his own receiver's answers",
    );
    assert.equal((await as(`/api/extras/webhooks/${a}/retry-failed/`, { method: "POST" })).status, 200);
  });
});

// A server of its own, started when no other is running: a server's start (migration, routes, OpenAPI
// document) shares the event loop with any other server of this process and would delay its /health.
describe("webhook targets with INVENTORY_WEBHOOK_ALLOW_PRIVATE", () => {
  it("with INVENTORY_WEBHOOK_ALLOW_PRIVATE a non-superuser may target loopback", async () => {
    const s2 = await startServer({ webhookTargets: { allowPrivate: true, allowedNetworks: [] } });
    try {
      const u = await s2.api("/api/users/users/", {
        method: "POST",
        body: { username: "carol", password: "pw-carol-1" },
      });
      const carol = await createToken(s2.store, u.body.id);
      await s2.api("/api/users/permissions/", {
        method: "POST",
        body: { name: "p", users: [u.body.id], object_types: ["extras.webhook"], actions: ["add"] },
      });
      const r = await s2.api("/api/extras/webhooks/", {
        method: "POST",
        token: carol,
        body: {
          name: "local",
          content_types: ["dcim.site"],
          type_create: true,
          payload_url: "http://127.0.0.1:9/",
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    } finally {
      await s2.close();
    }
  });
});
