/**
 * Issue 25, the per-user column chooser of list pages ("Configure", Nautobot's `tables.<Table>.columns` of
 * the user's config): over HTTP on a real server and database. A user's choice (columns and order) is
 * stored server-side and shown on their list only; unknown names are refused with a 400 naming the field;
 * reset restores Nautobot's defaults; "Export current view" follows the chosen columns; CSRF-checked.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parse } from "csv-parse/sync";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

/** The header cells of a list page's table, as text. */
const headersOf = (html: string) =>
  [...(/<thead>([\s\S]*?)<\/thead>/.exec(html)?.[1] ?? "").matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)]
    .map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, "")
        .replace(/[▲▼]/g, "")
        .trim(),
    )
    .filter((t) => t && t !== "Select");

const htmlText = (s: string) =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');

describe("list columns chosen per user, stored server-side (issue 25)", () => {
  let s: TestServer;
  let alice: WebClient;
  let bob: WebClient;
  let defaults: string[];
  before(async () => {
    s = await startServer();
    const site = await create(s, "/api/dcim/sites/", { name: "LON1", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Arista" });
    const type = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "7050SX3" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "Spine" });
    for (const [name, serial, asset_tag] of [
      ["sw1", "SN-1", "AT-1"],
      ["sw2", "SN-2", null],
    ])
      await create(s, "/api/dcim/devices/", {
        name,
        serial,
        asset_tag,
        site: site.id,
        device_type: type.id,
        device_role: role.id,
        status: "active",
      });
    for (const u of ["alice", "bob"]) {
      const user = await create(s, "/api/users/users/", { username: u, password: `pw-${u}-1` });
      await create(s, "/api/users/permissions/", {
        name: `view-${u}`,
        users: [user.id],
        object_types: ["dcim.device"],
        actions: ["view"],
      });
    }
    alice = await webClient(s, "alice", "pw-alice-1");
    bob = await webClient(s, "bob", "pw-bob-1");
    defaults = headersOf((await bob.get("/dcim/devices/")).html);
  });
  after(async () => {
    await s?.close();
  });

  it("a user's columns and order show on their list only; export of the current view follows; reset restores", async () => {
    assert.ok(defaults.includes("Status") && defaults.length > 3, defaults.join("|"));
    const list = await alice.get("/dcim/devices/?status=active");
    const configure = /href="([^"]+)">Configure</.exec(list.html)?.[1];
    assert.ok(configure, "a Configure control on the list");
    const form = await alice.get(htmlText(configure));
    assert.equal(form.status, 200);
    assert.match(form.html, /name="column" value="serial"/);
    assert.match(form.html, /name="column" value="asset_tag"/);
    const returnUrl = htmlText(/name="return_url" value="([^"]+)"/.exec(form.html)?.[1] ?? "");
    assert.equal(returnUrl, "/dcim/devices/?status=active");

    // Order given by numbers, not by the form's order: asset tag after serial, then status.
    const saved = await alice.post("/dcim/devices/columns/", {
      column: ["status", "asset_tag", "serial"],
      order_status: "3",
      order_asset_tag: "2",
      order_serial: "1",
      return_url: returnUrl,
    });
    assert.equal(saved.status, 302, saved.html.slice(0, 300));
    assert.equal(saved.location, returnUrl);
    const mine = await alice.get(returnUrl);
    assert.deepEqual(headersOf(mine.html), ["Device", "Serial", "Asset Tag", "Status"]);
    assert.match(mine.html, />SN-1</);
    assert.match(mine.html, />AT-1</);
    // Another user (and another process reading the same database) still sees the defaults.
    assert.deepEqual(headersOf((await bob.get("/dcim/devices/")).html), defaults);
    // The chooser shows the saved choice checked, in order.
    const again = await alice.get("/dcim/devices/columns/");
    const checked = [...again.html.matchAll(/name="column" value="([^"]+)" checked/g)].map((m) => m[1]);
    assert.deepEqual(checked, ["serial", "asset_tag", "status"]);

    // "Export current view": the title and the chosen columns, every row of the filter.
    const href = /href="([^"]+)" download>Export current view/.exec(mine.html)?.[1];
    assert.ok(href, "an export of the current view");
    const csv = await alice.get(htmlText(href));
    assert.equal(csv.status, 200);
    const records: string[][] = parse(csv.html);
    assert.deepEqual(records, [
      ["display", "serial", "asset_tag", "status"],
      ["sw1", "SN-1", "AT-1", "active"],
      ["sw2", "SN-2", "", "active"],
    ]);
    // Bob's export of the current view is the defaults'; the full export is unchanged for Alice.
    const bobCsv: string[][] = parse((await bob.get("/dcim/devices/export/?export=table")).html);
    assert.equal(bobCsv[0]!.length, defaults.length);
    const full: string[][] = parse((await alice.get("/dcim/devices/export/")).html);
    assert.ok(full[0]!.includes("device_type") && full[0]!.includes("id"), full[0]!.join(","));

    // Reset: the defaults again.
    const reset = await alice.post("/dcim/devices/columns/", { _reset: "1", return_url: returnUrl });
    assert.equal(reset.status, 302);
    assert.deepEqual(headersOf((await alice.get("/dcim/devices/")).html), defaults);
  });

  it("stored names the model no longer has are ignored; nothing left means the defaults", async () => {
    const users = await s.api("/api/users/users/?username=bob");
    const bobId = String(users.body.results[0].id);
    const put = (value: unknown) =>
      s.store.db
        .insertInto("ui_preference")
        .values({ user_id: bobId, key: "tables.dcim.device.columns", value: JSON.stringify(value) })
        .onConflict((oc) => oc.columns(["user_id", "key"]).doUpdateSet({ value: JSON.stringify(value) }))
        .execute();
    await put(["removed_field", "asset_tag", 7, "serial", "asset_tag"]);
    assert.deepEqual(headersOf((await bob.get("/dcim/devices/")).html), ["Device", "Asset Tag", "Serial"]);
    await put(["removed_field"]);
    assert.deepEqual(headersOf((await bob.get("/dcim/devices/")).html), defaults);
    await put({ not: "a list" });
    assert.deepEqual(headersOf((await bob.get("/dcim/devices/")).html), defaults);
    await s.store.db.deleteFrom("ui_preference").where("user_id", "=", bobId).execute();
  });

  it("bad input is a 400 naming the field; foreign return URLs are not followed; CSRF and view are required", async () => {
    const unknown = await alice.post("/dcim/devices/columns/", { column: ["serial", "no_such_column"] });
    assert.equal(unknown.status, 400);
    assert.match(unknown.html, /column/);
    assert.match(unknown.html, /no_such_column/);
    const none = await alice.post("/dcim/devices/columns/", {});
    assert.equal(none.status, 400);
    assert.match(none.html, /column/);
    const badOrder = await alice.post("/dcim/devices/columns/", { column: ["serial"], order_serial: "x" });
    assert.equal(badOrder.status, 400);
    assert.match(badOrder.html, /order_serial/);
    const away = await alice.post("/dcim/devices/columns/", {
      column: ["serial"],
      return_url: "//evil.example/",
    });
    assert.equal(away.status, 302);
    assert.equal(away.location, "/dcim/devices/");
    assert.deepEqual(headersOf((await alice.get("/dcim/devices/")).html), ["Device", "Serial"]);
    const noCsrf = await alice.post("/dcim/devices/columns/", { column: ["status"] }, { csrf: null });
    assert.equal(noCsrf.status, 403);
    assert.deepEqual(headersOf((await alice.get("/dcim/devices/")).html), ["Device", "Serial"]);
    // Models the user may not view: no chooser, no stored choice.
    assert.equal((await alice.get("/dcim/sites/columns/")).status, 403);
    assert.equal((await alice.post("/dcim/sites/columns/", { column: ["status"] })).status, 403);
    assert.equal((await alice.get("/dcim/no-such-model/columns/")).status, 404);
  });
});
