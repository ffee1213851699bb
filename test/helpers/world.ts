/**
 * A small shared world built through the API, and a valid create body for every model: the per-model
 * CRUD tests (test/api/models.test.ts) take their inputs from here. Bodies use Nautobot 1.6 field names.
 */
import assert from "node:assert/strict";
import type { TestServer } from "./server.ts";

export type Body = Record<string, unknown>;

/** Ids of the shared objects. */
export type World = Record<string, string>;

/** POST and return the created object (asserts 201). */
export async function create(s: TestServer, path: string, body: Body): Promise<any> {
  const r = await s.api(path, { method: "POST", body });
  assert.equal(r.status, 201, `POST ${path} ${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The history point after everything committed so far (issue 27), through `as_of=<now>`. */
export async function pointNow(s: TestServer): Promise<number> {
  const r = await s.api(
    `/api/tenancy/tenants/?limit=1&as_of=${encodeURIComponent(new Date().toISOString())}`,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return Number(r.headers.get("x-inventory-as-of-seq"));
}

/** Build the shared world: one of most things, linked together. */
export async function buildWorld(s: TestServer): Promise<World> {
  const w: World = {};
  const c = async (key: string, path: string, body: Body) => {
    w[key] = (await create(s, path, body)).id;
  };
  await c("tenantgroup", "/api/tenancy/tenant-groups/", { name: "TG" });
  await c("tenant", "/api/tenancy/tenants/", { name: "Tenant A", group: w.tenantgroup });
  await c("region", "/api/dcim/regions/", { name: "Europe" });
  await c("site", "/api/dcim/sites/", {
    name: "Site A",
    status: "active",
    region: w.region,
    tenant: w.tenant,
  });
  await c("site2", "/api/dcim/sites/", { name: "Site B", status: "active" });
  await c("locationtype", "/api/dcim/location-types/", {
    name: "Building",
    content_types: [
      "dcim.device",
      "dcim.rack",
      "dcim.rackgroup",
      "ipam.prefix",
      "ipam.vlan",
      "ipam.vlangroup",
      "virtualization.cluster",
      "dcim.powerpanel",
      "circuits.circuittermination",
    ],
  });
  await c("location", "/api/dcim/locations/", {
    name: "Bldg 1",
    location_type: w.locationtype,
    site: w.site,
    status: "active",
  });
  await c("rackgroup", "/api/dcim/rack-groups/", { name: "RG 1", site: w.site });
  await c("rackrole", "/api/dcim/rack-roles/", { name: "Compute" });
  await c("rack", "/api/dcim/racks/", {
    name: "Rack 1",
    site: w.site,
    status: "active",
    group: w.rackgroup,
    role: w.rackrole,
  });
  await c("manufacturer", "/api/dcim/manufacturers/", { name: "Acme" });
  await c("platform", "/api/dcim/platforms/", { name: "AcmeOS", manufacturer: w.manufacturer });
  await c("devicetype", "/api/dcim/device-types/", {
    manufacturer: w.manufacturer,
    model: "Box 1",
    u_height: 1,
  });
  await c("parenttype", "/api/dcim/device-types/", {
    manufacturer: w.manufacturer,
    model: "Chassis",
    u_height: 2,
    subdevice_role: "parent",
  });
  await c("devicerole", "/api/dcim/device-roles/", { name: "Leaf", color: "00ff00" });
  await c("device", "/api/dcim/devices/", {
    name: "dev-1",
    device_type: w.devicetype,
    device_role: w.devicerole,
    site: w.site,
    status: "active",
    rack: w.rack,
  });
  await c("device2", "/api/dcim/devices/", {
    name: "dev-2",
    device_type: w.devicetype,
    device_role: w.devicerole,
    site: w.site,
    status: "active",
  });
  await c("chassis", "/api/dcim/devices/", {
    name: "chassis-1",
    device_type: w.parenttype,
    device_role: w.devicerole,
    site: w.site,
    status: "active",
  });
  await c("interface", "/api/dcim/interfaces/", { device: w.device, name: "eth0", type: "1000base-t" });
  await c("interface2", "/api/dcim/interfaces/", { device: w.device2, name: "eth0", type: "1000base-t" });
  await c("rearport", "/api/dcim/rear-ports/", { device: w.device, name: "rp1", type: "lc", positions: 4 });
  await c("powerport", "/api/dcim/power-ports/", { device: w.device, name: "psu0" });
  await c("powerpanel", "/api/dcim/power-panels/", { site: w.site, name: "PP 1" });
  await c("clustertype", "/api/virtualization/cluster-types/", { name: "VMware" });
  await c("clustergroup", "/api/virtualization/cluster-groups/", { name: "CG" });
  await c("cluster", "/api/virtualization/clusters/", {
    name: "Cluster 1",
    type: w.clustertype,
    group: w.clustergroup,
    site: w.site,
  });
  await c("vm", "/api/virtualization/virtual-machines/", {
    name: "vm-1",
    cluster: w.cluster,
    status: "active",
  });
  await c("vminterface", "/api/virtualization/interfaces/", { virtual_machine: w.vm, name: "eth0" });
  await c("rir", "/api/ipam/rirs/", { name: "RIPE" });
  await c("routetarget", "/api/ipam/route-targets/", { name: "65000:1" });
  await c("vrf", "/api/ipam/vrfs/", { name: "Blue", rd: "65000:1" });
  await c("ipamrole", "/api/ipam/roles/", { name: "Prod" });
  await c("vlangroup", "/api/ipam/vlan-groups/", { name: "VG 1", site: w.site });
  await c("vlan", "/api/ipam/vlans/", {
    vid: 100,
    name: "v100",
    status: "active",
    site: w.site,
    group: w.vlangroup,
  });
  await c("prefix", "/api/ipam/prefixes/", { prefix: "10.0.0.0/16", status: "container" });
  await c("ipaddress", "/api/ipam/ip-addresses/", { address: "10.0.0.1/24", status: "active" });
  await c("provider", "/api/circuits/providers/", { name: "Telco" });
  await c("circuittype", "/api/circuits/circuit-types/", { name: "Transit" });
  await c("circuit", "/api/circuits/circuits/", {
    cid: "C-1",
    provider: w.provider,
    type: w.circuittype,
    status: "active",
  });
  await c("tag", "/api/extras/tags/", { name: "Gold", slug: "gold" });
  return w;
}

/** How to test one model. */
export interface Sample {
  path: string;
  /** A valid create body; `n` makes names unique. */
  create(w: World, n: number): Body;
  /** A valid PATCH body. */
  patch: Body;
  /** A field whose value must be unique: creating `create(w, n)` twice with the same n fails on it. */
  unique?: string;
}

const hex = (n: number) => n.toString(16).padStart(2, "0");

/** One sample per model key (every registered writable model). */
export const SAMPLES: Record<string, Sample> = {
  "tenancy.tenantgroup": {
    path: "/api/tenancy/tenant-groups/",
    create: (_w, n) => ({ name: `tg${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "tenancy.tenant": {
    path: "/api/tenancy/tenants/",
    create: (_w, n) => ({ name: `t${n}` }),
    patch: { comments: "x" },
    unique: "name",
  },
  "dcim.region": {
    path: "/api/dcim/regions/",
    create: (w, n) => ({ name: `r${n}`, parent: w.region }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.site": {
    path: "/api/dcim/sites/",
    create: (w, n) => ({
      name: `s${n}`,
      status: "planned",
      region: w.region,
      asn: 65000 + n,
      latitude: 52.1,
      time_zone: "Europe/Amsterdam",
    }),
    patch: { status: "active", facility: "F" },
    unique: "name",
  },
  "dcim.locationtype": {
    path: "/api/dcim/location-types/",
    create: (_w, n) => ({ name: `lt${n}`, content_types: ["dcim.device"] }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.location": {
    path: "/api/dcim/locations/",
    create: (w, n) => ({ name: `loc${n}`, location_type: w.locationtype, site: w.site, status: "active" }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.rackgroup": {
    path: "/api/dcim/rack-groups/",
    create: (w, n) => ({ name: `rg${n}`, site: w.site }),
    patch: { description: "x" },
  },
  "dcim.rackrole": {
    path: "/api/dcim/rack-roles/",
    create: (_w, n) => ({ name: `rr${n}`, color: "aabbcc" }),
    patch: { color: "112233" },
    unique: "name",
  },
  "dcim.rack": {
    path: "/api/dcim/racks/",
    create: (w, n) => ({
      name: `rack${n}`,
      site: w.site,
      status: "planned",
      group: w.rackgroup,
      u_height: 42,
      width: 19,
      type: "4-post-cabinet",
    }),
    patch: { status: "active", u_height: 48 },
  },
  "dcim.rackreservation": {
    path: "/api/dcim/rack-reservations/",
    create: (w, n) => ({ rack: w.rack, units: [40 - (n % 30)], user: undefined, description: `res ${n}` }),
    patch: { description: "y" },
  },
  "dcim.manufacturer": {
    path: "/api/dcim/manufacturers/",
    create: (_w, n) => ({ name: `m${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.platform": {
    path: "/api/dcim/platforms/",
    create: (w, n) => ({ name: `p${n}`, manufacturer: w.manufacturer, napalm_driver: "junos" }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.devicetype": {
    path: "/api/dcim/device-types/",
    create: (w, n) => ({ manufacturer: w.manufacturer, model: `model ${n}`, u_height: 1 }),
    patch: { part_number: "PN" },
  },
  "dcim.devicerole": {
    path: "/api/dcim/device-roles/",
    create: (_w, n) => ({ name: `role${n}`, color: "aabbcc" }),
    patch: { vm_role: false },
    unique: "name",
  },
  "dcim.device": {
    path: "/api/dcim/devices/",
    create: (w, n) => ({
      name: `d${n}`,
      device_type: w.devicetype,
      device_role: w.devicerole,
      site: w.site,
      status: "planned",
    }),
    patch: { status: "active", serial: "S1" },
    unique: "asset_tag",
  },
  "dcim.virtualchassis": {
    path: "/api/dcim/virtual-chassis/",
    create: (_w, n) => ({ name: `vc${n}`, domain: "d" }),
    patch: { domain: "e" },
  },
  "dcim.powerpanel": {
    path: "/api/dcim/power-panels/",
    create: (w, n) => ({ site: w.site, name: `pp${n}` }),
    patch: { name: "renamed" },
  },
  "dcim.powerfeed": {
    path: "/api/dcim/power-feeds/",
    create: (w, n) => ({ power_panel: w.powerpanel, name: `feed${n}`, status: "active" }),
    patch: { voltage: 230 },
  },
  "dcim.cable": { path: "/api/dcim/cables/", create: () => ({}), patch: { label: "c" } },
  "dcim.interface": {
    path: "/api/dcim/interfaces/",
    create: (w, n) => ({ device: w.device2, name: `ge-${n}`, type: "1000base-t", mtu: 1500 }),
    patch: { description: "uplink", enabled: false },
  },
  "dcim.frontport": { path: "/api/dcim/front-ports/", create: () => ({}), patch: { description: "x" } },
  "dcim.rearport": {
    path: "/api/dcim/rear-ports/",
    create: (w, n) => ({ device: w.device2, name: `rp${n}`, type: "lc", positions: 2 }),
    patch: { description: "x" },
  },
  "dcim.consoleport": {
    path: "/api/dcim/console-ports/",
    create: (w, n) => ({ device: w.device2, name: `con${n}`, type: "rj-45" }),
    patch: { description: "x" },
  },
  "dcim.consoleserverport": {
    path: "/api/dcim/console-server-ports/",
    create: (w, n) => ({ device: w.device2, name: `csp${n}`, type: "rj-45" }),
    patch: { description: "x" },
  },
  "dcim.powerport": {
    path: "/api/dcim/power-ports/",
    create: (w, n) => ({ device: w.device2, name: `pwr${n}`, maximum_draw: 500, allocated_draw: 300 }),
    patch: { description: "x" },
  },
  "dcim.poweroutlet": {
    path: "/api/dcim/power-outlets/",
    create: (w, n) => ({ device: w.device, name: `po${n}`, power_port: w.powerport, feed_leg: "A" }),
    patch: { description: "x" },
  },
  "dcim.devicebay": {
    path: "/api/dcim/device-bays/",
    create: (w, n) => ({ device: w.chassis, name: `bay${n}` }),
    patch: { description: "x" },
  },
  "dcim.inventoryitem": {
    path: "/api/dcim/inventory-items/",
    create: (w, n) => ({ device: w.device2, name: `item${n}`, manufacturer: w.manufacturer }),
    patch: { serial: "x" },
  },
  "dcim.interfacetemplate": {
    path: "/api/dcim/interface-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `it${n}`, type: "1000base-t" }),
    patch: { mgmt_only: true },
  },
  "dcim.frontporttemplate": {
    path: "/api/dcim/front-port-templates/",
    create: () => ({}),
    patch: { description: "x" },
  },
  "dcim.rearporttemplate": {
    path: "/api/dcim/rear-port-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `rpt${n}`, type: "lc" }),
    patch: { description: "x" },
  },
  "dcim.consoleporttemplate": {
    path: "/api/dcim/console-port-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `cpt${n}`, type: "rj-45" }),
    patch: { description: "x" },
  },
  "dcim.consoleserverporttemplate": {
    path: "/api/dcim/console-server-port-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `cspt${n}`, type: "rj-45" }),
    patch: { description: "x" },
  },
  "dcim.powerporttemplate": {
    path: "/api/dcim/power-port-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `ppt${n}` }),
    patch: { description: "x" },
  },
  "dcim.poweroutlettemplate": {
    path: "/api/dcim/power-outlet-templates/",
    create: (w, n) => ({ device_type: w.devicetype, name: `pot${n}` }),
    patch: { description: "x" },
  },
  "dcim.devicebaytemplate": {
    path: "/api/dcim/device-bay-templates/",
    create: (w, n) => ({ device_type: w.parenttype, name: `dbt${n}` }),
    patch: { description: "x" },
  },
  "extras.status": {
    path: "/api/extras/statuses/",
    create: (_w, n) => ({ name: `Status ${n}`, content_types: ["dcim.device"], color: "aabbcc" }),
    patch: { color: "ffffff" },
    unique: "name",
  },
  "extras.tag": {
    path: "/api/extras/tags/",
    create: (_w, n) => ({ name: `tag${n}`, slug: `tag${n}` }),
    patch: { color: "aaaaaa" },
    unique: "name",
  },
  "extras.customfield": {
    path: "/api/extras/custom-fields/",
    create: (_w, n) => ({ name: `cf${n}`, type: "text", content_types: ["dcim.site"] }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.configcontext": {
    path: "/api/extras/config-contexts/",
    create: (w, n) => ({ name: `cc${n}`, data: { ntp: [`10.0.0.${n % 250}`] }, sites: [w.site] }),
    patch: { weight: 2000 },
    unique: "name",
  },
  "extras.webhook": {
    path: "/api/extras/webhooks/",
    create: (_w, n) => ({
      name: `wh${n}`,
      content_types: ["dcim.site"],
      type_create: true,
      payload_url: `http://127.0.0.1:9000/${n}`,
    }),
    patch: { enabled: false },
    unique: "name",
  },
  "ipam.rir": {
    path: "/api/ipam/rirs/",
    create: (_w, n) => ({ name: `rir${n}` }),
    patch: { is_private: true },
    unique: "name",
  },
  "ipam.aggregate": {
    path: "/api/ipam/aggregates/",
    create: (w, n) => ({ prefix: `100.${n}.0.0/16`, rir: w.rir }),
    patch: { description: "x" },
  },
  "ipam.vrf": {
    path: "/api/ipam/vrfs/",
    create: (_w, n) => ({ name: `vrf${n}`, rd: `65001:${n}` }),
    patch: { enforce_unique: false },
    unique: "rd",
  },
  "ipam.routetarget": {
    path: "/api/ipam/route-targets/",
    create: (_w, n) => ({ name: `65002:${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "ipam.role": {
    path: "/api/ipam/roles/",
    create: (_w, n) => ({ name: `ipr${n}` }),
    patch: { weight: 5 },
    unique: "name",
  },
  "ipam.prefix": {
    path: "/api/ipam/prefixes/",
    create: (_w, n) => ({ prefix: `10.${n}.1.0/24`, status: "active" }),
    patch: { status: "reserved" },
  },
  "ipam.ipaddress": {
    path: "/api/ipam/ip-addresses/",
    create: (_w, n) => ({ address: `10.1.${n}.1/24`, status: "active", dns_name: "host.example.com" }),
    patch: { status: "reserved" },
  },
  "ipam.vlangroup": {
    path: "/api/ipam/vlan-groups/",
    create: (w, n) => ({ name: `vg${n}`, site: w.site }),
    patch: { description: "x" },
  },
  "ipam.vlan": {
    path: "/api/ipam/vlans/",
    create: (w, n) => ({
      vid: 200 + n,
      name: `vlan${n}`,
      status: "active",
      site: w.site,
      group: w.vlangroup,
    }),
    patch: { status: "reserved" },
  },
  "ipam.service": {
    path: "/api/ipam/services/",
    create: (w, n) => ({ device: w.device, name: `svc${n}`, protocol: "tcp", ports: [22, 80 + n] }),
    patch: { description: "x" },
  },
  "circuits.provider": {
    path: "/api/circuits/providers/",
    create: (_w, n) => ({ name: `prov${n}`, asn: 64512 + n }),
    patch: { account: "x" },
    unique: "name",
  },
  "circuits.providernetwork": {
    path: "/api/circuits/provider-networks/",
    create: (w, n) => ({ provider: w.provider, name: `pn${n}` }),
    patch: { description: "x" },
  },
  "circuits.circuittype": {
    path: "/api/circuits/circuit-types/",
    create: (_w, n) => ({ name: `ct${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "circuits.circuit": {
    path: "/api/circuits/circuits/",
    create: (w, n) => ({ cid: `CID-${n}`, provider: w.provider, type: w.circuittype, status: "planned" }),
    patch: { status: "active", commit_rate: 1000 },
  },
  "circuits.circuittermination": {
    path: "/api/circuits/circuit-terminations/",
    create: () => ({}),
    patch: { port_speed: 1000 },
  },
  "virtualization.clustertype": {
    path: "/api/virtualization/cluster-types/",
    create: (_w, n) => ({ name: `ctype${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "virtualization.clustergroup": {
    path: "/api/virtualization/cluster-groups/",
    create: (_w, n) => ({ name: `cgroup${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "virtualization.cluster": {
    path: "/api/virtualization/clusters/",
    create: (w, n) => ({ name: `cl${n}`, type: w.clustertype }),
    patch: { comments: "x" },
    unique: "name",
  },
  "virtualization.virtualmachine": {
    path: "/api/virtualization/virtual-machines/",
    create: (w, n) => ({ name: `vm${n}`, cluster: w.cluster, status: "active", vcpus: 2 }),
    patch: { memory: 2048 },
  },
  "virtualization.vminterface": {
    path: "/api/virtualization/interfaces/",
    create: (w, n) => ({ virtual_machine: w.vm, name: `veth${n}`, mac_address: `00:11:22:33:44:${hex(n)}` }),
    patch: { mtu: 9000 },
  },
  "extras.customfieldchoice": {
    path: "/api/extras/custom-field-choices/",
    create: () => ({}),
    patch: { weight: 5 },
  },
  "extras.note": {
    path: "/api/extras/notes/",
    create: (w, n) => ({ assigned_object_type: "dcim.site", assigned_object_id: w.site, note: `note ${n}` }),
    patch: { note: "changed" },
  },
  "extras.relationship": {
    path: "/api/extras/relationships/",
    create: (_w, n) => ({
      name: `rel${n}`,
      type: "one-to-many",
      source_type: "dcim.site",
      destination_type: "ipam.vlan",
    }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.relationshipassociation": {
    path: "/api/extras/relationship-associations/",
    create: () => ({}),
    patch: {},
  },
  "extras.computedfield": {
    path: "/api/extras/computed-fields/",
    create: (_w, n) => ({ content_type: "dcim.site", label: `Computed ${n}`, template: "{{ obj.name }}" }),
    patch: { fallback_value: "?" },
  },
  "extras.customlink": {
    path: "/api/extras/custom-links/",
    create: (_w, n) => ({
      content_type: "dcim.site",
      name: `link${n}`,
      text: "Open",
      target_url: "https://example.com/{{ obj.name }}",
      new_window: false,
    }),
    patch: { weight: 5 },
    unique: "name",
  },
  "extras.exporttemplate": {
    path: "/api/extras/export-templates/",
    create: (_w, n) => ({
      content_type: "dcim.site",
      name: `export${n}`,
      template_code: "{% for s in queryset %}{{ s.name }}{% endfor %}",
    }),
    patch: { mime_type: "text/plain" },
  },
  "extras.graphqlquery": {
    path: "/api/extras/graphql-queries/",
    create: (_w, n) => ({ name: `query${n}`, query: "{ sites { name } }" }),
    patch: { query: "query ($n: Int) { sites(limit: $n) { name } }" },
    unique: "name",
  },
  "extras.dynamicgroup": {
    path: "/api/extras/dynamic-groups/",
    create: (_w, n) => ({ name: `dg${n}`, content_type: "dcim.device", filter: { status: ["active"] } }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.dynamicgroupmembership": {
    path: "/api/extras/dynamic-group-memberships/",
    create: () => ({}),
    patch: { weight: 20 },
  },
  "extras.configcontextschema": {
    path: "/api/extras/config-context-schemas/",
    create: (_w, n) => ({ name: `schema${n}`, data_schema: { type: "object" } }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.secret": {
    path: "/api/extras/secrets/",
    create: (_w, n) => ({
      name: `secret${n}`,
      provider: "environment-variable",
      parameters: { variable: "HOME" },
    }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.secretsgroup": {
    path: "/api/extras/secrets-groups/",
    create: (_w, n) => ({ name: `sg${n}` }),
    patch: { description: "x" },
    unique: "name",
  },
  "extras.secretsgroupassociation": {
    path: "/api/extras/secrets-groups-associations/",
    create: () => ({}),
    patch: { secret_type: "token" },
  },
  "dcim.deviceredundancygroup": {
    path: "/api/dcim/device-redundancy-groups/",
    create: (_w, n) => ({ name: `drg${n}`, status: "active", failover_strategy: "active-passive" }),
    patch: { comments: "x" },
    unique: "name",
  },
  "dcim.interfaceredundancygroup": {
    path: "/api/dcim/interface-redundancy-groups/",
    create: (_w, n) => ({ name: `irg${n}`, status: "active", protocol: "vrrp" }),
    patch: { description: "x" },
    unique: "name",
  },
  "dcim.interfaceredundancygroupassociation": {
    path: "/api/dcim/interface-redundancy-group-associations/",
    create: () => ({}),
    patch: { priority: 50 },
  },
  "users.user": {
    path: "/api/users/users/",
    create: (_w, n) => ({ username: `user${n}`, password: "secret123" }),
    patch: { first_name: "X" },
    unique: "username",
  },
  "users.group": {
    path: "/api/users/groups/",
    create: (_w, n) => ({ name: `group${n}` }),
    patch: { name: "renamed-group" },
    unique: "name",
  },
  "users.token": {
    path: "/api/users/tokens/",
    create: (_w, n) => ({ description: `token ${n}` }),
    patch: { write_enabled: false },
  },
  "users.objectpermission": {
    path: "/api/users/permissions/",
    create: (_w, n) => ({ name: `perm${n}`, object_types: ["dcim.site"], actions: ["view"] }),
    patch: { enabled: false },
  },
};

/** Models whose create bodies need objects made per test (cables, front ports, terminations). */
export async function specialCreate(
  s: TestServer,
  w: World,
  key: string,
  n: number,
): Promise<Body | undefined> {
  switch (key) {
    case "dcim.cable": {
      const a = await create(s, "/api/dcim/interfaces/", {
        device: w.device,
        name: `cab-a${n}`,
        type: "1000base-t",
      });
      const b = await create(s, "/api/dcim/interfaces/", {
        device: w.device2,
        name: `cab-b${n}`,
        type: "1000base-t",
      });
      return {
        termination_a_type: "dcim.interface",
        termination_a_id: a.id,
        termination_b_type: "dcim.interface",
        termination_b_id: b.id,
        status: "connected",
      };
    }
    case "dcim.frontport": {
      const rp = await create(s, "/api/dcim/rear-ports/", {
        device: w.device2,
        name: `fp-rp${n}`,
        type: "lc",
      });
      return { device: w.device2, name: `fp${n}`, type: "lc", rear_port: rp.id, rear_port_position: 1 };
    }
    case "dcim.frontporttemplate": {
      const rp = await create(s, "/api/dcim/rear-port-templates/", {
        device_type: w.devicetype,
        name: `fpt-rp${n}`,
        type: "lc",
      });
      return { device_type: w.devicetype, name: `fpt${n}`, type: "lc", rear_port: rp.id };
    }
    case "circuits.circuittermination": {
      const cir = await create(s, "/api/circuits/circuits/", {
        cid: `TERM-${n}`,
        provider: w.provider,
        type: w.circuittype,
        status: "active",
      });
      return { circuit: cir.id, term_side: "A", site: w.site, port_speed: 100 };
    }
    case "extras.customfieldchoice": {
      const cf = await create(s, "/api/extras/custom-fields/", {
        name: `sel${n}`,
        type: "select",
        content_types: ["dcim.rack"],
      });
      return { field: cf.id, value: `choice${n}`, weight: 10 };
    }
    case "extras.relationshipassociation": {
      const rel = await create(s, "/api/extras/relationships/", {
        name: `assoc-rel${n}`,
        type: "many-to-many",
        source_type: "dcim.site",
        destination_type: "dcim.site",
      });
      return {
        relationship: rel.id,
        source_type: "dcim.site",
        source_id: w.site,
        destination_type: "dcim.site",
        destination_id: w.site2,
      };
    }
    case "extras.secretsgroupassociation": {
      const group = await create(s, "/api/extras/secrets-groups/", { name: `sga-g${n}` });
      const secret = await create(s, "/api/extras/secrets/", {
        name: `sga-s${n}`,
        provider: "text-file",
        parameters: { path: "/etc/hostname" },
      });
      return { group: group.id, secret: secret.id, access_type: "SSH", secret_type: "password" };
    }
    case "dcim.interfaceredundancygroupassociation": {
      const group = await create(s, "/api/dcim/interface-redundancy-groups/", {
        name: `irga${n}`,
        status: "active",
        protocol: "hsrp",
      });
      const iface = await create(s, "/api/dcim/interfaces/", {
        device: w.device,
        name: `irg-if${n}`,
        type: "virtual",
      });
      return { interface_redundancy_group: group.id, interface: iface.id, priority: 100 };
    }
    case "extras.dynamicgroupmembership": {
      const parent = await create(s, "/api/extras/dynamic-groups/", {
        name: `dgp${n}`,
        content_type: "dcim.device",
        filter: {},
      });
      const child = await create(s, "/api/extras/dynamic-groups/", {
        name: `dgc${n}`,
        content_type: "dcim.device",
        filter: { status: ["active"] },
      });
      return { parent_group: parent.id, group: child.id, operator: "union", weight: 10 };
    }
    default:
      return undefined;
  }
}
