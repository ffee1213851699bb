/**
 * Issue 28, upsert by natural key (`POST /api/<app>/<model>/upsert/`, an extension): created / updated /
 * unchanged per item; an unchanged item writes nothing (no ObjectChange, no webhook delivery, no
 * last_updated or version bump); nested natural-key references; all or none; permissions per outcome.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createToken } from "../../src/service/accounts.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { SqlCounter } from "../helpers/sql-counter.ts";

describe("upsert by natural key", () => {
  let s: TestServer;
  const count = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.count as number;
  };
  const changes = () => count("/api/extras/object-changes/?limit=1");
  const deliveries = () => count("/api/extras/webhook-deliveries/?limit=1");
  const upsert = (path: string, body: unknown, token?: string) =>
    s.api(`/api/${path}/upsert/`, { method: "POST", body, ...(token ? { token } : {}) });
  const device = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    site: { slug: "ams1" },
    device_type: { slug: "up-dt" },
    device_role: { slug: "up-role" },
    status: "active",
    ...extra,
  });
  const iface = (dev: string, name: string, extra: Record<string, unknown> = {}) => ({
    device: { name: dev, site: { slug: "ams1" } },
    name,
    type: "1000base-t",
    ...extra,
  });

  before(async () => {
    s = await startServer();
    const post = async (path: string, body: unknown) => {
      const r = await s.api(path, { method: "POST", body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    await post("/api/dcim/sites/", { name: "ams1", slug: "ams1", status: "active" });
    await post("/api/dcim/sites/", { name: "fra1", slug: "fra1", status: "active" });
    const mf = await post("/api/dcim/manufacturers/", { name: "up-mf", slug: "up-mf" });
    await post("/api/dcim/device-types/", { manufacturer: mf.id, model: "up-dt", slug: "up-dt" });
    await post("/api/dcim/device-roles/", { name: "up-role", slug: "up-role" });
    // Deliveries are queued with the change rows (no worker runs: they stay in the outbox to be counted).
    await post("/api/extras/webhooks/", {
      name: "up-hook",
      content_types: ["dcim.device", "dcim.interface", "ipam.ipaddress", "dcim.site"],
      type_create: true,
      type_update: true,
      type_delete: true,
      payload_url: "http://127.0.0.1:9/up",
    });
  });
  after(async () => {
    await s.close();
  });

  it("creates, then the same items again are all unchanged and write nothing", async () => {
    const devices = ["ams1-leaf1", "ams1-leaf2", "ams1-spine1"].map((n) => device(n));
    const first = await upsert("dcim/devices", devices);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(
      first.body.map((r: any) => [r.result, r.object.name, r.object.site.slug]),
      devices.map((d) => ["created", d.name, "ams1"]),
    );
    const ifaces = ["eth1", "eth2"].flatMap((n) => [iface("ams1-leaf1", n), iface("ams1-leaf2", n)]);
    const created = await upsert("dcim/interfaces", ifaces);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(new Set(created.body.map((r: any) => r.result)), new Set(["created"]));
    const ip = await upsert("ipam/ip-addresses", { address: "10.28.0.1/24", status: "active" });
    assert.equal(ip.status, 200, JSON.stringify(ip.body));
    assert.equal(ip.body[0].result, "created");

    const oc = await changes();
    const dl = await deliveries();
    assert.ok(dl >= 8, `deliveries were queued for the creates (${dl})`);
    const leaf = first.body[0].object;
    const detail = await s.api(`/api/dcim/devices/${leaf.id}/`);
    assert.equal(detail.status, 200);

    const again = await upsert("dcim/devices", devices);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(
      again.body.map((r: any) => [r.result, r.object.id]),
      first.body.map((r: any) => ["unchanged", r.object.id]),
    );
    const ifAgain = await upsert("dcim/interfaces", ifaces);
    assert.deepEqual(
      ifAgain.body.map((r: any) => [r.result, r.object.id]),
      created.body.map((r: any) => ["unchanged", r.object.id]),
    );
    const ipAgain = await upsert("ipam/ip-addresses", [{ address: "10.28.0.1/24", status: "active" }]);
    assert.deepEqual(
      [ipAgain.body[0].result, ipAgain.body[0].object.id],
      ["unchanged", ip.body[0].object.id],
    );

    assert.equal(await changes(), oc, "no ObjectChange for unchanged items");
    assert.equal(await deliveries(), dl, "no webhook delivery for unchanged items");
    const after2 = await s.api(`/api/dcim/devices/${leaf.id}/`);
    assert.equal(after2.body.last_updated, detail.body.last_updated);
    assert.equal(after2.headers.get("etag"), detail.headers.get("etag"), "version unchanged");
    assert.deepEqual(after2.body, detail.body);
  });

  it("a changed field is an update with one ObjectChange; the others stay unchanged", async () => {
    const oc = await changes();
    const dl = await deliveries();
    const r = await upsert("dcim/devices", [
      device("ams1-leaf1", { serial: "SN-28" }),
      device("ams1-leaf2"),
      device("ams1-spine1"),
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => x.result),
      ["updated", "unchanged", "unchanged"],
    );
    assert.equal(r.body[0].object.serial, "SN-28");
    assert.equal(await changes(), oc + 1);
    assert.equal(await deliveries(), dl + 1);
    const log = await s.api(`/api/extras/object-changes/?changed_object_id=${r.body[0].object.id}&limit=10`);
    assert.deepEqual(log.body.results.map((c: any) => c.action.value).sort(), ["create", "update"]);
    // Fields not given are kept (PATCH semantics): the serial stays when an item leaves it out.
    const kept = await upsert("dcim/devices", { name: "ams1-leaf1", site: { slug: "ams1" } });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body[0].result, "unchanged");
    assert.equal(kept.body[0].object.serial, "SN-28");
    // An IP address is matched by host and VRF whatever its mask: a new mask updates it.
    const ip = await upsert("ipam/ip-addresses", { address: "10.28.0.1/32" });
    assert.deepEqual([ip.body[0].result, ip.body[0].object.address], ["updated", "10.28.0.1/32"]);
    assert.equal(await count("/api/ipam/ip-addresses/?q=10.28.0.1"), 1);
  });

  it("matches an interface through a nested natural-key reference to its device and site", async () => {
    const leaf2 = (await s.api("/api/dcim/interfaces/?device=ams1-leaf2&name=eth2")).body.results[0];
    assert.ok(leaf2);
    const r = await upsert("dcim/interfaces", [
      iface("ams1-leaf2", "eth2", { description: "uplink" }),
      iface("ams1-leaf2", "eth3"),
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((x: any) => [x.result, x.object.device.name, x.object.name]),
      [
        ["updated", "ams1-leaf2", "eth2"],
        ["created", "ams1-leaf2", "eth3"],
      ],
    );
    assert.equal(r.body[0].object.id, leaf2.id);
    assert.equal(r.body[0].object.description, "uplink");
    // A reference that resolves to nothing names its field.
    const bad = await upsert("dcim/interfaces", [iface("no-such-device", "eth1")]);
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body[0]), ["device"]);
  });

  it("tags, custom fields and VLANs: unchanged compares sets and values, not their order", async () => {
    const post = async (path: string, body: unknown) => {
      const r = await s.api(path, { method: "POST", body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    for (const name of ["up-a", "up-b"])
      await post("/api/extras/tags/", { name, slug: name, content_types: ["dcim.site"] });
    await post("/api/extras/custom-fields/", {
      name: "up_code",
      label: "Code",
      type: "text",
      content_types: ["dcim.site"],
    });
    const site = {
      name: "fra1",
      tags: [{ slug: "up-a" }, { slug: "up-b" }],
      custom_fields: { up_code: "F1" },
    };
    const first = await upsert("dcim/sites", site);
    assert.equal(first.body[0].result, "updated", JSON.stringify(first.body));
    const oc = await changes();
    const reordered = await upsert("dcim/sites", { ...site, tags: [{ slug: "up-b" }, { slug: "up-a" }] });
    assert.equal(reordered.body[0].result, "unchanged", JSON.stringify(reordered.body));
    assert.equal(await changes(), oc);
    const fewer = await upsert("dcim/sites", { name: "fra1", tags: [{ slug: "up-a" }] });
    assert.equal(fewer.body[0].result, "updated");
    assert.deepEqual(
      fewer.body[0].object.tags.map((t: any) => t.slug),
      ["up-a"],
    );
    assert.equal(fewer.body[0].object.custom_fields.up_code, "F1");
    // A VLAN without a group is matched by site and VID; a VID that is no number names its field.
    const vlan = { site: { slug: "fra1" }, vid: 28, name: "v28", status: "active" };
    assert.equal((await upsert("ipam/vlans", vlan)).body[0].result, "created");
    assert.equal((await upsert("ipam/vlans", { ...vlan, vid: "28" })).body[0].result, "unchanged");
    const bad = await upsert("ipam/vlans", { ...vlan, vid: "x28" });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(Object.keys(bad.body[0]), ["vid"]);
  });

  it("matches a cable by its two terminations in either order, given by nested natural keys", async () => {
    const end = (dev: string, name: string) => ({
      type: "dcim.interface",
      id: { device: { name: dev, site: { slug: "ams1" } }, name },
    });
    const cable = (
      a: ReturnType<typeof end>,
      b: ReturnType<typeof end>,
      extra: Record<string, unknown> = {},
    ) => ({
      termination_a_type: a.type,
      termination_a_id: a.id,
      termination_b_type: b.type,
      termination_b_id: b.id,
      status: "connected",
      ...extra,
    });
    const [l1, l2] = [end("ams1-leaf1", "eth1"), end("ams1-leaf2", "eth1")];
    const made = await upsert("dcim/cables", cable(l1, l2));
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal(made.body[0].result, "created");
    const id = made.body[0].object.id;
    const oc = await changes();
    const same = await upsert("dcim/cables", cable(l1, l2));
    assert.deepEqual([same.body[0].result, same.body[0].object.id], ["unchanged", id]);
    const reversed = await upsert("dcim/cables", cable(l2, l1));
    assert.deepEqual([reversed.body[0].result, reversed.body[0].object.id], ["unchanged", id]);
    assert.equal(await changes(), oc, "nothing written for the same cable either way round");
    const labelled = await upsert("dcim/cables", cable(l2, l1, { label: "c28" }));
    assert.equal(labelled.status, 200, JSON.stringify(labelled.body));
    assert.deepEqual([labelled.body[0].result, labelled.body[0].object.id], ["updated", id]);
    assert.equal(labelled.body[0].object.label, "c28");
    assert.equal(labelled.body[0].object.termination_a.device.name, "ams1-leaf1", "ends kept");
    // Other ends are another cable: one of them already cabled is the write's own 400.
    const repatch = await upsert("dcim/cables", cable(l1, end("ams1-leaf2", "eth2")));
    assert.equal(repatch.status, 400, JSON.stringify(repatch.body));
    assert.equal(await count("/api/dcim/cables/?limit=1"), 1);
  });

  it("an invalid item in a list of 10 is a 400 naming its index and field, and nothing is written", async () => {
    const oc = await changes();
    const dl = await deliveries();
    const devs = await count("/api/dcim/devices/?limit=1");
    const items = Array.from({ length: 10 }, (_, i) => device(`ams1-batch${i}`));
    items[3] = device("ams1-leaf1", { serial: "SN-rolled-back" }); // an update in the same batch
    items[7] = device("ams1-batch7", { status: "no-such-status" });
    const r = await upsert("dcim/devices", items);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.length, 10);
    for (const [i, e] of r.body.entries())
      assert.deepEqual(Object.keys(e), i === 7 ? ["status"] : [], `item ${i}`);
    assert.equal(await count("/api/dcim/devices/?limit=1"), devs);
    assert.equal(await changes(), oc);
    assert.equal(await deliveries(), dl);
    assert.equal((await s.api("/api/dcim/devices/?name=ams1-leaf1")).body.results[0].serial, "SN-28");
  });

  it("needs add for creates and change for matches: a view-only token gets 403 and writes nothing", async () => {
    const u = await s.api("/api/users/users/", {
      method: "POST",
      body: { username: "viewer", password: "pw-v-1" },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    const token = await createToken(s.store, u.body.id);
    const grant = async (actions: string[]) =>
      assert.equal(
        (
          await s.api("/api/users/permissions/", {
            method: "POST",
            body: {
              name: `up-${actions.join("-")}`,
              users: [u.body.id],
              object_types: ["dcim.site"],
              actions,
            },
          })
        ).status,
        201,
      );
    await grant(["view"]);
    const oc = await changes();
    const denied = await upsert(
      "dcim/sites",
      [
        { name: "ams1", status: "active" },
        { name: "lon1", status: "active" },
      ],
      token,
    );
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.equal((await upsert("dcim/sites", { name: "ams1", status: "active" }, token)).status, 403);
    await grant(["change"]);
    const matched = await upsert("dcim/sites", { name: "ams1", description: "Amsterdam" }, token);
    assert.equal(matched.status, 200, JSON.stringify(matched.body));
    assert.equal(matched.body[0].result, "updated");
    const fresh = await upsert("dcim/sites", [{ name: "ams1" }, { name: "lon1", status: "active" }], token);
    assert.equal(fresh.status, 403, "a create needs add");
    assert.equal(await count("/api/dcim/sites/?name=lon1"), 0);
    assert.equal(await changes(), oc + 1);
  });

  it("is listed in the OpenAPI document for models with a usable natural key", async () => {
    const doc = (await s.api("/api/swagger.json")).body;
    const op = doc.paths["/dcim/devices/upsert/"]?.post;
    assert.ok(op, "documented");
    assert.deepEqual(Object.keys(op.responses).sort(), ["200", "207", "400", "403"]);
    assert.match(JSON.stringify(op.requestBody), /WritableDcimDevice/);
    assert.match(op.description, /Extension/);
    assert.ok(doc.paths["/dcim/cables/upsert/"]);
    assert.equal(doc.paths["/extras/notes/upsert/"], undefined);
  });

  it("models without a usable natural key answer 400; read-only models 405", async () => {
    const note = await upsert("extras/notes", { note: "x" });
    assert.equal(note.status, 400);
    assert.match(note.body.detail, /not supported for notes/);
    const reservation = await upsert("dcim/rack-reservations", { description: "x" });
    assert.equal(reservation.status, 400);
    assert.match(reservation.body.detail, /not supported for rack reservations/);
    assert.equal((await upsert("extras/object-changes", {})).status, 405);
    assert.equal((await upsert("dcim/no-such-model", {})).status, 404);
  });
  it("matches set-wise: re-upserting 300 unchanged interfaces runs about as many statements as 30", async () => {
    const dev = await upsert("dcim/devices", [device("ams1-wide1"), device("ams1-wide2")]);
    assert.equal(dev.status, 200, JSON.stringify(dev.body));
    const items = (d: string, n: number) =>
      Array.from({ length: n }, (_, i) => iface(d, `ge-0/0/${i}`, { description: `port ${i}` }));
    const big = items("ams1-wide1", 300);
    const small = items("ams1-wide2", 30);
    for (const list of [big, small]) {
      const r = await upsert("dcim/interfaces", list);
      assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
      assert.ok(r.body.every((x: any) => x.result === "created"));
    }
    const counter = new SqlCounter();
    const plain = s.store.db;
    s.store.db = plain.withPlugin(counter);
    try {
      // The fewest statements of three requests: a per-process cache refreshed by the engine's own
      // activity (PostgreSQL's snapshot token) may add a statement to a request.
      const statements = async (list: unknown[]) => {
        let fewest = Number.POSITIVE_INFINITY;
        for (let i = 0; i < 3; i++) {
          const before = counter.n;
          const r = await upsert("dcim/interfaces", list);
          assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
          assert.ok(r.body.every((x: any) => x.result === "unchanged"));
          fewest = Math.min(fewest, counter.n - before);
        }
        return fewest;
      };
      const many = await statements(big);
      const few = await statements(small);
      assert.ok(few > 0, "the counter sees the upsert's statements");
      // One statement per item (the per-item match) would make it 270 more.
      assert.ok(many <= few + 5, `300 unchanged items ran ${many} statements, 30 ran ${few}`);
    } finally {
      s.store.db = plain;
    }
  });

  it("the same new key twice in a list, in one chunk or across chunks, is created once", async () => {
    const ifaces = await s.api("/api/dcim/interfaces/?device=ams1-wide2&limit=1");
    const before = ifaces.body.count as number;
    // Items 0, 1 and 501 name one new interface; 500 items between them are other new interfaces, so the
    // last one is matched in the second chunk of 500 (the first chunk created it).
    const list = [
      iface("ams1-wide2", "dup0"),
      iface("ams1-wide2", "dup0", { description: "second" }),
      ...Array.from({ length: 499 }, (_, i) => iface("ams1-wide2", `bulk${i}`)),
      iface("ams1-wide2", "dup0", { description: "second" }),
    ];
    const r = await upsert("dcim/interfaces", list);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    assert.deepEqual(
      [r.body[0].result, r.body[1].result, r.body[501].result],
      ["created", "updated", "unchanged"],
    );
    assert.equal(new Set([0, 1, 501].map((i) => r.body[i].object.id)).size, 1, "one interface");
    assert.equal(r.body[501].object.description, "second");
    const after = await s.api("/api/dcim/interfaces/?device=ams1-wide2&limit=1");
    assert.equal(after.body.count, before + 500, "500 new interfaces");
    const dup = await s.api("/api/dcim/interfaces/?device=ams1-wide2&name=dup0");
    assert.equal(dup.body.count, 1);
    // The same IP host twice with different masks: created, then updated to the second mask (both answers
    // are read back at the end of the transaction).
    const ips = await upsert("ipam/ip-addresses", [
      { address: "10.28.9.1/24", status: "active" },
      { address: "10.28.9.1/25", status: "active" },
    ]);
    assert.equal(ips.status, 200, JSON.stringify(ips.body));
    assert.deepEqual(
      ips.body.map((x: any) => [x.result, x.object.address]),
      [
        ["created", "10.28.9.1/25"],
        ["updated", "10.28.9.1/25"],
      ],
    );
    assert.equal(ips.body[0].object.id, ips.body[1].object.id);
  });
  it("500 cables in one list are created, then unchanged in the other order (a chunk's keys in several queries)", async () => {
    // 500 cable keys match in either order: 1,000 OR terms, more than SQLite takes in one statement.
    const dev = await upsert("dcim/devices", [device("ams1-patch1"), device("ams1-patch2")]);
    assert.equal(dev.status, 200, JSON.stringify(dev.body));
    const ports = async (d: { id: string }) => {
      const r = await s.api("/api/dcim/interfaces/", {
        method: "POST",
        body: Array.from({ length: 500 }, (_, i) => ({ device: d.id, name: `p${i}`, type: "1000base-t" })),
      });
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 500));
      return r.body.map((x: any) => x.id as string);
    };
    const a = await ports(dev.body[0].object);
    const b = await ports(dev.body[1].object);
    const cables = (x: string[], y: string[]) =>
      x.map((id, i) => ({
        termination_a_type: "dcim.interface",
        termination_a_id: id,
        termination_b_type: "dcim.interface",
        termination_b_id: y[i],
        status: "connected",
      }));
    const before = await count("/api/dcim/cables/?limit=1");
    const made = await upsert("dcim/cables", cables(a, b));
    assert.equal(made.status, 200, JSON.stringify(made.body).slice(0, 500));
    assert.ok(made.body.every((x: any) => x.result === "created"));
    assert.equal(await count("/api/dcim/cables/?limit=1"), before + 500);
    const oc = await changes();
    const again = await upsert("dcim/cables", cables(b, a));
    assert.equal(again.status, 200, JSON.stringify(again.body).slice(0, 500));
    assert.deepEqual(
      again.body.map((x: any) => [x.result, x.object.id, x.object.termination_a_id]),
      made.body.map((x: any, i: number) => ["unchanged", x.object.id, a[i]]),
    );
    assert.equal(await changes(), oc, "no ObjectChange");
    assert.equal(await count("/api/dcim/cables/?limit=1"), before + 500);
  });
});
