/**
 * Issue 25 (helper U4) in the web interface, over HTTP on the engine of TEST_DB: the profile (own API
 * tokens: key shown once, usable, deletable, nobody else's; password change through the shared login
 * limiter, ending the user's other sessions), GraphiQL (bundle served locally, queries answered as the
 * session's user with the CSRF header), notes edited and deleted by their author or by who may change
 * notes, the webhook secret as a password box that is never shown back and kept when left blank, a
 * dynamic group's members paged as the API's members endpoint, and the change log's user of imported
 * changes (the importing user, never "Undefined").
 */
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { importNetbox } from "../../src/importer/netbox/run.ts";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

/** A logged-in session as raw cookie + CSRF token, for JSON posts (GraphiQL's fetcher). */
async function session(s: TestServer, username: string, password: string) {
  const login = await fetch(`${s.url}/login/`);
  let cookie = /sessionid=[^;]*/.exec(login.headers.getSetCookie().join(";"))?.[0] ?? "";
  const token = /name="_csrf" value="([^"]+)"/.exec(await login.text())?.[1] ?? "";
  const res = await fetch(`${s.url}/login/`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ username, password, next: "/", _csrf: token }),
    redirect: "manual",
  });
  assert.equal(res.status, 302);
  cookie =
    [
      ...res.headers
        .getSetCookie()
        .join(";")
        .matchAll(/sessionid=[^;]+/g),
    ].at(-1)?.[0] ?? cookie;
  const page = await (await fetch(`${s.url}/graphql/`, { headers: { cookie } })).text();
  const csrf = /data-csrf="([^"]+)"/.exec(page)?.[1] ?? "";
  return { cookie, csrf, page };
}

const gql = (s: TestServer, sess: { cookie: string; csrf?: string }, query: string) =>
  fetch(`${s.url}/graphql/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      cookie: sess.cookie,
      ...(sess.csrf ? { "x-csrf-token": sess.csrf } : {}),
    },
    body: JSON.stringify({ query }),
  });

describe("profile, GraphiQL, notes, secrets, dynamic-group members, change-log user (issue 25)", () => {
  let s: TestServer;
  let admin: WebClient;
  const ids: Record<string, string> = {};
  before(async () => {
    s = await startServer({ loginLimits: { maxFailures: 6, windowMs: 300_000 } });
    admin = await webClient(s);
    for (const u of ["alice", "bob"]) {
      const r = await s.api("/api/users/users/", {
        method: "POST",
        body: { username: u, password: `${u}-pw-1`, is_active: true },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids[u] = r.body.id;
    }
    // Alice may view sites and view/add notes; nothing else (no permission on tokens, users or notes' change).
    const perm = await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "alice-notes",
        object_types: ["dcim.site", "extras.note"],
        actions: ["view", "add"],
        users: [ids.alice],
      },
    });
    assert.equal(perm.status, 201, JSON.stringify(perm.body));
    ids.site = (await create(s, "/api/dcim/sites/", { name: "NoteSite", status: "active" })).id;
  });
  after(async () => {
    await s.close();
  });

  it("profile: a token's key is shown once, works on the API, is listed by its suffix and deleted; only one's own", async () => {
    const alice = await webClient(s, "alice", "alice-pw-1");
    const page = await alice.get("/user/profile/");
    assert.equal(page.status, 200);
    assert.match(page.html, /href="\/user\/profile\/"/, "the header links the profile");
    assert.match(page.html, /No tokens yet/);
    const made = await alice.post("/user/tokens/", { description: "laptop", write_enabled: "on" });
    assert.equal(made.status, 201, made.html.slice(0, 1500));
    const key = /id="new-key">([0-9a-f]{40})</.exec(made.html)?.[1];
    assert.ok(key, "the new key is shown");
    const status = await fetch(`${s.url}/api/status/`, { headers: { authorization: `Token ${key}` } });
    assert.equal(status.status, 200, "the key authenticates on the API");
    const again = await alice.get("/user/profile/");
    assert.equal(again.html.includes(key), false, "the key is never shown again");
    assert.match(again.html, new RegExp(`…${key.slice(-6)}`));
    assert.match(again.html, /laptop/);
    // Admin's own token is not on Alice's page, and she cannot delete it.
    const adminTokens = await s.api("/api/users/tokens/");
    const adminToken = adminTokens.body.results[0].id as string;
    assert.equal(again.html.includes(adminToken), false);
    const foreign = await alice.post(`/user/tokens/${adminToken}/delete/`, {});
    assert.equal(foreign.status, 404);
    assert.equal((await s.api("/api/status/")).status, 200, "admin's token still works");
    const mine = /\/user\/tokens\/([0-9a-f-]{36})\/delete\//.exec(again.html)?.[1];
    assert.ok(mine);
    const del = await alice.post(`/user/tokens/${mine}/delete/`, {});
    assert.equal(del.status, 302);
    const gone = await fetch(`${s.url}/api/status/`, { headers: { authorization: `Token ${key}` } });
    assert.equal(gone.status, 403, "a deleted token no longer authenticates");
    assert.match((await alice.get("/user/profile/")).html, /Deleted token/);
    // A bad expiry is a 400 naming the field, nothing created.
    const bad = await alice.post("/user/tokens/", { description: "x", expires: "not-a-date" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /expires:/);
    assert.match(bad.html, /No tokens yet/);
  });

  it("password change: current password checked, mismatch refused, other sessions end, the new one logs in", async () => {
    const bob = await webClient(s, "bob", "bob-pw-1");
    const other = await webClient(s, "bob", "bob-pw-1");
    const wrong = await bob.post("/user/password/", {
      old_password: "nope",
      new_password1: "bob-pw-2",
      new_password2: "bob-pw-2",
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.html, /Your old password was entered incorrectly/);
    const mismatch = await bob.post("/user/password/", {
      old_password: "bob-pw-1",
      new_password1: "bob-pw-2",
      new_password2: "bob-pw-3",
    });
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.html, /The two password fields didn’t match/);
    const ok = await bob.post("/user/password/", {
      old_password: "bob-pw-1",
      new_password1: "bob-pw-2",
      new_password2: "bob-pw-2",
    });
    assert.equal(ok.status, 302, ok.html.slice(0, 1500));
    assert.equal((await bob.get("/user/profile/")).status, 200, "this session goes on");
    const ended = await other.get("/user/profile/");
    assert.equal(ended.status, 302, "the other session ended");
    assert.match(String(ended.location), /^\/login\//);
    await webClient(s, "bob", "bob-pw-2");
    const old = await webClient(s, "bob", "bob-pw-1", false);
    const refused = await old.post("/login/", { username: "bob", password: "bob-pw-1", next: "/" });
    assert.equal(refused.status, 400, "the old password no longer logs in");
  });

  it("GraphiQL: served from this origin, queries run as the session's user with the CSRF header", async () => {
    const sess = await session(s, "admin", "admin");
    assert.match(sess.page, /src="\/ui\/graphiql\/graphiql\.js"/);
    assert.equal(/(src|href)="https?:/.test(sess.page), false, "nothing from another origin");
    for (const f of ["react.js", "react-dom.js", "graphiql.js", "graphiql.css"]) {
      const r = await fetch(`${s.url}/ui/graphiql/${f}`, { headers: { cookie: sess.cookie } });
      assert.equal(r.status, 200, f);
      assert.ok((await r.arrayBuffer()).byteLength > 1000, f);
    }
    const page = await fetch(`${s.url}/graphql/`, { headers: { cookie: sess.cookie } });
    assert.match(String(page.headers.get("content-security-policy")), /script-src 'self'(;|$)/);
    const r = await gql(s, sess, "{ sites { name } }");
    assert.equal(r.status, 200);
    assert.deepEqual(((await r.json()) as any).data.sites, [{ name: "NoteSite" }]);
    assert.equal((await gql(s, { cookie: sess.cookie }, "{ sites { name } }")).status, 403, "no CSRF token");
    const anon = await gql(s, { cookie: "", csrf: sess.csrf }, "{ sites { name } }");
    assert.notEqual(anon.status, 200, "no session");
    const bad = await gql(s, sess, "{ sites { nosuchfield } }");
    assert.equal(bad.status, 400);
    // Bob holds no permission: the same query sees no site.
    const bob = await session(s, "bob", "bob-pw-2");
    const none = await gql(s, bob, "{ sites { name } }");
    assert.equal(none.status, 200);
    assert.deepEqual(((await none.json()) as any).data.sites, []);
  });

  it("notes: the author edits and deletes their note; others need the permission", async () => {
    const alice = await webClient(s, "alice", "alice-pw-1");
    const added = await alice.post(`/dcim/sites/${ids.site}/notes/`, { note: "alice was here" });
    assert.equal(added.status, 302);
    const byAdmin = await s.api(`/api/dcim/sites/${ids.site}/notes/`, {
      method: "POST",
      body: { note: "admin's note" },
    });
    assert.equal(byAdmin.status, 201);
    const notes = (await s.api(`/api/extras/notes/?assigned_object_id=${ids.site}`)).body.results as any[];
    const mine = notes.find((n) => n.note === "alice was here").id as string;
    const theirs = byAdmin.body.id as string;
    const panel = (await alice.get(`/dcim/sites/${ids.site}/`)).html;
    assert.match(panel, new RegExp(`href="/extras/notes/${mine}/edit/"`));
    assert.match(panel, new RegExp(`href="/extras/notes/${mine}/delete/"`));
    assert.equal(
      panel.includes(`/extras/notes/${theirs}/edit/`),
      false,
      "no edit link on someone else's note",
    );
    assert.equal(panel.includes(`/extras/notes/${theirs}/delete/`), false);
    const form = await alice.get(`/extras/notes/${mine}/edit/`);
    assert.equal(form.status, 200);
    assert.match(form.html, /alice was here<\/textarea>/);
    const blank = await alice.post(`/extras/notes/${mine}/edit/`, { note: "  " });
    assert.equal(blank.status, 400);
    assert.match(blank.html, /may not be blank/);
    const edited = await alice.post(`/extras/notes/${mine}/edit/`, { note: "alice **edited** this" });
    assert.equal(edited.status, 302);
    assert.equal(edited.location, `/dcim/sites/${ids.site}/#notes`);
    assert.equal((await s.api(`/api/extras/notes/${mine}/`)).body.note, "alice **edited** this");
    const change = await s.api(`/api/extras/object-changes/?changed_object_id=${mine}&action=update`);
    assert.equal(change.body.results[0]?.user_name, "alice");
    assert.equal((await alice.get(`/extras/notes/${theirs}/edit/`)).status, 403);
    assert.equal((await alice.post(`/extras/notes/${theirs}/edit/`, { note: "hijack" })).status, 403);
    assert.equal((await alice.post(`/extras/notes/${theirs}/delete/`, {})).status, 403);
    assert.equal((await s.api(`/api/extras/notes/${theirs}/`)).body.note, "admin's note");
    // Bob may not even view notes: 404.
    const bob = await webClient(s, "bob", "bob-pw-2");
    assert.equal((await bob.post(`/extras/notes/${mine}/delete/`, {})).status, 404);
    // A superuser may edit anyone's note; the author deletes theirs after a confirmation page.
    assert.equal((await admin.post(`/extras/notes/${mine}/edit/`, { note: "tidied" })).status, 302);
    const confirm = await alice.get(`/extras/notes/${mine}/delete/`);
    assert.equal(confirm.status, 200);
    assert.match(confirm.html, /tidied/);
    const del = await alice.post(`/extras/notes/${mine}/delete/`, {});
    assert.equal(del.status, 302);
    assert.equal((await s.api(`/api/extras/notes/${mine}/`)).status, 404);
  });

  it("webhook secret: a password box, never shown back, kept when left blank", async () => {
    const secretOf = async (id: string) =>
      String(
        (
          await s.store.db
            .selectFrom("extras_webhook")
            .select("secret")
            .where("id", "=", id)
            .executeTakeFirst()
        )?.secret,
      );
    const add = await admin.get("/extras/webhooks/add/");
    assert.match(add.html, /id="f-secret" name="secret" type="password" value=""/);
    const made = await admin.post("/extras/webhooks/add/", {
      name: "hook",
      content_types: "dcim.site",
      type_create: "on",
      payload_url: "http://192.0.2.10/in",
      http_method: "POST",
      http_content_type: "application/json",
      secret: "s3cret-value",
    });
    assert.equal(made.status, 302, made.html.slice(0, 1500));
    const id = String(/\/extras\/webhooks\/([0-9a-f-]{36})\//.exec(String(made.location))?.[1]);
    assert.equal(await secretOf(id), "s3cret-value");
    const edit = await admin.get(`/extras/webhooks/${id}/edit/`);
    assert.equal(edit.html.includes("s3cret-value"), false, "the secret is not in the edit form");
    assert.match(edit.html, /id="f-secret" name="secret" type="password" value=""/);
    // A failed post does not echo it either.
    const failed = await admin.post(`/extras/webhooks/${id}/edit/`, {
      name: "hook",
      content_types: "dcim.site",
      type_create: "on",
      payload_url: "not a url",
      secret: "typed-again",
    });
    assert.equal(failed.status, 400);
    assert.equal(failed.html.includes("typed-again"), false);
    const kept = await admin.post(`/extras/webhooks/${id}/edit/`, {
      name: "hook renamed",
      content_types: "dcim.site",
      type_create: "on",
      payload_url: "http://192.0.2.10/in",
      http_method: "POST",
      http_content_type: "application/json",
      secret: "",
    });
    assert.equal(kept.status, 302, kept.html.slice(0, 1500));
    assert.equal(await secretOf(id), "s3cret-value", "left blank: unchanged");
    const changed = await admin.post(`/extras/webhooks/${id}/edit/`, {
      name: "hook renamed",
      content_types: "dcim.site",
      type_create: "on",
      payload_url: "http://192.0.2.10/in",
      http_method: "POST",
      http_content_type: "application/json",
      secret: "n3w",
    });
    assert.equal(changed.status, 302);
    assert.equal(await secretOf(id), "n3w");
    assert.equal((await admin.get(`/extras/webhooks/${id}/`)).html.includes("n3w"), false);
  });

  it("dynamic group: its page lists the members a page at a time, as the API's members endpoint", async () => {
    for (const n of ["dg-a", "dg-b", "dg-c"])
      await create(s, "/api/dcim/racks/", { name: n, site: ids.site, status: "active" });
    const group = await create(s, "/api/extras/dynamic-groups/", {
      name: "DG racks",
      slug: "dg-racks",
      content_type: "dcim.rack",
      filter: { name: ["dg-a", "dg-b", "dg-c"] },
    });
    const api = await s.api(`/api/extras/dynamic-groups/${group.id}/members/?limit=2`);
    assert.equal(api.body.count, 3);
    const first = await admin.get(`/extras/dynamic-groups/${group.id}/?limit=2`);
    assert.equal(first.status, 200);
    assert.match(first.html, /Members: Racks \(3\)/);
    for (const m of api.body.results) assert.match(first.html, new RegExp(`>${m.name}</a>`));
    assert.match(first.html, /Showing 1–2 of 3/);
    const next = /href="(\?limit=2&amp;offset=2#members)" rel="next"/.exec(first.html)?.[1];
    assert.ok(next, "a link to the next page");
    const second = await admin.get(`/extras/dynamic-groups/${group.id}/?limit=2&offset=2`);
    const rest = await s.api(`/api/extras/dynamic-groups/${group.id}/members/?limit=2&offset=2`);
    assert.equal(rest.body.results.length, 1);
    assert.match(second.html, new RegExp(`>${rest.body.results[0].name}</a>`));
    assert.match(second.html, /Showing 3–3 of 3/);
    assert.match(second.html, /rel="prev"/);
    // Bob may not view racks: no members table.
    const bob = await webClient(s, "bob", "bob-pw-2");
    assert.equal((await bob.get(`/extras/dynamic-groups/${group.id}/`)).html.includes("Members:"), false);
  });

  it("change log of an import names the importing user (default the first superuser), never Undefined", async () => {
    const file = join(tmpdir(), `u4-import-${process.pid}-${Date.now()}.json`);
    const sink = { write: () => true } as unknown as NodeJS.WritableStream;
    const dump = (name: string) =>
      writeFileSync(
        file,
        JSON.stringify([
          { model: "dcim.manufacturer", pk: 1, fields: { name, slug: name, description: "" } },
        ]),
      );
    try {
      const run = (user?: string) =>
        importNetbox({
          store: s.store,
          reg: registry(),
          file,
          strict: true,
          out: sink,
          ...(user ? { user } : {}),
        });
      const userOf = async (name: string) => {
        const m = await s.api(`/api/dcim/manufacturers/?name=${name}`);
        const ch = await s.api(`/api/extras/object-changes/?changed_object_id=${m.body.results[0].id}`);
        return ch.body.results.map((c: any) => [c.user_name, c.user?.username ?? null]);
      };
      dump("imp-default");
      assert.equal(await run(), true);
      assert.deepEqual(await userOf("imp-default"), [["admin", "admin"]]);
      dump("imp-alice");
      assert.equal(await run("alice"), true);
      assert.deepEqual(await userOf("imp-alice"), [["alice", "alice"]]);
      dump("imp-nobody");
      await assert.rejects(run("nobody"), /no user named "nobody"/);
      assert.equal((await s.api("/api/dcim/manufacturers/?name=imp-nobody")).body.count, 0);
      const page = await admin.get("/extras/object-changes/");
      assert.equal(page.html.includes("Undefined"), false);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it("the password check shares the login limiter: repeated wrong current passwords get 429", async () => {
    const alice = await webClient(s, "alice", "alice-pw-1");
    let last = 0;
    for (let i = 0; i < 8 && last !== 429; i++) {
      const r = await alice.post("/user/password/", {
        old_password: `wrong-${i}`,
        new_password1: "x-1",
        new_password2: "x-1",
      });
      last = r.status;
      if (last === 429) assert.match(r.html, /Too many failed password checks/);
      else assert.equal(last, 400);
    }
    assert.equal(last, 429);
    // Web logins from this address are refused by the same limiter now.
    const login = await webClient(s, "alice", "alice-pw-1", false);
    assert.equal(
      (await login.post("/login/", { username: "alice", password: "alice-pw-1", next: "/" })).status,
      429,
    );
  });
});
