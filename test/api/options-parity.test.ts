/**
 * OPTIONS metadata as DRF's SimpleMetadata in Nautobot 1.6.32 (issue 9): labels and help texts of its
 * models, `children` of nested objects, `max_length`/`min_value`/`max_value`, the opt-in and notes keys,
 * content-type choices as `app | model`; and device-type images as null.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("OPTIONS metadata and images", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("interfaces and devices describe their fields as Nautobot does", async () => {
    const o = (await s.api("/api/dcim/interfaces/", { method: "OPTIONS" })).body.actions.POST;
    assert.deepEqual(o.display, {
      type: "field",
      required: false,
      read_only: true,
      label: "Display",
      help_text: "Human friendly display value",
    });
    assert.deepEqual(o.mac_address, {
      type: "string",
      required: false,
      read_only: false,
      label: "MAC Address",
      max_length: 18,
    });
    assert.deepEqual(o.label.help_text, "Physical label");
    assert.equal(o.device.type, "nested object");
    assert.deepEqual(Object.keys(o.device.children), ["display", "id", "url", "name"]);
    assert.equal(o.tagged_vlans.type, "field");
    assert.deepEqual(o.notes_url, { type: "field", required: false, read_only: true, label: "Notes url" });
    assert.equal(o.computed_fields.read_only, true);
    assert.equal(o.relationships.read_only, false);
    const d = (await s.api("/api/dcim/devices/", { method: "OPTIONS" })).body.actions.POST;
    assert.equal(d.serial.label, "Serial number");
    assert.equal(d.position.help_text, "The lowest-numbered unit occupied by the device");
    // Only views with Nautobot's ContentTypeMetadata (or a status field) list content-type choices.
    const et = (await s.api("/api/extras/export-templates/", { method: "OPTIONS" })).body.actions.POST;
    assert.deepEqual(
      et.content_type.choices.find((c: any) => c.value === "dcim.site"),
      { value: "dcim.site", display: "dcim | site" },
    );
    const cl = (await s.api("/api/extras/custom-links/", { method: "OPTIONS" })).body.actions.POST;
    assert.equal(cl.content_type.choices, undefined);
  });

  it("device types without images render them as null", async () => {
    const m = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: m.id, model: "X" });
    assert.equal(dt.front_image, null);
    assert.equal(dt.rear_image, null);
  });
});
