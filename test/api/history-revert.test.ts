/**
 * Revert and diff (issue 27), black-box on SQLite and PostgreSQL: a bulk delete of devices with their
 * interfaces, cables, IP addresses and primary IPs reverted (dry run first, then applied: the API state
 * equals the state before the delete, objects back with their old ids, the revert change-logged as
 * creates); conflicts (changed since; a name now taken) reported with nothing changed; the diff of one
 * object and the changes of a request.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { configFromEnv } from "../../src/config.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { create, pointNow } from "../helpers/world.ts";

const DEVICES = Number(process.env.TEST_REVERT_DEVICES ?? 100);

/** Lists compared before and after, without the one field every write changes. */
async function state(s: TestServer, site: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, path] of [
    ["devices", `/api/dcim/devices/?site_id=${site}`],
    ["interfaces", `/api/dcim/interfaces/?site_id=${site}`],
    ["ips", "/api/ipam/ip-addresses/?parent=10.27.0.0/16"],
    ["cables", `/api/dcim/cables/?site_id=${site}`],
  ] as const) {
    const r = await s.api(`${path}&limit=5000`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out[k] = r.body.results.map((o: any) => {
      const { last_updated: _, ...rest } = o;
      return rest;
    });
  }
  return out;
}

/** The request id of the newest change-log entry matching `query`. */
async function requestOf(s: TestServer, query: string): Promise<string> {
  const r = await s.api(`/api/extras/object-changes/?${query}&limit=1`);
  assert.equal(r.status, 200);
  return r.body.results[0].request_id;
}

describe("history revert and diff (issue 27)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s?.close();
  });

  it(`reverts a bulk delete of ${DEVICES} devices with interfaces, cables, IPs and primary IPs`, async () => {
    const mf = await create(s, "/api/dcim/manufacturers/", { name: "rv-mf" });
    const dt = await create(s, "/api/dcim/device-types/", { manufacturer: mf.id, model: "rv-box" });
    for (let i = 0; i < 4; i++)
      await create(s, "/api/dcim/interface-templates/", {
        device_type: dt.id,
        name: `eth${i}`,
        type: "1000base-t",
      });
    const role = await create(s, "/api/dcim/device-roles/", { name: "rv-role", color: "00ff00" });
    const site = await create(s, "/api/dcim/sites/", { name: "rv-site", status: "active" });
    const tag = await create(s, "/api/extras/tags/", {
      name: "rv-tag",
      content_types: ["dcim.device", "dcim.interface"],
    });
    // IP addresses made before their devices, assigned and made primary later: the revert must still
    // restore each device before its primary IP is set (the references set last are deferred).
    const early = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: Array.from({ length: 5 }, (_, k) => ({ address: `10.27.200.${k + 1}/16`, status: "active" })),
    });
    assert.equal(early.status, 201, JSON.stringify(early.body).slice(0, 300));
    const made = await s.api("/api/dcim/devices/", {
      method: "POST",
      body: Array.from({ length: DEVICES }, (_, i) => ({
        name: `rv-${i}`,
        device_type: dt.id,
        device_role: role.id,
        site: site.id,
        status: "active",
        tags: i % 3 ? [] : [tag.id],
      })),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body).slice(0, 300));
    const devices: any[] = made.body;
    const ifaces = (await s.api(`/api/dcim/interfaces/?site_id=${site.id}&limit=5000`)).body.results;
    const eth = (d: string, n: number) =>
      ifaces.find((x: any) => x.device.id === d && x.name === `eth${n}`).id;
    const ips = await s.api("/api/ipam/ip-addresses/", {
      method: "POST",
      body: devices.map((d, i) => ({
        address: `10.27.${i >> 8}.${(i & 255) + 1}/16`,
        status: "active",
        assigned_object_type: "dcim.interface",
        assigned_object_id: eth(d.id, 0),
      })),
    });
    assert.equal(ips.status, 201, JSON.stringify(ips.body).slice(0, 300));
    const primary = await s.api("/api/dcim/devices/", {
      method: "PATCH",
      body: devices
        .filter((_, i) => i % 2 === 0)
        .map((d) => ({ id: d.id, primary_ip4: ips.body[devices.indexOf(d)].id })),
    });
    assert.equal(primary.status, 200, JSON.stringify(primary.body).slice(0, 300));
    const late = devices.filter((_, i) => i % 2 === 1).slice(0, 5);
    const assigned = await s.api("/api/ipam/ip-addresses/", {
      method: "PATCH",
      body: late.map((d, k) => ({
        id: early.body[k].id,
        assigned_object_type: "dcim.interface",
        assigned_object_id: eth(d.id, 2),
      })),
    });
    assert.equal(assigned.status, 200, JSON.stringify(assigned.body).slice(0, 300));
    const primary2 = await s.api("/api/dcim/devices/", {
      method: "PATCH",
      body: late.map((d, k) => ({ id: d.id, primary_ip4: early.body[k].id })),
    });
    assert.equal(primary2.status, 200, JSON.stringify(primary2.body).slice(0, 300));
    const cables = await s.api("/api/dcim/cables/", {
      method: "POST",
      body: Array.from({ length: Math.floor(DEVICES / 2) }, (_, i) => ({
        termination_a_type: "dcim.interface",
        termination_a_id: eth(devices[2 * i].id, 1),
        termination_b_type: "dcim.interface",
        termination_b_id: eth(devices[2 * i + 1].id, 1),
        status: "connected",
      })),
    });
    assert.equal(cables.status, 201, JSON.stringify(cables.body).slice(0, 300));
    const beforeDelete = await state(s, site.id);

    const del = await s.api("/api/dcim/devices/", {
      method: "DELETE",
      body: devices.map((d) => ({ id: d.id })),
    });
    assert.equal(del.status, 204, JSON.stringify(del.body));
    const afterDelete = await state(s, site.id);
    assert.deepEqual(
      [afterDelete.devices, afterDelete.interfaces, afterDelete.ips, afterDelete.cables],
      [[], [], [], []],
    );
    const requestId = await requestOf(s, "changed_object_type=dcim.device&action=delete");

    // The changes of the request, as diffs.
    const changes = await s.api(
      `/api/history/changes/?request_id=${requestId}&object_type=dcim.device&limit=5`,
    );
    assert.equal(changes.status, 200, JSON.stringify(changes.body));
    assert.equal(changes.body.count, DEVICES);
    assert.equal(changes.body.results[0].action, "deleted");
    assert.ok(changes.body.next);

    // Dry run (the default): the plan, no conflicts, nothing written.
    const dry = await s.api("/api/history/revert/", { method: "POST", body: { request_id: requestId } });
    assert.equal(dry.status, 200, JSON.stringify(dry.body).slice(0, 500));
    assert.equal(dry.body.dry_run, true);
    assert.equal(dry.body.applied, false);
    assert.deepEqual(dry.body.conflicts, []);
    const count = (t: string) =>
      dry.body.plan.filter((p: any) => p.action === "create" && p.object_type === t).length;
    assert.deepEqual(
      [count("dcim.device"), count("dcim.interface"), count("ipam.ipaddress"), count("dcim.cable")],
      [DEVICES, DEVICES * 4, DEVICES + late.length, Math.floor(DEVICES / 2)],
    );
    assert.deepEqual(await state(s, site.id), afterDelete, "a dry run changes nothing");

    const applied = await s.api("/api/history/revert/", {
      method: "POST",
      body: { request_id: requestId, dry_run: false },
    });
    assert.equal(applied.status, 200, JSON.stringify(applied.body).slice(0, 500));
    assert.equal(applied.body.applied, true);
    assert.deepEqual(
      await state(s, site.id),
      beforeDelete,
      "the API state before the delete, old ids and all",
    );
    // The revert is a change of its own: change-logged as creates.
    const logged = await s.api(
      `/api/extras/object-changes/?changed_object_type=dcim.device&action=create&changed_object_id=${devices[0].id}`,
    );
    assert.equal(logged.body.count, 2, "the first create and the revert's");
  });

  it("reports a conflict and changes nothing: changed since, a name now taken", async () => {
    const t = await create(s, "/api/tenancy/tenants/", { name: "rv-ten" });
    let r = await s.api(`/api/tenancy/tenants/${t.id}/`, { method: "PATCH", body: { description: "first" } });
    const first = await requestOf(s, `changed_object_id=${t.id}&action=update`);
    r = await s.api(`/api/tenancy/tenants/${t.id}/`, { method: "PATCH", body: { description: "second" } });
    assert.equal(r.status, 200);
    const refused = await s.api("/api/history/revert/", {
      method: "POST",
      body: { request_id: first, dry_run: false },
    });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.applied, false);
    assert.deepEqual(
      refused.body.conflicts.map((c: any) => [c.object_id, c.reason]),
      [[t.id, "changed since"]],
    );
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/`)).body.description, "second");

    // Reverting the last change works, and so does reverting one object to a point.
    const second = await requestOf(s, `changed_object_id=${t.id}&action=update`);
    r = await s.api("/api/history/revert/", { method: "POST", body: { request_id: second, dry_run: false } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/`)).body.description, "first");

    // A deleted site whose name was taken since.
    const site = await create(s, "/api/dcim/sites/", { name: "rv-gone", status: "active" });
    r = await s.api(`/api/dcim/sites/${site.id}/`, { method: "DELETE" });
    assert.equal(r.status, 204);
    const gone = await requestOf(s, `changed_object_id=${site.id}&action=delete`);
    await create(s, "/api/dcim/sites/", { name: "rv-gone", status: "active" });
    const taken = await s.api("/api/history/revert/", {
      method: "POST",
      body: { request_id: gone, dry_run: false },
    });
    assert.equal(taken.status, 409, JSON.stringify(taken.body));
    assert.equal(taken.body.conflicts[0].reason, "refused");
    assert.match(JSON.stringify(taken.body.conflicts[0].detail), /already exists/);
    assert.equal((await s.api(`/api/dcim/sites/${site.id}/`)).status, 404, "nothing restored");
  });

  it("reverts one object to a point, and a set of change-log entries", async () => {
    const tag = await create(s, "/api/extras/tags/", { name: "ob-tag", content_types: ["tenancy.tenant"] });
    const t = await create(s, "/api/tenancy/tenants/", { name: "ob-ten", description: "v1", tags: [tag.id] });
    const at = () => pointNow(s);
    const p1 = await at();
    await s.api(`/api/tenancy/tenants/${t.id}/`, { method: "PATCH", body: { description: "v2", tags: [] } });
    await s.api(`/api/tenancy/tenants/${t.id}/`, {
      method: "PATCH",
      body: { description: "v3", comments: "c" },
    });
    const r = await s.api("/api/history/revert/", {
      method: "POST",
      body: { object_type: "tenancy.tenant", object_id: t.id, as_of_seq: p1, dry_run: false },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.plan.map((x: any) => [x.action, x.object_id]),
      [["update", t.id]],
    );
    const back = (await s.api(`/api/tenancy/tenants/${t.id}/`)).body;
    assert.deepEqual(
      [back.description, back.comments, back.tags.map((x: any) => x.id)],
      ["v1", "", [tag.id]],
    );

    // Two tenants deleted in two requests; reverting both entries brings both back.
    const a = await create(s, "/api/tenancy/tenants/", { name: "ob-a" });
    const b = await create(s, "/api/tenancy/tenants/", { name: "ob-b" });
    for (const x of [a, b])
      assert.equal((await s.api(`/api/tenancy/tenants/${x.id}/`, { method: "DELETE" })).status, 204);
    const entries = await s.api(
      `/api/extras/object-changes/?action=delete&changed_object_type=tenancy.tenant&limit=2`,
    );
    const ids = entries.body.results.map((e: any) => e.id);
    const both = await s.api("/api/history/revert/", {
      method: "POST",
      body: { changes: ids, dry_run: false },
    });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    for (const x of [a, b]) assert.equal((await s.api(`/api/tenancy/tenants/${x.id}/`)).status, 200);
    // Bad targets are 400/404, never 500.
    for (const [body, status] of [
      [{ request_id: "no-such-request" }, 404],
      [{ changes: ["00000000-0000-4000-8000-000000000000"] }, 404],
      [{ object_type: "tenancy.tenant", object_id: t.id }, 400],
      [{ object_type: "no.model", object_id: t.id, as_of_seq: p1 }, 400],
      [{ dry_run: "yes", request_id: "x" }, 400],
      [{}, 400],
    ] as const) {
      const x = await s.api("/api/history/revert/", { method: "POST", body });
      assert.equal(x.status, status, `${JSON.stringify(body)} → ${x.status} ${JSON.stringify(x.body)}`);
    }
  });

  it("diffs one object between two points, tags and related displays included", async () => {
    const tag = await create(s, "/api/extras/tags/", { name: "df-tag", content_types: ["tenancy.tenant"] });
    const group = await create(s, "/api/tenancy/tenant-groups/", { name: "df-group" });
    const t = await create(s, "/api/tenancy/tenants/", { name: "df-ten" });
    const at = () => pointNow(s);
    const p1 = await at();
    await s.api(`/api/tenancy/tenants/${t.id}/`, {
      method: "PATCH",
      body: { group: group.id, tags: [tag.id], description: "x" },
    });
    const p2 = await at();
    const d = await s.api(
      `/api/history/diff/?object_type=tenancy.tenant&object_id=${t.id}&from_seq=${p1}&to_seq=${p2}`,
    );
    assert.equal(d.status, 200, JSON.stringify(d.body));
    assert.equal(d.body.action, "updated");
    assert.deepEqual(Object.keys(d.body.changes).sort(), ["description", "group", "tags"]);
    assert.equal(d.body.changes.group[0], null);
    assert.equal(d.body.changes.group[1].display, "df-group");
    assert.deepEqual(
      d.body.changes.tags[1].map((x: any) => x.name),
      ["df-tag"],
    );
    const none = await s.api(
      `/api/history/diff/?object_type=tenancy.tenant&object_id=${t.id}&from_seq=${p2}`,
    );
    assert.equal(none.body.action, "unchanged");
    const bad = await s.api(
      `/api/history/diff/?object_type=tenancy.tenant&object_id=${t.id}&from_seq=${p2 + 100}`,
    );
    assert.equal(bad.status, 400);
  });
});

describe("history retention (issue 27)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({
      changeFeed: { ...configFromEnv({}).changeFeed, historyRetentionDays: 2 / 86_400, purgeIntervalMs: 200 },
    });
  });
  after(async () => {
    await s?.close();
  });

  it("prunes history older than the setting; the state since stays readable; the CLI prunes and reports size", async () => {
    const point = () => pointNow(s);
    const t = await create(s, "/api/tenancy/tenants/", { name: "rt-ten", description: "old" });
    const p1 = await point();
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${p1}`)).status, 200);
    await s.api(`/api/tenancy/tenants/${t.id}/`, { method: "PATCH", body: { description: "mid" } });
    const mid = await point();
    // Two seconds after the second change the first point is gone; the state at the cut stays readable.
    const gone = await waitUntil(async () => {
      const r = await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${p1}`);
      return r.status === 400 ? r.body.detail : undefined;
    });
    assert.match(gone, /history begins at/);
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${mid}`)).body.description, "mid");
    await s.api(`/api/tenancy/tenants/${t.id}/`, { method: "PATCH", body: { description: "new" } });
    const p2 = await point();
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${p2}`)).body.description, "new");

    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ["src/main.ts", "history", ...args, "--database", s.databaseUrl], {
        encoding: "utf8",
        timeout: 120_000,
      });
    const size = cli("size");
    assert.equal(size.status, 0, size.stderr);
    assert.match(size.stdout, /tenancy_tenant__hist\t\d+ rows\t\d+ bytes/);
    assert.match(size.stdout, /^total\t\d+ rows\t\d+ bytes$/m);
    const prune = cli("prune", "--before", String(p2));
    assert.equal(prune.status, 0, prune.stderr);
    assert.match(prune.stdout, new RegExp(`history begins at ${p2}`));
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${p2 - 1}`)).status, 400);
    assert.equal((await s.api(`/api/tenancy/tenants/${t.id}/?as_of_seq=${p2}`)).body.description, "new");
  });
});
