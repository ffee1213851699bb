/**
 * Deletes and change-log rows as Nautobot 1.6.32 writes them (issue 24), compared side by side with a
 * running Nautobot: a custom-field choice in use (or a field's default) cannot be deleted (409 naming the
 * choice, `CustomFieldChoice.delete`); a cable's side effects are logged as updates of the terminations it
 * touches and of a cabled circuit termination's circuit; components instantiated from device-type templates,
 * relationship associations, secrets-group associations and tokens are not logged; webhooks follow the same
 * rows; an object change's `display` is "<app> | <verbose name> <repr> <action> by <user>".
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

/** The (changed_object_type, action) rows written by the request that logged `type` `id` `action`, counted. */
async function rowsOfRequest(
  s: TestServer,
  type: string,
  id: string,
  action: string,
): Promise<Record<string, number>> {
  const own = await s.api(
    `/api/extras/object-changes/?changed_object_type=${type}&changed_object_id=${id}&action=${action}`,
  );
  assert.equal(own.status, 200);
  assert.equal(own.body.count, 1, `one ${action} row of ${type} ${id}`);
  const all = await s.api(
    `/api/extras/object-changes/?request_id=${own.body.results[0].request_id}&limit=1000`,
  );
  const out: Record<string, number> = {};
  for (const r of all.body.results) {
    const k = `${r.changed_object_type} ${r.action.value}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** One object change, in full. */
async function detail(s: TestServer, id: string): Promise<any> {
  const r = await s.api(`/api/extras/object-changes/${id}/`);
  assert.equal(r.status, 200);
  return r.body;
}

/** Change-log rows of one object. */
async function rowsOf(s: TestServer, id: string): Promise<any[]> {
  return (await s.api(`/api/extras/object-changes/?changed_object_id=${id}&limit=1000`)).body.results;
}

describe("change log rows and protected deletes as Nautobot 1.6.32", () => {
  let s: TestServer;
  let site: any;
  let dt: any;
  let role: any;
  let hook: any;
  before(async () => {
    s = await startServer();
    site = await create(s, "/api/dcim/sites/", { name: "cl-site", slug: "cl-site", status: "active" });
    const mf = await create(s, "/api/dcim/manufacturers/", { name: "cl-mf", slug: "cl-mf" });
    dt = await create(s, "/api/dcim/device-types/", { manufacturer: mf.id, model: "cl-dt", slug: "cl-dt" });
    for (const name of ["eth0", "eth1"])
      await create(s, "/api/dcim/interface-templates/", { device_type: dt.id, name, type: "1000base-t" });
    await create(s, "/api/dcim/rear-port-templates/", {
      device_type: dt.id,
      name: "rp0",
      type: "8p8c",
      positions: 1,
    });
    role = await create(s, "/api/dcim/device-roles/", { name: "cl-role", slug: "cl-role" });
    // A disabled-target webhook is enough: deliveries are queued with the change rows (outbox).
    hook = await create(s, "/api/extras/webhooks/", {
      name: "cl-hook",
      content_types: ["dcim.interface", "dcim.frontport", "circuits.circuit", "dcim.cable"],
      type_create: true,
      type_update: true,
      type_delete: true,
      payload_url: "http://127.0.0.1:9/cl",
    });
  });
  after(async () => {
    await s.close();
  });

  const device = (name: string) =>
    create(s, "/api/dcim/devices/", {
      name,
      device_type: dt.id,
      device_role: role.id,
      site: site.id,
      status: "active",
    });
  const interfaces = async (d: any) =>
    (await s.api(`/api/dcim/interfaces/?device_id=${d.id}`)).body.results as any[];

  it("a custom-field choice in use, or a field's default, answers 409 naming it and stays", async () => {
    const d = await device("cl-cf");
    const cf = await create(s, "/api/extras/custom-fields/", {
      name: "cl_tier",
      type: "select",
      content_types: ["dcim.device"],
    });
    const gold = await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "gold" });
    const silver = await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "silver" });
    const bronze = await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "bronze" });
    const set = await s.api(`/api/dcim/devices/${d.id}/`, {
      method: "PATCH",
      body: { custom_fields: { cl_tier: "gold" } },
    });
    assert.equal(set.status, 200);
    const del = await s.api(`/api/extras/custom-field-choices/${gold.id}/`, { method: "DELETE" });
    assert.equal(del.status, 409);
    assert.deepEqual(del.body, {
      detail: `Unable to delete object. 1 dependent objects were found: gold (${gold.id})`,
    });
    assert.equal((await s.api(`/api/extras/custom-field-choices/${gold.id}/`)).status, 200);
    assert.equal((await s.api(`/api/dcim/devices/${d.id}/`)).body.custom_fields.cl_tier, "gold");
    // In a bulk delete too, and nothing of the bulk is deleted.
    const bulk = await s.api("/api/extras/custom-field-choices/", {
      method: "DELETE",
      body: [{ id: bronze.id }, { id: gold.id }],
    });
    assert.equal(bulk.status, 409);
    assert.equal((await s.api(`/api/extras/custom-field-choices/${bronze.id}/`)).status, 200);
    // The field's default.
    assert.equal(
      (await s.api(`/api/extras/custom-fields/${cf.id}/`, { method: "PATCH", body: { default: "silver" } }))
        .status,
      200,
    );
    const def = await s.api(`/api/extras/custom-field-choices/${silver.id}/`, { method: "DELETE" });
    assert.equal(def.status, 409);
    assert.deepEqual(def.body, {
      detail: `Unable to delete object. 1 dependent objects were found: silver (${silver.id})`,
    });
    // A choice nobody holds goes; once the device lets go of gold, gold goes too.
    assert.equal(
      (await s.api(`/api/extras/custom-field-choices/${bronze.id}/`, { method: "DELETE" })).status,
      204,
    );
    await s.api(`/api/dcim/devices/${d.id}/`, {
      method: "PATCH",
      body: { custom_fields: { cl_tier: null } },
    });
    assert.equal(
      (await s.api(`/api/extras/custom-field-choices/${gold.id}/`, { method: "DELETE" })).status,
      204,
    );
  });

  it("a multi-select choice held in a list answers 409; deleting the field takes its choices", async () => {
    const d = await device("cl-multi");
    const cf = await create(s, "/api/extras/custom-fields/", {
      name: "cl_multi",
      type: "multi-select",
      content_types: ["dcim.device"],
    });
    const x1 = await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "x1" });
    const x10 = await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "x10" });
    await create(s, "/api/extras/custom-field-choices/", { field: cf.id, value: "x2" });
    const set = await s.api(`/api/dcim/devices/${d.id}/`, {
      method: "PATCH",
      body: { custom_fields: { cl_multi: ["x10", "x2"] } },
    });
    assert.equal(set.status, 200);
    // "x1" is not held ("x10" is): deletable.
    assert.equal(
      (await s.api(`/api/extras/custom-field-choices/${x1.id}/`, { method: "DELETE" })).status,
      204,
    );
    const del = await s.api(`/api/extras/custom-field-choices/${x10.id}/`, { method: "DELETE" });
    assert.equal(del.status, 409);
    assert.deepEqual(del.body, {
      detail: `Unable to delete object. 1 dependent objects were found: x10 (${x10.id})`,
    });
    assert.equal((await s.api(`/api/extras/custom-fields/${cf.id}/`, { method: "DELETE" })).status, 204);
    assert.equal((await s.api(`/api/extras/custom-field-choices/${x10.id}/`)).status, 404);
  });

  it("cables log their terminations (and a cabled circuit termination's circuit) as updated", async () => {
    const a = await device("cl-a");
    const b = await device("cl-b");
    const [ia, ib] = [await interfaces(a), await interfaces(b)];
    const rp = await create(s, "/api/dcim/rear-ports/", {
      device: a.id,
      name: "rpx",
      type: "8p8c",
      positions: 1,
    });
    const fp = await create(s, "/api/dcim/front-ports/", {
      device: a.id,
      name: "fpx",
      type: "8p8c",
      rear_port: rp.id,
      rear_port_position: 1,
    });
    const c1 = await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: ia[0].id,
      termination_b_type: "dcim.interface",
      termination_b_id: ib[0].id,
      status: "connected",
    });
    assert.deepEqual(await rowsOfRequest(s, "dcim.cable", c1.id, "create"), {
      "dcim.cable create": 1,
      "dcim.interface update": 2,
    });
    const upd = (await rowsOf(s, ia[0].id)).find((r) => r.action.value === "update");
    assert.equal(upd.display, "dcim | interface eth0 updated by admin");
    assert.equal((await detail(s, upd.id)).object_data.cable.id, c1.id);
    const c2 = await create(s, "/api/dcim/cables/", {
      termination_a_type: "dcim.frontport",
      termination_a_id: fp.id,
      termination_b_type: "dcim.interface",
      termination_b_id: ib[1].id,
      status: "connected",
    });
    assert.deepEqual(await rowsOfRequest(s, "dcim.cable", c2.id, "create"), {
      "dcim.cable create": 1,
      "dcim.frontport update": 1,
      "dcim.interface update": 1,
    });
    // Editing a cable does not save its terminations again.
    await s.api(`/api/dcim/cables/${c1.id}/`, { method: "PATCH", body: { label: "x" } });
    assert.deepEqual(await rowsOfRequest(s, "dcim.cable", c1.id, "update"), { "dcim.cable update": 1 });

    const prov = await create(s, "/api/circuits/providers/", { name: "cl-prov", slug: "cl-prov" });
    const ctype = await create(s, "/api/circuits/circuit-types/", { name: "cl-ct", slug: "cl-ct" });
    const circ = await create(s, "/api/circuits/circuits/", {
      cid: "cl-circ",
      provider: prov.id,
      type: ctype.id,
      status: "active",
    });
    const term = await create(s, "/api/circuits/circuit-terminations/", {
      circuit: circ.id,
      term_side: "A",
      site: site.id,
    });
    assert.deepEqual(await rowsOfRequest(s, "circuits.circuittermination", term.id, "create"), {
      "circuits.circuit update": 1,
      "circuits.circuittermination create": 1,
    });
    const circUpd = (await rowsOf(s, circ.id)).find((r) => r.action.value === "update");
    assert.equal((await detail(s, circUpd.id)).object_data.termination_a.id, term.id);
    const c3 = await create(s, "/api/dcim/cables/", {
      termination_a_type: "circuits.circuittermination",
      termination_a_id: term.id,
      termination_b_type: "dcim.interface",
      termination_b_id: ia[1].id,
      status: "connected",
    });
    assert.deepEqual(await rowsOfRequest(s, "dcim.cable", c3.id, "create"), {
      "circuits.circuit update": 1,
      "circuits.circuittermination update": 1,
      "dcim.cable create": 1,
      "dcim.interface update": 1,
    });

    assert.equal((await s.api(`/api/dcim/cables/${c1.id}/`, { method: "DELETE" })).status, 204);
    assert.deepEqual(await rowsOfRequest(s, "dcim.cable", c1.id, "delete"), {
      "dcim.cable delete": 1,
      "dcim.interface update": 2,
    });
    const nulled = (await rowsOf(s, ib[0].id)).filter((r) => r.action.value === "update");
    assert.equal(nulled.length, 2, "cabled, then uncabled");
    const cables = await Promise.all(
      nulled.map(async (r) => (await detail(s, r.id)).object_data.cable?.id ?? null),
    );
    assert.deepEqual(cables.sort(), [c1.id, null].sort(), "cabled, then uncabled");

    // Webhooks are queued from the same rows: the terminations' updates are events too.
    const events = (
      await s.api(
        `/api/extras/webhook-deliveries/?webhook_id=${hook.id}&changed_object_id=${ib[0].id}&limit=100`,
      )
    ).body.results.map((r: any) => r.event?.value ?? r.event);
    assert.deepEqual(events.sort(), ["updated", "updated"]);
  });

  it("template components, relationship and secrets-group associations and tokens are not logged", async () => {
    const d = await device("cl-tpl");
    assert.deepEqual(await rowsOfRequest(s, "dcim.device", d.id, "create"), { "dcim.device create": 1 });
    const [iface] = await interfaces(d);
    assert.deepEqual(await rowsOf(s, iface.id), []);
    const deliveries = await s.api(`/api/extras/webhook-deliveries/?changed_object_id=${iface.id}`);
    assert.equal(deliveries.body.count, 0, "no webhook for an instantiated interface");

    const rel = await create(s, "/api/extras/relationships/", {
      name: "cl-rel",
      slug: "cl-rel",
      type: "one-to-many",
      source_type: "dcim.site",
      destination_type: "dcim.device",
    });
    const ra = await create(s, "/api/extras/relationship-associations/", {
      relationship: rel.id,
      source_type: "dcim.site",
      source_id: site.id,
      destination_type: "dcim.device",
      destination_id: d.id,
    });
    assert.deepEqual(await rowsOf(s, ra.id), []);
    const sec = await create(s, "/api/extras/secrets/", {
      name: "cl-sec",
      slug: "cl-sec",
      provider: "environment-variable",
      parameters: { variable: "X" },
    });
    const sg = await create(s, "/api/extras/secrets-groups/", { name: "cl-sg", slug: "cl-sg" });
    const sga = await create(s, "/api/extras/secrets-groups-associations/", {
      group: sg.id,
      secret: sec.id,
      access_type: "Generic",
      secret_type: "password",
    });
    assert.deepEqual(await rowsOf(s, sga.id), []);
    const tok = await create(s, "/api/users/tokens/", { description: "cl" });
    assert.deepEqual(await rowsOf(s, tok.id), []);
    assert.equal((await s.api(`/api/users/tokens/${tok.id}/`, { method: "DELETE" })).status, 204);
    assert.deepEqual(await rowsOf(s, tok.id), []);
    // The secret itself is a change-logged model.
    assert.equal((await rowsOf(s, sec.id)).length, 1);
  });

  it("an object change's display is Nautobot's str(): '<app> | <verbose name> <repr> <action> by <user>'", async () => {
    const region = await create(s, "/api/dcim/regions/", { name: "cl-region", slug: "cl-region" });
    await s.api(`/api/dcim/regions/${region.id}/`, { method: "PATCH", body: { description: "d" } });
    assert.equal((await s.api(`/api/dcim/regions/${region.id}/`, { method: "DELETE" })).status, 204);
    const shown = (await rowsOf(s, region.id)).map((r) => r.display).sort();
    assert.deepEqual(shown, [
      "dcim | region cl-region created by admin",
      "dcim | region cl-region deleted by admin",
      "dcim | region cl-region updated by admin",
    ]);
    const ip = await create(s, "/api/ipam/ip-addresses/", { address: "10.9.8.7/24", status: "active" });
    const [ipRow] = await rowsOf(s, ip.id);
    assert.equal(ipRow.display, "ipam | IP address 10.9.8.7/24 created by admin");
  });
});
