/**
 * `GET /api/dcim/racks/<id>/elevation/` as Nautobot 1.6.32 answered for the same rack: units top to bottom
 * with the occupying device on the asked face (full-depth devices on both), `render=svg`, and 400s for bad
 * choices.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

describe("rack elevation", () => {
  let s: TestServer;
  const w: Record<string, any> = {};
  before(async () => {
    s = await startServer();
    w.site = await create(s, "/api/dcim/sites/", { name: "S", status: "active" });
    w.rack = await create(s, "/api/dcim/racks/", {
      name: "R",
      site: w.site.id,
      status: "active",
      u_height: 4,
    });
    const m = await create(s, "/api/dcim/manufacturers/", { name: "M" });
    const half = await create(s, "/api/dcim/device-types/", {
      manufacturer: m.id,
      model: "2U half",
      u_height: 2,
      is_full_depth: false,
    });
    const full = await create(s, "/api/dcim/device-types/", {
      manufacturer: m.id,
      model: "1U full",
      u_height: 1,
    });
    const role = await create(s, "/api/dcim/device-roles/", { name: "R" });
    const base = { device_role: role.id, site: w.site.id, rack: w.rack.id, status: "active" };
    w.d = await create(s, "/api/dcim/devices/", {
      ...base,
      name: "front2u",
      device_type: half.id,
      position: 2,
      face: "front",
    });
    w.f = await create(s, "/api/dcim/devices/", {
      ...base,
      name: "full1u",
      device_type: full.id,
      position: 4,
      face: "front",
    });
  });
  after(async () => {
    await s.close();
  });

  it("front units top to bottom, with Nautobot's unit shape", async () => {
    const r = await s.api(`/api/dcim/racks/${w.rack.id}/elevation/`);
    assert.equal(r.status, 200);
    assert.equal(r.body.count, 4);
    assert.deepEqual(
      r.body.results.map((u: any) => [u.name, u.device?.name ?? null, u.occupied]),
      [
        ["U4", "full1u", true],
        ["U3", "front2u", true],
        ["U2", "front2u", true],
        ["U1", null, false],
      ],
    );
    assert.deepEqual(r.body.results[1].face, { value: "front", label: "Front" });
    assert.deepEqual(Object.keys(r.body.results[1]), ["id", "name", "face", "device", "occupied"]);
    assert.deepEqual(Object.keys(r.body.results[1].device).sort(), ["display", "id", "name", "url"]);
  });

  it("rear face: only full-depth devices show", async () => {
    const r = await s.api(`/api/dcim/racks/${w.rack.id}/elevation/?face=rear`);
    assert.deepEqual(
      r.body.results.map((u: any) => u.device?.name ?? null),
      ["full1u", null, null, null],
    );
  });

  it("SVG drawing, and 400s for bad choices", async () => {
    const res = await fetch(`${s.url}/api/dcim/racks/${w.rack.id}/elevation/?render=svg`, {
      headers: { Authorization: `Token ${s.token}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /image\/svg\+xml/);
    const svg = await res.text();
    assert.match(svg, /^<svg /);
    assert.match(svg, />front2u</);
    assert.equal((await s.api(`/api/dcim/racks/${w.rack.id}/elevation/?face=side`)).status, 400);
    assert.equal((await s.api(`/api/dcim/racks/${w.rack.id}/elevation/?render=png`)).status, 400);
    assert.equal(
      (await s.api("/api/dcim/racks/00000000-0000-0000-0000-000000000000/elevation/")).status,
      404,
    );
  });
});
