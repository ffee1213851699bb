/**
 * Issue 23 (helper E2), login and exposure: one limiter for every password check (web login and HTTP
 * Basic) that locks the guessing address out (429) but only slows a username down, so the real user gets in
 * from another address; no open redirect after login; anonymous reads cover inventory models only (not
 * notes, secrets, saved queries, computed fields, export templates, GraphQL or `/api/status/`); `/metrics`
 * behind a token or loopback, or off, with its database figures cached.
 *
 * Client addresses: the server listens on 127.0.0.1 and a request is sent from another loopback address
 * (`localAddress` 127.0.0.2, 127.0.0.3, …: all of 127.0.0.0/8 is loopback on Linux), so the server sees a
 * really different socket address — no X-Forwarded-For, no trust-proxy.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { HANG_MS } from "../helpers/wait.ts";

/** One HTTP exchange from local address `from`; the body is read whole. */
function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? "GET",
        headers: {
          ...(init.headers ?? {}),
          ...(init.body ? { "content-length": Buffer.byteLength(init.body) } : {}),
        },
        localAddress: init.from ?? "127.0.0.1",
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
            ms: performance.now() - t0,
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url} within 60 s (hang)`)));
    req.on("error", reject);
    req.end(init.body);
  });
}

/** A browser-like web client at local address `from`: keeps the session cookie, posts with a fresh CSRF token. */
function webClient(s: TestServer, from: string) {
  let cookie = "";
  const keep = (h: Record<string, string | string[] | undefined>) => {
    for (const c of [h["set-cookie"] ?? []].flat()) {
      const pair = c.split(";")[0]!;
      if (pair.startsWith("sessionid=")) cookie = pair;
    }
  };
  return {
    /** GET /login/ (for the session's CSRF token), then POST it these form fields (or `raw` body text). */
    async login(form: Record<string, string>, raw?: string) {
      const page = await send(`${s.url}/login/`, { from, headers: cookie ? { cookie } : {} });
      keep(page.headers);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
      assert.ok(csrf, `no CSRF token on /login/ (${page.status})`);
      const body = raw ?? new URLSearchParams(form).toString();
      const r = await send(`${s.url}/login/`, {
        method: "POST",
        from,
        headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
        body: `${body}&_csrf=${encodeURIComponent(csrf)}`,
      });
      keep(r.headers);
      return r;
    },
  };
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** `POST /api/users/tokens/` with HTTP Basic from local address `from`. */
const basicLogin = (s: TestServer, from: string, user: string, password: string) =>
  send(`${s.url}/api/users/tokens/`, {
    method: "POST",
    from,
    headers: { authorization: basic(user, password), "content-type": "application/json" },
    body: "{}",
  });

/** A user who may create tokens for themselves (so a right Basic login is a 201). */
async function addUser(s: TestServer, username: string, password: string): Promise<void> {
  const r = await s.api("/api/users/users/", { method: "POST", body: { username, password } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const p = await s.api("/api/users/permissions/", {
    method: "POST",
    body: {
      name: `${username}-tokens`,
      object_types: ["users.token"],
      actions: ["add", "view"],
      users: [r.body.id],
    },
  });
  assert.equal(p.status, 201, JSON.stringify(p.body));
}

const metricValue = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
};

describe("one login limiter, no open redirect, anonymous scope, loopback metrics", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({
      anonymousRead: true,
      loginLimits: { maxFailures: 30, windowMs: 120_000, delayBaseMs: 50, delayMaxMs: 400 },
      metrics: { mode: "on", token: undefined, cacheMs: 0 },
    });
    await addUser(s, "alice", "alice-pw-123");
  });
  after(async () => {
    await s.close();
  });

  it("30 wrong web logins lock that address (429, also for Basic), the real user logs in from another", async () => {
    const attacker = webClient(s, "127.0.0.2");
    for (let i = 0; i < 30; i++) {
      const r = await attacker.login({ username: "alice", password: `guess-${i}`, next: "/" });
      assert.equal(r.status, 400, `wrong login ${i + 1}: ${r.status}`);
    }
    // The address is over its limit: refused before any check, even with the right password.
    const locked = await attacker.login({ username: "alice", password: "alice-pw-123", next: "/" });
    assert.equal(locked.status, 429, `after 30 failures: ${locked.status}`);
    assert.ok(Number(locked.headers["retry-after"]) > 0, `Retry-After ${locked.headers["retry-after"]}`);
    assert.match(locked.text, /Too many failed logins/);
    // HTTP Basic shares the limiter: the same address is refused there too.
    const viaBasic = await basicLogin(s, "127.0.0.2", "alice", "alice-pw-123");
    assert.equal(viaBasic.status, 429, viaBasic.text);
    // The real user, from another address, still gets in (web and Basic): the username is only delayed.
    const real = webClient(s, "127.0.0.3");
    const ok = await real.login({ username: "alice", password: "alice-pw-123", next: "/dcim/sites/" });
    assert.equal(ok.status, 302, ok.text.slice(0, 300));
    assert.equal(ok.headers.location, "/dcim/sites/");
    const token = await basicLogin(s, "127.0.0.3", "alice", "alice-pw-123");
    assert.equal(token.status, 201, token.text);
  });

  it("after login, `next` is followed only to a path of this site", async () => {
    const origin = new URL(s.url).origin;
    const hostile: Array<[string, string]> = [
      ["next=%2F%5Cevil.example%2F", "/\\evil.example/"],
      ["next=%2F%09%2Fevil.example%2F", "/<TAB>/evil.example/"],
      ["next=%2F%2Fevil.example", "//evil.example"],
      ["next=https%3A%2F%2Fevil.example", "https://evil.example"],
      ["next=%2F%255Cevil.example", "/%5Cevil.example"],
      ["next=%5C%5Cevil.example", "\\\\evil.example"],
      ["next=%2F%5C%2Fevil.example", "/\\/evil.example"],
    ];
    const client = webClient(s, "127.0.0.4");
    for (const [field, label] of hostile) {
      const r = await client.login({}, `username=admin&password=admin&${field}`);
      assert.equal(r.status, 302, `${label}: ${r.status}`);
      const location = String(r.headers.location);
      assert.equal(location, "/", `${label} → ${location}`);
      assert.equal(new URL(location, s.url).origin, origin);
    }
    // A path of this site is kept (with its query).
    const good = await client.login({ username: "admin", password: "admin", next: "/dcim/sites/?q=a%20b" });
    assert.equal(good.headers.location, "/dcim/sites/?q=a%20b");
    // The login page does not carry a hostile `next` into its form either.
    const page = await send(`${s.url}/login/?next=${encodeURIComponent("/\\evil.example/")}`);
    assert.match(page.text, /name="next" value="\/"/);
  });

  it("anonymous reads cover inventory lists, not notes, secrets, saved queries, templates, GraphQL or status", async () => {
    for (const path of [
      "/api/dcim/sites/",
      "/api/ipam/prefixes/",
      "/api/circuits/circuits/",
      "/api/tenancy/tenants/",
      "/api/virtualization/virtual-machines/",
    ]) {
      const r = await s.api(path, { token: null });
      assert.equal(r.status, 200, `${path}: ${r.status}`);
    }
    for (const path of [
      "/api/extras/notes/",
      "/api/extras/secrets/",
      "/api/extras/secrets-groups/",
      "/api/extras/graphql-queries/",
      "/api/extras/computed-fields/",
      "/api/extras/export-templates/",
      "/api/status/",
      `/api/graphql/?query=${encodeURIComponent("{ sites { name } }")}`,
    ]) {
      const r = await s.api(path, { token: null });
      assert.equal(r.status, 403, `${path}: ${r.status}`);
      assert.equal(r.body.detail, "Authentication credentials were not provided.", path);
      // With a token they are served.
      assert.equal((await s.api(path)).status, 200, `${path} with a token`);
    }
  });

  it("/metrics answers loopback clients without a token and refreshes its figures in the background", async () => {
    const first = await send(`${s.url}/metrics`);
    assert.equal(first.status, 200, first.text);
    const reads0 = metricValue(first.text, "inventory_metrics_db_reads_total");
    assert.ok(reads0 !== undefined && reads0 >= 1, `reads ${reads0}`);
    // Cache period 0: a later scrape starts a refresh; a following one shows it (deadline: hang only).
    const deadline = Date.now() + HANG_MS;
    let reads = reads0;
    while (reads === reads0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      reads = metricValue((await send(`${s.url}/metrics`)).text, "inventory_metrics_db_reads_total")!;
    }
    assert.ok(reads > reads0, `reads stayed ${reads}`);
  });
});

describe("per username only a growing delay; metrics from a remote address refused", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({
      trustProxy: true,
      loginLimits: { maxFailures: 3, windowMs: 120_000, delayBaseMs: 200, delayMaxMs: 800 },
    });
    await addUser(s, "bob", "bob-pw-123");
  });
  after(async () => {
    await s.close();
  });

  it("Basic failures from two addresses lock those addresses, delay the username, and never lock bob out", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await basicLogin(s, "127.0.0.2", "bob", `x${i}`)).status, 403);
    assert.equal((await basicLogin(s, "127.0.0.2", "bob", "bob-pw-123")).status, 429);
    // bob has 3 failures now: each further check waits 200, 400, 800 ms (at least; a timer, not a lock).
    for (const [i, wait] of [200, 400, 800].entries()) {
      const r = await basicLogin(s, "127.0.0.3", "bob", `y${i}`);
      assert.equal(r.status, 403, `guess ${i} from a second address: ${r.status}`);
      assert.ok(r.ms >= wait * 0.9, `guess ${i} took ${Math.round(r.ms)} ms, expected ≥ ${wait}`);
    }
    // The real bob, from a third address: delayed (capped at 800 ms), then in.
    const real = await basicLogin(s, "127.0.0.5", "bob", "bob-pw-123");
    assert.equal(real.status, 201, real.text);
    assert.ok(real.ms >= 720, `took ${Math.round(real.ms)} ms`);
    // The success cleared bob's count: no delay any more.
    const again = await basicLogin(s, "127.0.0.5", "bob", "bob-pw-123");
    assert.equal(again.status, 201);
  });

  it("/metrics is refused to a non-loopback client when no token is set", async () => {
    const remote = await send(`${s.url}/metrics`, { headers: { "x-forwarded-for": "203.0.113.9" } });
    assert.equal(remote.status, 403, remote.text.slice(0, 200));
    assert.match(remote.text, /INVENTORY_METRICS_TOKEN/);
    assert.equal((await send(`${s.url}/metrics`)).status, 200);
  });
});

describe("/metrics with a token, or off", () => {
  let withToken: TestServer;
  let off: TestServer;
  before(async () => {
    withToken = await startServer({ metrics: { mode: "on", token: "scrape-secret-1", cacheMs: 600_000 } });
    off = await startServer({ metrics: { mode: "off", token: undefined, cacheMs: 15_000 } });
  });
  after(async () => {
    await withToken.close();
    await off.close();
  });

  it("needs the Bearer token, and two scrapes within the cache period read the database once", async () => {
    const none = await send(`${withToken.url}/metrics`);
    assert.equal(none.status, 401);
    assert.match(String(none.headers["www-authenticate"]), /^Bearer/);
    const wrong = await send(`${withToken.url}/metrics`, { headers: { authorization: "Bearer nope" } });
    assert.equal(wrong.status, 401);
    const auth = { authorization: "Bearer scrape-secret-1" };
    const a = await send(`${withToken.url}/metrics`, { headers: auth });
    assert.equal(a.status, 200, a.text.slice(0, 200));
    // A new delivery between the scrapes is not seen: the second scrape served the cached figures.
    const hook = await withToken.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "h",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: "http://127.0.0.1:9/x",
      },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const site = await withToken.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "S", status: "active" },
    });
    assert.equal(site.status, 201);
    const b = await send(`${withToken.url}/metrics`, { headers: auth });
    assert.equal(b.status, 200);
    assert.equal(metricValue(a.text, "inventory_metrics_db_reads_total"), 1);
    assert.equal(metricValue(b.text, "inventory_metrics_db_reads_total"), 1);
    assert.equal(
      metricValue(b.text, "inventory_outbox_depth"),
      metricValue(a.text, "inventory_outbox_depth"),
    );
    assert.ok((metricValue(b.text, "inventory_metrics_db_age_seconds") ?? -1) >= 0);
  });

  it("is a 404 when off", async () => {
    assert.equal((await send(`${off.url}/metrics`)).status, 404);
    assert.equal((await send(`${off.url}/health`)).status, 200);
  });
});
