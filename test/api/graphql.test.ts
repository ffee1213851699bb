/**
 * Issue 11: GraphQL at /api/graphql/ as Nautobot 1.6.32 answered the same requests (compared side by side):
 * pynautobot's documented queries and the Ansible `gql_inventory` default query, filters as arguments (at
 * any level), Nautobot's names and enums, permissions as the REST API's, the depth limit, errors in the
 * GraphQL shape (400 for invalid documents, 200 with `errors` for bad filters, never a 500), saved queries
 * and their `run/` action, and one SQL query per relation per level.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getIntrospectionQuery } from "graphql";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildWorld, create, type World } from "../helpers/world.ts";

describe("GraphQL", () => {
  let s: TestServer;
  let w: World;
  const gql = (query: string, variables?: unknown, token?: string) =>
    s.api("/api/graphql/", { method: "POST", body: { query, variables }, ...(token ? { token } : {}) });

  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
    const ip = await create(s, "/api/ipam/ip-addresses/", {
      address: "192.0.2.10/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.interface,
    });
    assert.equal(
      (
        await s.api(`/api/dcim/devices/${w.device}/`, {
          method: "PATCH",
          body: { primary_ip4: ip.id, face: "front", position: 1 },
        })
      ).status,
      200,
    );
    await s.api(`/api/dcim/devices/${w.device}/`, { method: "PATCH", body: { tags: [{ slug: "gold" }] } });
  });
  after(async () => {
    await s.close();
  });

  it("is listed at /api/ and needs a token", async () => {
    const root = await s.api("/api/");
    assert.match(root.body.graphql, /\/api\/graphql\/$/);
    const anon = await s.api("/api/graphql/", {
      method: "POST",
      body: { query: "{ sites { name } }" },
      token: null,
    });
    assert.equal(anon.status, 403);
    assert.deepEqual(anon.body, { detail: "Authentication credentials were not provided." });
  });

  it("answers the Ansible gql_inventory default query", async () => {
    const r = await gql(
      "query { devices { name primary_ip4 { host } platform { napalm_driver } } virtual_machines { name primary_ip4 { host } platform { name } } }",
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const dev = r.body.data.devices.find((d: any) => d.name === "dev-1");
    assert.deepEqual(dev, { name: "dev-1", primary_ip4: { host: "192.0.2.10" }, platform: null });
    assert.deepEqual(r.body.data.virtual_machines, [{ name: "vm-1", primary_ip4: null, platform: null }]);
    assert.ok(Number(r.headers.get("x-sql-queries")) <= 8, `SQL queries: ${r.headers.get("x-sql-queries")}`);
  });

  it("answers pynautobot's documented query with variables, filters as lists and nested reverse relations", async () => {
    const q = `query ($site: [String]) {
      sites(name: $site) { name region { name } devices(name: "dev-1") { name face status { slug name } tags { slug }
        interfaces { name type ip_addresses { address host prefix_length family status { slug } } } } }
    }`;
    const r = await gql(q, { site: ["Site A"] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.data.sites, [
      {
        name: "Site A",
        region: { name: "Europe" },
        devices: [
          {
            name: "dev-1",
            face: "FRONT",
            status: { slug: "active", name: "Active" },
            tags: [{ slug: "gold" }],
            interfaces: [
              {
                name: "eth0",
                type: "A_1000BASE_T",
                ip_addresses: [
                  {
                    address: "192.0.2.10/24",
                    host: "192.0.2.10",
                    prefix_length: 24,
                    family: 4,
                    status: { slug: "active" },
                  },
                ],
              },
            ],
          },
        ],
      },
    ]);
  });

  it("takes limit/offset, single objects by id, and custom fields as cf_<name>", async () => {
    const cf = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: { name: "owner", type: "text", content_types: ["dcim.device"] },
    });
    assert.equal(cf.status, 201, JSON.stringify(cf.body));
    await s.api(`/api/dcim/devices/${w.device}/`, {
      method: "PATCH",
      body: { custom_fields: { owner: "noc" } },
    });
    const page = await gql("{ devices(limit: 1, offset: 1) { name } }");
    assert.deepEqual(page.body.data.devices, [{ name: "dev-1" }]);
    const one = await gql(
      `{ device(id: "${w.device}") { name cf_owner _custom_field_data site { name } config_context } }`,
    );
    assert.deepEqual(one.body.data.device, {
      name: "dev-1",
      cf_owner: "noc",
      _custom_field_data: { owner: "noc" },
      site: { name: "Site A" },
      config_context: {},
    });
    const none = await gql(`{ device(id: "${w.site}") { name } }`);
    assert.deepEqual(none.body, { data: { device: null } });
  });

  it("resolves unions, one-to-one and many-to-many reverse fields, and dynamic groups", async () => {
    const cable = await s.api("/api/dcim/cables/", {
      method: "POST",
      body: {
        termination_a_type: "dcim.interface",
        termination_a_id: w.interface,
        termination_b_type: "dcim.interface",
        termination_b_id: w.interface2,
        status: "connected",
      },
    });
    assert.equal(cable.status, 201, JSON.stringify(cable.body));
    const vlan = await s.api(`/api/dcim/interfaces/${w.interface}/`, {
      method: "PATCH",
      body: { mode: "tagged", tagged_vlans: [w.vlan] },
    });
    assert.equal(vlan.status, 200, JSON.stringify(vlan.body));
    const dg = await s.api("/api/extras/dynamic-groups/", {
      method: "POST",
      body: { name: "Only dev-1", content_type: "dcim.device", filter: { name: ["dev-1"] } },
    });
    assert.equal(dg.status, 201, JSON.stringify(dg.body));
    const r = await gql(`{
      interface(id: "${w.interface}") {
        cable_peer { __typename ... on InterfaceType { name device { name } } }
        cable_peer_interface { name } _cable_peer_type { app_label model }
        connected_endpoint { __typename } connected_interface { device { name } }
        path { is_active destination_type { model } destination_id path }
      }
      ip_addresses(address: "192.0.2.10/24") {
        assigned_object { __typename ... on InterfaceType { name } } interface { name } vminterface { name }
        primary_ip4_for { name }
      }
      vlan(id: "${w.vlan}") { interfaces_as_tagged { name } }
      device(id: "${w.device}") { dynamic_groups { name } }
      other: device(id: "${w.device2}") { dynamic_groups { name } }
    }`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.data, {
      interface: {
        cable_peer: { __typename: "InterfaceType", name: "eth0", device: { name: "dev-2" } },
        cable_peer_interface: { name: "eth0" },
        _cable_peer_type: { app_label: "dcim", model: "interface" },
        connected_endpoint: { __typename: "InterfaceType" },
        connected_interface: { device: { name: "dev-2" } },
        path: {
          is_active: true,
          destination_type: { model: "interface" },
          destination_id: w.interface2,
          path: [`dcim.cable:${cable.body.id}`],
        },
      },
      ip_addresses: [
        {
          assigned_object: { __typename: "InterfaceType", name: "eth0" },
          interface: { name: "eth0" },
          vminterface: null,
          primary_ip4_for: { name: "dev-1" },
        },
      ],
      vlan: { interfaces_as_tagged: [{ name: "eth0" }] },
      device: { dynamic_groups: [{ name: "Only dev-1" }] },
      other: { dynamic_groups: [] },
    });
  });

  it("gives GraphQL errors, never a 500", async () => {
    const typo = await gql("{ devices { nme } }");
    assert.equal(typo.status, 400);
    assert.equal(
      typo.body.errors[0].message,
      'Cannot query field "nme" on type "DeviceType". Did you mean "name"?',
    );
    const syntax = await gql("{ devices( { name } }");
    assert.equal(syntax.status, 400);
    assert.match(syntax.body.errors[0].message, /^Syntax Error/);
    const empty = await s.api("/api/graphql/", { method: "POST", body: {} });
    assert.deepEqual(
      [empty.status, empty.body],
      [400, { errors: [{ message: "Must provide query string." }] }],
    );
    const bad = await gql('{ sites(status: "nope") { name } }');
    assert.equal(bad.status, 200);
    assert.deepEqual(bad.body.data, { sites: null });
    assert.equal(
      bad.body.errors[0].message,
      "{'status': ['Select a valid choice. nope is not one of the available choices.']}",
    );
    const get = await s.api(
      `/api/graphql/?query=${encodeURIComponent('{ sites(name: "Site B") { name } }')}`,
    );
    assert.deepEqual(get.body, { data: { sites: [{ name: "Site B" }] } });
  });

  it("answers the standard introspection query of GraphQL tools despite its depth", async () => {
    const r = await gql(getIntrospectionQuery());
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    const names = r.body.data.__schema.types.map((t: { name: string }) => t.name);
    for (const n of ["DeviceType", "IPAddressType", "DcimInterfaceTypeChoices", "CableTerminationTypes"])
      assert.ok(names.includes(n), n);
  });

  it("refuses queries nested deeper than the limit and too many aliases", async () => {
    let q = "name";
    for (let i = 0; i < 11; i++) q = `site { devices { ${q} } }`;
    const deep = await gql(`{ devices { ${q} } }`);
    assert.equal(deep.status, 400);
    assert.match(deep.body.errors[0].message, /nested \d+ levels deep; the limit is 10/);
    const aliases = Array.from({ length: 11 }, (_v, i) => `a${i}: sites { name }`).join(" ");
    const many = await gql(`{ ${aliases} }`);
    assert.equal(many.status, 400);
    assert.match(many.body.errors[0].message, /11 aliases; the limit is 10/);
  });

  it("shows a constrained user only what the REST API shows them, at every level", async () => {
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "gqluser", password: "pw-gql-1" },
    });
    const token = await createToken(s.store, u.body.id);
    await s.api("/api/users/permissions/", {
      method: "POST",
      body: {
        name: "site b only",
        users: [u.body.id],
        actions: ["view"],
        object_types: ["dcim.site", "dcim.device"],
        constraints: { name: "Site B" },
      },
    });
    const r = await gql("{ sites { name } devices { name } }", undefined, token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.data.sites, [{ name: "Site B" }]);
    assert.deepEqual(r.body.data.devices, [], "no device is named Site B");
    const rest = await s.api("/api/dcim/sites/", { token });
    assert.deepEqual(
      rest.body.results.map((x: any) => x.name),
      ["Site B"],
    );
  });

  it("saves queries with their variables and runs them", async () => {
    const made = await s.api("/api/extras/graphql-queries/", {
      method: "POST",
      body: {
        name: "Dev names",
        query: "query ($site: [String], $n: Int = 3) { devices(site: $site, limit: $n) { name } }",
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.slug, "dev-names");
    assert.deepEqual(made.body.variables, { site: "", n: "3" });
    const ran = await s.api(`/api/extras/graphql-queries/${made.body.id}/run/`, {
      method: "POST",
      body: { variables: { site: ["site-a"], n: 1 } },
    });
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    assert.equal(ran.body.data.devices.length, 1);
    const broken = await s.api("/api/extras/graphql-queries/", {
      method: "POST",
      body: { name: "Broken", query: "query { devices( }" },
    });
    assert.equal(broken.status, 400);
    assert.match(broken.body.query[0], /Syntax Error/);
  });

  it("loads each level set-wise: the SQL query count does not grow with the rows", async () => {
    const more = async (from: number) => {
      for (let i = from; i < from + 20; i++)
        await create(s, "/api/dcim/devices/", {
          name: `bulk-${i}`,
          device_type: w.devicetype,
          device_role: w.devicerole,
          site: w.site2,
          status: "active",
          tenant: w.tenant,
        });
    };
    const q =
      "{ devices { name site { name region { name } } rack { name } device_role { name } device_type { model manufacturer { name } } platform { name } tenant { name } primary_ip4 { address } interfaces { name } } }";
    await more(0);
    const before = await gql(q);
    await more(20);
    const afterMore = await gql(q);
    assert.equal(afterMore.status, 200);
    assert.equal(afterMore.body.data.devices.length, before.body.data.devices.length + 20);
    assert.equal(afterMore.headers.get("x-sql-queries"), before.headers.get("x-sql-queries"));
    // devices, site, region, rack, role, type, manufacturer, tenant, primary IP, interfaces (+ permissions/cf).
    assert.ok(
      Number(afterMore.headers.get("x-sql-queries")) <= 13,
      afterMore.headers.get("x-sql-queries") ?? "",
    );
  });
});
