/**
 * The web interface over HTTP (issue 10): login required, sessions shared through the database, CSRF on
 * every form, everything a user typed escaped, the object browser generated from the registry, and the
 * same object permissions as the API.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

describe("web interface pages", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("every page needs a login; wrong passwords and forms without a CSRF token are refused", async () => {
    const anon = await webClient(s, "admin", "admin", false);
    const home = await anon.get("/");
    assert.equal(home.status, 302);
    assert.equal(home.location, "/login/?next=%2F");
    assert.equal((await anon.get("/dcim/sites/")).status, 302);
    const bad = await anon.post("/login/", { username: "admin", password: "nope", next: "/" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Please enter a correct username and password/);
    const noToken = await anon.post("/login/", { username: "admin", password: "admin" }, { csrf: null });
    assert.equal(noToken.status, 403);
    const ok = await anon.post("/login/", { username: "admin", password: "admin", next: "//evil.example/" });
    assert.equal(ok.status, 302);
    assert.equal(ok.location, "/", "no open redirect");
    assert.equal((await anon.get("/")).status, 200);
    // Logout needs the token too, and ends the session.
    assert.equal((await anon.post("/logout/", {}, { csrf: "wrong" })).status, 403);
    assert.equal((await anon.get("/")).status, 200);
    const out = await anon.post("/logout/", {});
    assert.equal(out.status, 302);
    assert.equal((await anon.get("/")).status, 302);
  });

  it("session cookies are HttpOnly and SameSite, and live in the database", async () => {
    const res = await fetch(`${s.url}/login/`);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("sessionid="));
    assert.ok(cookie);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    const web = await webClient(s);
    await web.get("/");
    const n = await s.store.db.selectFrom("ui_session").select("sid").execute();
    assert.ok(n.length >= 1);
  });

  it("home, list, detail and search pages from the registry; typed text is escaped", async () => {
    const evil = `<script>alert("x")</script>`;
    const site = await create(s, "/api/dcim/sites/", {
      name: `Site ${evil}`,
      status: "active",
      description: evil,
    });
    const web = await webClient(s);
    const home = await web.get("/");
    assert.equal(home.status, 200);
    assert.match(home.html, /<title>Home · inventory<\/title>/);
    assert.match(home.html, /href="\/dcim\/sites\/">Sites<\/a><\/td><td class="num">1</);
    assert.equal(home.html.includes(evil), false);
    const list = await web.get("/dcim/sites/");
    assert.equal(list.status, 200);
    assert.match(list.html, /Site &lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
    assert.equal(list.html.includes("<script>"), false);
    const detail = await web.get(`/dcim/sites/${site.id}/`);
    assert.equal(detail.status, 200);
    assert.match(detail.html, /<h2>Change log<\/h2>/);
    assert.match(detail.html, /badge create/);
    assert.equal(detail.html.includes("<script>"), false);
    const filtered = await web.get("/dcim/sites/?status=planned");
    assert.match(filtered.html, /\(0\)/);
    const badFilter = await web.get("/dcim/sites/?bogus=1");
    assert.equal(badFilter.status, 200);
    assert.match(badFilter.html, /bogus: Unknown filter field/);
    const ip = await create(s, "/api/ipam/ip-addresses/", { address: "192.0.2.77/24", status: "active" });
    const found = await web.get("/search/?q=192.0.2.77");
    assert.equal(found.status, 302);
    assert.equal(found.location, `/ipam/ip-addresses/${ip.id}/`);
    assert.equal((await web.get("/dcim/nothing/")).status, 404);
  });

  it("create, edit and delete through the generated forms; errors beside their fields", async () => {
    const web = await webClient(s);
    const form = await web.get("/dcim/sites/add/");
    assert.equal(form.status, 200);
    assert.match(form.html, /<select id="f-status" name="status">/);
    const bad = await web.post("/dcim/sites/add/", { name: "", status: "" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /field has-error[\s\S]*f-name[\s\S]*This field (is required|may not be blank)/);
    const ok = await web.post("/dcim/sites/add/", {
      name: `Form <b>site</b>`,
      status: "active",
      description: "made in a form",
    });
    assert.equal(ok.status, 302);
    const id = /\/dcim\/sites\/([0-9a-f-]{36})\//.exec(ok.location ?? "")?.[1];
    assert.ok(id, String(ok.location));
    const api = await s.api(`/api/dcim/sites/${id}/`);
    assert.equal(api.body.name, "Form <b>site</b>");
    assert.equal(api.body.description, "made in a form");
    const change = await s.api(`/api/extras/object-changes/?changed_object_id=${id}`);
    assert.equal(change.body.results[0].user_name, "admin");
    const edit = await web.get(`/dcim/sites/${id}/edit/`);
    assert.match(edit.html, /value="Form &lt;b&gt;site&lt;\/b&gt;"/);
    const saved = await web.post(`/dcim/sites/${id}/edit/`, {
      name: "Renamed",
      status: "planned",
      description: "",
    });
    assert.equal(saved.status, 302);
    assert.equal((await s.api(`/api/dcim/sites/${id}/`)).body.status.value, "planned");
    const confirm = await web.get(`/dcim/sites/${id}/delete/`);
    assert.match(confirm.html, /Delete <strong>Renamed<\/strong>/);
    assert.equal((await web.post(`/dcim/sites/${id}/delete/`, {})).status, 302);
    assert.equal((await s.api(`/api/dcim/sites/${id}/`)).status, 404);
    // A protected delete is a page, not a 500.
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "Busy" });
    await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "X" });
    assert.equal((await web.post(`/dcim/manufacturers/${mfr.id}/delete/`, {})).status, 409);
  });

  it("the browsable API accepts the session for reading, never for writing; object changes show differences", async () => {
    const web = await webClient(s);
    // Reuse the logged-in client's cookie through a page fetch: read the API with it.
    const api = await web.get("/api/dcim/sites/?format=json");
    assert.equal(api.status, 200, api.html.slice(0, 200));
    assert.ok(JSON.parse(api.html).count >= 1);
    const html = await web.get("/api/dcim/sites/", { accept: "text/html" });
    assert.match(html.html, /href="\/">Web interface</);
    const write = await web.post("/api/dcim/sites/", {}, { csrf: null });
    assert.equal(write.status, 403);
    const site = await create(s, "/api/dcim/sites/", { name: "Diffed", status: "active" });
    await s.api(`/api/dcim/sites/${site.id}/`, { method: "PATCH", body: { description: "after" } });
    const oc = (await s.api(`/api/extras/object-changes/?changed_object_id=${site.id}&action=update`)).body
      .results[0];
    const page = await web.get(`/extras/object-changes/${oc.id}/`);
    assert.equal(page.status, 200);
    assert.match(page.html, /<h2>Difference<\/h2>/);
    assert.match(page.html, /<th>description<\/th><td class="removed"><\/td><td class="added">after<\/td>/);
  });

  it("list filter forms: generated controls, blank means any; the change log by user, type, action and time", async () => {
    await create(s, "/api/dcim/sites/", { name: "F-planned", status: "planned" });
    const web = await webClient(s);
    const all = await web.get("/dcim/sites/?status=&q=");
    assert.equal(all.status, 200);
    assert.match(all.html, /<select name="status"><option value="">Any<\/option>/);
    const planned = await web.get("/dcim/sites/?status=planned");
    assert.match(planned.html, /F-planned/);
    assert.match(planned.html, /<option value="planned" selected>/);
    assert.doesNotMatch(planned.html, />Mine</);
    const changes = await web.get("/extras/object-changes/?action=create&changed_object_type=dcim.site");
    assert.equal(changes.status, 200);
    for (const p of ["user_id", "changed_object_type", "action", "time_after", "time_before"])
      assert.match(changes.html, new RegExp(`name="${p}"`), p);
    assert.match(changes.html, /F-planned/);
    const today = new Date().toISOString().slice(0, 10);
    const later = await web.get(`/extras/object-changes/?time_after=2999-01-01`);
    assert.match(later.html, /\(0\)/);
    const fromToday = await web.get(`/extras/object-changes/?time_after=${today}`);
    assert.doesNotMatch(fromToday.html, /\(0\)<\/span><\/h1>/);
  });

  it("sortable columns: by a column, reversed, through a relation; unknown columns keep the model's order", async () => {
    const t1 = await create(s, "/api/tenancy/tenants/", { name: "sort-b" });
    const t2 = await create(s, "/api/tenancy/tenants/", { name: "sort-a" });
    await create(s, "/api/dcim/sites/", { name: "zz-sort", status: "active", tenant: t2.id });
    await create(s, "/api/dcim/sites/", { name: "aa-sort", status: "active", tenant: t1.id });
    const web = await webClient(s);
    const names = (html: string) => [...html.matchAll(/>([a-z]{2}-sort)</g)].map((m) => m[1]);
    assert.deepEqual(names((await web.get("/dcim/sites/?q=-sort")).html), ["aa-sort", "zz-sort"]);
    const desc = await web.get("/dcim/sites/?q=-sort&sort=-name");
    assert.deepEqual(names(desc.html), ["zz-sort", "aa-sort"]);
    assert.deepEqual(names((await web.get("/dcim/sites/?q=-sort&sort=tenant")).html), ["zz-sort", "aa-sort"]);
    assert.equal((await web.get("/dcim/sites/?sort=password")).status, 200);
    assert.match(desc.html, /href="\/dcim\/sites\/\?q=-sort&amp;sort=name"/);
  });

  it("bulk delete from a list page, confirmed, all or none", async () => {
    const a = await create(s, "/api/tenancy/tenants/", { name: "bulk-a" });
    const b = await create(s, "/api/tenancy/tenants/", { name: "bulk-b" });
    const web = await webClient(s);
    const list = await web.get("/tenancy/tenants/");
    assert.match(list.html, new RegExp(`name="pk" value="${a.id}"`));
    const confirm = await web.post("/tenancy/tenants/delete/", { pk: a.id });
    assert.equal(confirm.status, 200);
    assert.match(confirm.html, /Delete 1 Tenants/);
    assert.match(confirm.html, /bulk-a/);
    assert.equal(
      (await s.api(`/api/tenancy/tenants/${a.id}/`)).status,
      200,
      "nothing deleted before confirming",
    );
    const done = await web.post("/tenancy/tenants/delete/", { confirm: "yes", pk: a.id });
    assert.equal(done.status, 302);
    assert.equal((await s.api(`/api/tenancy/tenants/${a.id}/`)).status, 404);
    assert.equal((await s.api(`/api/tenancy/tenants/${b.id}/`)).status, 200);
  });

  it("forms carry tags and custom fields, typed; custom-field text is escaped", async () => {
    const cf = await create(s, "/api/extras/custom-fields/", {
      name: "tier",
      type: "select",
      content_types: ["dcim.site"],
    });
    await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "gold" });
    await create(s, "/api/extras/custom-fields/", {
      name: "racks_max",
      type: "integer",
      content_types: ["dcim.site"],
    });
    await create(s, "/api/extras/custom-fields/", {
      name: "note",
      type: "text",
      content_types: ["dcim.site"],
    });
    const tag = await create(s, "/api/extras/tags/", { name: "Prod", slug: "prod" });
    const web = await webClient(s);
    const form = await web.get("/dcim/sites/add/");
    assert.match(form.html, /id="f-cf_tier"/);
    assert.match(form.html, /id="f-tags"/);
    const bad = await web.post("/dcim/sites/add/", {
      name: "CF site",
      status: "active",
      cf_racks_max: "many",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Enter a whole number/);
    const ok = await web.post("/dcim/sites/add/", {
      name: "CF site",
      status: "active",
      cf_tier: "gold",
      cf_racks_max: "12",
      cf_note: "<img src=x onerror=alert(1)>",
      tags: tag.id,
    });
    assert.equal(ok.status, 302, ok.html.slice(0, 1500));
    const id = /\/dcim\/sites\/([0-9a-f-]{36})\//.exec(ok.location ?? "")?.[1];
    const api = (await s.api(`/api/dcim/sites/${id}/`)).body;
    assert.deepEqual(api.custom_fields, {
      tier: "gold",
      racks_max: 12,
      note: "<img src=x onerror=alert(1)>",
    });
    assert.deepEqual(
      api.tags.map((t: any) => t.slug),
      ["prod"],
    );
    const page = await web.get(`/dcim/sites/${id}/`);
    assert.equal(page.html.includes("<img src=x"), false);
    assert.match(page.html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  });

  it("a user with a constrained permission sees only their objects", async () => {
    await create(s, "/api/dcim/sites/", { name: "Mine", status: "active" });
    await create(s, "/api/dcim/sites/", { name: "Theirs", status: "active" });
    const user = await create(s, "/api/users/users/", { username: "alice", password: "alice-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "alice sites",
      object_types: ["dcim.site"],
      actions: ["view"],
      users: [user.id],
      constraints: { name: "Mine" },
    });
    const web = await webClient(s, "alice", "alice-pass-1");
    const list = await web.get("/dcim/sites/");
    assert.equal(list.status, 200);
    assert.match(list.html, />Mine</);
    assert.equal(list.html.includes(">Theirs<"), false);
    assert.equal((await web.get("/dcim/devices/")).status, 403);
    assert.equal((await web.get("/dcim/sites/add/")).status, 403);
    const home = await web.get("/");
    assert.equal(home.html.includes("/dcim/devices/"), false);
  });
});
