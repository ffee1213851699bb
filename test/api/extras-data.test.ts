/**
 * Extras attached to objects (issue 9): custom-field choices, notes and `notes_url`, relationships and the
 * opt-in `relationships` key, computed fields and `computed_fields`, custom links, export templates and
 * dynamic groups. Shapes and messages as a running Nautobot 1.6.32 answered the same requests.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("extras attached to objects", () => {
  let s: TestServer;
  let site: any;
  let site2: any;
  before(async () => {
    s = await startServer();
    site = await create(s, "/api/dcim/sites/", { name: "Alpha", status: "active" });
    site2 = await create(s, "/api/dcim/sites/", { name: "Beta", status: "planned" });
  });
  after(async () => {
    await s.close();
  });

  it("custom-field choices live at /api/extras/custom-field-choices/ and drive selection values", async () => {
    const cf = await create(s, "/api/extras/custom-fields/", {
      name: "tier",
      type: "select",
      content_types: ["dcim.site"],
    });
    assert.equal("choices" in cf, false, "no inline choices on the wire");
    const gold = await create(s, "/api/extras/custom-field-choices/", {
      field: cf.id,
      value: "gold",
      weight: 10,
    });
    assert.deepEqual(Object.keys(gold), [
      "id",
      "display",
      "url",
      "field",
      "value",
      "weight",
      "created",
      "last_updated",
    ]);
    assert.equal(gold.display, "gold");
    assert.deepEqual(Object.keys(gold.field).sort(), ["display", "id", "name", "url"]);
    await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "silver", weight: 20 });
    const dup = await s.api("/api/extras/custom-field-choices/", {
      method: "POST",
      body: { field: cf.id, value: "gold" },
    });
    assert.equal(dup.status, 400);
    assert.deepEqual(dup.body, { non_field_errors: ["The fields field, value must make a unique set."] });
    const ok = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { tier: "silver" } },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.custom_fields.tier, "silver");
    const bad = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { tier: "bronze" } },
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    const list = await s.api(`/api/extras/custom-field-choices/?field=tier`);
    assert.deepEqual(
      list.body.results.map((c: any) => c.value),
      ["gold", "silver"],
    );
    // A default must be one of the choices.
    const def = await s.api(`/api/extras/custom-fields/${cf.id}/`, {
      method: "PATCH",
      body: { default: "platinum" },
    });
    assert.equal(def.status, 400);
    assert.ok(def.body.default);
    const good = await s.api(`/api/extras/custom-fields/${cf.id}/`, {
      method: "PATCH",
      body: { default: "gold" },
    });
    assert.equal(good.status, 200, JSON.stringify(good.body));
  });

  it("notes: notes_url on objects, the …/notes/ action and /api/extras/notes/", async () => {
    const got = await s.api(`/api/dcim/sites/${site.id}/`);
    assert.equal(got.body.notes_url, `${s.url}/api/dcim/sites/${site.id}/notes/`);
    const keys = Object.keys(got.body);
    assert.ok(keys.indexOf("notes_url") === keys.indexOf("tags") + 1, keys.join(","));
    const posted = await s.api(`/api/dcim/sites/${site.id}/notes/`, {
      method: "POST",
      body: { note: "racked" },
    });
    assert.equal(posted.status, 201, JSON.stringify(posted.body));
    assert.equal(posted.body.note, "racked");
    assert.equal(posted.body.user.username, "admin");
    assert.equal(posted.body.user_name, "admin");
    assert.equal(posted.body.assigned_object_type, "dcim.site");
    assert.equal(posted.body.assigned_object.id, site.id);
    assert.match(posted.body.slug, /^alpha-/);
    assert.equal(posted.body.display, posted.body.slug);
    await create(s, "/api/extras/notes/", {
      assigned_object_type: "dcim.site",
      assigned_object_id: site.id,
      note: "two",
    });
    await create(s, "/api/extras/notes/", {
      assigned_object_type: "dcim.site",
      assigned_object_id: site2.id,
      note: "other",
    });
    const list = await s.api(`/api/dcim/sites/${site.id}/notes/`);
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 2);
    assert.deepEqual(list.body.results.map((n: any) => n.note).sort(), ["racked", "two"]);
    // A note names its object (found by the fuzzer: a bulk body without one was a 500).
    const orphan = await s.api("/api/extras/notes/", { method: "POST", body: [{ note: "M" }] });
    assert.equal(orphan.status, 400);
    assert.deepEqual(orphan.body, [
      { assigned_object_type: ["This field is required."], assigned_object_id: ["This field is required."] },
    ]);
    const missing = await s.api(`/api/dcim/sites/${site.id}/notes/`, { method: "POST", body: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { note: ["This field is required."] });
    // Models without notes have neither the key nor the action.
    const cfs = await s.api("/api/extras/custom-field-choices/?limit=1");
    assert.equal("notes_url" in cfs.body.results[0], false);
    const tokens = await s.api("/api/users/tokens/");
    assert.equal(tokens.status, 200);
    const none = await s.api(`/api/extras/custom-field-choices/${cfs.body.results[0].id}/notes/`);
    assert.equal(none.status, 404);
    // Deleting the object deletes its notes.
    const tmp = await create(s, "/api/dcim/sites/", { name: "Gone", status: "active" });
    await create(s, "/api/extras/notes/", {
      assigned_object_type: "dcim.site",
      assigned_object_id: tmp.id,
      note: "bye",
    });
    assert.equal((await s.api(`/api/dcim/sites/${tmp.id}/`, { method: "DELETE" })).status, 204);
    const left = await s.api(`/api/extras/notes/?assigned_object_id=${tmp.id}`);
    assert.equal(left.body.count, 0);
  });

  it("relationships: associations, the opt-in relationships key, and writes through it", async () => {
    const peers = await create(s, "/api/extras/relationships/", {
      name: "Site peers",
      type: "many-to-many",
      source_type: "dcim.site",
      destination_type: "dcim.site",
    });
    assert.equal(peers.slug, "site_peers");
    assert.equal(peers.type, "many-to-many");
    assert.equal(peers.source_filter, null);
    const vlanRel = await create(s, "/api/extras/relationships/", {
      name: "Site vlan",
      type: "one-to-many",
      source_type: "dcim.site",
      destination_type: "ipam.vlan",
      destination_label: "My site",
    });
    const assoc = await create(s, "/api/extras/relationship-associations/", {
      relationship: peers.id,
      source_type: "dcim.site",
      source_id: site.id,
      destination_type: "dcim.site",
      destination_id: site2.id,
    });
    assert.equal(assoc.display, "Alpha -> Beta - Site peers");
    assert.deepEqual(Object.keys(assoc), [
      "id",
      "display",
      "url",
      "relationship",
      "source_type",
      "source_id",
      "destination_type",
      "destination_id",
    ]);
    const wrong = await s.api("/api/extras/relationship-associations/", {
      method: "POST",
      body: {
        relationship: vlanRel.id,
        source_type: "dcim.site",
        source_id: site.id,
        destination_type: "dcim.site",
        destination_id: site.id,
      },
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.body, {
      destination_type: ["destination_type has a different value than defined in Site vlan"],
    });

    // Opt-in on GET, always on writes.
    const plain = await s.api(`/api/dcim/sites/${site.id}/`);
    assert.equal("relationships" in plain.body, false);
    assert.equal("computed_fields" in plain.body, false);
    const opted = await s.api(`/api/dcim/sites/${site.id}/?include=relationships`);
    const rel = opted.body.relationships;
    assert.deepEqual(Object.keys(rel).sort(), ["site_peers", "site_vlan"]);
    assert.equal(rel.site_peers.type, "many-to-many");
    assert.equal(rel.site_peers.url, `${s.url}/api/extras/relationships/${peers.id}/`);
    assert.deepEqual(
      rel.site_peers.destination.objects.map((o: any) => o.id),
      [site2.id],
    );
    assert.deepEqual(rel.site_peers.source.objects, []);
    assert.equal(rel.site_peers.destination.object_type, "dcim.site");
    assert.deepEqual(rel.site_vlan.destination, { label: "VLANs", object_type: "ipam.vlan", objects: [] });
    const other = await s.api(`/api/dcim/sites/${site2.id}/?include=relationships`);
    assert.deepEqual(
      other.body.relationships.site_peers.source.objects.map((o: any) => o.id),
      [site.id],
    );

    // Writes: replace one side, leave unnamed relationships alone.
    const vlan1 = await create(s, "/api/ipam/vlans/", { vid: 10, name: "v10", status: "active" });
    const vlan2 = await create(s, "/api/ipam/vlans/", { vid: 20, name: "v20", status: "active" });
    const patched = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { relationships: { site_vlan: { destination: { objects: [vlan1.id, { id: vlan2.id }] } } } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(
      patched.body.relationships.site_vlan.destination.objects.map((o: any) => o.id).sort(),
      [vlan1.id, vlan2.id].sort(),
    );
    assert.equal(patched.body.relationships.site_peers.destination.objects.length, 1);
    const vlanView = await s.api(`/api/ipam/vlans/${vlan1.id}/?include=relationships`);
    assert.deepEqual(vlanView.body.relationships.site_vlan.source, {
      label: "My site",
      object_type: "dcim.site",
      objects: [vlanView.body.relationships.site_vlan.source.objects[0]],
    });
    assert.equal(vlanView.body.relationships.site_vlan.source.objects[0].id, site.id);
    // One-to-many: a VLAN has one site.
    const taken = await s.api(`/api/dcim/sites/${site2.id}/`, {
      method: "PATCH",
      body: { relationships: { site_vlan: { destination: { objects: [vlan1.id] } } } },
    });
    assert.equal(taken.status, 400, JSON.stringify(taken.body));
    assert.ok(taken.body.relationships);
    const bogus = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { relationships: { bogus: {} } },
    });
    assert.equal(bogus.status, 400);
    assert.deepEqual(bogus.body, { relationships: ['"bogus" is not a relationship on dcim.Site'] });
    const side = await s.api(`/api/ipam/vlans/${vlan1.id}/`, {
      method: "PATCH",
      body: { relationships: { site_vlan: { destination: { objects: [] } } } },
    });
    assert.equal(side.status, 400);
    const cleared = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { relationships: { site_vlan: { destination: { objects: [] } } } },
    });
    assert.equal(cleared.body.relationships.site_vlan.destination.objects.length, 0);
    // Deleting an object deletes its associations.
    assert.equal((await s.api(`/api/dcim/sites/${site2.id}/`, { method: "DELETE" })).status, 204);
    const gone = await s.api(`/api/extras/relationship-associations/?relationship=site_peers`);
    assert.equal(gone.body.count, 0);
    site2 = await create(s, "/api/dcim/sites/", { name: "Beta", status: "planned" });
  });

  it("required relationships: Nautobot's messages on create and on updates that drop them", async () => {
    const rel = await create(s, "/api/extras/relationships/", {
      name: "Req",
      type: "one-to-many",
      source_type: "dcim.platform",
      destination_type: "dcim.manufacturer",
      required_on: "destination",
    });
    const none = await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "m1" } });
    assert.equal(none.status, 400);
    assert.deepEqual(none.body, {
      relationships: {
        req: [
          "Manufacturers require a platform, but no platforms exist yet. Create a platform by posting to /api/dcim/platforms/",
          'You need to specify ["relationships"]["req"]["source"]["objects"].',
        ],
      },
    });
    const pl = await create(s, "/api/dcim/platforms/", { name: "p1" });
    assert.deepEqual(pl.relationships.req.destination, {
      label: "manufacturers",
      object_type: "dcim.manufacturer",
      objects: [],
    });
    const still = await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "m1" } });
    assert.deepEqual(still.body, {
      relationships: { req: ['You need to specify ["relationships"]["req"]["source"]["objects"].'] },
    });
    const m = await create(s, "/api/dcim/manufacturers/", {
      name: "m1",
      relationships: { req: { source: { objects: [pl.id] } } },
    });
    assert.equal(m.relationships.req.source.label, "platform");
    assert.deepEqual(
      m.relationships.req.source.objects.map((o: any) => o.id),
      [pl.id],
    );
    const kept = await s.api(`/api/dcim/manufacturers/${m.id}/`, {
      method: "PATCH",
      body: { description: "x" },
    });
    assert.equal(kept.status, 200);
    const dropped = await s.api(`/api/dcim/manufacturers/${m.id}/`, {
      method: "PATCH",
      body: { description: "y", relationships: {} },
    });
    assert.equal(dropped.status, 400);
    assert.equal((await s.api(`/api/extras/relationships/${rel.id}/`, { method: "DELETE" })).status, 204);
  });

  it("computed fields render per object, with the fallback on a render error", async () => {
    const cfd = await create(s, "/api/extras/computed-fields/", {
      content_type: "dcim.site",
      label: "Shout",
      template: "{{ obj.name | upper }}!",
    });
    assert.equal(cfd.slug, "shout");
    assert.equal(cfd.display, "Shout");
    await create(s, "/api/extras/computed-fields/", {
      content_type: "dcim.site",
      label: "Broken",
      template: "{{ obj.name.nope.deeper() }}",
      fallback_value: "n/a",
      weight: 200,
    });
    const got = await s.api(`/api/dcim/sites/?name=Alpha&include=computed_fields`);
    assert.deepEqual(got.body.results[0].computed_fields, { shout: "ALPHA!", broken: "n/a" });
    const bad = await s.api("/api/extras/computed-fields/", {
      method: "POST",
      body: { content_type: "dcim.site", label: "Bad", template: "{% for %}" },
    });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.template);
  });

  it("custom links and export templates", async () => {
    const missing = await s.api("/api/extras/custom-links/", {
      method: "POST",
      body: { content_type: "dcim.site", name: "l1", text: "Go", target_url: "http://x/{{ obj.name }}" },
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { new_window: ["This field is required."] });
    const link = await create(s, "/api/extras/custom-links/", {
      content_type: "dcim.site",
      name: "l1",
      text: "Go",
      target_url: "http://x/{{ obj.name }}",
      new_window: false,
    });
    assert.equal(link.button_class, "default");
    const et = await create(s, "/api/extras/export-templates/", {
      content_type: "dcim.site",
      name: "names",
      template_code: "{% for s in queryset %}{{ s.name }}{% endfor %}",
    });
    assert.equal(et.display, "dcim | site: names");
    assert.equal(et.owner, null);
    assert.deepEqual(et.relationships, {});
    assert.equal("custom_fields" in et, false);
  });

  it("dynamic groups: filters checked, members through the filter compiler, child groups combined", async () => {
    const bad = await s.api("/api/extras/dynamic-groups/", {
      method: "POST",
      body: { name: "bad", content_type: "dcim.site", filter: { foo: ["x"] } },
    });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.content_type, JSON.stringify(bad.body));
    const unknown = await s.api("/api/extras/dynamic-groups/", {
      method: "POST",
      body: { name: "bad", content_type: "dcim.rack", filter: { foo: ["x"] } },
    });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body, { foo: ["Unknown filter field"] });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "R" });
    const mk = (name: string, status: string, st: string) =>
      create(s, "/api/dcim/devices/", { name, device_type: dt.id, device_role: role.id, site: st, status });
    await mk("d1", "active", site.id);
    await mk("d2", "planned", site.id);
    await mk("d3", "active", site2.id);
    const active = await create(s, "/api/extras/dynamic-groups/", {
      name: "Active",
      content_type: "dcim.device",
      filter: { status: ["active"] },
    });
    assert.equal(active.slug, "active");
    assert.deepEqual(active.children, []);
    const alpha = await create(s, "/api/extras/dynamic-groups/", {
      name: "At Alpha",
      content_type: "dcim.device",
      filter: { site: [site.slug] },
    });
    const members = await s.api(`/api/extras/dynamic-groups/${active.id}/members/`);
    assert.equal(members.status, 200);
    assert.deepEqual(members.body.results.map((d: any) => d.name).sort(), ["d1", "d3"]);
    const parent = await create(s, "/api/extras/dynamic-groups/", {
      name: "Parent",
      content_type: "dcim.device",
      filter: {},
    });
    const m1 = await create(s, "/api/extras/dynamic-group-memberships/", {
      group: active.id,
      parent_group: parent.id,
      operator: "union",
      weight: 10,
    });
    assert.equal(m1.display, "Parent > union (10) > Active");
    await create(s, "/api/extras/dynamic-group-memberships/", {
      group: alpha.id,
      parent_group: parent.id,
      operator: "difference",
      weight: 20,
    });
    const combined = await s.api(`/api/extras/dynamic-groups/${parent.id}/members/`);
    assert.deepEqual(
      combined.body.results.map((d: any) => d.name),
      ["d3"],
    );
    const detail = await s.api(`/api/extras/dynamic-groups/${parent.id}/`);
    assert.equal(detail.body.children.length, 2);
    assert.equal(detail.body.children[0].group.id, active.id);
    assert.equal(detail.body.children[0].operator, "union");
  });
});
