/**
 * Issue 4 acceptance: change log and webhooks, black-box over HTTP with a real receiver on loopback and an
 * in-process worker (fast retry settings), on the engine selected by TEST_DB.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, afterEach, before, describe, it } from "node:test";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const SECRET = "s3cret-key";

describe("webhooks and change log", () => {
  let s: TestServer;
  let rcv: Receiver;
  const hooks: string[] = [];

  before(async () => {
    s = await startServer(
      { webhookMaxAttempts: 4 },
      // Request timeout and lease far above a loopback answer, so that a busy machine (issue 24) causes no
      // timeout or lost lease, hence no extra delivery, in tests that count deliveries.
      { worker: { retryBaseMs: 60, timeoutMs: 20_000, leaseMs: 60_000, pollMs: 100 } },
    );
  });
  after(async () => {
    await s.close();
  });
  afterEach(async () => {
    for (const id of hooks.splice(0)) await s.api(`/api/extras/webhooks/${id}/`, { method: "DELETE" });
    await rcv?.close();
  });

  async function hook(body: Record<string, unknown>): Promise<any> {
    const r = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: `hook-${Math.random().toString(36).slice(2)}`,
        content_types: ["dcim.site"],
        type_create: true,
        type_update: true,
        type_delete: true,
        payload_url: `${rcv.url}/hook`,
        ...body,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    hooks.push(r.body.id);
    return r.body;
  }

  async function deliveries(webhookId: string): Promise<any[]> {
    const r = await s.api(`/api/extras/webhook-deliveries/?webhook_id=${webhookId}&limit=1000`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.results;
  }

  it("create, update and delete of a site fire exactly three signed deliveries", async () => {
    rcv = await startReceiver();
    const h = await hook({
      secret: SECRET,
      additional_headers: "X-Url: http://a:1/b\n\nX-Event: {{ event }}-{{ model }}\n",
    });
    assert.equal("secret" in h, false, "secret must never be returned");
    const created = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Hook 1", status: "active" },
    });
    assert.equal(created.status, 201);
    const id = created.body.id;
    const patched = await s.api(`/api/dcim/sites/${id}/`, {
      method: "PATCH",
      body: { description: "changed" },
    });
    assert.equal(patched.status, 200);
    assert.equal((await s.api(`/api/dcim/sites/${id}/`, { method: "DELETE" })).status, 204);
    const got = await rcv.waitFor(3);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(rcv.requests.length, 3, "exactly three deliveries");
    assert.deepEqual(
      got.map((r) => r.json.event),
      ["created", "updated", "deleted"],
      "commit order for one object",
    );
    for (const r of got) {
      assert.equal(r.method, "POST");
      assert.equal(r.path, "/hook");
      assert.equal(r.headers["content-type"], "application/json");
      assert.equal(r.json.model, "site");
      assert.equal(r.json.data.id, id);
      assert.equal(r.json.username, "admin");
      assert.match(r.json.request_id, /^[0-9a-f-]{36}$/);
      assert.match(
        r.json.timestamp,
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{6})?\+00:00$/,
        "Nautobot's format",
      );
      assert.deepEqual(Object.keys(r.json), [
        "event",
        "timestamp",
        "model",
        "username",
        "request_id",
        "data",
        "snapshots",
      ]);
      const expected = createHmac("sha512", SECRET).update(Buffer.from(r.body, "utf8")).digest("hex");
      assert.equal(r.headers["x-hook-signature"], expected, "signature verifies over the exact body");
      assert.equal(r.headers["x-url"], "http://a:1/b", "header split on the first colon only");
      assert.equal(r.headers["x-event"], `${r.json.event}-site`);
      assert.match(r.headers["x-hook-delivery"] ?? "", /^[0-9a-f-]{36}$/);
      assert.match(r.headers["user-agent"] ?? "", /^inventory\//);
      assert.match(r.json.data.url, /^\/api\/dcim\/sites\/[0-9a-f-]{36}\/$/, "relative URLs, as Nautobot");
      assert.equal("relationships" in r.json.data, false, "no opt-in keys in payloads");
    }
    const [c, u, d] = got;
    assert.equal(c!.json.snapshots.prechange, null);
    assert.equal(c!.json.snapshots.postchange.name, "Hook 1");
    assert.equal(c!.json.snapshots.differences.removed, null);
    assert.equal(c!.json.snapshots.differences.added.name, "Hook 1");
    assert.equal(u!.json.data.description, "changed");
    assert.equal(u!.json.snapshots.prechange.description, "");
    assert.equal(u!.json.snapshots.postchange.description, "changed");
    assert.deepEqual(u!.json.snapshots.differences.added, { description: "changed" });
    assert.deepEqual(u!.json.snapshots.differences.removed, { description: "" });
    assert.equal(d!.json.snapshots.postchange, null);
    assert.equal(d!.json.snapshots.prechange.description, "changed");
    assert.equal(d!.json.snapshots.differences.added, null);
    assert.equal(d!.json.snapshots.differences.removed.id, id);
    assert.equal(d!.json.data.id, id);
    const ds = await waitUntil(async () => {
      const list = await deliveries(h.id);
      return list.length === 3 && list.every((x) => x.state.value === "succeeded") ? list : undefined;
    });
    for (const x of ds) {
      assert.equal(x.attempts, 1);
      assert.equal(x.last_status_code, 200);
      assert.equal(x.request.headers["X-Hook-Signature"], "<redacted>");
      assert.equal(x.attempt_log.length, 1);
    }
    // The webhook's own change log never holds the secret.
    const oc = await s.api(`/api/extras/object-changes/?changed_object_id=${h.id}`);
    assert.equal(oc.body.count, 1);
    assert.equal(JSON.stringify(oc.body.results).includes(SECRET), false);
  });

  it("a PATCH of fields and tags fires one event with the final state", async () => {
    rcv = await startReceiver();
    const tag = await s.api("/api/extras/tags/", { method: "POST", body: { name: "gold" } });
    assert.equal(tag.status, 201, JSON.stringify(tag.body));
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Tagged", status: "active" },
    });
    const h = await hook({ type_create: false, type_delete: false });
    const r = await s.api(`/api/dcim/sites/${site.body.id}/`, {
      method: "PATCH",
      body: { description: "with tag", tags: [{ name: "gold" }] },
    });
    assert.equal(r.status, 200);
    const [got] = await rcv.waitFor(1);
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(rcv.requests.length, 1, "one delivery for one logical change");
    assert.equal(got!.json.event, "updated");
    assert.deepEqual(
      got!.json.data.tags.map((t: any) => t.name),
      ["gold"],
    );
    assert.equal(got!.json.data.description, "with tag");
    assert.deepEqual(Object.keys(got!.json.snapshots.differences.added).sort(), ["description", "tags"]);
    assert.equal((await deliveries(h.id)).length, 1);
  });

  it("a refused write fires nothing; a bulk create of N fires N with one request_id", async () => {
    rcv = await startReceiver();
    const h = await hook({});
    const bad = await s.api("/api/dcim/sites/", { method: "POST", body: { status: "active" } });
    assert.equal(bad.status, 400);
    const badBulk = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [{ name: "Ok 1", status: "active" }, { status: "active" }],
    });
    assert.equal(badBulk.status, 400);
    assert.equal((await s.api("/api/dcim/sites/?name=Ok 1")).body.count, 0, "nothing half-written");
    const bulk = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: [1, 2, 3, 4, 5].map((i) => ({ name: `Bulk ${i}`, status: "active" })),
    });
    assert.equal(bulk.status, 201);
    const got = await rcv.waitFor(5);
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(rcv.requests.length, 5);
    assert.equal(new Set(got.map((r) => r.json.request_id)).size, 1, "one request_id");
    assert.deepEqual(got.map((r) => r.json.data.name).sort(), [
      "Bulk 1",
      "Bulk 2",
      "Bulk 3",
      "Bulk 4",
      "Bulk 5",
    ]);
    assert.equal((await deliveries(h.id)).length, 5);
    const oc = await s.api(`/api/extras/object-changes/?request_id=${got[0]!.json.request_id}`);
    assert.equal(oc.body.count, 5, "one ObjectChange per object, same request_id");
  });

  it("a receiver that answers 500 twice then 200 ends in success on attempt 3", async () => {
    rcv = await startReceiver();
    rcv.respond = (n) => ({ status: n <= 2 ? 500 : 200 });
    const h = await hook({ type_update: false, type_delete: false });
    await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Flaky", status: "active" } });
    await rcv.waitFor(3);
    const [d] = await waitUntil(async () => {
      const list = await deliveries(h.id);
      return list[0]?.state.value === "succeeded" ? list : undefined;
    });
    assert.equal(d.attempts, 3);
    assert.deepEqual(
      d.attempt_log.map((a: any) => a.status_code),
      [500, 500, 200],
    );
    assert.match(d.attempt_log[0].error, /500/);
    const ids = new Set(rcv.requests.map((r) => r.headers["x-hook-delivery"]));
    assert.equal(ids.size, 1, "retries carry the same delivery id");
  });

  it("a receiver that is down, then starts, receives everything queued", async () => {
    rcv = await startReceiver();
    const port = rcv.port;
    await rcv.close();
    const h = await hook({
      payload_url: `http://127.0.0.1:${port}/late`,
      type_update: false,
      type_delete: false,
    });
    for (const i of [1, 2, 3])
      await s.api("/api/dcim/sites/", { method: "POST", body: { name: `Late ${i}`, status: "active" } });
    await waitUntil(async () => {
      const list = await deliveries(h.id);
      return list.length === 3 && list.every((x) => x.attempts >= 1) ? true : undefined;
    });
    const pending = await deliveries(h.id);
    assert.ok(
      pending.every((x) => ["retry", "sending"].includes(x.state.value)),
      JSON.stringify(pending.map((x) => x.state)),
    );
    assert.ok(
      pending.some((x) => /ECONNREFUSED/.test(x.last_error)),
      JSON.stringify(pending.map((x) => x.last_error)),
    );
    rcv = await startReceiver(port);
    await rcv.waitFor(3);
    assert.deepEqual(rcv.requests.map((r) => r.json.data.name).sort(), ["Late 1", "Late 2", "Late 3"]);
  });

  it("template errors are failed attempts; escapes render nothing dangerous; bad templates are refused", async () => {
    rcv = await startReceiver();
    const refused = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "broken",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: rcv.url,
        body_template: "{% if data.name %}unterminated",
      },
    });
    assert.equal(refused.status, 400);
    assert.match(refused.body.body_template[0], /Invalid template/);
    const noType = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: { name: "nothing", content_types: ["dcim.site"], payload_url: rcv.url },
    });
    assert.equal(noType.status, 400);
    const badUrl = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: { name: "badurl", content_types: ["dcim.site"], type_create: true, payload_url: "not a url" },
    });
    assert.equal(badUrl.status, 400);
    assert.ok(badUrl.body.payload_url);

    const sandboxed = await hook({
      type_update: false,
      type_delete: false,
      payload_url: `${rcv.url}/sandboxed`,
      body_template:
        "A{{ data.__proto__ }}B{{ data.constructor }}C{{ data.name.constructor }}D{{ event.__class__ }}E{{ data.name | upper }}",
    });
    const conflict = await s.api("/api/extras/webhooks/", {
      method: "POST",
      body: {
        name: "same",
        content_types: ["dcim.site"],
        type_create: true,
        payload_url: `${rcv.url}/sandboxed`,
      },
    });
    assert.equal(conflict.status, 400);
    assert.deepEqual(conflict.body.type_create, [
      `A webhook already exists for create on dcim | site to URL ${rcv.url}/sandboxed`,
    ]);
    const crash = await hook({
      type_update: false,
      type_delete: false,
      payload_url: `${rcv.url}/crash`,
      body_template: "{{ ''.constructor.constructor('return process')() }}",
    });
    await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Tpl", status: "active" } });
    const [got] = await rcv.waitFor(1);
    assert.equal(got!.body, "ABCDETPL");
    const failed = await waitUntil(async () => {
      const list = await deliveries(crash.id);
      return list[0]?.attempts >= 1 ? list[0] : undefined;
    });
    assert.match(failed.last_error, /template rendering failed/);
    assert.equal(failed.last_status_code, null);
    assert.ok(rcv.requests.every((r) => !/process|function|\[object/i.test(r.body)));
    assert.ok(sandboxed.id);
  });

  it("failed deliveries can be retried by hand, one or all for a webhook", async () => {
    rcv = await startReceiver();
    rcv.respond = () => ({ status: 503 });
    const h = await hook({ type_update: false, type_delete: false });
    for (const i of [1, 2])
      await s.api("/api/dcim/sites/", { method: "POST", body: { name: `Manual ${i}`, status: "active" } });
    const failed = await waitUntil(async () => {
      const list = await deliveries(h.id);
      return list.length === 2 && list.every((x) => x.state.value === "failed") ? list : undefined;
    });
    assert.equal(failed[0].attempts, 4);
    assert.equal(failed[0].attempt_log.length, 4);
    rcv.respond = () => ({ status: 204 });
    const one = await s.api(`/api/extras/webhook-deliveries/${failed[0].id}/retry/`, { method: "POST" });
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.ok(["queued", "sending", "succeeded"].includes(one.body.state.value), one.body.state.value);
    await waitUntil(async () =>
      (await deliveries(h.id)).some((x) => x.state.value === "succeeded") ? true : undefined,
    );
    const again = await s.api(`/api/extras/webhook-deliveries/${failed[0].id}/retry/`, { method: "POST" });
    assert.equal(again.status, 409);
    const all = await s.api(`/api/extras/webhooks/${h.id}/retry-failed/`, { method: "POST" });
    assert.deepEqual(all.body, { retried: 1 });
    await waitUntil(async () =>
      (await deliveries(h.id)).every((x) => x.state.value === "succeeded") ? true : undefined,
    );
  });

  it("the change log is filterable and newest first", async () => {
    rcv = await startReceiver();
    const a = await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Log A", status: "active" } });
    await s.api(`/api/dcim/sites/${a.body.id}/`, { method: "PATCH", body: { description: "d" } });
    const list = await s.api(`/api/extras/object-changes/?changed_object_id=${a.body.id}`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.results.map((r: any) => r.action.value),
      ["update", "create"],
    );
    const first = list.body.results[1];
    assert.equal(first.changed_object_type, "dcim.site");
    assert.equal(first.user_name, "admin");
    assert.equal(first.object_data.name, "Log A");
    const byAction = await s.api(`/api/extras/object-changes/?changed_object_id=${a.body.id}&action=create`);
    assert.equal(byAction.body.count, 1);
    const byType = await s.api(
      `/api/extras/object-changes/?changed_object_type=dcim.site&time__gte=${encodeURIComponent(first.time)}&user=admin`,
    );
    assert.ok(byType.body.count >= 2);
    const after = await s.api(
      `/api/extras/object-changes/?changed_object_id=${a.body.id}&time_after=${encodeURIComponent(first.time)}&time_before=2999-01-01`,
    );
    assert.equal(after.body.count, 2);
    const later = await s.api(
      `/api/extras/object-changes/?changed_object_id=${a.body.id}&time_after=2999-01-01`,
    );
    assert.equal(later.body.count, 0);
    assert.equal((await s.api("/api/extras/object-changes/?time_after=yesterday")).status, 400);
    const put = await s.api(`/api/extras/object-changes/${first.id}/`, { method: "DELETE" });
    assert.equal(put.status, 405);
  });
});
