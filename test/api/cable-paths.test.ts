/**
 * Issue 9, cable paths: interface → front port → rear port → trunk → rear port → front port → interface
 * (with two positions on the trunk), across a circuit, and direct; `connected_endpoint*`, `trace/`, `paths/`,
 * the connection lists and the connected-device locator, as Nautobot 1.6.32 answered the same sequence
 * (each expectation was seen on the reference server), including retracing on status changes and deletes.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

type Obj = Record<string, any>;

describe("cable paths", () => {
  let s: TestServer;
  const i: Record<string, Obj> = {};
  const fp: Record<string, Obj> = {};
  const rp: Record<string, Obj> = {};
  const cables: Record<string, Obj> = {};
  let site: Obj;
  const mk = async (path: string, body: Obj) => {
    const r = await s.api(path, { method: "POST", body });
    assert.equal(r.status, 201, `${path} ${JSON.stringify(r.body)}`);
    return r.body as Obj;
  };
  const cable = async (label: string, a: Obj, at: string, b: Obj, bt: string, status = "connected") => {
    cables[label] = await mk("/api/dcim/cables/", {
      termination_a_type: at,
      termination_a_id: a.id,
      termination_b_type: bt,
      termination_b_id: b.id,
      status,
      label,
    });
  };
  const get = async (path: string) => {
    const r = await s.api(path);
    assert.equal(r.status, 200, `${path} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  /** A trace as `device:name` / cable label triples. */
  const names = (o: Obj | null) =>
    o === null
      ? null
      : o.device
        ? `${o.device.name}:${o.name}`
        : o.circuit
          ? `${o.circuit.cid}:${o.term_side}`
          : o.label;
  const trace = async (iface: Obj) =>
    ((await get(`/api/dcim/interfaces/${iface.id}/trace/`)) as Obj[][]).map((seg) => seg.map(names));

  before(async () => {
    s = await startServer();
    site = await mk("/api/dcim/sites/", { name: "PathSite", status: "active" });
    const man = await mk("/api/dcim/manufacturers/", { name: "M" });
    const dt = await mk("/api/dcim/device-types/", { model: "T", manufacturer: man.id });
    const role = await mk("/api/dcim/device-roles/", { name: "R" });
    const dev: Record<string, Obj> = {};
    for (const name of ["sw1", "sw2", "pp1", "pp2"])
      dev[name] = await mk("/api/dcim/devices/", {
        name,
        site: site.id,
        device_type: dt.id,
        device_role: role.id,
        status: "active",
      });
    for (const d of ["sw1", "sw2"])
      for (const n of ["eth1", "eth2", "eth3", "eth4"])
        i[`${d}:${n}`] = await mk("/api/dcim/interfaces/", {
          device: dev[d]!.id,
          name: n,
          type: "1000base-t",
          status: "active",
        });
    for (const d of ["pp1", "pp2"]) {
      rp[d] = await mk("/api/dcim/rear-ports/", {
        device: dev[d]!.id,
        name: "rp1",
        type: "lc",
        positions: 2,
      });
      for (const pos of [1, 2])
        fp[`${d}:${pos}`] = await mk("/api/dcim/front-ports/", {
          device: dev[d]!.id,
          name: `fp${pos}`,
          type: "lc",
          rear_port: rp[d]!.id,
          rear_port_position: pos,
        });
    }
  });
  after(async () => {
    await s.close();
  });

  it("traces through patch panels as the cables are added", async () => {
    await cable("c1", i["sw1:eth1"]!, "dcim.interface", fp["pp1:1"]!, "dcim.frontport");
    assert.deepEqual(await trace(i["sw1:eth1"]!), [
      ["sw1:eth1", "c1", "pp1:fp1"],
      ["pp1:rp1", null, null],
    ]);
    await cable("trunk", rp.pp1!, "dcim.rearport", rp.pp2!, "dcim.rearport");
    assert.deepEqual(await trace(i["sw1:eth1"]!), [
      ["sw1:eth1", "c1", "pp1:fp1"],
      ["pp1:rp1", "trunk", "pp2:rp1"],
      ["pp2:fp1", null, null],
    ]);
    await cable("c3", fp["pp2:1"]!, "dcim.frontport", i["sw2:eth1"]!, "dcim.interface");
    await cable("c4", i["sw1:eth2"]!, "dcim.interface", fp["pp1:2"]!, "dcim.frontport");
    await cable("c5", fp["pp2:2"]!, "dcim.frontport", i["sw2:eth2"]!, "dcim.interface", "planned");
    await cable("direct", i["sw1:eth4"]!, "dcim.interface", i["sw2:eth4"]!, "dcim.interface");
    assert.deepEqual(await trace(i["sw1:eth1"]!), [
      ["sw1:eth1", "c1", "pp1:fp1"],
      ["pp1:rp1", "trunk", "pp2:rp1"],
      ["pp2:fp1", "c3", "sw2:eth1"],
    ]);
    // Position 2 of the trunk leads to fp2 on the far panel, not fp1.
    assert.deepEqual(await trace(i["sw2:eth2"]!), [
      ["sw2:eth2", "c5", "pp2:fp2"],
      ["pp2:rp1", "trunk", "pp1:rp1"],
      ["pp1:fp2", "c4", "sw1:eth2"],
    ]);
    const seg = ((await get(`/api/dcim/interfaces/${i["sw1:eth1"]!.id}/trace/`)) as Obj[][])[0]![1]!;
    assert.deepEqual(Object.keys(seg), [
      "display",
      "id",
      "url",
      "type",
      "status",
      "label",
      "color",
      "length",
      "length_unit",
      "created",
      "last_updated",
    ]);
    assert.equal(seg.length_unit, "");
  });

  it("connected_endpoint is the far interface; reachable only when every cable is connected", async () => {
    const expect: Array<[string, string, boolean]> = [
      ["sw1:eth1", "sw2:eth1", true],
      ["sw2:eth1", "sw1:eth1", true],
      ["sw1:eth2", "sw2:eth2", false],
      ["sw1:eth4", "sw2:eth4", true],
    ];
    for (const [from, to, reachable] of expect) {
      const o = await get(`/api/dcim/interfaces/${i[from]!.id}/`);
      assert.equal(names(o.connected_endpoint), to, from);
      assert.equal(o.connected_endpoint_type, "dcim.interface");
      assert.equal(o.connected_endpoint_reachable, reachable, from);
      assert.equal(o.cable_peer_type, from === "sw1:eth4" ? "dcim.interface" : "dcim.frontport");
    }
    const list = await get(`/api/dcim/interfaces/?device=sw1&cabled=true`);
    assert.equal(list.count, 3);
    assert.ok(list.results.every((r: Obj) => r.connected_endpoint?.device.name === "sw2"));
  });

  it("paths/ on pass-through ports, the connection lists and the connected-device locator", async () => {
    const paths = (await get(`/api/dcim/rear-ports/${rp.pp1!.id}/paths/`)) as Obj[];
    assert.equal(paths.length, 4);
    const p = paths.find((x) => names(x.origin) === "sw1:eth1")!;
    assert.equal(names(p.destination), "sw2:eth1");
    assert.equal(p.origin_type, "dcim.interface");
    assert.equal(p.is_active, true);
    assert.equal(p.is_split, false);
    assert.deepEqual(p.path.map(names), ["c1", "pp1:fp1", "pp1:rp1", "trunk", "pp2:rp1", "pp2:fp1", "c3"]);
    assert.deepEqual(Object.keys(p.path[0]).sort(), ["display", "id", "label", "url"]);
    const conns = await get(`/api/dcim/interface-connections/?site=${site.slug}`);
    assert.equal(conns.count, 3, "each connected pair once");
    assert.deepEqual(Object.keys(conns.results[0]), [
      "id",
      "display",
      "interface_a",
      "interface_b",
      "connected_endpoint_reachable",
      "created",
      "last_updated",
    ]);
    const pairs = conns.results.map((c: Obj) =>
      [names(c.interface_a), names(c.interface_b)].sort().join("-"),
    );
    assert.deepEqual(pairs.sort(), ["sw1:eth1-sw2:eth1", "sw1:eth2-sw2:eth2", "sw1:eth4-sw2:eth4"]);
    assert.equal((await get("/api/dcim/interface-connections/?site=nowhere")).count, 0);
    assert.equal((await get("/api/dcim/console-connections/")).count, 0);
    const dev = await get("/api/dcim/connected-device/?peer_device=sw1&peer_interface=eth1");
    assert.equal(dev.name, "sw2");
    assert.equal(dev.config_context, undefined);
    const missing = await s.api("/api/dcim/connected-device/?peer_device=sw1");
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      detail: 'Request must include "peer_device" and "peer_interface" filters.',
    });
    assert.equal(
      (await s.api("/api/dcim/connected-device/?peer_device=nope&peer_interface=eth1")).status,
      404,
    );
    const none = await fetch(`${s.url}/api/dcim/connected-device/?peer_device=sw1&peer_interface=eth3`, {
      headers: { Authorization: `Token ${s.token}` },
    });
    assert.equal(none.status, 200);
    assert.equal(await none.text(), "");
    assert.equal((await s.api(`/api/dcim/devices/${dev.id}/trace/`)).status, 404);
    assert.equal(
      (await s.api(`/api/dcim/interfaces/${i["sw1:eth1"]!.id}/trace/`, { method: "PUT", body: {} })).status,
      405,
    );
  });

  it("traces across a circuit, and retraces when its far termination comes and goes", async () => {
    const prov = await mk("/api/circuits/providers/", { name: "Prov" });
    const type = await mk("/api/circuits/circuit-types/", { name: "CT" });
    const circ = await mk("/api/circuits/circuits/", {
      cid: "PATH-1",
      provider: prov.id,
      type: type.id,
      status: "active",
    });
    const a = await mk("/api/circuits/circuit-terminations/", {
      circuit: circ.id,
      term_side: "A",
      site: site.id,
    });
    await cable("c7", i["sw1:eth3"]!, "dcim.interface", a, "circuits.circuittermination");
    assert.deepEqual(await trace(i["sw1:eth3"]!), [["sw1:eth3", "c7", "PATH-1:A"]]);
    const z = await mk("/api/circuits/circuit-terminations/", {
      circuit: circ.id,
      term_side: "Z",
      site: site.id,
    });
    assert.deepEqual(await trace(i["sw1:eth3"]!), [
      ["sw1:eth3", "c7", "PATH-1:A"],
      ["PATH-1:Z", null, null],
    ]);
    await cable("c8", z, "circuits.circuittermination", i["sw2:eth3"]!, "dcim.interface");
    assert.deepEqual(await trace(i["sw1:eth3"]!), [
      ["sw1:eth3", "c7", "PATH-1:A"],
      ["PATH-1:Z", "c8", "sw2:eth3"],
    ]);
    const ta = await get(`/api/circuits/circuit-terminations/${a.id}/`);
    assert.equal(ta.display, "Termination A: PathSite");
    assert.equal(names(ta.connected_endpoint), "sw1:eth3");
    assert.deepEqual(
      ((await get(`/api/circuits/circuit-terminations/${a.id}/trace/`)) as Obj[][]).map((x) => x.map(names)),
      [["PATH-1:A", "c7", "sw1:eth3"]],
    );
    // Nautobot 1.6.32 answers this trace with a 500 (KeyError) after the delete.
    assert.equal(
      (await s.api(`/api/circuits/circuit-terminations/${z.id}/`, { method: "DELETE" })).status,
      204,
    );
    assert.deepEqual(await trace(i["sw1:eth3"]!), [["sw1:eth3", "c7", "PATH-1:A"]]);
    assert.equal(
      names((await get(`/api/dcim/interfaces/${i["sw1:eth3"]!.id}/`)).connected_endpoint),
      "PATH-1:A",
    );
  });

  it("a status change deactivates the path; deleting the trunk truncates both sides", async () => {
    const trunk = cables.trunk!;
    await s.api(`/api/dcim/cables/${trunk.id}/`, { method: "PATCH", body: { status: "planned" } });
    let o = await get(`/api/dcim/interfaces/${i["sw1:eth1"]!.id}/`);
    assert.equal(o.connected_endpoint_reachable, false);
    assert.equal(names(o.connected_endpoint), "sw2:eth1");
    await s.api(`/api/dcim/cables/${trunk.id}/`, { method: "PATCH", body: { status: "connected" } });
    o = await get(`/api/dcim/interfaces/${i["sw1:eth1"]!.id}/`);
    assert.equal(o.connected_endpoint_reachable, true);
    assert.equal((await s.api(`/api/dcim/cables/${trunk.id}/`, { method: "DELETE" })).status, 204);
    assert.deepEqual(await trace(i["sw1:eth1"]!), [
      ["sw1:eth1", "c1", "pp1:fp1"],
      ["pp1:rp1", null, null],
    ]);
    assert.deepEqual(await trace(i["sw2:eth1"]!), [
      ["sw2:eth1", "c3", "pp2:fp1"],
      ["pp2:rp1", null, null],
    ]);
    o = await get(`/api/dcim/interfaces/${i["sw1:eth1"]!.id}/`);
    assert.equal(o.connected_endpoint, null);
    assert.equal(o.connected_endpoint_type, null);
    assert.equal(o.connected_endpoint_reachable, false);
    // Deleting an interface removes its cable and the far side's path.
    assert.equal(
      (await s.api(`/api/dcim/interfaces/${i["sw2:eth4"]!.id}/`, { method: "DELETE" })).status,
      204,
    );
    o = await get(`/api/dcim/interfaces/${i["sw1:eth4"]!.id}/`);
    assert.equal(o.cable, null);
    assert.equal(o.connected_endpoint, null);
    assert.equal(o.connected_endpoint_reachable, null);
    assert.deepEqual(await trace(i["sw1:eth4"]!), []);
  });
});
