/**
 * Issue 5, filters: lookups per field kind (seed, Filtering table), the seed's rules 1–4, custom-field
 * filter logic, model-specific filters clients rely on, strict 400s for unknown parameters and badly typed
 * values, literal LIKE wildcards and Unicode case folding — on SQLite and PostgreSQL alike.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("filters", () => {
  let s: TestServer;
  const ids: Record<string, string> = {};
  const mk = async (path: string, body: Record<string, unknown>, key?: string) => {
    const r = await s.api(path, { method: "POST", body });
    assert.equal(r.status, 201, `${path} ${JSON.stringify(r.body)}`);
    if (key) ids[key] = r.body.id;
    return r.body;
  };
  /** Names (or `display`) of the results of a list query. */
  const names = async (path: string): Promise<string[]> => {
    const r = await s.api(path);
    assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
    return r.body.results.map((o: any) => o.name ?? o.display).sort();
  };

  before(async () => {
    s = await startServer();
    await mk("/api/dcim/regions/", { name: "Europe" }, "europe");
    await mk("/api/dcim/regions/", { name: "Germany", parent: ids.europe }, "germany");
    await mk(
      "/api/dcim/sites/",
      { name: "Ärger Hall", status: "active", region: ids.germany, asn: 65001 },
      "s1",
    );
    await mk("/api/dcim/sites/", { name: "100% Site", status: "planned" }, "s2");
    await mk("/api/dcim/sites/", { name: "Plain_Site", status: "active", region: ids.europe }, "s3");
    await mk("/api/extras/tags/", { name: "red" });
    await mk("/api/extras/tags/", { name: "blue" });
    await s.api(`/api/dcim/sites/${ids.s1}/`, {
      method: "PATCH",
      body: { tags: [{ name: "red" }, { name: "blue" }] },
    });
    await s.api(`/api/dcim/sites/${ids.s3}/`, { method: "PATCH", body: { tags: [{ name: "red" }] } });
    for (const vid of [10, 20, 30]) await mk("/api/ipam/vlans/", { name: `v${vid}`, vid, status: "active" });
    await mk("/api/ipam/prefixes/", { prefix: "10.0.0.0/16", status: "container" });
    await mk("/api/ipam/prefixes/", { prefix: "10.0.1.0/24", status: "active" });
    await mk("/api/ipam/prefixes/", { prefix: "2001:db8::/48", status: "active" });
    await mk("/api/ipam/ip-addresses/", { address: "10.0.1.5/24", status: "active" });
    await mk("/api/ipam/ip-addresses/", { address: "10.9.0.1/32", status: "active" });
    await mk("/api/extras/custom-fields/", {
      name: "owner",
      type: "text",
      content_types: ["dcim.site"],
      filter_logic: "loose",
    });
    await mk("/api/extras/custom-fields/", {
      name: "code",
      type: "text",
      content_types: ["dcim.site"],
      filter_logic: "exact",
    });
    await mk("/api/extras/custom-fields/", {
      name: "secret_note",
      type: "text",
      content_types: ["dcim.site"],
      filter_logic: "disabled",
    });
    await s.api(`/api/dcim/sites/${ids.s1}/`, {
      method: "PATCH",
      body: { custom_fields: { owner: "Network Team", code: "AB-1", secret_note: "x" } },
    });
  });
  after(async () => {
    await s.close();
  });

  it("string lookups, literal wildcards and Unicode case folding", async () => {
    assert.deepEqual(await names("/api/dcim/sites/?name__ic=ärg"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__ic=ÄRG"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__ie=ärger hall"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__ic=%25"), ["100% Site"], "% is literal");
    assert.deepEqual(await names("/api/dcim/sites/?name__ic=_"), ["Plain_Site"], "_ is literal");
    assert.deepEqual(await names("/api/dcim/sites/?name__isw=plain"), ["Plain_Site"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__iew=SITE"), ["100% Site", "Plain_Site"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__niew=site"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__nic=a"), ["100% Site"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__nisw=1"), ["Plain_Site", "Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__nie=plain_site"), ["100% Site", "Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__n=Plain_Site"), ["100% Site", "Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__re=^P"), ["Plain_Site"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__ire=^p"), ["Plain_Site"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__nre=^P"), ["100% Site", "Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?name__nire=^p"), ["100% Site", "Ärger Hall"]);
  });

  it("numeric lookups, isnull, and 400s for bad values and unknown parameters", async () => {
    assert.deepEqual(await names("/api/ipam/vlans/?vid__gt=10"), ["v20", "v30"]);
    assert.deepEqual(await names("/api/ipam/vlans/?vid__gte=20&vid__lte=20"), ["v20"]);
    assert.deepEqual(await names("/api/ipam/vlans/?vid__lt=20"), ["v10"]);
    assert.deepEqual(await names("/api/ipam/vlans/?vid__n=20"), ["v10", "v30"]);
    assert.deepEqual(await names("/api/dcim/sites/?asn__isnull=false"), ["Ärger Hall"]);
    assert.equal((await names("/api/dcim/sites/?asn__isnull=true")).length, 2);
    for (const [q, key] of [
      ["/api/ipam/vlans/?vid__gt=abc", "vid__gt"],
      ["/api/dcim/sites/?id=not-a-uuid", "id"],
      ["/api/dcim/sites/?asn__isnull=maybe", "asn__isnull"],
      ["/api/dcim/sites/?nonsense=1", "nonsense"],
    ] as const) {
      const r = await s.api(q);
      assert.equal(r.status, 400, q);
      assert.ok(Array.isArray(r.body[key]), `${q}: ${JSON.stringify(r.body)}`);
    }
    assert.deepEqual((await s.api("/api/dcim/sites/?nonsense=1")).body, {
      nonsense: ["Unknown filter field"],
    });
  });

  it("rules 1–4: AND across parameters, OR within one, tags AND, custom-field filter logic", async () => {
    assert.deepEqual(await names("/api/dcim/sites/?status=active&region=germany"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?status=active&status=planned"), [
      "100% Site",
      "Plain_Site",
      "Ärger Hall",
    ]);
    assert.deepEqual(await names("/api/dcim/sites/?tag=red"), ["Plain_Site", "Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?tag=red&tag=blue"), ["Ärger Hall"]);
    assert.deepEqual(await names("/api/dcim/sites/?cf_owner=network"), ["Ärger Hall"], "loose: partial");
    assert.deepEqual(await names("/api/dcim/sites/?cf_code=ab"), [], "exact: whole value");
    assert.deepEqual(await names("/api/dcim/sites/?cf_code=AB-1"), ["Ärger Hall"]);
    assert.equal((await s.api("/api/dcim/sites/?cf_secret_note=x")).status, 400, "disabled: not filterable");
    assert.deepEqual(await names("/api/dcim/sites/?cf_owner__isw=net"), ["Ärger Hall"], "lookups on cf");
  });

  it("location and cable filters", async () => {
    const campus = await mk("/api/dcim/location-types/", { name: "Campus", content_types: [] });
    const building = await mk("/api/dcim/location-types/", {
      name: "Building",
      parent: campus.id,
      content_types: ["dcim.device", "dcim.rack"],
    });
    await mk(
      "/api/dcim/locations/",
      { name: "North", location_type: campus.id, site: ids.s1, status: "active" },
      "north",
    );
    await mk("/api/dcim/locations/", {
      name: "B1",
      location_type: building.id,
      parent: ids.north,
      status: "active",
    });
    assert.deepEqual(await names("/api/dcim/locations/?child_location_type=building"), ["North"]);
    assert.deepEqual(await names(`/api/dcim/locations/?child_location_type=${building.id}`), ["North"]);
    assert.deepEqual(await names("/api/dcim/locations/?content_type=dcim.rack"), ["B1"]);
    const r = await s.api(
      "/api/dcim/cables/?rack=R9&tenant=nobody&rack_id=00000000-0000-4000-8000-000000000000",
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.count, 0);
  });

  it("device, interface and IP-assignment filters; choice, bool, date and FK lookups", async () => {
    const mfr = await mk("/api/dcim/manufacturers/", { name: "F-Mfr" });
    const dt = await mk("/api/dcim/device-types/", { manufacturer: mfr.id, model: "F-1" });
    const role = await mk("/api/dcim/device-roles/", { name: "f-edge" });
    const rack = await mk("/api/dcim/racks/", { name: "F-R1", site: ids.s1, status: "active" });
    const d1 = await mk("/api/dcim/devices/", {
      name: "fd1",
      device_type: dt.id,
      device_role: role.id,
      site: ids.s1,
      rack: rack.id,
      status: "active",
    });
    await mk("/api/dcim/devices/", {
      name: "fd2",
      device_type: dt.id,
      device_role: role.id,
      site: ids.s3,
      status: "planned",
    });
    const e0 = await mk("/api/dcim/interfaces/", { device: d1.id, name: "eth0", type: "1000base-t" });
    await mk("/api/dcim/interfaces/", { device: d1.id, name: "mgmt0", type: "1000base-t", mgmt_only: true });
    await mk("/api/dcim/interfaces/", { device: d1.id, name: "lo0", type: "virtual" });
    const ip = await mk("/api/ipam/ip-addresses/", {
      address: "192.0.2.1/24",
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: e0.id,
    });
    await s.api(`/api/dcim/devices/${d1.id}/`, { method: "PATCH", body: { primary_ip4: ip.id } });

    assert.deepEqual(await names("/api/dcim/devices/?site=plain_site"), ["fd2"]);
    assert.deepEqual(await names("/api/dcim/devices/?region=europe"), ["fd1", "fd2"], "region descendants");
    assert.deepEqual(await names(`/api/dcim/devices/?rack_id=${rack.id}`), ["fd1"]);
    assert.deepEqual(await names("/api/dcim/devices/?role=f-edge&has_primary_ip=true"), ["fd1"]);
    assert.deepEqual(await names("/api/dcim/devices/?has_primary_ip=false&role=f-edge"), ["fd2"]);
    assert.deepEqual(await names("/api/dcim/devices/?role=f-edge&status__n=active"), ["fd2"], "choice __n");
    assert.deepEqual(await names("/api/dcim/devices/?role=f-edge&site__n=plain_site"), ["fd1"], "FK __n");
    const since = (await s.api(`/api/dcim/devices/${d1.id}/`)).body.last_updated;
    assert.deepEqual(
      await names(`/api/dcim/devices/?role=f-edge&last_updated__gte=${encodeURIComponent(since)}`),
      ["fd1"],
    );
    assert.deepEqual(await names("/api/dcim/devices/?role=f-edge&created__lt=2000-01-01"), [], "date lookup");

    assert.deepEqual(await names("/api/dcim/interfaces/?device=fd1"), ["eth0", "lo0", "mgmt0"]);
    assert.deepEqual(
      await names(`/api/dcim/interfaces/?device_id=${d1.id}&mgmt_only=true`),
      ["mgmt0"],
      "bool",
    );
    assert.deepEqual(await names(`/api/dcim/interfaces/?device_id=${d1.id}&kind=virtual`), ["lo0"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?device_id=${d1.id}&type=virtual`), ["lo0"]);
    assert.deepEqual(await names(`/api/dcim/interfaces/?device_id=${d1.id}&cabled=false`), [
      "eth0",
      "lo0",
      "mgmt0",
    ]);
    // Nautobot ignores a boolean filter given no boolean (issue 24; test/api/filter-values-parity.test.ts).
    assert.equal((await s.api("/api/dcim/interfaces/?mgmt_only=maybe")).status, 200);

    const a = async (q: string) =>
      (await s.api(`/api/ipam/ip-addresses/?${q}`)).body.results.map((o: any) => o.address).sort();
    assert.deepEqual(await a("device=fd1"), ["192.0.2.1/24"]);
    assert.deepEqual(await a(`device_id=${d1.id}`), ["192.0.2.1/24"]);
    assert.deepEqual(await a(`interface_id=${e0.id}`), ["192.0.2.1/24"]);
    assert.deepEqual(await a("interface=eth0"), ["192.0.2.1/24"]);
    assert.deepEqual(await a("assigned_to_interface=true"), ["192.0.2.1/24"]);
    assert.deepEqual(await a("virtual_machine=none-such"), []);
  });

  it("tree, prefix and IP filters", async () => {
    assert.deepEqual(
      await names("/api/dcim/sites/?region=europe"),
      ["Plain_Site", "Ärger Hall"],
      "descendants",
    );
    assert.deepEqual(await names("/api/dcim/regions/?parent=europe"), ["Germany"]);
    const p = async (q: string) =>
      (await s.api(`/api/ipam/prefixes/?${q}`)).body.results.map((o: any) => o.prefix).sort();
    assert.deepEqual(await p("within=10.0.0.0/16"), ["10.0.1.0/24"]);
    assert.deepEqual(await p("within_include=10.0.0.0/16"), ["10.0.0.0/16", "10.0.1.0/24"]);
    assert.deepEqual(await p("contains=10.0.1.7"), ["10.0.0.0/16", "10.0.1.0/24"]);
    assert.deepEqual(await p("mask_length=24"), ["10.0.1.0/24"]);
    assert.deepEqual(await p("family=6"), ["2001:db8::/48"]);
    const a = async (q: string) =>
      (await s.api(`/api/ipam/ip-addresses/?${q}`)).body.results.map((o: any) => o.address).sort();
    assert.deepEqual(await a("parent=10.0.0.0/16"), ["10.0.1.5/24"]);
    assert.deepEqual(await a("mask_length=32"), ["10.9.0.1/32"]);
    assert.deepEqual(await a("family=4&parent=10.0.0.0/8"), ["10.0.1.5/24", "10.9.0.1/32"]);
    assert.deepEqual(
      (await a("assigned_to_interface=false")).filter((x: string) => x.startsWith("10.")),
      ["10.0.1.5/24", "10.9.0.1/32"],
    );
  });
});
