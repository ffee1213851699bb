/**
 * Issue 13: `GET /metrics` in Prometheus text format (requests by route and status, latency histogram,
 * outbox depth and oldest due age, deliveries by state, live workers) and `/api/status/`'s database and
 * outbox report.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("metrics and status", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("counts requests by route pattern and reports the outbox", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await s.api("/api/dcim/sites/")).status, 200);
    assert.equal((await s.api("/api/dcim/sites/00000000-0000-0000-0000-000000000000/")).status, 404);
    const r = await fetch(`${s.url}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /text\/plain/);
    const text = await r.text();
    assert.match(
      text,
      /inventory_http_requests_total\{route="\/api\/:app\/:model\/",method="GET",status="200"\} 3/,
    );
    assert.match(
      text,
      /inventory_http_requests_total\{route="\/api\/:app\/:model\/:id\/",method="GET",status="404"\} 1/,
    );
    assert.match(
      text,
      /inventory_http_request_duration_seconds_bucket\{le="0.1",route="\/api\/:app\/:model\/",method="GET"\} \d+/,
    );
    assert.match(text, /^inventory_outbox_depth 0$/m);
    assert.match(text, /^inventory_outbox_oldest_due_seconds 0$/m);
    assert.match(text, /^inventory_webhook_deliveries\{state="failed"\} 0$/m);
    assert.match(text, /^inventory_webhook_workers \d+$/m);
    const status = await s.api("/api/status/");
    assert.equal(status.body["webhook-outbox"].depth, 0);
    assert.equal(status.body.database.engine, process.env.TEST_DB ?? "sqlite");
  });
});
