/**
 * Issue 12, integrity under concurrency (the races matter on PostgreSQL; SQLite serialises writers and
 * must give the same answers): identical concurrent creates make exactly one object, the others get the
 * service's own 400; concurrent PATCHes of different custom-field keys all survive; a device type's height
 * is checked against its racked instances; a database with duplicates from before migrates.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import { registry } from "../../src/registry/index.ts";
import { openStore } from "../../src/store/db.ts";
import { migrate } from "../../src/store/migrate.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("integrity under concurrency", () => {
  let s: TestServer;
  let site: string;
  let device: string;
  let tenant: string;
  let deviceType: string;
  let role: string;
  before(async () => {
    s = await startServer();
    const post = async (path: string, body: unknown) => {
      const r = await s.api(path, { method: "POST", body });
      assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    };
    site = await post("/api/dcim/sites/", { name: "S", status: "active" });
    tenant = await post("/api/tenancy/tenants/", { name: "T" });
    const mf = await post("/api/dcim/manufacturers/", { name: "M" });
    deviceType = await post("/api/dcim/device-types/", { manufacturer: mf, model: "2U box", u_height: 2 });
    role = await post("/api/dcim/device-roles/", { name: "R" });
    device = await post("/api/dcim/devices/", {
      name: "d1",
      site,
      device_type: deviceType,
      device_role: role,
      status: "active",
    });
    await post("/api/extras/custom-fields/", {
      name: "k",
      label: "k",
      type: "text",
      content_types: ["dcim.site"],
    });
    for (let i = 0; i < 20; i++)
      await post("/api/extras/custom-fields/", {
        name: `k${i}`,
        label: `k${i}`,
        type: "text",
        content_types: ["dcim.site"],
      });
  });
  after(async () => {
    await s.close();
  });

  /** 20 identical POSTs at once: exactly one 201, 19 × 400 with `message` under `key`. */
  async function race(path: string, body: unknown, key: string, message: RegExp) {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => s.api(path, { method: "POST", body })),
    );
    const codes = results.map((r) => r.status);
    assert.equal(codes.filter((c) => c === 201).length, 1, `${path}: ${codes.join(",")}`);
    for (const r of results.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.match(String(r.body[key]), message, JSON.stringify(r.body));
    }
  }

  it("20 identical interfaces, VLANs and devices: exactly one created", async () => {
    await race(
      "/api/dcim/interfaces/",
      { device, name: "eth0", type: "1000base-t" },
      "non_field_errors",
      /device, name must make a unique set/,
    );
    const group = (await s.api("/api/ipam/vlan-groups/", { method: "POST", body: { name: "G", site } })).body
      .id;
    await race(
      "/api/ipam/vlans/",
      { site, group, vid: 10, name: "v10", status: "active" },
      "non_field_errors",
      /must make a unique set/,
    );
    const dev = { site, device_type: deviceType, device_role: role, status: "active" };
    await race(
      "/api/dcim/devices/",
      { ...dev, name: "same", tenant },
      "__all__",
      /Device with this Site, Tenant and Name already exists/,
    );
    await race(
      "/api/dcim/devices/",
      { ...dev, name: "no-tenant" },
      "name",
      /A device with this name already exists/,
    );
    assert.equal((await s.api("/api/dcim/devices/?name=no-tenant")).body.count, 1);
    // Unnamed devices never conflict.
    const unnamed = await Promise.all(
      Array.from({ length: 3 }, () => s.api("/api/dcim/devices/", { method: "POST", body: dev })),
    );
    assert.deepEqual(
      unnamed.map((r) => r.status),
      [201, 201, 201],
    );
  });

  it("20 concurrent PATCHes of different custom-field keys: all 20 values present", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.api(`/api/dcim/sites/${site}/`, {
          method: "PATCH",
          body: { custom_fields: { [`k${i}`]: `v${i}` } },
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill(200),
    );
    const cf = (await s.api(`/api/dcim/sites/${site}/`)).body.custom_fields;
    for (let i = 0; i < 20; i++) assert.equal(cf[`k${i}`], `v${i}`, `k${i} lost: ${JSON.stringify(cf)}`);
  });

  it("a device type's height must still fit its racked instances", async () => {
    const rack = (
      await s.api("/api/dcim/racks/", {
        method: "POST",
        body: { name: "R1", site, status: "active", u_height: 10 },
      })
    ).body.id;
    const mf = (await s.api("/api/dcim/manufacturers/", { method: "POST", body: { name: "M2" } })).body.id;
    const dt = (
      await s.api("/api/dcim/device-types/", {
        method: "POST",
        body: { manufacturer: mf, model: "grow", u_height: 2 },
      })
    ).body.id;
    const put = (name: string, position: number) =>
      s.api("/api/dcim/devices/", {
        method: "POST",
        body: {
          name,
          site,
          rack,
          position,
          face: "front",
          device_type: dt,
          device_role: role,
          status: "active",
        },
      });
    assert.equal((await put("low", 1)).status, 201);
    assert.equal((await put("high", 5)).status, 201);
    const tooTall = await s.api(`/api/dcim/device-types/${dt}/`, { method: "PATCH", body: { u_height: 40 } });
    assert.equal(tooTall.status, 400);
    assert.match(
      tooTall.body.u_height[0],
      /Device high in rack R1 does not have sufficient space to accommodate a height of 40U/,
    );
    const overlap = await s.api(`/api/dcim/device-types/${dt}/`, { method: "PATCH", body: { u_height: 5 } });
    assert.equal(overlap.status, 400, "U1–U5 would overlap the device at U5");
    assert.match(overlap.body.u_height[0], /Device low in rack R1 .* height of 5U/);
    const fits = await s.api(`/api/dcim/device-types/${dt}/`, { method: "PATCH", body: { u_height: 4 } });
    assert.equal(fits.status, 200, JSON.stringify(fits.body));
  });

  it("a database whose rows already break a rule migrates without crashing", async () => {
    // Drop the new unique index, write a duplicate behind the service's back, migrate again.
    const reg = registry();
    const store = await openStore(s.databaseUrl);
    try {
      const like = "ux_dcim_interface%";
      const idx = await (store.dialect.engine === "sqlite"
        ? sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ${like}`
        : sql<{
            name: string;
          }>`SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE ${like}`
      ).execute(store.db);
      assert.ok(idx.rows.length > 0, "the interface (device, name) rule has a unique index");
      for (const r of idx.rows) await sql.raw(`DROP INDEX "${r.name}"`).execute(store.db);
      for (const name of ["dup-a", "dup-b"]) {
        const r = await s.api("/api/dcim/interfaces/", {
          method: "POST",
          body: { device, name, type: "virtual" },
        });
        assert.equal(r.status, 201);
      }
      await sql`UPDATE dcim_interface SET name = 'dup-a' WHERE name = 'dup-b'`.execute(store.db);
      await migrate(store, reg);
    } finally {
      await store.close();
    }
    assert.equal((await s.api(`/api/dcim/interfaces/?device_id=${device}&name=dup-a`)).body.count, 2);
  });
});
