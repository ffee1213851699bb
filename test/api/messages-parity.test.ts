/**
 * Issue 24, error texts: the same bad request gives the same status and body as Nautobot 1.6.32 (each
 * expected body below was answered by a running Nautobot 1.6.32 to the same request).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("validation messages as Nautobot 1.6.32 words them", () => {
  let s: TestServer;
  const id: Record<string, string> = {};
  const post = async (path: string, body: unknown) => {
    const r = await s.api(path, { method: "POST", body });
    return r;
  };
  const make = async (key: string, path: string, body: unknown) => {
    const r = await post(path, body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    id[key] = r.body.id;
  };
  before(async () => {
    s = await startServer();
    for (const n of ["s1", "s2", "s3"])
      await make(n, "/api/dcim/sites/", { name: n, slug: n, status: "active" });
    await make("mf", "/api/dcim/manufacturers/", { name: "mf", slug: "mf" });
    await make("dt", "/api/dcim/device-types/", {
      manufacturer: id.mf,
      model: "dt",
      slug: "dt",
      u_height: 1,
    });
    await make("role", "/api/dcim/device-roles/", { name: "role", slug: "role" });
    await make("rack", "/api/dcim/racks/", { name: "rack", site: id.s1, status: "active" });
    const dev = { device_type: id.dt, device_role: id.role, site: id.s1, status: "active" };
    await make("d1", "/api/dcim/devices/", { ...dev, name: "d1", rack: id.rack, position: 1, face: "front" });
    await make("d3", "/api/dcim/devices/", { ...dev, name: "d3" });
    await make("if1", "/api/dcim/interfaces/", { device: id.d1, name: "eth0", type: "1000base-t" });
    await make("ip1", "/api/ipam/ip-addresses/", {
      address: "10.77.1.1/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: id.if1,
    });
    const p = await s.api(`/api/dcim/devices/${id.d1}/`, { method: "PATCH", body: { primary_ip4: id.ip1 } });
    assert.equal(p.status, 200, JSON.stringify(p.body));
  });
  after(async () => {
    await s.close();
  });

  it("a device on an occupied rack unit: DeviceSerializer's unique-together message, nothing written", async () => {
    const r = await post("/api/dcim/devices/", {
      device_type: id.dt,
      device_role: id.role,
      site: id.s1,
      status: "active",
      name: "d2",
      rack: id.rack,
      position: 1,
      face: "front",
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, {
      non_field_errors: [
        "The position and face is already occupied on this rack. The fields rack, position, face must make a unique set.",
      ],
    });
    assert.equal((await s.api("/api/dcim/devices/?name=d2")).body.count, 0);
  });

  it("primary_ip4 set to another device's IP: Device.clean's message, not the one-to-one uniqueness", async () => {
    const r = await s.api(`/api/dcim/devices/${id.d3}/`, { method: "PATCH", body: { primary_ip4: id.ip1 } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, {
      primary_ip4: ["The specified IP address (10.77.1.1/24) is not assigned to this device."],
    });
  });

  it("a webhook without an event type: the error is under __all__", async () => {
    const r = await post("/api/extras/webhooks/", {
      name: "wh",
      content_types: ["dcim.site"],
      payload_url: "http://127.0.0.1:9/x",
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, {
      __all__: ["You must select at least one type: create, update, and/or delete."],
    });
  });

  it("malformed JSON: Python's json parse error text, with line, column and character", async () => {
    const cases: Array<[string, string]> = [
      ['{"name": ', "Expecting value: line 1 column 10 (char 9)"],
      ["{'a':1}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"],
      ['{"a" 1}', "Expecting ':' delimiter: line 1 column 6 (char 5)"],
      ["[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"],
      ['{"é": "a\\qb"}', "Invalid \\escape: line 1 column 9 (char 8)"],
      ['"abc', "Unterminated string starting at: line 1 column 1 (char 0)"],
      ["{}\n}", "Extra data: line 2 column 1 (char 3)"],
      ["[NaN]", "Out of range float values are not allowed"],
    ];
    for (const [body, want] of cases) {
      const r = await fetch(`${s.url}/api/dcim/sites/`, {
        method: "POST",
        headers: {
          Authorization: `Token ${s.token}`,
          "Content-Type": "application/json",
          Accept: "application/json",
        },
        body,
      });
      assert.equal(r.status, 400, body);
      assert.deepEqual(await r.json(), { detail: `JSON parse error - ${want}` }, body);
    }
  });

  it("clean() messages and keys of racks, interfaces, cables, custom fields, export templates, config contexts", async () => {
    const bad = async (method: string, path: string, body: unknown, want: unknown) => {
      const r = await s.api(path, { method, body });
      assert.equal(r.status, 400, `${method} ${path} ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, want, `${method} ${path}`);
    };
    await make("rg", "/api/dcim/rack-groups/", { name: "rg", slug: "rg", site: id.s2 });
    await bad(
      "POST",
      "/api/dcim/racks/",
      { name: "r2", site: id.s1, status: "active", group: id.rg },
      { __all__: ["Assigned rack group must belong to parent site (s1)."] },
    );
    await make("lag", "/api/dcim/interfaces/", {
      device: id.d3,
      name: "lag0",
      type: "lag",
      status: "active",
    });
    await bad(
      "POST",
      "/api/dcim/interfaces/",
      { device: id.d1, name: "eth9", type: "1000base-t", status: "active", lag: id.lag },
      { lag: ["The selected LAG interface (lag0) belongs to a different device (d3)."] },
    );
    await make("rp", "/api/dcim/rear-ports/", { device: id.d1, name: "rp", type: "8p8c", positions: 1 });
    await make("fp", "/api/dcim/front-ports/", {
      device: id.d1,
      name: "fp",
      type: "8p8c",
      rear_port: id.rp,
      rear_port_position: 1,
    });
    await bad(
      "POST",
      "/api/dcim/cables/",
      {
        termination_a_type: "dcim.frontport",
        termination_a_id: id.fp,
        termination_b_type: "dcim.rearport",
        termination_b_id: id.rp,
        status: "connected",
      },
      { __all__: ["A front port cannot be connected to it corresponding rear port"] },
    );
    await make("cf", "/api/extras/custom-fields/", {
      name: "cf1",
      label: "cf one",
      type: "integer",
      content_types: ["dcim.site"],
    });
    const cf = `/api/extras/custom-fields/${id.cf}/`;
    await bad("PATCH", cf, { name: "cf2" }, { name: ["Name cannot be changed once created"] });
    await bad("PATCH", cf, { type: "text" }, { type: ["Type cannot be changed once created"] });
    await bad(
      "PATCH",
      cf,
      { validation_regex: "^a" },
      {
        validation_regex: ["Regular expression validation is supported only for text, URL and select fields"],
      },
    );
    await bad(
      "POST",
      "/api/extras/config-contexts/",
      { name: "cc", data: [1] },
      { data: ['JSON data must be in object form. Example: {"foo": 123}'] },
    );
    const et = { name: "et", content_type: "dcim.site", template_code: "x" };
    assert.equal((await post("/api/extras/export-templates/", et)).status, 201);
    await bad("POST", "/api/extras/export-templates/", et, {
      name: ["An ExportTemplate with this name and content type already exists."],
    });
  });

  describe("relationship associations (RelationshipAssociation.clean)", () => {
    let rel: string;
    let srel: string;
    const assoc = (relationship: string, src: string, dst: string) =>
      post("/api/extras/relationship-associations/", {
        relationship,
        source_type: "dcim.site",
        source_id: id[src],
        destination_type: "dcim.site",
        destination_id: id[dst],
      });
    before(async () => {
      const one = { source_type: "dcim.site", destination_type: "dcim.site" };
      rel = (
        await post("/api/extras/relationships/", { ...one, name: "r11", slug: "r11", type: "one-to-one" })
      ).body.id;
      srel = (
        await post("/api/extras/relationships/", {
          ...one,
          name: "s11",
          slug: "s11",
          type: "symmetric-one-to-one",
        })
      ).body.id;
      assert.equal((await assoc(rel, "s1", "s2")).status, 201);
      assert.equal((await assoc(srel, "s1", "s2")).status, 201);
    });

    it("over the limit: keyed source / destination, naming the object", async () => {
      const cases: Array<[string, string, string, unknown]> = [
        ["r", "s1", "s3", { source: ["Unable to create more than one r11 association from s1 (source)"] }],
        [
          "r",
          "s3",
          "s2",
          { destination: ["Unable to create more than one r11 association to s2 (destination)"] },
        ],
        [
          "r",
          "s3",
          "s3",
          { destination_id: ["An object cannot form a RelationshipAssociation with itself"] },
        ],
        ["s", "s2", "s1", { __all__: ["A s11 association already exists between s2 and s1"] }],
        [
          "s",
          "s3",
          "s1",
          { destination: ["Unable to create more than one s11 association involving s1 (peer)"] },
        ],
        ["s", "s2", "s3", { source: ["Unable to create more than one s11 association involving s2 (peer)"] }],
      ];
      for (const [which, src, dst, want] of cases) {
        const r = await assoc(which === "r" ? rel : srel, src, dst);
        assert.equal(r.status, 400, `${which} ${src}->${dst}`);
        assert.deepEqual(r.body, want, `${which} ${src}->${dst}`);
      }
      assert.equal((await s.api("/api/extras/relationship-associations/")).body.count, 2);
    });

    it("through an object's relationships key: the same messages (400 here, a 500 in Nautobot)", async () => {
      const patch = (body: unknown) => s.api(`/api/dcim/sites/${id.s3}/`, { method: "PATCH", body });
      let r = await patch({ relationships: { r11: { destination: { objects: [id.s2] } } } });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, {
        relationships: ["Unable to create more than one r11 association to s2 (destination)"],
      });
      r = await patch({ relationships: { s11: { peer: { objects: [id.s3] } } } });
      assert.deepEqual(r.body, {
        relationships: ["An object cannot form a RelationshipAssociation with itself"],
      });
      r = await patch({ relationships: { nope: { source: { objects: [id.s1] } } } });
      assert.deepEqual(r.body, { relationships: ['"nope" is not a relationship on dcim.Site'] });
      assert.equal((await s.api("/api/extras/relationship-associations/")).body.count, 2);
    });
  });
});
