/**
 * IPAM models: RIRs, aggregates, VRFs, route targets, roles, prefixes, IP addresses, VLAN groups, VLANs,
 * services (Nautobot 1.6 `ipam` app; shared/reference/nautobot-models.md §2C, §3).
 */
import { containsCidr, ipKey, parseCidr } from "../../net/ip.ts";
import { type Choices, defineModel, f, type ModelDef, type ValidateArgs } from "../meta.ts";
import { checkLocation, locatable, selfAndAncestors } from "./dcim.ts";
import { tenancyFilters } from "./tenancy.ts";

export const IP_ROLES: Choices = [
  ["loopback", "Loopback"],
  ["secondary", "Secondary"],
  ["anycast", "Anycast"],
  ["vip", "VIP"],
  ["vrrp", "VRRP"],
  ["hsrp", "HSRP"],
  ["glbp", "GLBP"],
  ["carp", "CARP"],
];
const UNIQUE_EXEMPT_ROLES = new Set(["anycast", "vip", "vrrp", "hsrp", "glbp", "carp"]);
export const PROTOCOLS: Choices = [
  ["tcp", "TCP"],
  ["udp", "UDP"],
];

/** Reject /0 (Nautobot Prefix/Aggregate/IPAddress.clean). */
function rejectZero(a: ValidateArgs, field: string, what: string): void {
  const v = a.data[field];
  if (typeof v === "string" && v.endsWith("/0")) a.error(field, `Cannot create ${what} with /0 mask.`);
}

/** Whether duplicates are forbidden in the object's VRF (VRF.enforce_unique / ENFORCE_GLOBAL_UNIQUE). */
async function enforced(a: ValidateArgs): Promise<{ on: boolean; vrfName: string }> {
  if (!a.data.vrf) return { on: a.settings.enforceGlobalUnique, vrfName: "global table" };
  const vrf = await a.get("ipam.vrf", a.data.vrf);
  return { on: !!vrf?.enforce_unique, vrfName: `VRF ${vrf?.name}` };
}

export const rir = defineModel({
  app: "ipam",
  name: "rir",
  verbose: "RIR",
  path: "rirs",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    is_private: f.bool(false),
    description: f.description(),
    aggregate_count: f.count("ipam.aggregate", "rir"),
  },
  nested: ["name", "slug", "aggregate_count"],
  ordering: ["name"],
  search: ["name", "slug"],
});

export const aggregate = defineModel({
  app: "ipam",
  name: "aggregate",
  naturalKeyFields: ["prefix"],
  naturalKeyNote:
    "Nautobot 1.6 has no uniqueness rule for aggregates (2.x folds them into prefixes, keyed by network and length); an aggregate is its prefix, and two aggregates with the same prefix make an upsert of it a 400",
  verbose: "aggregate",
  path: "aggregates",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    family: f.computed("family", { nestedType: "integer" }),
    prefix: f.ip("network", { required: true }),
    rir: f.rfk("ipam.rir", "PROTECT"),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    date_added: f.date({ nullable: true }),
    description: f.description(),
  },
  nested: ["family", "prefix"],
  display: "prefix",
  ordering: ["prefix"],
  search: ["prefix", "description"],
  filters: {
    prefix: { kind: "ip", op: "prefix", field: "prefix" },
    family: { kind: "ip", op: "family", field: "prefix" },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Aggregate.clean(): no /0, no overlap with any other aggregate. */
  async validate(a) {
    rejectZero(a, "prefix", "aggregate");
    const me = parseCidr(a.data.prefix);
    for (const other of await a.find("ipam.aggregate", {}, 100000)) {
      if (other.id === a.data.id) continue;
      const o = parseCidr(other.prefix);
      if (containsCidr(o, me)) {
        a.error(
          "prefix",
          `Aggregates cannot overlap. ${a.data.prefix} is already covered by an existing aggregate (${other.prefix}).`,
        );
        return;
      }
      if (containsCidr(me, o)) {
        a.error(
          "prefix",
          `Aggregates cannot overlap. ${a.data.prefix} covers an existing aggregate (${other.prefix}).`,
        );
        return;
      }
    }
  },
});

export const routeTarget = defineModel({
  app: "ipam",
  name: "routetarget",
  verbose: "route target",
  path: "route-targets",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.str(21, { required: true, unique: true }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    description: f.description(),
  },
  nested: ["name"],
  ordering: ["name"],
  search: ["description", "name"],
  filters: {
    ...tenancyFilters,
    // Nautobot 1.6 `RouteTargetFilterSet`: the VRFs importing / exporting the target (by RD or id).
    importing_vrf: { kind: "reverse", model: "ipam.vrf", via: "import_targets", key: "rd" },
    importing_vrf_id: { kind: "reverse", model: "ipam.vrf", via: "import_targets", key: "id" },
    exporting_vrf: { kind: "reverse", model: "ipam.vrf", via: "export_targets", key: "rd" },
    exporting_vrf_id: { kind: "reverse", model: "ipam.vrf", via: "export_targets", key: "id" },
  },
});

export const vrf = defineModel({
  app: "ipam",
  name: "vrf",
  naturalKeyFields: ["name", "rd"],
  naturalKeyNote:
    "rd is unique when set (Nautobot 1.6 `VRF.rd`); 2.x keys VRFs by namespace and name, so name + rd here (rd null for VRFs without one). Duplicates make an upsert of them a 400",
  verbose: "VRF",
  path: "vrfs",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100),
    rd: f.str(21, { nullable: true, unique: true, label: "Route distinguisher" }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    enforce_unique: f.bool(true),
    description: f.description(),
    import_targets: f.m2m("ipam.routetarget", { filterKey: "name" }),
    export_targets: f.m2m("ipam.routetarget", { filterKey: "name" }),
    ipaddress_count: f.count("ipam.ipaddress", "vrf"),
    prefix_count: f.count("ipam.prefix", "vrf"),
  },
  nested: ["name", "rd", "prefix_count"],
  nestedKeyOrder: ["id", "url", "name", "rd", "display"], // Nautobot 1.6 `NestedVRFSerializer.Meta.fields`
  display: (r) => (r.rd ? `${r.name} (${r.rd})` : r.name),
  ordering: ["name", "rd"],
  search: ["description", "name", "rd"],
  filters: {
    ...tenancyFilters,
    import_target: { kind: "path", path: "import_targets", key: "name" },
    import_target_id: { kind: "path", path: "import_targets", key: "id" },
    export_target: { kind: "path", path: "export_targets", key: "name" },
    export_target_id: { kind: "path", path: "export_targets", key: "id" },
  },
});

export const role = defineModel({
  app: "ipam",
  name: "role",
  verbose: "role",
  path: "roles",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    weight: f.int({ default: 1000, min: 0, max: 32_767 }),
    description: f.description(),
    prefix_count: f.count("ipam.prefix", "role"),
    vlan_count: f.count("ipam.vlan", "role"),
  },
  nested: ["name", "slug", "prefix_count", "vlan_count"],
  ordering: ["weight", "name"],
  search: ["name", "slug"],
});

export const prefix = defineModel({
  app: "ipam",
  name: "prefix",
  naturalKeyFields: ["prefix", "vrf"],
  naturalKeyNote:
    "Nautobot 1.6 checks prefix + VRF uniqueness only with ENFORCE_GLOBAL_UNIQUE or a VRF's enforce_unique (`Prefix.clean`); 2.x keys prefixes by namespace, network and length. Duplicates make an upsert of them a 400",
  verbose: "prefix",
  plural: "prefixes",
  path: "prefixes",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    family: f.computed("family", { nestedType: "integer" }),
    prefix: f.ip("network", { required: true }),
    site: f.ofk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    vrf: f.ofk("ipam.vrf", "PROTECT", { filterKey: "rd" }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    vlan: f.ofk("ipam.vlan", "PROTECT", { filterKey: false }),
    status: f.status(),
    role: f.ofk("ipam.role", "SET_NULL"),
    is_pool: f.bool(false),
    description: f.description(),
  },
  nested: ["family", "prefix"],
  display: "prefix",
  // Nautobot 1.6: `F("vrf__name").asc(nulls_first=True), "network", "prefix_length"`.
  ordering: ["^vrf", "prefix"],
  search: ["prefix", "description"],
  features: ["statuses", "locations"],
  filters: {
    prefix: { kind: "ip", op: "prefix", field: "prefix" },
    within: { kind: "ip", op: "within", field: "prefix" },
    within_include: { kind: "ip", op: "within_include", field: "prefix" },
    contains: { kind: "ip", op: "contains", field: "prefix" },
    mask_length: { kind: "ip", op: "mask_length", field: "prefix" },
    family: { kind: "ip", op: "family", field: "prefix" },
    vlan_vid: { kind: "path", path: "vlan", key: "vid" },
    present_in_vrf_id: { kind: "custom", fn: "present_in_vrf_id" },
    present_in_vrf: { kind: "custom", fn: "present_in_vrf" },
    ...locatable,
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Prefix.clean(): no /0; duplicates per VRF when enforced; location rules. */
  async validate(a) {
    rejectZero(a, "prefix", "prefix");
    const { on, vrfName } = await enforced(a);
    if (on) {
      const dup = (await a.find("ipam.prefix", { prefix: a.data.prefix, vrf: a.data.vrf ?? null })).filter(
        (x) => x.id !== a.data.id,
      );
      if (dup.length) a.error("prefix", `Duplicate prefix found in ${vrfName}: ${dup[0]!.prefix}`);
    }
    await checkLocation(a, "ipam.prefix", "Prefixes");
  },
});

export const ipAddress = defineModel({
  app: "ipam",
  name: "ipaddress",
  naturalKeyFields: ["address", "vrf"],
  naturalKeyNote:
    "Matched by host and VRF, whatever the mask (Nautobot 1.6 `IPAddress.clean` checks host + VRF uniqueness only with ENFORCE_GLOBAL_UNIQUE or the VRF's enforce_unique; 2.x keys addresses by parent and host). Duplicates make an upsert of them a 400",
  verbose: "IP address",
  plural: "IP addresses",
  path: "ip-addresses",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    family: f.computed("family", { nestedType: "integer" }),
    address: f.ip("host", { required: true }),
    vrf: f.ofk("ipam.vrf", "PROTECT", { filterKey: "rd" }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    status: f.status(),
    role: f.choice(IP_ROLES),
    assigned_object: f.gfk(["dcim.interface", "virtualization.vminterface"], "CASCADE", {
      nullable: true,
      unchecked: true,
    }),
    nat_inside: f.ofk("ipam.ipaddress", "SET_NULL", { filterKey: false }),
    nat_outside: f.computed("nat_outside", { target: { model: "ipam.ipaddress", many: true } }),
    dns_name: f.str(255, {
      default: "",
      pattern: [
        /^[0-9A-Za-z._-]+$/,
        "Only alphanumeric characters, hyphens, periods, and underscores are allowed in DNS names",
      ],
    }),
    description: f.description(),
  },
  nested: ["family", "address"],
  display: "address",
  ordering: ["address"],
  search: ["dns_name", "description", "address"],
  features: ["statuses"],
  filters: {
    parent: { kind: "ip", op: "parent", field: "address" },
    address: { kind: "ip", op: "address", field: "address" },
    mask_length: { kind: "ip", op: "mask_length", field: "address" },
    family: { kind: "ip", op: "family", field: "address" },
    device_id: { kind: "custom", fn: "ip_device_id" },
    device: { kind: "custom", fn: "ip_device" },
    virtual_machine_id: { kind: "custom", fn: "ip_vm_id" },
    virtual_machine: { kind: "custom", fn: "ip_vm" },
    interface_id: { kind: "custom", fn: "ip_interface_id" },
    interface: { kind: "custom", fn: "ip_interface" },
    vminterface_id: { kind: "custom", fn: "ip_vminterface_id" },
    vminterface: { kind: "custom", fn: "ip_vminterface" },
    interface_id__n: { kind: "custom", fn: "ip_interface_id", negate: true },
    interface__n: { kind: "custom", fn: "ip_interface", negate: true },
    vminterface_id__n: { kind: "custom", fn: "ip_vminterface_id", negate: true },
    vminterface__n: { kind: "custom", fn: "ip_vminterface", negate: true },
    assigned_to_interface: { kind: "notnull", field: "assigned_object_id" },
    present_in_vrf_id: { kind: "custom", fn: "present_in_vrf_id" },
    present_in_vrf: { kind: "custom", fn: "present_in_vrf" },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 IPAddress.clean(). */
  async validate(a) {
    const d = a.data;
    rejectZero(a, "address", "IP address");
    if (d.status === "slaac" && !String(d.address).includes(":"))
      a.error("status", "Only IPv6 addresses can be assigned SLAAC status");
    const { on, vrfName } = await enforced(a);
    if (on && !UNIQUE_EXEMPT_ROLES.has(d.role)) {
      const c = parseCidr(d.address);
      const same = (
        await a.find(
          "ipam.ipaddress",
          { vrf: d.vrf ?? null, address_family: c.family, address_host: ipKey(c.family, c.hostInt) },
          10,
        )
      ).filter((x) => x.id !== d.id);
      if (same.length) a.error("address", `Duplicate IP address found in ${vrfName}: ${same[0]!.address}`);
    }
    if (
      a.before?.assigned_object_id &&
      (a.before.assigned_object_id !== d.assigned_object_id ||
        a.before.assigned_object_type !== d.assigned_object_type)
    ) {
      const ownerKind =
        a.before.assigned_object_type === "dcim.interface"
          ? ["dcim.device", "dcim.interface", "device"]
          : ["virtualization.virtualmachine", "virtualization.vminterface", "virtual_machine"];
      const [ownerModel, ifaceModel, ownerField] = ownerKind as [string, string, string];
      const owners = [
        ...(await a.find(ownerModel, { primary_ip4: d.id })),
        ...(await a.find(ownerModel, { primary_ip6: d.id })),
      ];
      for (const owner of owners) {
        let stillMine = false;
        if (d.assigned_object_type === ifaceModel && d.assigned_object_id) {
          const iface = await a.get(ifaceModel, d.assigned_object_id);
          stillMine = iface?.[ownerField] === owner.id;
        }
        if (!stillMine)
          a.error(
            "assigned_object",
            `IP address is primary for ${ownerModel === "dcim.device" ? "device" : "virtual machine"} ${owner.name} but not assigned to it!`,
          );
      }
    }
  },
});

export const vlanGroup = defineModel({
  app: "ipam",
  name: "vlangroup",
  verbose: "VLAN group",
  path: "vlan-groups",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100),
    slug: f.slug("name"),
    site: f.ofk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    description: f.description(),
    vlan_count: f.count("ipam.vlan", "group"),
  },
  nested: ["name", "slug", "vlan_count"],
  ordering: ["site", "name"],
  search: ["name", "slug"],
  uniqueTogether: [{ fields: ["site", "name"] }, { fields: ["site", "slug"] }],
  features: ["locations"],
  filters: { ...locatable },
  async validate(a) {
    await checkLocation(a, "ipam.vlangroup", "VLAN groups");
  },
});

export const vlan = defineModel({
  app: "ipam",
  name: "vlan",
  naturalKeyFields: ["site", "group", "vid"],
  naturalKeyNote:
    "Nautobot 1.6 unique_together (group, vid); a VLAN without a group is identified by its site (or none) and VID, which 1.6 does not enforce: duplicates make an upsert of them a 400",
  verbose: "VLAN",
  path: "vlans",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    site: f.ofk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    group: f.ofk("ipam.vlangroup", "PROTECT"),
    vid: f.int({ required: true, min: 1, max: 4094, label: "ID" }),
    name: f.name(255),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    status: f.status(),
    role: f.ofk("ipam.role", "SET_NULL"),
    description: f.description(),
    prefix_count: f.count("ipam.prefix", "vlan"),
  },
  nested: ["vid", "name"],
  display: (r) => `${r.name} (${r.vid})`,
  ordering: ["site", "group", "vid"],
  search: ["description", "name", "vid"],
  uniqueTogether: [{ fields: ["group", "vid"] }, { fields: ["group", "name"] }],
  features: ["statuses", "locations"],
  filters: {
    available_on_device: { kind: "custom", fn: "vlan_available_on_device" },
    ...locatable,
    ...tenancyFilters,
  },
  /** Nautobot 1.6 VLAN.clean(): the group's site must equal the VLAN's site. */
  async validate(a) {
    const d = a.data;
    if (d.group) {
      const g = await a.get("ipam.vlangroup", d.group);
      if (g && (g.site ?? null) !== (d.site ?? null)) {
        // Nautobot names the VLAN's own site (`self.site`), "None" when it has none.
        const s = d.site ? await a.get("dcim.site", d.site) : undefined;
        a.error("group", `VLAN group must belong to the assigned site (${s?.name ?? "None"}).`);
      }
      if (g?.location && d.location && g.location !== d.location) {
        if (!(await selfAndAncestors(a, "dcim.location", d.location)).includes(g.location))
          a.error(
            "location",
            "The assigned location must belong to the VLAN group's location or a descendant of it.",
          );
      }
    }
    await checkLocation(a, "ipam.vlan", "VLANs");
  },
});

/** `80-81, 443` style port list (Nautobot Service display). */
function compressPorts(ports: number[]): string {
  const sorted = [...new Set(ports)].sort((x, y) => x - y);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(", ");
}

export const service = defineModel({
  app: "ipam",
  name: "service",
  naturalKeyFields: ["device", "virtual_machine", "name"],
  naturalKeyNote:
    "Nautobot 1.6 has no uniqueness rule for services (2.x: unique name per device or virtual machine); duplicates make an upsert of them a 400",
  verbose: "service",
  path: "services",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    device: f.ofk("dcim.device", "CASCADE", { filterKey: "name" }),
    virtual_machine: f.ofk("virtualization.virtualmachine", "CASCADE", { filterKey: "name" }),
    name: f.name(100),
    ports: f.json({ array: "int", required: true, itemMin: 1, itemMax: 65535 }),
    protocol: f.choice(PROTOCOLS, { required: true }),
    ipaddresses: f.m2m("ipam.ipaddress", { filterKey: "address" }),
    description: f.description(),
  },
  nested: ["name", "protocol", "ports"],
  display: (r) => {
    const ports: number[] = typeof r.ports === "string" ? JSON.parse(r.ports) : (r.ports ?? []);
    return `${r.name} (${String(r.protocol).toUpperCase()}/${compressPorts(ports)})`;
  },
  ordering: ["protocol", "name"],
  search: ["description", "name"],
  filters: { port: { kind: "custom", fn: "service_port" } },
  /** Nautobot 1.6 Service.clean(): exactly one parent. */
  validate(a) {
    if (a.data.device && a.data.virtual_machine)
      a.error("__all__", "A service cannot be associated with both a device and a virtual machine.");
    if (!a.data.device && !a.data.virtual_machine)
      a.error("__all__", "A service must be associated with either a device or a virtual machine.");
    if (Array.isArray(a.data.ports) && a.data.ports.length === 0) a.error("ports", "This field is required.");
  },
});

export const models: ModelDef[] = [
  rir,
  aggregate,
  routeTarget,
  vrf,
  role,
  prefix,
  ipAddress,
  vlanGroup,
  vlan,
  service,
];
