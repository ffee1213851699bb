/**
 * Issue 25 over HTTP (both engines): which objects a typeahead lookup (`/ui-api/lookup/`) answers when the
 * typed name matches more than one page: names starting with what was typed come first, then the others,
 * each group in natural order; `more` says that other objects match. The search reads matches in the
 * engine's scan order (no sort of every match), so these are the rules a user can rely on.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

type Answer = { results: Array<{ id: string; display: string }>; more: boolean };

describe("web interface: typeahead lookup results", () => {
  let s: TestServer;
  let web: WebClient;
  const lookup = async (query: string): Promise<Answer> => {
    const r = await web.get(`/ui-api/lookup/?${query}`);
    assert.equal(r.status, 200, r.html);
    return JSON.parse(r.html) as Answer;
  };
  before(async () => {
    s = await startServer();
    web = await webClient(s);
    const site = await create(s, "/api/dcim/sites/", { name: "AMS1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Juniper" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "QFX5120" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Access" });
    const common = { device_type: dt.id, device_role: role.id, site: site.id, status: "active" };
    // 70 names containing "sw" (60 of them not at the start), created before the 3 that start with it,
    // and one other name.
    const names = [
      ...Array.from({ length: 60 }, (_, i) => `core-sw-${i + 1}`),
      ...Array.from({ length: 7 }, (_, i) => `ams1-SW${i + 1}`),
      "Sw-edge-10",
      "sw-edge-2",
      "sw-edge-1",
      "router-1",
    ];
    const r = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: names.map((name) => ({ name, ...common })),
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await s?.close();
  });

  it("names starting with the typed text come first, even among more matches than one page", async () => {
    const a = await lookup("model=dcim.device&q=sw");
    assert.equal(a.results.length, 50);
    assert.equal(a.more, true);
    const shown = a.results.map((o) => o.display);
    // Case-insensitive prefix, natural order within the group (2 before 10).
    assert.deepEqual(shown.slice(0, 3), ["sw-edge-1", "sw-edge-2", "Sw-edge-10"]);
    const rest = shown.slice(3);
    assert.ok(
      rest.every((n) => /sw/i.test(n) && !/^sw/i.test(n)),
      rest.join(", "),
    );
    assert.deepEqual(
      rest,
      [...rest].sort((x, y) => x.localeCompare(y, "en", { numeric: true, sensitivity: "base" })),
    );
    assert.equal(new Set(a.results.map((o) => o.id)).size, 50);
  });

  it("every match when fewer than a page, the prefix group first; 'more' only when others match", async () => {
    const a = await lookup("model=dcim.device&q=edge");
    assert.deepEqual(
      a.results.map((o) => o.display),
      ["sw-edge-1", "sw-edge-2", "Sw-edge-10"],
    );
    assert.equal(a.more, false);
    // "sw-": 63 matches, 3 of them at the start of the name.
    const b = await lookup("model=dcim.device&q=sw-");
    const shown = b.results.map((o) => o.display);
    assert.equal(shown.length, 50);
    assert.equal(b.more, true);
    assert.deepEqual(shown.slice(0, 3), ["sw-edge-1", "sw-edge-2", "Sw-edge-10"]);
    assert.ok(
      shown.slice(3).every((n) => n.startsWith("core-sw-")),
      shown.join(", "),
    );
    assert.deepEqual((await lookup("model=dcim.device&q=nothing-like-this")).results, []);
    const all = await lookup("model=dcim.device&q=router");
    assert.deepEqual(
      all.results.map((o) => o.display),
      ["router-1"],
    );
  });

  it("without typed text: up to a page of objects in natural order", async () => {
    const a = await lookup("model=dcim.device");
    assert.equal(a.results.length, 50);
    assert.equal(a.more, true);
    const shown = a.results.map((o) => o.display);
    assert.deepEqual(
      shown,
      [...shown].sort((x, y) => x.localeCompare(y, "en", { numeric: true, sensitivity: "base" })),
    );
  });
});
