/**
 * Issue 5, documentation: Swagger UI served from the npm package (no CDN), the OpenAPI document as JSON and
 * YAML, `/api/docs/?format=openapi`, and the browsable API for browsers.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import YAML from "yaml";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("API documentation", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("serves Swagger UI and its assets locally", async () => {
    const page = await fetch(`${s.url}/api/docs/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /swagger-ui/i);
    assert.doesNotMatch(html, /https?:\/\/(?!127\.0\.0\.1)[a-z]/i, "no CDN");
    for (const asset of ["/api/docs/static/swagger-ui.css", "/api/docs/static/swagger-ui-bundle.js"]) {
      assert.equal((await fetch(`${s.url}${asset}`)).status, 200, asset);
    }
    const spec = (await (await fetch(`${s.url}/api/docs/json`)).json()) as { openapi: string };
    assert.equal(spec.openapi.slice(0, 2), "3.");
  });

  it("offers the OpenAPI document as JSON and YAML, and redirects ?format=openapi", async () => {
    const json = await s.api("/api/swagger.json");
    assert.equal(json.status, 200);
    assert.ok(json.body.paths["/dcim/sites/"] ?? json.body.paths["/api/dcim/sites/"]);
    const yaml = await fetch(`${s.url}/api/swagger.yaml`);
    assert.equal(yaml.status, 200);
    assert.deepEqual(YAML.parse(await yaml.text()), json.body);
    const r = await fetch(`${s.url}/api/docs/?format=openapi`, { redirect: "manual" });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get("location"), "/api/swagger.json");
  });

  it("renders API responses as HTML with links for browsers, JSON otherwise", async () => {
    await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Browse <1>", status: "active" } });
    const html = await s.api("/api/dcim/sites/", {
      headers: { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    assert.equal(html.status, 200);
    assert.match(html.headers.get("content-type") ?? "", /text\/html/);
    assert.match(html.body, /<a href="http:\/\/127\.0\.0\.1:\d+\/api\/dcim\/sites\/[0-9a-f-]+\/">/);
    assert.match(html.body, /Browse &lt;1&gt;/, "escaped");
    const json = await s.api("/api/dcim/sites/", { headers: { Accept: "*/*" } });
    assert.equal(json.body.count, 1);
    const forced = await s.api("/api/dcim/sites/?format=json", { headers: { Accept: "text/html" } });
    assert.equal(forced.body.count, 1);
  });
});
