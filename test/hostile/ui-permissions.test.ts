/**
 * Issue 23, permission leaks in the web interface and the delivery log, on a real server with real sessions
 * (CSRF tokens) and API tokens:
 * - every UI action on an existing object applies the object-level restriction of the permission it needs
 *   (generated: every action route of the UI's route table × every model × two constrained users);
 * - deliveries are seen only with their webhook, and credential headers are hidden from who may not change it;
 * - a visible object the user may not change is a 403 (Nautobot), not a 404;
 * - "Send test" shows request and answer headers one per line.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify from "fastify";
import { hasNotes, type Model, registry } from "../../src/registry/index.ts";
import { createToken } from "../../src/service/accounts.ts";
import { uiPlugin } from "../../src/ui/plugin.ts";
import { ACTIONS } from "../../src/ui/routes/actions.ts";
import { tabDefs } from "../../src/ui/tabs.ts";
import { workerSettingsFromEnv } from "../../src/webhooks/worker.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { type WebClient, webClient } from "../helpers/ui.ts";
import { waitUntil } from "../helpers/wait.ts";
import { buildWorld, create, SAMPLES, specialCreate } from "../helpers/world.ts";

const reg = registry();
/** An id no object has: permissions constrained to it cover only "other objects". */
const ELSEWHERE = { id: "00000000-0000-4000-8000-000000000000" };

/** The UI's routes as registered (method, URL pattern), read from the plugin itself, not a hand list. */
async function uiRoutes(s: TestServer): Promise<Array<{ method: string; url: string }>> {
  const app = Fastify();
  const out: Array<{ method: string; url: string }> = [];
  app.addHook("onRoute", (r) => {
    for (const method of [r.method].flat()) if (method !== "HEAD") out.push({ method, url: r.url });
  });
  // Only the route table is read: no request reaches this instance.
  await app.register(uiPlugin, {
    store: s.store,
    reg,
    settings: { enforceGlobalUnique: false, changelog: true },
    webhookSettings: workerSettingsFromEnv({}, "test"),
  } as Parameters<typeof uiPlugin>[1]);
  await app.ready();
  await app.close();
  return out;
}

/**
 * The form each action route is sent, the one that would really act (confirmed delete, applied bulk edit, a
 * note). Keyed by route pattern: a new action route without an entry here fails the generated test.
 */
const FORMS: Record<string, (id: string) => Record<string, string>> = {
  "GET /:app/:model/:id/edit/": () => ({}),
  "POST /:app/:model/:id/edit/": () => ({ description: "changed by a constrained user" }),
  "GET /:app/:model/:id/delete/": () => ({}),
  "POST /:app/:model/:id/delete/": () => ({}),
  "POST /:app/:model/delete/": (id) => ({ pk: id, confirm: "yes" }),
  "POST /:app/:model/edit/": (id) => ({ pk: id, _apply: "yes", description: "bulk-changed" }),
  "POST /:app/:model/:id/notes/": () => ({ note: "a note by a constrained user" }),
  "POST /:app/:model/:id/:action/": () => ({}),
};

/** Routes that are reads or act on no existing object (add: the saved object must fit `add`, tested in test/api). */
const NOT_OBJECT_ACTIONS = (r: { method: string; url: string }) =>
  !r.url.includes(":model") ||
  r.url === "/:app/:model/" ||
  r.url === "/:app/:model/:id/" ||
  r.url === "/:app/:model/export/" ||
  // The user's own list columns (issue 25): a per-user preference, not an action on any object; it needs
  // `view` on the model and is tested per user in test/ui/list-columns.test.ts.
  r.url === "/:app/:model/columns/" ||
  r.url === "/:app/:model/:id/trace/" || // a read, like the detail page (the path's hops under view permission)
  r.url === "/:app/:model/:id/:tab/" || // a detail page's tab, a read: checked for mallory below
  r.url === "/:app/:model/:id/history/" || // a read (issue 27): checked for mallory below
  // Creates, like add/ (issue 25): the created rows are re-checked against the add constraints; the
  // component and import routes are checked with constrained users in test/ui/bulk-import.test.ts.
  r.url === "/:app/:model/import/" ||
  r.url === "/:app/:model/:id/components/:component/add/" ||
  r.url === "/:app/:model/add/";

describe("permission leaks in the web interface and the delivery log (issue 23)", () => {
  let s: TestServer;
  let rx: Receiver;
  let adminHook: string;
  let carolHook: string;
  const users: Record<string, { id: string; token: string }> = {};

  const apiAs = (who: string, path: string) => s.api(path, { token: users[who]!.token });
  const deliveriesOf = async (hook: string) =>
    (await s.api(`/api/extras/webhook-deliveries/?webhook_id=${hook}`)).body.results as any[];

  async function user(name: string, perms: Array<Record<string, unknown>>): Promise<void> {
    const u = await create(s, "/api/users/users/", { username: name, password: `pw-${name}-1` });
    users[name] = { id: u.id, token: await createToken(s.store, u.id) };
    let i = 0;
    for (const p of perms)
      await create(s, "/api/users/permissions/", { name: `${name}-${i++}`, users: [u.id], ...p });
  }

  before(async () => {
    s = await startServer(
      { webhookRedactHeaders: ["X-Api-Key"] },
      // Request timeout and lease far above a loopback delivery, so a busy machine (issue 24) causes no
      // timeout or lost lease, hence no extra delivery, where deliveries are counted.
      { worker: { retryBaseMs: 60_000, timeoutMs: 20_000, leaseMs: 60_000, pollMs: 100 } },
    );
    rx = await startReceiver();
    const hook = async (name: string, headers: string) =>
      (
        await create(s, "/api/extras/webhooks/", {
          name,
          content_types: ["dcim.site"],
          type_create: true,
          payload_url: `${rx.url}/${name}`,
          secret: `${name}-secret-9f3`,
          additional_headers: headers,
        })
      ).id as string;
    adminHook = await hook(
      "admin-hook",
      "Authorization: Bearer admin-cred-41\nX-Api-Key: k-admin-77\nX-Copy: admin-hook-secret-9f3\nX-Plain: visible-1",
    );
    carolHook = await hook("carol-hook", "Authorization: Bearer carol-cred-52\nX-Plain: visible-2");
    await create(s, "/api/dcim/sites/", { name: "Hooked", status: "active" });
    await waitUntil(
      async () =>
        (await s.api("/api/extras/webhook-deliveries/?state=succeeded")).body.count === 2 &&
        rx.requests.length === 2,
      20_000,
    );
    const webhooks = ["extras.webhook"];
    // carol: sees every webhook and delivery, changes only carol-* webhooks.
    await user("carol", [
      { object_types: [...webhooks, "extras.webhookdelivery"], actions: ["view"] },
      { object_types: webhooks, actions: ["change"], constraints: { name: "carol-hook" } },
    ]);
    // dave: sees every delivery, but only carol-* webhooks.
    await user("dave", [
      { object_types: ["extras.webhookdelivery"], actions: ["view"] },
      { object_types: webhooks, actions: ["view"], constraints: { name: "carol-hook" } },
    ]);
    const all = [...reg.models.keys()];
    // mallory: every action on every model, constrained to an object that is not there.
    await user("mallory", [
      { object_types: all, actions: ["view", "add", "change", "delete"], constraints: ELSEWHERE },
    ]);
    // vera: sees everything, may act on nothing she sees.
    await user("vera", [
      { object_types: all, actions: ["view"] },
      { object_types: all, actions: ["add", "change", "delete"], constraints: ELSEWHERE },
    ]);
  });
  after(async () => {
    await rx?.close();
    await s?.close();
  });

  it("Send test on a webhook the user may see but not change: 403, nothing sent, no credential shown", async () => {
    const web = await webClient(s, "carol", "pw-carol-1");
    const before = rx.requests.length;
    const r = await web.post(`/extras/webhooks/${adminHook}/test/`, {});
    assert.equal(r.status, 403, r.html.slice(0, 300));
    assert.equal(r.html.includes("admin-cred-41"), false);
    assert.equal(rx.requests.length, before, "the admin's webhook was not fired");
    // Retry and enable/disable of that webhook: refused too, nothing changed.
    for (const action of ["retry-failed", "toggle"])
      assert.equal((await web.post(`/extras/webhooks/${adminHook}/${action}/`, {})).status, 403, action);
    const [delivery] = await deliveriesOf(adminHook);
    assert.equal((await web.post(`/extras/webhook-deliveries/${delivery.id}/retry/`, {})).status, 403);
    assert.equal((await s.api(`/api/extras/webhooks/${adminHook}/`)).body.enabled, true);
    // Her own webhook: the test is sent.
    const own = await web.post(`/extras/webhooks/${carolHook}/test/`, {});
    assert.equal(own.status, 200, own.html.slice(0, 300));
    assert.equal(rx.requests.length, before + 1);
  });

  it("Send test shows request and answer headers one per line", async () => {
    const web = await webClient(s);
    const r = await web.post(`/extras/webhooks/${carolHook}/test/`, {});
    assert.equal(r.status, 200);
    const blocks = [...r.html.matchAll(/<pre class="headers">([^<]*)<\/pre>/g)].map((m) => m[1]!.split("\n"));
    assert.equal(blocks.length, 2, "a request headers block and an answer headers block");
    const [answer, sent] = blocks as [string[], string[]]; // the answer comes first on the page
    assert.ok(sent.includes("Authorization: Bearer carol-cred-52"), sent.join(" | "));
    assert.ok(sent.includes("X-Plain: visible-2"), sent.join(" | "));
    assert.ok(sent.includes("X-Hook-Signature: &lt;redacted&gt;"), sent.join(" | "));
    for (const line of [...sent, ...answer])
      assert.match(line, /^[A-Za-z0-9-]+: /, `one header per line: ${line}`);
    assert.ok(
      answer.some((l) => /^content-type: text\/plain$/i.test(l)) && answer.some((l) => /^date: /i.test(l)),
      `the receiver's answer headers: ${answer.join(" | ")}`,
    );
  });

  it("deliveries are seen only with their webhook (API and UI)", async () => {
    const [theirs] = await deliveriesOf(adminHook);
    const [mine] = await deliveriesOf(carolHook);
    const list = await apiAs("dave", "/api/extras/webhook-deliveries/");
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.results.map((d: any) => d.webhook.id),
      [carolHook],
    );
    assert.equal(list.body.count, 1);
    assert.equal((await apiAs("dave", `/api/extras/webhook-deliveries/${theirs.id}/`)).status, 404);
    assert.equal((await apiAs("dave", `/api/extras/webhook-deliveries/${mine.id}/`)).status, 200);
    const filtered = await apiAs("dave", `/api/extras/webhook-deliveries/?webhook_id=${adminHook}`);
    assert.equal(filtered.body.count, 0);
    const web = await webClient(s, "dave", "pw-dave-1");
    const page = await web.get("/extras/webhook-deliveries/");
    assert.equal(page.status, 200);
    assert.equal(page.html.includes(theirs.id), false);
    assert.ok(page.html.includes(mine.id));
    const detail = await web.get(`/extras/webhook-deliveries/${theirs.id}/`);
    assert.equal(detail.status, 404);
    assert.equal(detail.html.includes("admin-cred-41"), false);
  });

  it("credential headers in the delivery log are redacted for who may not change the webhook", async () => {
    const [theirs] = await deliveriesOf(adminHook);
    const [mine] = await deliveriesOf(carolHook);
    const r = await apiAs("carol", `/api/extras/webhook-deliveries/${theirs.id}/`);
    assert.equal(r.status, 200);
    const h = r.body.request.headers;
    assert.equal(h.Authorization, "********");
    assert.equal(h["X-Api-Key"], "********", "INVENTORY_WEBHOOK_REDACT_HEADERS");
    assert.equal(h["X-Copy"], "********", "a header holding the webhook's secret");
    assert.equal(h["X-Plain"], "visible-1");
    const listed = await apiAs("carol", `/api/extras/webhook-deliveries/?webhook_id=${adminHook}`);
    assert.equal(listed.body.results[0].request.headers.Authorization, "********");
    assert.equal(JSON.stringify(listed.body).includes("admin-cred-41"), false);
    // Her own webhook's delivery, and the admin: everything.
    const own = await apiAs("carol", `/api/extras/webhook-deliveries/${mine.id}/`);
    assert.equal(own.body.request.headers.Authorization, "Bearer carol-cred-52");
    const admin = await s.api(`/api/extras/webhook-deliveries/${theirs.id}/`);
    assert.equal(admin.body.request.headers.Authorization, "Bearer admin-cred-41");
    // The web page of the delivery.
    const web = await webClient(s, "carol", "pw-carol-1");
    const page = await web.get(`/extras/webhook-deliveries/${theirs.id}/`);
    assert.equal(page.status, 200);
    for (const secret of ["admin-cred-41", "k-admin-77", "admin-hook-secret-9f3"])
      assert.equal(page.html.includes(secret), false, secret);
    assert.match(page.html, /<th>Authorization<\/th><td><code>\*{8}<\/code><\/td>/);
    assert.match(page.html, /<th>X-Plain<\/th><td><code>visible-1<\/code><\/td>/);
    const ownPage = await web.get(`/extras/webhook-deliveries/${mine.id}/`);
    assert.ok(ownPage.html.includes("carol-cred-52"));
  });

  it("edit and delete pages of a visible object the user may not change or delete: 403, unchanged", async () => {
    const site = (await s.api("/api/dcim/sites/?name=Hooked")).body.results[0];
    const web = await webClient(s, "vera", "pw-vera-1");
    const csrf = await web.csrf("/dcim/sites/");
    assert.equal((await web.get(`/dcim/sites/${site.id}/`)).status, 200, "she sees it");
    for (const [method, path, form] of [
      ["GET", `/dcim/sites/${site.id}/edit/`, {}],
      ["POST", `/dcim/sites/${site.id}/edit/`, { name: "Renamed", status: "active" }],
      ["GET", `/dcim/sites/${site.id}/delete/`, {}],
      ["POST", `/dcim/sites/${site.id}/delete/`, {}],
      ["POST", "/dcim/sites/delete/", { pk: site.id, confirm: "yes" }],
      ["POST", "/dcim/sites/edit/", { pk: site.id, _apply: "yes", description: "x" }],
    ] as const) {
      const r = method === "GET" ? await web.get(path) : await web.post(path, form, { csrf });
      assert.equal(r.status, 403, `${method} ${path}: ${r.html.slice(0, 200)}`);
    }
    assert.deepEqual((await s.api(`/api/dcim/sites/${site.id}/`)).body, site);
  });

  it("generated: every UI action route × every model × users constrained to other objects → 403/404, nothing changed", async () => {
    const routes = (await uiRoutes(s)).filter((r) => !NOT_OBJECT_ACTIONS(r));
    assert.ok(routes.length >= 8, `UI action routes: ${JSON.stringify(routes)}`);
    const missing = routes.map((r) => `${r.method} ${r.url}`).filter((k) => !FORMS[k]);
    assert.deepEqual(missing, [], "every action route has a form in FORMS");

    // One object of every model: the world's, made from the samples where none exists yet.
    const world = await buildWorld(s);
    const objects = new Map<Model, { id: string; path: string }>();
    let n = 200;
    for (const model of reg.models.values()) {
      const path = SAMPLES[model.key]?.path ?? `/api/${model.app}/${model.path}/`;
      let id = (await s.api(`${path}?limit=1`)).body?.results?.[0]?.id as string | undefined;
      if (model.key === "extras.webhook") id = adminHook;
      if (model.key === "extras.webhookdelivery") id = (await deliveriesOf(adminHook))[0].id;
      if (!id && SAMPLES[model.key]) {
        const i = n++;
        const body = (await specialCreate(s, world, model.key, i)) ?? SAMPLES[model.key]!.create(world, i);
        id = (await create(s, path, body)).id;
      }
      if (id) objects.set(model, { id, path });
    }
    assert.ok(
      objects.size >= reg.models.size - 2,
      `objects for ${objects.size} of ${reg.models.size} models`,
    );

    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const [model, o] of objects) out[model.key] = (await s.api(`${o.path}${o.id}/`)).body;
      out.changes = (await s.api("/api/extras/object-changes/?limit=1")).body.count;
      out.notes = (await s.api("/api/extras/notes/?limit=1")).body.count;
      out.deliveries = (await s.api("/api/extras/webhook-deliveries/")).body.results.map((d: any) => d.state);
      out.sent = rx.requests.length;
      return out;
    };
    // Whether a route applies to a model: the admin's edit page exists (writable in the UI), or the model
    // has notes or that action.
    const editable = new Set<string>();
    const admin = await webClient(s);
    for (const [model, o] of objects)
      if ((await admin.get(`/${model.app}/${model.path}/${o.id}/edit/`)).status === 200)
        editable.add(model.key);
    assert.ok(editable.has("dcim.site") && editable.has("extras.webhook"));

    const beforeState = await snapshot();
    const wrong: string[] = [];
    let applicable = 0;
    for (const who of ["mallory", "vera"]) {
      const web: WebClient = await webClient(s, who, `pw-${who}-1`);
      const csrf = await web.csrf("/login/");
      for (const route of routes) {
        const form = FORMS[`${route.method} ${route.url}`]!;
        for (const [model, o] of objects) {
          const actions = route.url.includes(":action")
            ? (ACTIONS[model.key] ?? [{ name: "test" }])
            : [{ name: "" }];
          for (const { name } of actions) {
            const url = route.url
              .replace(":app", model.app)
              .replace(":model", model.path)
              .replace(":id", o.id)
              .replace(":action", name);
            const applies = route.url.includes(":action")
              ? !!ACTIONS[model.key]
              : route.url.endsWith("/notes/")
                ? hasNotes(model)
                : editable.has(model.key);
            if (applies) applicable++;
            const r = route.method === "GET" ? await web.get(url) : await web.post(url, form(o.id), { csrf });
            // vera sees every object: an action she may not perform on one is a 403 (Nautobot), never a 404.
            const ok = who === "vera" && applies ? [403] : [403, 404];
            if (!ok.includes(r.status)) wrong.push(`${who} ${route.method} ${url} → ${r.status}`);
          }
        }
      }
    }
    // Tabs of detail pages (issue 25) are reads: mallory, who may view no object there, gets a 404 for every
    // tab of every tabbed object, as for its detail page.
    const mallory = await webClient(s, "mallory", "pw-mallory-1");
    let tabs = 0;
    for (const [model, o] of objects)
      for (const tab of tabDefs(reg, model) ?? []) {
        const url = `/${model.app}/${model.path}/${o.id}/${tab.slug ? `${tab.slug}/` : ""}`;
        const r = await mallory.get(url);
        tabs++;
        if (r.status !== 404) wrong.push(`mallory GET ${url} → ${r.status}`);
      }
    assert.ok(tabs >= 10, `tabs checked: ${tabs}`);
    // History pages (issue 27) are reads too: 404 for every object mallory may not view.
    for (const [model, o] of objects) {
      if (!model.changeLogged) continue;
      const url = `/${model.app}/${model.path}/${o.id}/history/`;
      const r = await mallory.get(url);
      if (r.status !== 404) wrong.push(`mallory GET ${url} → ${r.status}`);
    }
    assert.deepEqual(wrong, []);
    assert.ok(applicable > 200, `pairs that apply: ${applicable}`);
    assert.deepEqual(await snapshot(), beforeState, "nothing changed, nothing sent");
  });
});
