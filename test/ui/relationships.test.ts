/**
 * Relationships in the web forms and detail pages (issue 25, src/ui/relationships.ts), and Nautobot's field
 * labels and help texts in the forms: a control per relationship side (`cr_<slug>__<peer side>`, single or
 * multiple by the relationship's type, hidden sides left out), saved through the service layer with the
 * object (REST `relationships`, one change-log entry), errors beside their controls in Nautobot's form
 * wording; form labels and help texts are Nautobot 1.6.32's forms' (src/registry/form-text.ts), else its
 * OPTIONS ones, help texts under the fields.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { FORM_TEXT } from "../../src/registry/form-text.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";
import { create } from "../helpers/world.ts";

/** Text as the templates escape it. */
const esc = (t: string) =>
  t
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&#34;")
    .replace(/'/g, "&#39;");

/** The `<select>` (or input) of control `name` in a form page, or undefined. */
const control = (html: string, name: string) =>
  new RegExp(`<(select|input)[^>]*\\bname="${name}"[^>]*>(?:[\\s\\S]*?</select>)?`).exec(html)?.[0];

/** The label text of control `name` (`<label for="f-name">`), without the required mark. */
const labelOf = (html: string, name: string) =>
  new RegExp(`<label[^>]*for="f-${name}"[^>]*>([^<]*)`)
    .exec(html)?.[1]
    ?.replace(/\s*\*\s*$/, "")
    .trim();

describe("web interface: relationships in forms, Nautobot labels and help texts", () => {
  let s: TestServer;
  const ids: Record<string, string> = {};
  before(async () => {
    s = await startServer();
    ids.v1 = (await create(s, "/api/ipam/vlans/", { vid: 101, name: "rel-v101", status: "active" })).id;
    ids.v2 = (await create(s, "/api/ipam/vlans/", { vid: 102, name: "rel-v102", status: "active" })).id;
    ids.p1 = (await create(s, "/api/circuits/providers/", { name: "Rel provider 1" })).id;
    ids.p2 = (await create(s, "/api/circuits/providers/", { name: "Rel provider 2" })).id;
    await create(s, "/api/extras/relationships/", {
      name: "Site VLANs",
      slug: "site_vlans",
      type: "many-to-many",
      source_type: "dcim.site",
      destination_type: "ipam.vlan",
      description: "VLANs used at the site",
    });
    await create(s, "/api/extras/relationships/", {
      name: "Site provider",
      slug: "site_provider",
      type: "one-to-one",
      source_type: "dcim.site",
      destination_type: "circuits.provider",
      source_label: "Main provider",
    });
    await create(s, "/api/extras/relationships/", {
      name: "Hidden on sites",
      slug: "hidden_on_sites",
      type: "many-to-many",
      source_type: "dcim.site",
      destination_type: "circuits.provider",
      source_hidden: true,
    });
  });
  after(async () => {
    await s.close();
  });

  it("a site's form has a control per relationship side: multiple for many, single for one, none when hidden", async () => {
    const web = await webClient(s);
    const page = await web.get("/dcim/sites/add/");
    assert.equal(page.status, 200);
    const many = control(page.html, "cr_site_vlans__destination");
    assert.ok(many, "the many-to-many relationship has a control");
    assert.match(many, /\bmultiple\b/, "many-to-many: a multi select");
    assert.equal(labelOf(page.html, "cr_site_vlans__destination"), "VLANs", "Relationship.get_label: plural");
    assert.match(page.html, /VLANs used at the site/, "the relationship's description is the help text");
    const one = control(page.html, "cr_site_provider__destination");
    assert.ok(one, "the one-to-one relationship has a control");
    assert.doesNotMatch(one.split(">")[0]!, /\bmultiple\b/, "one-to-one: a single select");
    assert.equal(labelOf(page.html, "cr_site_provider__destination"), "Main provider", "the source label");
    assert.equal(control(page.html, "cr_hidden_on_sites__destination"), undefined, "hidden side: no control");
    // The peer side's form: a VLAN picks its sites.
    const vlanPage = await web.get(`/ipam/vlans/${ids.v1}/edit/`);
    assert.match(control(vlanPage.html, "cr_site_vlans__source") ?? "", /\bmultiple\b/);
    assert.equal(labelOf(vlanPage.html, "cr_site_vlans__source"), "sites");
  });

  it("relationships set in the form are saved with the object: detail page, REST relationships, one change", async () => {
    const web = await webClient(s);
    const r = await web.post("/dcim/sites/add/", {
      name: "Rel site",
      status: "active",
      cr_site_vlans__destination: [ids.v1!, ids.v2!],
      cr_site_provider__destination: ids.p1!,
    });
    assert.equal(r.status, 302, r.html.slice(0, 2000));
    const id = /\/dcim\/sites\/([0-9a-f-]{36})\//.exec(r.location ?? "")?.[1];
    assert.ok(id, `redirected to the new site: ${r.location}`);
    const api = await s.api(`/api/dcim/sites/${id}/?include=relationships`);
    assert.equal(api.status, 200);
    const objs = (slug: string) =>
      (api.body.relationships[slug].destination.objects as Array<{ id: string }>).map((o) => o.id).sort();
    assert.deepEqual(objs("site_vlans"), [ids.v1, ids.v2].sort());
    assert.deepEqual(objs("site_provider"), [ids.p1]);
    const changes = await s.api(`/api/extras/object-changes/?changed_object_id=${id}`);
    assert.equal(changes.body.count, 1, "one change-log entry for the site and its associations");
    const detail = await web.get(`/dcim/sites/${id}/`);
    assert.match(detail.html, /<th>VLANs<\/th>/);
    assert.match(detail.html, new RegExp(`href="/ipam/vlans/${ids.v1}/">[^<]*rel-v101`));
    assert.match(detail.html, new RegExp(`href="/ipam/vlans/${ids.v2}/">[^<]*rel-v102`));
    assert.match(
      detail.html,
      /<th>Main provider<\/th>\s*<td><a href="\/circuits\/providers\/[^"]+\/">Rel provider 1<\/a>/,
    );
    assert.doesNotMatch(detail.html, /<th>Relationships<\/th>/, "no raw JSON row");

    // The edit form starts from the saved associations; saving a change replaces them.
    const edit = await web.get(`/dcim/sites/${id}/edit/`);
    assert.match(
      control(edit.html, "cr_site_vlans__destination") ?? "",
      new RegExp(`value="${ids.v2}" selected`),
      "the saved VLANs are selected",
    );
    assert.match(
      control(edit.html, "cr_site_provider__destination") ?? "",
      new RegExp(`value="${ids.p1}" selected`),
    );
    const version = /name="_version" value="(\d+)"/.exec(edit.html)?.[1];
    const saved = await web.post(`/dcim/sites/${id}/edit/`, {
      name: "Rel site",
      status: "active",
      cr_site_vlans__destination: ids.v2!,
      cr_site_provider__destination: "",
      ...(version ? { _version: version } : {}),
    });
    assert.equal(saved.status, 302, saved.html.slice(0, 2000));
    const after = await s.api(`/api/dcim/sites/${id}/?include=relationships`);
    assert.deepEqual(
      after.body.relationships.site_vlans.destination.objects.map((o: { id: string }) => o.id),
      [ids.v2],
    );
    assert.deepEqual(after.body.relationships.site_provider.destination.objects, []);
    // The VLAN's side shows the site too.
    const vlan = await s.api(`/api/ipam/vlans/${ids.v2}/?include=relationships`);
    assert.deepEqual(
      vlan.body.relationships.site_vlans.source.objects.map((o: { id: string }) => o.id),
      [id],
    );
  });

  it("a broken association is a 400 with Nautobot's message and saves nothing", async () => {
    const web = await webClient(s);
    const first = await web.post("/dcim/sites/add/", {
      name: "Rel site one",
      status: "active",
      cr_site_provider__destination: ids.p2!,
    });
    assert.equal(first.status, 302, first.html.slice(0, 2000));
    const second = await web.post("/dcim/sites/add/", {
      name: "Rel site two",
      status: "active",
      cr_site_provider__destination: ids.p2!,
    });
    assert.equal(second.status, 400);
    assert.match(second.html, /Unable to create more than one Site provider association to Rel provider 2/);
    assert.match(
      control(second.html, "cr_site_provider__destination") ?? "",
      new RegExp(`value="${ids.p2}" selected`),
      "the redrawn form keeps the choice",
    );
    const list = await s.api("/api/dcim/sites/?name=Rel%20site%20two");
    assert.equal(list.body.count, 0, "the site was not created either");
  });

  it("a required relationship left empty is an error beside its control", async () => {
    const platform = await create(s, "/api/dcim/platforms/", { name: "Rel platform" });
    await create(s, "/api/extras/relationships/", {
      name: "Maker platforms",
      slug: "maker_platforms",
      type: "one-to-many",
      source_type: "dcim.manufacturer",
      destination_type: "dcim.platform",
      required_on: "source",
    });
    const web = await webClient(s);
    const page = await web.get("/dcim/manufacturers/add/");
    assert.match(labelOf(page.html, "cr_maker_platforms__destination") ?? "", /^platforms$/);
    assert.match(page.html, /for="f-cr_maker_platforms__destination"[^>]*>[^<]*\*/, "marked required");
    const bad = await web.post("/dcim/manufacturers/add/", { name: "Rel maker" });
    assert.equal(bad.status, 400);
    const field = /<div class="field[^"]*has-error[^"]*">[\s\S]*?<\/div>/g;
    const withError = [...bad.html.matchAll(field)].map((m) => m[0]);
    assert.ok(
      withError.some(
        (f) =>
          f.includes('name="cr_maker_platforms__destination"') &&
          f.includes("You need to select at least one platform."),
      ),
      "the error is drawn beside the relationship's control",
    );
    const ok = await web.post("/dcim/manufacturers/add/", {
      name: "Rel maker",
      cr_maker_platforms__destination: platform.id,
    });
    assert.equal(ok.status, 302, ok.html.slice(0, 2000));
  });

  it("a user who may not view the peers gets no control for them, and a save keeps their associations", async () => {
    const site = await create(s, "/api/dcim/sites/", {
      name: "Rel kept",
      status: "active",
      relationships: { site_vlans: { destination: { objects: [ids.v1] } } },
    });
    const user = await create(s, "/api/users/users/", { username: "rel-bob", password: "rel-bob-pass-1" });
    await create(s, "/api/users/permissions/", {
      name: "rel-bob sites",
      object_types: ["dcim.site"],
      actions: ["view", "change"],
      users: [user.id],
    });
    const web = await webClient(s, "rel-bob", "rel-bob-pass-1");
    const edit = await web.get(`/dcim/sites/${site.id}/edit/`);
    assert.equal(edit.status, 200);
    assert.equal(control(edit.html, "cr_site_vlans__destination"), undefined, "no VLAN control without view");
    const saved = await web.post(`/dcim/sites/${site.id}/edit/`, {
      name: "Rel kept",
      status: "active",
      description: "changed by bob",
    });
    assert.equal(saved.status, 302, saved.html.slice(0, 2000));
    const api = await s.api(`/api/dcim/sites/${site.id}/?include=relationships`);
    assert.equal(api.body.description, "changed by bob");
    assert.deepEqual(
      api.body.relationships.site_vlans.destination.objects.map((o: { id: string }) => o.id),
      [ids.v1],
      "the association stays",
    );
  });

  it("form labels and help texts are Nautobot 1.6.32's: its forms' own, else its OPTIONS ones", async () => {
    const web = await webClient(s);
    for (const [ui, apiPath] of [
      ["/dcim/interfaces/add/", "/api/dcim/interfaces/"],
      ["/ipam/ip-addresses/add/", "/api/ipam/ip-addresses/"],
      ["/ipam/vlans/add/", "/api/ipam/vlans/"],
      ["/dcim/devices/add/", "/api/dcim/devices/"],
    ] as const) {
      const page = await web.get(ui);
      assert.equal(page.status, 200);
      const options = await s.api(apiPath, { method: "OPTIONS" });
      const fields = options.body.actions.POST as Record<string, { label: string; help_text?: string }>;
      const formText = FORM_TEXT[apiPath.slice(5, -1)] ?? {};
      let compared = 0;
      for (const [name, meta] of Object.entries(fields)) {
        const shown = labelOf(page.html, name);
        // A generic FK's object control (`assigned_object_id`) is labelled by the relation's name.
        if (shown === undefined || name.endsWith("_id")) continue;
        assert.equal(shown, formText[name]?.label ?? meta.label, `${ui} ${name}`);
        const help = formText[name]?.help ?? meta.help_text;
        if (help) assert.ok(page.html.includes(esc(help)), `${ui} ${name}: help text shown`);
        compared++;
      }
      assert.ok(compared >= 5, `${ui}: ${compared} labels compared`);
    }
    const iface = await web.get("/dcim/interfaces/add/");
    assert.equal(labelOf(iface.html, "mtu"), "MTU");
    assert.equal(labelOf(iface.html, "mac_address"), "MAC Address");
    assert.equal(labelOf(iface.html, "mode"), "802.1Q Mode", "InterfaceForm.Meta.labels");
    assert.equal(labelOf(iface.html, "lag"), "LAG interface", "InterfaceForm's declared lag field");
    assert.match(iface.html, /This interface is used only for out-of-band management/);
    const ip = await web.get("/ipam/ip-addresses/add/");
    assert.equal(labelOf(ip.html, "dns_name"), "DNS Name");
    assert.match(ip.html, /Hostname or FQDN \(not case-sensitive\)/);
    const vlan = await web.get("/ipam/vlans/add/");
    assert.equal(labelOf(vlan.html, "vid"), "ID");
    assert.match(vlan.html, /Configured VLAN ID/, "VLANForm.Meta.help_texts");
    const device = await web.get("/dcim/devices/add/");
    assert.equal(labelOf(device.html, "primary_ip4"), "Primary IPv4", "the model field's verbose_name");
    assert.equal(labelOf(device.html, "position"), "Position (U)");
  });
});
