/**
 * Rules of Nautobot 1.6.32 models' `clean()` under the statuses, keys and words a running Nautobot 1.6.32
 * answered for the same requests at API 1.2 and 1.6 (issue 24): a custom field's `default` checked against
 * the field (`CustomField.clean` → `CustomField.validate`), a config context's duplicate name
 * (`ConfigContext.clean`), an IP address assigned by half (`IPAddress.clean`) and the two sides of a generic
 * relation as DRF checks each (required, not null, an allowed content type, a UUID).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

const V16 = { Accept: "application/json; version=1.6" };

describe("clean() rules as Nautobot", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "S", status: "active" });
    const mfr = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mfr.id, model: "T" });
    const role = await create(s, "/api/dcim/device-roles/", { name: "R" });
    const device = await create(s, "/api/dcim/devices/", {
      name: "d1",
      device_type: dt.id,
      device_role: role.id,
      site: w.site.id,
      status: "active",
    });
    const iface = (name: string) =>
      create(s, "/api/dcim/interfaces/", { device: device.id, name, type: "1000base-t" });
    w.i1 = await iface("e1");
    w.i2 = await iface("e2");
  });
  after(async () => {
    await s.close();
  });

  const send = (method: string, path: string, body: unknown, headers?: Record<string, string>) =>
    s.api(path, { method, body, ...(headers ? { headers } : {}) });
  let n = 0;
  const field = (type: string, extra: Record<string, unknown>) =>
    send("POST", "/api/extras/custom-fields/", {
      name: `cf${++n}`,
      type,
      content_types: ["dcim.site"],
      ...extra,
    });
  const refused = async (r: Promise<{ status: number; body: any }>, body: unknown) => {
    const got = await r;
    assert.equal(got.status, 400, JSON.stringify(got.body));
    assert.deepEqual(got.body, body);
  };

  it("a custom field's default is a value of the field, in CustomField.validate's words", async () => {
    const bad = (type: string, extra: Record<string, unknown>, message: string) =>
      refused(field(type, extra), { default: [message] });
    await bad("integer", { default: "abc" }, 'Invalid default value "abc": Value must be an integer.');
    await bad("integer", { default: {} }, 'Invalid default value "{}": Value must be an integer.');
    await bad(
      "integer",
      { default: 5, validation_minimum: 10 },
      'Invalid default value "5": Value must be at least 10',
    );
    await bad(
      "integer",
      { default: 50, validation_maximum: 10 },
      'Invalid default value "50": Value must not exceed 10',
    );
    // The default is checked before the field's other rules, and only the first broken rule answers.
    await bad(
      "integer",
      { default: "abc", validation_regex: "x" },
      'Invalid default value "abc": Value must be an integer.',
    );
    await bad("boolean", { default: "yes" }, 'Invalid default value "yes": Value must be true or false.');
    await bad(
      "date",
      { default: "2023-02-30" },
      'Invalid default value "2023-02-30": Date values must be in the format YYYY-MM-DD.',
    );
    await bad(
      "text",
      { default: "abc", validation_regex: "^\\d+$" },
      "Invalid default value \"abc\": Value must match regex '^\\d+$'",
    );
    // Python's str() of the value.
    await bad(
      "text",
      { default: { a: "it's", b: [1, null, false] } },
      `Invalid default value "{'a': "it's", 'b': [1, None, False]}": Value must be a string`,
    );
    await bad(
      "text",
      { default: "", required: true },
      'Invalid default value "": Required field cannot be empty.',
    );
    await bad(
      "text",
      { default: [], required: true },
      'Invalid default value "[]": Required field cannot be empty.',
    );
    // A field being created has no choices yet.
    await bad(
      "select",
      { default: "x" },
      'Invalid default value "x": Invalid choice (x). Available choices are: ',
    );
    await bad(
      "multi-select",
      { default: ["x"] },
      `Invalid default value "['x']": Invalid choice(s) (['x']). Available choices are: `,
    );
    for (const [type, value] of [
      ["json", { a: 1 }],
      ["date", "2024-02-29"],
      ["select", ""],
      ["multi-select", []],
      ["integer", 0],
    ] as const) {
      const ok = await field(type, { default: value });
      assert.equal(ok.status, 201, JSON.stringify(ok.body));
    }
  });

  it("a selection field's default is among its choices, in their order; objects' values in the same words", async () => {
    const sel = await create(s, "/api/extras/custom-fields/", {
      name: "sel",
      type: "select",
      content_types: ["dcim.site"],
    });
    const multi = await create(s, "/api/extras/custom-fields/", {
      name: "multi",
      type: "multi-select",
      content_types: ["dcim.site"],
    });
    for (const f of [sel, multi])
      for (const [value, weight] of [
        ["b", 100],
        ["a", 200],
      ])
        await create(s, "/api/extras/custom-field-choices/", { field: f.id, value, weight });
    const selUrl = `/api/extras/custom-fields/${sel.id}/`;
    const multiUrl = `/api/extras/custom-fields/${multi.id}/`;
    await refused(send("PATCH", selUrl, { default: "c" }), {
      default: ['Invalid default value "c": Invalid choice (c). Available choices are: b, a'],
    });
    await refused(send("PATCH", selUrl, { default: "zz" }, V16), {
      default: ['Invalid default value "zz": Invalid choice (zz). Available choices are: b, a'],
    });
    assert.equal((await send("PATCH", selUrl, { default: "a" })).status, 200);
    await refused(send("PATCH", multiUrl, { default: ["a", "c"] }), {
      default: [
        `Invalid default value "['a', 'c']": Invalid choice(s) (['a', 'c']). Available choices are: b, a`,
      ],
    });
    assert.equal((await send("PATCH", multiUrl, { default: ["a", "b"] })).status, 200);
    const site = (custom_fields: Record<string, unknown>) =>
      send("POST", "/api/dcim/sites/", { name: "S2", status: "active", custom_fields });
    await refused(site({ multi: ["a", "c"] }), {
      __all__: [
        "Invalid value for custom field 'multi': Invalid choice(s) (['a', 'c']). Available choices are: b, a",
      ],
    });
    await refused(site({ sel: true }), {
      __all__: ["Invalid value for custom field 'sel': Invalid choice (True). Available choices are: b, a"],
    });
  });

  it("a config context's name is unique, in ConfigContext.clean's words", async () => {
    const first = await create(s, "/api/extras/config-contexts/", { name: "ctx", data: { a: 1 } });
    const other = await create(s, "/api/extras/config-contexts/", { name: "ctx2", data: { a: 1 } });
    const taken = { name: ["A ConfigContext with this name already exists."] };
    await refused(send("POST", "/api/extras/config-contexts/", { name: "ctx", data: { a: 2 } }), taken);
    await refused(send("POST", "/api/extras/config-contexts/", { name: "ctx", data: { a: 2 } }, V16), taken);
    await refused(send("PATCH", `/api/extras/config-contexts/${other.id}/`, { name: "ctx" }), taken);
    const same = await send("PATCH", `/api/extras/config-contexts/${first.id}/`, { name: "ctx", weight: 5 });
    assert.equal(same.status, 200);
  });

  it("an IP address is assigned by both assigned_object_type and assigned_object_id or neither (POST, PUT, PATCH)", async () => {
    const half = {
      __all__: ["assigned_object_type and assigned_object_id must either both be null or both be non-null"],
    };
    const ip = (address: string, extra: Record<string, unknown>, headers?: Record<string, string>) =>
      send("POST", "/api/ipam/ip-addresses/", { address, status: "active", ...extra }, headers);
    for (const headers of [undefined, V16]) {
      await refused(ip("10.0.0.1/24", { assigned_object_type: "dcim.interface" }, headers), half);
      await refused(ip("10.0.0.1/24", { assigned_object_id: w.i1.id }, headers), half);
      await refused(
        ip("10.0.0.1/24", { assigned_object_type: null, assigned_object_id: w.i1.id }, headers),
        half,
      );
      await refused(
        ip(
          "10.0.0.1/24",
          { assigned_object_type: "virtualization.vminterface", assigned_object_id: null },
          headers,
        ),
        half,
      );
    }
    // A model rule: checked only when every field is valid, and before the address's own rules.
    await refused(ip("bad", { assigned_object_type: "dcim.interface" }), {
      address: ["Invalid IP address format: bad"],
    });
    await refused(ip("10.0.0.1/0", { assigned_object_type: "dcim.interface" }), half);
    // Each side as its serializer field checks it.
    await refused(ip("10.0.0.1/24", { assigned_object_type: "dcim.device" }), {
      assigned_object_type: ["Invalid content type: dcim.device"],
    });
    await refused(ip("10.0.0.1/24", { assigned_object_type: "dcim.device", assigned_object_id: "bad" }), {
      assigned_object_type: ["Invalid content type: dcim.device"],
      assigned_object_id: ["Must be a valid UUID."],
    });

    const free = await create(s, "/api/ipam/ip-addresses/", { address: "10.0.0.2/24", status: "active" });
    const used = await create(s, "/api/ipam/ip-addresses/", {
      address: "10.0.0.3/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: w.i1.id,
    });
    const freeUrl = `/api/ipam/ip-addresses/${free.id}/`;
    const usedUrl = `/api/ipam/ip-addresses/${used.id}/`;
    for (const headers of [undefined, V16]) {
      await refused(send("PATCH", freeUrl, { assigned_object_type: "dcim.interface" }, headers), half);
      await refused(send("PATCH", freeUrl, { assigned_object_id: w.i1.id }, headers), half);
      const put = { address: "10.0.0.2/24", status: "active" };
      await refused(send("PUT", freeUrl, { ...put, assigned_object_type: "dcim.interface" }, headers), half);
      await refused(send("PUT", freeUrl, { ...put, assigned_object_id: w.i1.id }, headers), half);
      await refused(send("PATCH", usedUrl, { assigned_object_type: null }, headers), half);
      await refused(send("PATCH", usedUrl, { assigned_object_id: null }, headers), half);
      const putUsed = { address: "10.0.0.3/24", status: "active" };
      await refused(send("PUT", usedUrl, { ...putUsed, assigned_object_type: null }, headers), half);
      await refused(send("PATCH", usedUrl, { assigned_object_type: "dcim.device" }, headers), {
        assigned_object_type: ["Invalid content type: dcim.device"],
      });
    }
    // One side given, the other kept from the stored address.
    const moved = await send("PATCH", usedUrl, { assigned_object_id: w.i2.id });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.assigned_object_type, "dcim.interface");
    const cleared = await send("PATCH", usedUrl, { assigned_object_type: null, assigned_object_id: null });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.assigned_object, null);
  });

  it("a required generic relation's sides: required and never null (cable terminations)", async () => {
    const cable = (change: Record<string, unknown>) => {
      const body: Record<string, unknown> = {
        termination_a_type: "dcim.interface",
        termination_a_id: w.i1.id,
        termination_b_type: "dcim.interface",
        termination_b_id: w.i2.id,
        status: "connected",
      };
      for (const [k, v] of Object.entries(change)) {
        if (v === undefined) delete body[k];
        else body[k] = v;
      }
      return send("POST", "/api/dcim/cables/", body);
    };
    await refused(cable({ termination_a_id: undefined }), { termination_a_id: ["This field is required."] });
    await refused(cable({ termination_a_type: undefined }), {
      termination_a_type: ["This field is required."],
    });
    await refused(cable({ termination_a_type: null }), {
      termination_a_type: ["This field may not be null."],
    });
    await refused(cable({ termination_b_id: null }), { termination_b_id: ["This field may not be null."] });
  });
});
