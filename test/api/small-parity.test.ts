/**
 * Issue 24, the smaller differences from Nautobot 1.6.32, each compared side by side with a running
 * Nautobot 1.6.32 (same requests, same status and body): GraphQL error messages in graphql-core 2's words,
 * undefined custom-field keys kept, `/health/` and `/api/status/` bodies, note slugs, relationship
 * content types, annotated counts left out of create responses and of related objects, slim nested forms
 * with their stamps, and dynamic-group members in the member model's plain serializer.
 * Redundancy groups and inventory items: nested plain choices, bare-id FKs, a required protocol.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { webClient } from "../helpers/ui.ts";

describe("small parity differences with Nautobot 1.6.32 (issue 24)", () => {
  let s: TestServer;
  const post = async (path: string, body: unknown) => {
    const r = await s.api(path, { method: "POST", body });
    assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const gql = (query: string, variables?: unknown) =>
    s.api("/api/graphql/", { method: "POST", body: { query, variables } });

  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("GraphQL errors are worded as graphene 2 / graphql-core 2 word them", async () => {
    const unknown = await gql("{ sites(nosuch: 1) { name } }");
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body.errors, [
      {
        message: 'Unknown argument "nosuch" on field "sites" of type "Query".',
        locations: [{ line: 1, column: 9 }],
      },
    ]);
    const typo = await gql('{ sites(nam: "x") { name } }');
    assert.equal(
      typo.body.errors[0].message,
      'Unknown argument "nam" on field "sites" of type "Query". Did you mean "name"?',
    );
    const directive = await gql("{ sites { name @skip(iff: true) } }");
    assert.deepEqual(
      directive.body.errors.map((e: { message: string }) => e.message),
      [
        'Unknown argument "iff" on directive "@skip". Did you mean "if"?',
        'Directive "skip" argument "if" of type "Boolean!" is required but not provided.',
      ],
    );

    const syntax = await gql("{ sites { name ");
    assert.equal(syntax.status, 400);
    assert.deepEqual(syntax.body.errors, [
      {
        message:
          "Syntax Error GraphQL (1:16) Expected Name, found EOF\n\n1: { sites { name \n                  ^\n",
        locations: [{ line: 1, column: 16 }],
      },
    ]);
    const multiline = await gql("query {\n  sites {\n    name\n  }\n}}");
    assert.equal(
      multiline.body.errors[0].message,
      "Syntax Error GraphQL (5:2) Unexpected }\n\n4:   }\n5: }}\n    ^\n",
    );
    const unterminated = await gql('\n\n{ sites(name: "a) { name } }');
    assert.equal(
      unterminated.body.errors[0].message,
      'Syntax Error GraphQL (3:29) Unterminated string\n\n2: \n3: { sites(name: "a) { name } }\n                               ^\n',
    );
    const character = await gql("{ sites { name % } }");
    assert.equal(
      character.body.errors[0].message,
      'Syntax Error GraphQL (1:16) Unexpected character "%".\n\n1: { sites { name % } }\n                  ^\n',
    );

    const position = await gql("query($n: Int) { sites(name: $n) { name } }", { n: 1 });
    assert.deepEqual(position.body.errors, [
      {
        message: 'Variable "n" of type "Int" used in position expecting type "[String]".',
        locations: [
          { line: 1, column: 7 },
          { line: 1, column: 30 },
        ],
      },
    ]);
    const value = await gql('{ sites(limit: "x") { name } }');
    assert.deepEqual(value.body.errors, [
      {
        message: 'Argument "limit" has invalid value "x".\nExpected type "Int", found "x".',
        locations: [{ line: 1, column: 16 }],
      },
    ]);
    const element = await gql('{ sites(name: ["a", 3]) { name } }');
    assert.equal(
      element.body.errors[0].message,
      'Argument "name" has invalid value ["a", 3].\nIn element #1: Expected type "String", found 3.',
    );
    // Valid queries still run.
    assert.equal((await gql('{ sites(name: ["a"], limit: 1) { name } }')).status, 200);
  });

  it("custom_fields keys that name no custom field are kept before API 1.4 and dropped from 1.4", async () => {
    const site = await post("/api/dcim/sites/", { name: "cf site", status: "active" });
    const patched = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { nosuch: 1 } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.custom_fields, {}, "undefined keys are not shown");
    // At 1.4+ keys are slugs; one naming no custom field is dropped.
    const v14 = await s.api(`/api/dcim/sites/${site.id}/`, {
      method: "PATCH",
      body: { custom_fields: { later: 2 } },
      headers: { Accept: "application/json; version=1.4" },
    });
    assert.equal(v14.status, 200, JSON.stringify(v14.body));
    // Another write keeps what was stored.
    await s.api(`/api/dcim/sites/${site.id}/`, { method: "PATCH", body: { description: "x" } });
    for (const name of ["nosuch", "later"])
      await post("/api/extras/custom-fields/", { name, type: "integer", content_types: ["dcim.site"] });
    const got = await s.api(`/api/dcim/sites/${site.id}/`);
    assert.deepEqual(got.body.custom_fields, { later: null, nosuch: 1 });
  });

  it("/health/ answers Nautobot's JSON body without a login; /health stays the bare probe", async () => {
    const r = await fetch(`${s.url}/health/`, { headers: { Accept: "application/json" } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /application\/json/);
    assert.deepEqual(await r.json(), { DatabaseBackend: "working" });
    const bare = await fetch(`${s.url}/health`);
    assert.equal(bare.status, 200);
    assert.deepEqual(await bare.json(), { status: "ok" });
  });

  it("/api/status/ carries Nautobot's keys in its order", async () => {
    const r = await s.api("/api/status/");
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).slice(0, 7), [
      "django-version",
      "installed-apps",
      "nautobot-version",
      "plugins",
      "python-version",
      "rq-workers-running",
      "celery-workers-running",
    ]);
    assert.equal(r.body["django-version"], null);
    assert.equal(r.body["python-version"], null);
    assert.equal(r.body["nautobot-version"], "1.6.32");
    assert.ok("nautobot.dcim" in r.body["installed-apps"]);
    assert.equal(r.body["installed-apps"]["nautobot.dcim"], null);
    assert.equal(typeof r.body["node-version"], "string");
  });

  it("a note's slug is slugify(f'{object}-{datetime.now().isoformat()}')", async () => {
    const site = await post("/api/dcim/sites/", { name: "Note Site", status: "active" });
    const note = await post(`/api/dcim/sites/${site.id}/notes/`, { note: "hello" });
    assert.match(note.slug, /^note-site-\d{4}-\d{2}-\d{2}t\d{6}(\d{6})?$/);
    assert.equal(note.display, note.slug);
  });

  it("relationship content types include interface redundancy group associations, in Nautobot's order", async () => {
    const r = await s.api("/api/extras/relationships/", { method: "OPTIONS" });
    const values: string[] = r.body.actions.POST.source_type.choices.map((c: { value: string }) => c.value);
    assert.ok(values.includes("dcim.interfaceredundancygroupassociation"));
    // By app, then verbose name code unit by code unit: "IP address", "RIR", "VLAN" before "aggregate".
    const ipam = values.filter((v) => v.startsWith("ipam."));
    assert.deepEqual(ipam.slice(0, 3), ["ipam.ipaddress", "ipam.rir", "ipam.vlan"]);
    assert.equal(values.filter((v) => v.startsWith("virtualization."))[0], "virtualization.vminterface");
    const rel = await post("/api/extras/relationships/", {
      name: "assoc rel",
      slug: "assoc-rel",
      type: "one-to-many",
      source_type: "dcim.interfaceredundancygroupassociation",
      destination_type: "dcim.site",
    });
    assert.equal(rel.source_type, "dcim.interfaceredundancygroupassociation");
  });

  it("annotated counts: left out of create responses and related objects, kept on reads, updates and brief", async () => {
    const parent = await post("/api/dcim/regions/", { name: "Count parent" });
    assert.equal("site_count" in parent, false);
    assert.equal(parent._depth, 0);
    const [child] = await post("/api/dcim/regions/", [{ name: "Count child", parent: parent.id }]);
    assert.equal("site_count" in child, false, "bulk create too");
    const read = await s.api(`/api/dcim/regions/${child.id}/`);
    assert.equal(read.body.site_count, 0);
    assert.deepEqual(Object.keys(read.body.parent), ["display", "id", "url", "name", "slug", "_depth"]);
    const patched = await s.api(`/api/dcim/regions/${child.id}/`, {
      method: "PATCH",
      body: { description: "x" },
    });
    assert.equal(patched.body.site_count, 0);
    const brief = await s.api(`/api/dcim/regions/?brief=1&id=${parent.id}`);
    assert.equal(brief.body.results[0].site_count, 0);
    const tag = await post("/api/extras/tags/", { name: "Count tag", slug: "count-tag" });
    assert.equal("tagged_items" in tag, false);
    assert.equal((await s.api(`/api/extras/tags/${tag.id}/`)).body.tagged_items, 0);
    // A SerializerMethodField reading the annotation: null on create.
    const lt = await post("/api/dcim/location-types/", { name: "Count type" });
    assert.equal(lt.tree_depth, null);
    assert.equal((await s.api(`/api/dcim/location-types/${lt.id}/`)).body.tree_depth, 0);
  });

  it("slim nested forms carry Nautobot's stamps (front port rear_port, circuit termination_a)", async () => {
    const site = await post("/api/dcim/sites/", { name: "Nest site", status: "active" });
    const mfr = await post("/api/dcim/manufacturers/", { name: "Nest mfr" });
    const dt = await post("/api/dcim/device-types/", { manufacturer: mfr.id, model: "N1" });
    const role = await post("/api/dcim/device-roles/", { name: "Nest role" });
    const dev = await post("/api/dcim/devices/", {
      name: "nest-dev",
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
    });
    const rp = await post("/api/dcim/rear-ports/", {
      name: "rp",
      device: dev.id,
      type: "8p8c",
      positions: 1,
    });
    const fp = await post("/api/dcim/front-ports/", {
      name: "fp",
      device: dev.id,
      type: "8p8c",
      rear_port: rp.id,
    });
    const gotFp = await s.api(`/api/dcim/front-ports/${fp.id}/`);
    assert.deepEqual(Object.keys(gotFp.body.rear_port), [
      "display",
      "id",
      "url",
      "name",
      "label",
      "created",
      "last_updated",
    ]);
    const provider = await post("/api/circuits/providers/", { name: "Nest provider" });
    const type = await post("/api/circuits/circuit-types/", { name: "Nest type" });
    const circuit = await post("/api/circuits/circuits/", {
      cid: "nest-1",
      provider: provider.id,
      type: type.id,
      status: "active",
    });
    await post("/api/circuits/circuit-terminations/", { circuit: circuit.id, term_side: "A", site: site.id });
    const got = await s.api(`/api/circuits/circuits/${circuit.id}/`);
    assert.deepEqual(Object.keys(got.body.termination_a).slice(-3), ["created", "last_updated", "notes_url"]);
    assert.match(
      got.body.termination_a.notes_url,
      /\/api\/circuits\/circuit-terminations\/[0-9a-f-]+\/notes\/$/,
    );
    // Related objects: the provider's circuit_count is an annotation Nautobot's relation lacks.
    assert.equal("circuit_count" in got.body.provider, false);

    // Dynamic-group members: the member model's plain serializer, opt-in keys only when asked for.
    const group = await post("/api/extras/dynamic-groups/", {
      name: "Nest group",
      slug: "nest-group",
      content_type: "dcim.device",
      filter: {},
    });
    const members = await s.api(`/api/extras/dynamic-groups/${group.id}/members/`);
    assert.equal(members.status, 200);
    const keys = Object.keys(members.body.results[0]);
    for (const k of ["config_context", "computed_fields", "relationships"])
      assert.equal(keys.includes(k), false, k);
    assert.ok(keys.includes("custom_fields"));
    const opted = await s.api(`/api/extras/dynamic-groups/${group.id}/members/?include=computed_fields`);
    assert.deepEqual(opted.body.results[0].computed_fields, {});
  });

  it("redundancy groups and inventory items: nested choices, bare ids and required fields as Nautobot's", async () => {
    const site = await post("/api/dcim/sites/", { name: "Red site", status: "active" });
    const mfr = await post("/api/dcim/manufacturers/", { name: "Red mfr" });
    const dt = await post("/api/dcim/device-types/", { manufacturer: mfr.id, model: "R1" });
    const role = await post("/api/dcim/device-roles/", { name: "Red role" });
    const sg = await post("/api/extras/secrets-groups/", { name: "Red secrets" });
    // Nautobot 1.6 `DeviceRedundancyGroupSerializer.secrets_group`: a PrimaryKeyRelatedField.
    const drg = await post("/api/dcim/device-redundancy-groups/", {
      name: "Red group",
      status: "active",
      failover_strategy: "active-active",
      secrets_group: sg.id,
    });
    assert.equal(drg.secrets_group, sg.id);
    assert.equal((await s.api(`/api/dcim/device-redundancy-groups/${drg.id}/`)).body.secrets_group, sg.id);
    const dev = await post("/api/dcim/devices/", {
      name: "red-dev",
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
      device_redundancy_group: drg.id,
      device_redundancy_group_priority: 1,
    });
    // The nested serializer's plain ChoiceField: the bare value.
    const nestedDrg = (await s.api(`/api/dcim/devices/${dev.id}/`)).body.device_redundancy_group;
    assert.deepEqual(Object.keys(nestedDrg), ["display", "id", "url", "name", "slug", "failover_strategy"]);
    assert.equal(nestedDrg.failover_strategy, "active-active");

    const bad = (body: object) =>
      s.api("/api/dcim/interface-redundancy-groups/", {
        method: "POST",
        body: { status: "active", ...body },
      });
    const missing = await bad({ name: "Red irg 0" });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.protocol, ["This field is required."]);
    const blank = await bad({ name: "Red irg 1", protocol: "" });
    assert.equal(blank.status, 400);
    assert.deepEqual(blank.body.protocol, ["This field may not be blank."]);
    // Nautobot's PrimaryKeyRelatedField reads a UUID; an unknown one names the field.
    const unknown = await s.api("/api/dcim/inventory-items/", {
      method: "POST",
      body: {
        device: "00000000-0000-0000-0000-000000000000",
        name: "x",
        parent: "00000000-0000-0000-0000-000000000000",
      },
    });
    assert.equal(unknown.status, 400);
    assert.ok(unknown.body.parent, JSON.stringify(unknown.body));
    const irg = await post("/api/dcim/interface-redundancy-groups/", {
      name: "Red irg",
      status: "active",
      protocol: "hsrp",
    });
    const iface = await post("/api/dcim/interfaces/", { device: dev.id, name: "eth0", type: "1000base-t" });
    const assoc = await post("/api/dcim/interface-redundancy-group-associations/", {
      interface_redundancy_group: irg.id,
      interface: iface.id,
      priority: 1,
    });
    assert.deepEqual(Object.keys(assoc.interface_redundancy_group), [
      "display",
      "id",
      "url",
      "name",
      "protocol",
    ]);
    assert.equal(assoc.interface_redundancy_group.protocol, "hsrp");

    // Nautobot 1.6 `InventoryItemSerializer.parent`: a PrimaryKeyRelatedField.
    const top = await post("/api/dcim/inventory-items/", { device: dev.id, name: "Red top" });
    assert.equal(top.parent, null);
    const sub = await post("/api/dcim/inventory-items/", { device: dev.id, name: "Red sub", parent: top.id });
    assert.equal(sub.parent, top.id);
    const list = await s.api(`/api/dcim/inventory-items/?id=${sub.id}`);
    assert.equal(list.body.results[0].parent, top.id);
    // The web interface still links them (represent's `nestIds`) and its edit form keeps the parent selected.
    const web = await webClient(s);
    const page = await web.get(`/dcim/inventory-items/${sub.id}/`);
    assert.match(page.html, new RegExp(`href="/dcim/inventory-items/${top.id}/"`));
    const edit = await web.get(`/dcim/inventory-items/${sub.id}/edit/`);
    assert.match(edit.html, new RegExp(`value="${top.id}" selected`));
    const drgPage = await web.get(`/dcim/device-redundancy-groups/${drg.id}/`);
    assert.match(drgPage.html, new RegExp(`href="/extras/secrets-groups/${sg.id}/"`));
  });
});
