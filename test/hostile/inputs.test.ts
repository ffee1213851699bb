/**
 * Issue 23, input sizes and nulls: notes, comments, templates, JSON data and custom-field values are
 * capped (`SIZE_LIMITS` in src/registry/meta.ts) with a 400 naming the field; a page renders a bounded
 * amount of Markdown whatever is stored; `null` on a non-nullable choice or integer field is DRF's 400
 * "This field may not be null." on both engines (it was a 500 on PostgreSQL for a rack's width); choice
 * values are trimmed. The size and null checks are generated over the registry: every writable model
 * with such a field gets one object (bodies from test/helpers/world.ts) and each field is tried.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";
import type { FieldDef } from "../../src/registry/meta.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { buildWorld, SAMPLES, specialCreate, type World } from "../helpers/world.ts";

const reg = registry();
/** The documented caps (README, Configuration; `SIZE_LIMITS` in src/registry/meta.ts), as a client knows them. */
const SIZE_LIMITS = { text: 65_536, json: 65_536, customFieldValue: 65_536 };
/** The cap of a text or JSON field: its declared `max`, else its kind's. */
const sizeLimit = (fd: FieldDef): number =>
  (fd.kind === "text" || fd.kind === "json" ? fd.max : undefined) ?? SIZE_LIMITS[fd.kind as "text" | "json"];
const writable = [...reg.models.values()]
  .filter((m) => !m.readOnly)
  .sort((a, b) => a.key.localeCompare(b.key));
const clientWritable = (fd: FieldDef) => !fd.readOnly && fd.kind !== "count" && fd.kind !== "computed";
/** Fields `null` must be refused on: non-nullable choices and integers a client writes. */
const nullRefused = (fd: FieldDef) => (fd.kind === "choice" || fd.kind === "int") && !fd.nullable;
/** Fields capped by `SIZE_LIMITS`: text and JSON a client writes. */
const sizeCapped = (fd: FieldDef) => fd.kind === "text" || fd.kind === "json";

/** A value of `fd`'s shape one character longer than its cap (JSON as compact JSON). */
function oversized(fd: FieldDef): unknown {
  const max = sizeLimit(fd);
  if (fd.kind === "text") return "x".repeat(max + 1);
  if (fd.kind !== "json") throw new Error(`not capped: ${fd.kind}`);
  // `[1,1,…]` is 2n+1 characters, `["x","x",…]` 4n+1, `{"k":"x…x"}` n+8.
  const value =
    fd.array === "int"
      ? Array(max / 2 + 1).fill(1)
      : fd.array
        ? Array(max / 4 + 1).fill("x")
        : { k: "x".repeat(max) };
  assert.ok(JSON.stringify(value).length > max);
  return value;
}

describe("input size caps and nulls (issue 23)", () => {
  let s: TestServer;
  let w: World;
  let n = 1;
  /** One object per model key, created on first use: its API detail path. */
  const objects = new Map<string, string>();
  const objectOf = async (key: string): Promise<string> => {
    const known = objects.get(key);
    if (known) return known;
    const sample = SAMPLES[key];
    assert.ok(sample, `no sample for ${key}`);
    const i = n++;
    const body = (await specialCreate(s, w, key, i)) ?? sample.create(w, i);
    const r = await s.api(sample.path, { method: "POST", body });
    assert.equal(r.status, 201, `create ${key}: ${JSON.stringify(r.body)}`);
    const path = `${sample.path}${r.body.id}/`;
    objects.set(key, path);
    return path;
  };
  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
  });
  after(async () => {
    await s.close();
  });

  it("a note at the cap is accepted and its object's page renders it as Markdown; one character more is refused", {
    timeout: 120_000,
  }, async () => {
    const line = "**bold** item with `code` and a [link](https://example.com/)\n";
    let text = line.repeat(Math.floor(SIZE_LIMITS.text / line.length));
    text += "z".repeat(SIZE_LIMITS.text - text.length);
    assert.equal(text.length, SIZE_LIMITS.text);
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Notes at cap", status: "active" },
    });
    assert.equal(site.status, 201);
    const over = await s.api(`/api/dcim/sites/${site.body.id}/notes/`, {
      method: "POST",
      body: { note: `${text}z` },
    });
    assert.equal(over.status, 400);
    assert.deepEqual(over.body, {
      note: [`Ensure this field has no more than ${SIZE_LIMITS.text} characters.`],
    });
    const ok = await s.api(`/api/dcim/sites/${site.body.id}/notes/`, {
      method: "POST",
      body: { note: text },
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body).slice(0, 300));
    assert.equal(ok.body.note.length, SIZE_LIMITS.text);
    const web = await webClient(s);
    const page = await web.get(`/dcim/sites/${site.body.id}/`);
    assert.equal(page.status, 200);
    assert.match(page.html, /<strong>bold<\/strong> item with <code>code<\/code>/);
    // Every line of the note is rendered (none left out by the page's budget).
    assert.equal(
      page.html.split("<strong>bold</strong>").length - 1,
      Math.floor(SIZE_LIMITS.text / line.length),
    );
  });

  it("notes stored before the caps render within the page's Markdown budget, as escaped plain text", {
    timeout: 120_000,
  }, async () => {
    const site = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Old notes", status: "active" },
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await s.api(`/api/dcim/sites/${site.body.id}/notes/`, {
        method: "POST",
        body: { note: `old ${i}` },
      });
      assert.equal(r.status, 201);
      ids.push(r.body.id);
    }
    // As a database from before the caps may hold them: 4 MB of Markdown per note (3 × 4 MB on one page).
    const huge = "<b>x</b> **y** ".repeat((4 * 1024 * 1024) / 15);
    await s.store.db.updateTable("extras_note").set({ note: huge }).where("id", "in", ids).execute();
    const web = await webClient(s);
    const page = await web.get(`/dcim/sites/${site.body.id}/`);
    assert.equal(page.status, 200);
    assert.ok(page.html.length < 256 * 1024, `page of ${page.html.length} characters`);
    assert.match(page.html, /more characters not shown/);
    // Shown escaped: the stored HTML is never markup.
    assert.ok(!page.html.includes("<b>x</b>"));
    assert.match(page.html, /&lt;b&gt;x&lt;\/b&gt;/);
    // The API still serves the whole text.
    const api = await s.api(`/api/extras/notes/${ids[0]}/`);
    assert.equal(api.body.note.length, huge.length);
  });

  it("every text and JSON field of every model refuses a value over its cap with 400 naming the field", {
    timeout: 600_000,
  }, async () => {
    const tried: string[] = [];
    for (const model of writable) {
      const fields = model.fieldList.filter(([, fd]) => clientWritable(fd) && sizeCapped(fd));
      if (!fields.length) continue;
      const path = await objectOf(model.key);
      for (const [name, fd] of fields) {
        const r = await s.api(path, { method: "PATCH", body: { [name]: oversized(fd) } });
        assert.equal(
          r.status,
          400,
          `${model.key}.${name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
        );
        assert.deepEqual(
          Object.keys(r.body),
          [name],
          `${model.key}.${name}: ${JSON.stringify(r.body).slice(0, 200)}`,
        );
        assert.match(String(r.body[name]), new RegExp(`no more than ${sizeLimit(fd)} characters`), model.key);
        tried.push(`${model.key}.${name}`);
      }
    }
    // The fields the issue names are among them.
    for (const f of [
      "extras.note.note",
      "dcim.site.comments",
      "extras.exporttemplate.template_code",
      "extras.webhook.body_template",
      "extras.webhook.additional_headers",
      "extras.graphqlquery.query",
      "extras.configcontext.data",
      "dcim.device.local_context_data",
    ])
      assert.ok(tried.includes(f), `${f} not tried (${tried.join(", ")})`);
  });

  it("a custom-field value over its cap is refused with 400 naming the custom field", async () => {
    const cf = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: { name: "big_text", type: "markdown", content_types: ["dcim.site"] },
    });
    assert.equal(cf.status, 201, JSON.stringify(cf.body));
    const big = "m".repeat(SIZE_LIMITS.customFieldValue + 1);
    const r = await s.api(`/api/dcim/sites/${w.site}/`, {
      method: "PATCH",
      body: { custom_fields: { big_text: big } },
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, {
      __all__: [
        `Invalid value for custom field 'big_text': Ensure this value has no more than ${SIZE_LIMITS.customFieldValue} characters.`,
      ],
    });
    const ok = await s.api(`/api/dcim/sites/${w.site}/`, {
      method: "PATCH",
      body: { custom_fields: { big_text: big.slice(1) } },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.custom_fields.big_text.length, SIZE_LIMITS.customFieldValue);
  });

  it("PATCH a rack's width to null is a 400 (it was a 500 on PostgreSQL) and the rack keeps its width", async () => {
    const r = await s.api(`/api/dcim/racks/${w.rack}/`, { method: "PATCH", body: { width: null } });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual(r.body, { width: ["This field may not be null."] });
    const got = await s.api(`/api/dcim/racks/${w.rack}/`);
    assert.equal(got.body.width.value, 19);
  });

  it("null on every non-nullable choice and integer field of every model is a 400 naming the field", {
    timeout: 600_000,
  }, async () => {
    let tried = 0;
    for (const model of writable) {
      const fields = model.fieldList.filter(([, fd]) => clientWritable(fd) && nullRefused(fd));
      if (!fields.length) continue;
      const path = await objectOf(model.key);
      const before_ = (await s.api(path)).body;
      for (const [name] of fields) {
        const r = await s.api(path, { method: "PATCH", body: { [name]: null } });
        assert.equal(
          r.status,
          400,
          `${model.key}.${name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
        );
        assert.deepEqual(r.body, { [name]: ["This field may not be null."] }, `${model.key}.${name}`);
        tried++;
      }
      // Nothing was written.
      const after_ = (await s.api(path)).body;
      for (const [name] of fields) assert.deepEqual(after_[name], before_[name], `${model.key}.${name} kept`);
    }
    assert.ok(tried >= 40, `only ${tried} fields tried`);
  });

  it("choice values are trimmed as DRF trims strings", async () => {
    const r = await s.api(`/api/dcim/racks/${w.rack}/`, {
      method: "PATCH",
      body: { width: " 23 ", type: " 4-post-cabinet\t" },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.width.value, 23);
    assert.equal(r.body.type.value, "4-post-cabinet");
    const back = await s.api(`/api/dcim/racks/${w.rack}/`, { method: "PATCH", body: { width: " 19 " } });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal(back.body.width.value, 19);
    const iface = await s.api("/api/dcim/interfaces/", {
      method: "POST",
      body: { device: w.device, name: "trimmed0", type: " 1000base-t " },
    });
    assert.equal(iface.status, 201, JSON.stringify(iface.body));
    assert.equal(iface.body.type.value, "1000base-t");
    // Only surrounding whitespace goes: a value that is still not a choice is refused as before.
    const bad = await s.api(`/api/dcim/racks/${w.rack}/`, { method: "PATCH", body: { width: " 20 " } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { width: ["20 is not a valid choice."] });
  });
});

describe("a 15 MB note (issue 23)", () => {
  let s: TestServer;
  let site: string;
  const notesOf = async (id: string) =>
    (await s.api(`/api/extras/notes/?assigned_object_id=${id}&limit=1000`)).body.count as number;
  before(async () => {
    // Reading and parsing a body near INVENTORY_BODY_LIMIT (16 MB) costs this process about 250 ms of CPU,
    // the test's own encoding of it included (seen in CI: 293 and 432 ms polls): one request's bound grows with
    // the body limit, so this server's guard floor is 600 ms; every other input test keeps 200 ms.
    s = await startServer({}, { healthFloorMs: 600 });
    site = (
      await s.api("/api/dcim/sites/", { method: "POST", body: { name: "Big notes", status: "active" } })
    ).body.id;
  });
  after(async () => {
    await s.close();
  });

  it("a 15 MB note is refused with 400 naming the field, and nothing is written", {
    timeout: 120_000,
  }, async () => {
    const big = "n".repeat(15 * 1024 * 1024);
    const before_ = await notesOf(site);
    const direct = await s.api("/api/extras/notes/", {
      method: "POST",
      body: { assigned_object_type: "dcim.site", assigned_object_id: site, note: big },
    });
    assert.equal(direct.status, 400, JSON.stringify(direct.body).slice(0, 300));
    assert.deepEqual(direct.body, {
      note: [`Ensure this field has no more than ${SIZE_LIMITS.text} characters.`],
    });
    const action = await s.api(`/api/dcim/sites/${site}/notes/`, { method: "POST", body: { note: big } });
    assert.equal(action.status, 400, JSON.stringify(action.body).slice(0, 300));
    assert.match(String(action.body.note), /no more than 65536 characters/);
    assert.equal(await notesOf(site), before_);
  });
});
