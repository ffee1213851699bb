/**
 * DCIM models: regions, sites, location types, locations, rack groups/roles, racks, rack reservations,
 * manufacturers, platforms, device types, device roles, devices, virtual chassis, power panels/feeds,
 * cables (Nautobot 1.6 `dcim` app; shared/reference/nautobot-models.md §2A).
 */

import { NONCONNECTABLE_INTERFACE_TYPES } from "../choices/dcim.ts";
import { type Choices, defineModel, f, type ModelDef, type ValidateArgs } from "../meta.ts";
import { tenancyFilters } from "./tenancy.ts";

export const RACK_TYPES: Choices = [
  ["2-post-frame", "2-post frame"],
  ["4-post-frame", "4-post frame"],
  ["4-post-cabinet", "4-post cabinet"],
  ["wall-frame", "Wall-mounted frame"],
  ["wall-frame-vertical", "Wall-mounted frame (vertical)"],
  ["wall-cabinet", "Wall-mounted cabinet"],
  ["wall-cabinet-vertical", "Wall-mounted cabinet (vertical)"],
  ["other", "Other"],
];
export const RACK_WIDTHS: Choices = [
  [10, "10 inches"],
  [19, "19 inches"],
  [21, "21 inches"],
  [23, "23 inches"],
];
export const RACK_UNITS: Choices = [
  ["mm", "Millimeters"],
  ["in", "Inches"],
];
export const FACES: Choices = [
  ["front", "Front"],
  ["rear", "Rear"],
];
export const SUBDEVICE_ROLES: Choices = [
  ["parent", "Parent"],
  ["child", "Child"],
];
export const CABLE_TYPES: Choices = [
  ["cat3", "CAT3"],
  ["cat5", "CAT5"],
  ["cat5e", "CAT5e"],
  ["cat6", "CAT6"],
  ["cat6a", "CAT6a"],
  ["cat7", "CAT7"],
  ["cat7a", "CAT7a"],
  ["cat8", "CAT8"],
  ["dac-active", "Direct Attach Copper (Active)"],
  ["dac-passive", "Direct Attach Copper (Passive)"],
  ["mrj21-trunk", "MRJ21 Trunk"],
  ["coaxial", "Coaxial"],
  ["mmf", "Multimode Fiber"],
  ["mmf-om1", "Multimode Fiber (OM1)"],
  ["mmf-om2", "Multimode Fiber (OM2)"],
  ["mmf-om3", "Multimode Fiber (OM3)"],
  ["mmf-om4", "Multimode Fiber (OM4)"],
  ["mmf-om5", "Multimode Fiber (OM5)"],
  ["smf", "Singlemode Fiber"],
  ["smf-os1", "Singlemode Fiber (OS1)"],
  ["smf-os2", "Singlemode Fiber (OS2)"],
  ["aoc", "Active Optical Cabling (AOC)"],
  ["power", "Power"],
  ["other", "Other"],
];
export const LENGTH_UNITS: Choices = [
  ["km", "Kilometers"],
  ["m", "Meters"],
  ["cm", "Centimeters"],
  ["mi", "Miles"],
  ["ft", "Feet"],
  ["in", "Inches"],
];
export const POWERFEED_TYPES: Choices = [
  ["primary", "Primary"],
  ["redundant", "Redundant"],
];
export const POWERFEED_SUPPLY: Choices = [
  ["ac", "AC"],
  ["dc", "DC"],
];
export const POWERFEED_PHASE: Choices = [
  ["single-phase", "Single phase"],
  ["three-phase", "Three-phase"],
];

/** Locatable filters (region via site, site, location tree) for models with a `site` FK. */
export const locatable = {
  region_id: { kind: "path", path: "site.region", key: "id", tree: true },
  region: { kind: "path", path: "site.region", key: "slug", tree: true },
  location: { kind: "path", path: "location", key: "slug", tree: true },
} as const;

/** The site of a location: its own or the nearest ancestor's (Nautobot Location.base_site). */
export async function baseSite(
  a: ValidateArgs,
  locationId: string | null | undefined,
): Promise<string | null> {
  let id = locationId ?? null;
  for (let guard = 0; id && guard < 50; guard++) {
    const loc = await a.get("dcim.location", id);
    if (!loc) return null;
    if (loc.site) return loc.site as string;
    id = loc.parent as string | null;
  }
  return null;
}

/** `id` and its ancestors through `parent`, nearest first (stops after 50 levels, so cycles end). */
export async function selfAndAncestors(
  a: ValidateArgs,
  model: string,
  id: string | null | undefined,
): Promise<string[]> {
  const out: string[] = [];
  let p = id ?? null;
  for (let guard = 0; p && guard < 50; guard++) {
    out.push(p);
    p = ((await a.get(model, p))?.parent as string | null) ?? null;
  }
  return out;
}

/** Whether a location's type permits a content type (Nautobot `location.location_type.content_types`). */
export async function locationPermits(a: ValidateArgs, locationId: string, ct: string): Promise<boolean> {
  const loc = await a.get("dcim.location", locationId);
  if (!loc) return false;
  const lt = await a.get("dcim.locationtype", loc.location_type);
  return Array.isArray(lt?.content_types) && lt.content_types.includes(ct);
}

/** Shared location checks: base site equals `site`; the location type permits this content type. */
export async function checkLocation(a: ValidateArgs, ct: string, label: string): Promise<void> {
  const loc = a.data.location as string | null;
  if (!loc) return;
  const site = a.data.site as string | null;
  const bs = await baseSite(a, loc);
  if (site && bs && bs !== site) {
    const s = await a.get("dcim.site", site);
    const l = await a.get("dcim.location", loc);
    a.error("location", `Location ${l?.name} does not belong to site ${s?.name}.`);
  }
  if (!(await locationPermits(a, loc, ct))) {
    const l = await a.get("dcim.location", loc);
    const lt = l ? await a.get("dcim.locationtype", l.location_type) : undefined;
    a.error("location", `${label} may not associate to locations of type "${lt?.name}".`);
  }
}

export const region = defineModel({
  app: "dcim",
  name: "region",
  verbose: "region",
  path: "regions",
  changelog: true,
  customFields: true,
  tree: "parent",
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    parent: f.ofk("dcim.region", "CASCADE"),
    description: f.description(),
    site_count: f.count("dcim.site", "region", { tree: true }),
    _depth: f.computed("tree_depth", { type: "integer" }),
  },
  nested: ["name", "slug", "site_count", "_depth"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    parent_id: { kind: "path", path: "parent", key: "id" },
    parent: { kind: "path", path: "parent", key: "slug" },
    has_children: { kind: "has", model: "dcim.region", via: "parent" },
    has_sites: { kind: "has", model: "dcim.site", via: "region" },
  },
});

export const site = defineModel({
  app: "dcim",
  name: "site",
  verbose: "site",
  path: "sites",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true, natural: true }),
    slug: f.slug("name", { unique: true }),
    status: f.status(),
    region: f.ofk("dcim.region", "SET_NULL"),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    facility: f.str(50, { default: "" }),
    asn: f.int({ nullable: true, min: 1, max: 4294967295 }),
    time_zone: f.str(63, { nullable: true }),
    description: f.description(),
    physical_address: f.str(200, { default: "" }),
    shipping_address: f.str(200, { default: "" }),
    latitude: f.decimal(8, 6, { nullable: true }),
    longitude: f.decimal(9, 6, { nullable: true }),
    contact_name: f.str(50, { default: "" }),
    contact_phone: f.str(20, { default: "" }),
    contact_email: f.str(254, { default: "", format: "email" }),
    comments: f.comments(),
    circuit_count: f.computed("site_circuit_count", { type: "integer", annotation: "absent" }),
    device_count: f.count("dcim.device", "site"),
    prefix_count: f.count("ipam.prefix", "site"),
    rack_count: f.count("dcim.rack", "site"),
    virtualmachine_count: f.computed("site_vm_count", { type: "integer", annotation: "absent" }),
    vlan_count: f.count("ipam.vlan", "site"),
  },
  nested: ["name", "slug"],
  ordering: ["name"],
  search: [
    "asn",
    "comments",
    "contact_email",
    "contact_name",
    "contact_phone",
    "description",
    "facility",
    "name",
    "physical_address",
    "shipping_address",
  ],
  features: ["statuses"],
  filters: {
    region_id: { kind: "path", path: "region", key: "id", tree: true },
    region: { kind: "path", path: "region", key: "slug", tree: true },
    has_devices: { kind: "has", model: "dcim.device", via: "site" },
    has_racks: { kind: "has", model: "dcim.rack", via: "site" },
    has_prefixes: { kind: "has", model: "ipam.prefix", via: "site" },
    has_vlans: { kind: "has", model: "ipam.vlan", via: "site" },
    has_clusters: { kind: "has", model: "virtualization.cluster", via: "site" },
    devices: { kind: "reverse", model: "dcim.device", via: "site", key: "name" },
    racks: { kind: "reverse", model: "dcim.rack", via: "site", key: "name" },
    ...tenancyFilters,
  },
  validate(a) {
    const tz = a.data.time_zone;
    if (tz) {
      try {
        new Intl.DateTimeFormat("en", { timeZone: tz });
      } catch {
        a.error("time_zone", `"${tz}" is not a valid choice.`);
      }
    }
  },
});

export const locationType = defineModel({
  app: "dcim",
  name: "locationtype",
  verbose: "location type",
  path: "location-types",
  changelog: true,
  customFields: true,
  tree: "parent",
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    parent: f.ofk("dcim.locationtype", "CASCADE"),
    nestable: f.bool(false),
    content_types: f.cts("locations"),
    description: f.description(),
    tree_depth: f.computed("tree_depth", { annotation: "null" }),
  },
  nested: ["name", "slug", "tree_depth"],
  displayUses: ["parent"],
  display: (r, rel) => (rel.parent ? `${rel.parent.display} → ${r.name}` : r.name),
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    parent: { kind: "path", path: "parent", key: "slug" },
  },
  async validate(a) {
    if (/^(regions?|sites?|rack ?groups?)$/i.test(String(a.data.name ?? ""))) {
      a.error("name", "This name is reserved for future use.");
    }
    if (a.before) {
      if (
        a.before.parent !== a.data.parent &&
        (await a.count("dcim.location", { location_type: a.data.id })) > 0
      ) {
        a.error(
          "parent",
          "This LocationType currently has Locations using it, therefore its parent cannot be changed at this time.",
        );
      }
      if (a.before.nestable && !a.data.nestable) {
        const locs = await a.find("dcim.location", { location_type: a.data.id });
        for (const l of locs) {
          if (l.parent && locs.some((p) => p.id === l.parent)) {
            a.error(
              "nestable",
              "There are existing nested Locations of this type, so changing this Location Type to be non-nestable is not permitted.",
            );
            break;
          }
        }
      }
      if ((await selfAndAncestors(a, "dcim.locationtype", a.data.parent)).includes(a.data.id)) {
        a.error("parent", "Cannot assign self or child LocationType as parent.");
      }
    }
  },
});

export const location = defineModel({
  app: "dcim",
  name: "location",
  verbose: "location",
  path: "locations",
  changelog: true,
  customFields: true,
  tags: true,
  tree: "parent",
  fields: {
    name: f.name(100),
    slug: f.slug("name", { unique: true }),
    status: f.status(),
    location_type: f.rfk("dcim.locationtype", "PROTECT"),
    parent: f.ofk("dcim.location", "CASCADE"),
    site: f.ofk("dcim.site", "CASCADE"),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    description: f.description(),
    tree_depth: f.computed("tree_depth", { annotation: "null" }),
  },
  nested: ["name", "slug", "tree_depth"],
  displayUses: ["parent"],
  display: (r, rel) => (rel.parent ? `${rel.parent.display} → ${r.name}` : r.name),
  ordering: ["name"],
  search: ["description", "name"],
  uniqueTogether: [{ fields: ["parent", "name"] }],
  features: ["statuses"],
  filters: {
    location_type: { kind: "path", path: "location_type", key: "slug" },
    parent: { kind: "path", path: "parent", key: "slug" },
    subtree: { kind: "path", path: "parent", key: "slug", tree: true },
    base_site: { kind: "path", path: "site", key: "slug" },
    child_location_type: { kind: "custom", fn: "location_child_location_type" },
    content_type: { kind: "custom", fn: "location_content_type" },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Location.clean(): hierarchy and site rules by location type. */
  async validate(a) {
    const d = a.data;
    if (a.before && a.before.location_type !== d.location_type) {
      a.error("location_type", "Changing the type of an existing Location is not presently supported.");
      return;
    }
    const lt = await a.get("dcim.locationtype", d.location_type);
    if (!lt) return;
    const parent = d.parent ? await a.get("dcim.location", d.parent) : undefined;
    if (!lt.parent) {
      if (parent) {
        if (!(lt.nestable && parent.location_type === lt.id)) {
          a.error("parent", `A Location of type ${lt.name} must not have a parent Location.`);
        } else if (d.site) {
          a.error("site", "A Location cannot have both a parent Location and an associated Site.");
        }
      } else if (!d.site) {
        a.error(
          "site",
          `A Location of type ${lt.name} has no parent Location, and so must have an associated Site.`,
        );
      }
    } else {
      if (d.site) a.error("site", `A Location of type ${lt.name} must not have an associated Site.`);
      if (!parent) {
        const pt = await a.get("dcim.locationtype", lt.parent);
        a.error("parent", `A Location of type ${lt.name} must have a parent Location of type ${pt?.name}.`);
      } else if (parent.location_type !== lt.parent && !(lt.nestable && parent.location_type === lt.id)) {
        const pt = await a.get("dcim.locationtype", lt.parent);
        a.error(
          "parent",
          `A Location of type ${lt.name} can only have a Location of type ${pt?.name} as its parent.`,
        );
      }
    }
    if (!d.parent) {
      const clash = (await a.find("dcim.location", { name: d.name, parent: null })).filter(
        (x) => x.id !== d.id,
      );
      if (clash.length) a.error("name", "A root-level location with this name already exists.");
    }
    if (a.before && (await selfAndAncestors(a, "dcim.location", d.parent)).includes(d.id)) {
      a.error("parent", "Cannot assign self or child Location as parent.");
    }
  },
});

export const rackGroup = defineModel({
  app: "dcim",
  name: "rackgroup",
  verbose: "rack group",
  path: "rack-groups",
  changelog: true,
  customFields: true,
  tree: "parent",
  fields: {
    name: f.name(100),
    slug: f.slug("name"),
    site: f.rfk("dcim.site", "CASCADE"),
    location: f.ofk("dcim.location", "CASCADE"),
    parent: f.ofk("dcim.rackgroup", "CASCADE"),
    description: f.description(),
    rack_count: f.count("dcim.rack", "group", { tree: true }),
    _depth: f.computed("tree_depth", { type: "integer" }),
  },
  nested: ["name", "slug", "rack_count", "_depth"],
  ordering: ["site", "name"],
  search: ["name", "slug"],
  uniqueTogether: [{ fields: ["site", "name"] }, { fields: ["site", "slug"] }],
  features: ["locations"],
  filters: {
    parent_id: { kind: "path", path: "parent", key: "id" },
    parent: { kind: "path", path: "parent", key: "slug" },
    has_racks: { kind: "has", model: "dcim.rack", via: "group" },
    ...locatable,
  },
  /** Nautobot 1.6 RackGroup.clean(). */
  async validate(a) {
    if (a.data.parent) {
      const p = await a.get("dcim.rackgroup", a.data.parent);
      if (p && p.site !== a.data.site)
        a.error(
          "parent",
          `Parent rack group (${p.name}) must belong to the same site (${(await a.get("dcim.site", a.data.site))?.name}).`,
        );
    }
    await checkLocation(a, "dcim.rackgroup", "Rack groups");
  },
});

export const rackRole = defineModel({
  app: "dcim",
  name: "rackrole",
  verbose: "rack role",
  path: "rack-roles",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    color: f.str(6, { default: "9e9e9e", format: "color" }),
    description: f.description(),
    rack_count: f.count("dcim.rack", "role"),
  },
  nested: ["name", "slug", "rack_count"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: { has_racks: { kind: "has", model: "dcim.rack", via: "role" } },
});

export const rack = defineModel({
  app: "dcim",
  name: "rack",
  naturalKeyFields: ["site", "group", "name"],
  naturalKeyNote:
    "Nautobot 1.6 unique_together (group, name); a rack without a group is identified by its site and name, which 1.6 does not enforce (2.x: name + rack group): duplicates make an upsert of them a 400",
  verbose: "rack",
  path: "racks",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { natural: true }),
    facility_id: f.str(50, { nullable: true, label: "Facility ID" }),
    site: f.rfk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    group: f.ofk("dcim.rackgroup", "SET_NULL"),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    status: f.status(),
    role: f.ofk("dcim.rackrole", "PROTECT"),
    serial: f.str(255, { default: "" }),
    asset_tag: f.str(50, { nullable: true, unique: true }),
    type: f.choice(RACK_TYPES),
    width: f.choice(RACK_WIDTHS, { int: true, default: 19 }),
    u_height: f.int({ default: 42, min: 1, max: 100 }),
    desc_units: f.bool(false),
    outer_width: f.int({ nullable: true, min: 0, max: 32_767 }),
    outer_depth: f.int({ nullable: true, min: 0, max: 32_767 }),
    outer_unit: f.choice(RACK_UNITS),
    comments: f.comments(),
    device_count: f.count("dcim.device", "rack"),
    powerfeed_count: f.count("dcim.powerfeed", "rack"),
  },
  nested: ["name", "device_count"],
  display: (r) => (r.facility_id ? `${r.name} (${r.facility_id})` : r.name),
  ordering: ["site", "group", "name"],
  search: ["asset_tag", "comments", "facility_id", "name", "serial"],
  uniqueTogether: [{ fields: ["group", "name"] }, { fields: ["group", "facility_id"] }],
  features: ["statuses", "locations"],
  filters: {
    group_id: { kind: "path", path: "group", key: "id", tree: true },
    group: { kind: "path", path: "group", key: "slug", tree: true },
    has_devices: { kind: "has", model: "dcim.device", via: "rack" },
    ...locatable,
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Rack.clean(). */
  async validate(a) {
    const d = a.data;
    if (d.group) {
      const g = await a.get("dcim.rackgroup", d.group);
      if (g && g.site !== d.site)
        a.error(
          "__all__",
          `Assigned rack group must belong to parent site (${(await a.get("dcim.site", d.site))?.name}).`,
        );
      if (g?.location && d.location && g.location !== d.location) {
        if (!(await selfAndAncestors(a, "dcim.location", d.location)).includes(g.location))
          a.error("location", `Location must be the same as, or a descendant of, the rack group's location.`);
      }
    }
    await checkLocation(a, "dcim.rack", "Racks");
    if ((d.outer_width != null || d.outer_depth != null) && !d.outer_unit) {
      a.error("outer_unit", "Must specify a unit when setting an outer width/depth");
    } else if (d.outer_width == null && d.outer_depth == null) {
      d.outer_unit = "";
    }
    if (a.before) {
      const devices = await a.find("dcim.device", { rack: d.id });
      let top = 0;
      for (const dev of devices) {
        if (dev.position == null) continue;
        const dt = await a.get("dcim.devicetype", dev.device_type);
        top = Math.max(top, dev.position + (dt?.u_height ?? 1) - 1);
      }
      if (top > d.u_height) {
        a.error("u_height", `Rack must be at least ${top}U tall to house currently installed devices.`);
      }
    }
  },
});

export const rackReservation = defineModel({
  app: "dcim",
  name: "rackreservation",
  naturalKeyFields: [],
  naturalKeyNote:
    "No natural key: reservations have no uniqueness rule (Nautobot 2.x keys them by pk); not upserted",
  verbose: "rack reservation",
  path: "rack-reservations",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    rack: f.rfk("dcim.rack", "CASCADE", { relatedName: "reservations" }),
    units: f.json({ array: "int", required: true, itemMin: 1, itemMax: 100 }),
    user: f.ofk("users.user", "PROTECT", { filterKey: "username" }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    description: f.str(200, { required: true }),
  },
  nested: ["user", "units"],
  displayUses: ["rack"],
  display: (_r, rel) => `Reservation for rack ${rel.rack?.display ?? ""}`,
  ordering: ["created"],
  search: ["description", "rack.facility_id", "rack.name", "user.username"],
  filters: {
    site_id: { kind: "path", path: "rack.site", key: "id" },
    site: { kind: "path", path: "rack.site", key: "slug" },
    group_id: { kind: "path", path: "rack.group", key: "id", tree: true },
    group: { kind: "path", path: "rack.group", key: "slug", tree: true },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 RackReservation.clean(): units exist in the rack and are not already reserved. */
  async validate(a) {
    const r = await a.get("dcim.rack", a.data.rack);
    const units = (a.data.units ?? []) as number[];
    if (!units.length) a.error("units", "This field is required.");
    if (r) {
      const bad = units.filter((u) => u < 1 || u > r.u_height);
      if (bad.length) a.error("units", `Invalid unit(s) for ${r.u_height}U rack: ${bad.join(", ")}`);
      const others = (await a.find("dcim.rackreservation", { rack: r.id })).filter((x) => x.id !== a.data.id);
      const taken = new Set(others.flatMap((o) => o.units as number[]));
      const clash = units.filter((u) => taken.has(u));
      if (clash.length)
        a.error("units", `The following units have already been reserved: ${clash.join(", ")}`);
    }
  },
});

export const manufacturer = defineModel({
  app: "dcim",
  name: "manufacturer",
  verbose: "manufacturer",
  path: "manufacturers",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    description: f.description(),
    devicetype_count: f.count("dcim.devicetype", "manufacturer"),
    inventoryitem_count: f.count("dcim.inventoryitem", "manufacturer"),
    platform_count: f.count("dcim.platform", "manufacturer"),
  },
  nested: ["name", "slug", "devicetype_count"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    has_device_types: { kind: "has", model: "dcim.devicetype", via: "manufacturer" },
    has_platforms: { kind: "has", model: "dcim.platform", via: "manufacturer" },
  },
});

export const platform = defineModel({
  app: "dcim",
  name: "platform",
  verbose: "platform",
  path: "platforms",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    manufacturer: f.ofk("dcim.manufacturer", "PROTECT"),
    napalm_driver: f.str(50, { default: "" }),
    napalm_args: f.json({ nullable: true }),
    network_driver: f.str(100, { default: "" }),
    network_driver_mappings: f.computed("network_driver_mappings", { type: "json" }),
    description: f.description(),
    device_count: f.count("dcim.device", "platform"),
    virtualmachine_count: f.count("virtualization.virtualmachine", "platform"),
  },
  nested: ["name", "slug", "device_count", "virtualmachine_count"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    has_devices: { kind: "has", model: "dcim.device", via: "platform" },
    has_virtual_machines: { kind: "has", model: "virtualization.virtualmachine", via: "platform" },
  },
});

export const deviceType = defineModel({
  app: "dcim",
  name: "devicetype",
  verbose: "device type",
  path: "device-types",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    manufacturer: f.rfk("dcim.manufacturer", "PROTECT", { nestedFields: undefined }),
    model: f.str(100, { required: true }),
    slug: f.slug("model"),
    part_number: f.str(50, { default: "" }),
    u_height: f.int({ default: 1, min: 0, max: 32_767 }),
    is_full_depth: f.bool(true),
    subdevice_role: f.choice(SUBDEVICE_ROLES),
    // Image uploads are not served here (README): always null, as Nautobot renders an empty ImageField.
    front_image: f.str(100, { default: null, nullable: true, readOnly: true }),
    rear_image: f.str(100, { default: null, nullable: true, readOnly: true }),
    comments: f.comments(),
    device_count: f.count("dcim.device", "device_type"),
  },
  nested: ["manufacturer", "model", "slug", "device_count"],
  displayUses: ["manufacturer"],
  display: (r, rel) => `${rel.manufacturer?.display ?? ""} ${r.model}`,
  ordering: ["manufacturer", "model"],
  search: ["comments", "manufacturer.name", "model", "part_number"],
  uniqueTogether: [{ fields: ["manufacturer", "model"] }, { fields: ["manufacturer", "slug"] }],
  filters: {
    has_instances: { kind: "has", model: "dcim.device", via: "device_type" },
    interface_templates: {
      kind: "reverse",
      model: "dcim.interfacetemplate",
      via: "device_type",
      key: "name",
    },
    has_interface_templates: { kind: "has", model: "dcim.interfacetemplate", via: "device_type" },
    // Nautobot 1.6 `DeviceTypeFilterSet`'s older booleans: has templates of each kind.
    console_ports: { kind: "has", model: "dcim.consoleporttemplate", via: "device_type" },
    console_server_ports: { kind: "has", model: "dcim.consoleserverporttemplate", via: "device_type" },
    power_ports: { kind: "has", model: "dcim.powerporttemplate", via: "device_type" },
    power_outlets: { kind: "has", model: "dcim.poweroutlettemplate", via: "device_type" },
    interfaces: { kind: "has", model: "dcim.interfacetemplate", via: "device_type" },
    device_bays: { kind: "has", model: "dcim.devicebaytemplate", via: "device_type" },
    pass_through_ports: {
      kind: "custom",
      fn: "pass_through_ports",
      front: "dcim_frontporttemplate",
      rear: "dcim_rearporttemplate",
      via: "device_type_id",
    },
  },
  /** Nautobot 1.6 DeviceType.clean(). */
  async validate(a) {
    const d = a.data;
    if (d.subdevice_role === "child" && d.u_height !== 0) {
      a.error("u_height", "Child device types must be 0U.");
    }
    if (a.before) {
      const racked = (await a.find("dcim.device", { device_type: d.id })).filter((x) => x.position != null);
      if (d.u_height === 0 && racked.length) {
        a.error(
          "u_height",
          `Unable to set 0U height: Found ${racked.length} instances already mounted within racks.`,
        );
      } else if (d.u_height > Number(a.before.u_height ?? 0)) {
        // Raising the height: every racked instance must still fit at its position (issue 12); checked in
        // device name order, so the first one reported is the one Nautobot 1.6.32 reports.
        const byName = [...racked].sort((x, y) =>
          String(x.name ?? "").localeCompare(String(y.name ?? ""), undefined, { numeric: true }),
        );
        for (const dev of byName) {
          const rack = await a.get("dcim.rack", dev.rack);
          const top = dev.position + d.u_height - 1;
          let fits = !!rack && top <= rack.u_height;
          if (fits) {
            const others = (await a.find("dcim.device", { rack: dev.rack }, 10000)).filter(
              (o) => o.id !== dev.id && o.position != null,
            );
            for (const o of others) {
              // Other instances of this type still occupy their stored height (as Nautobot computes it).
              const odt = o.device_type === d.id ? a.before : await a.get("dcim.devicetype", o.device_type);
              if (!odt || !(o.face === dev.face || d.is_full_depth || odt.is_full_depth)) continue;
              if (o.position <= top && o.position + odt.u_height - 1 >= dev.position && odt.u_height > 0)
                fits = false;
            }
          }
          if (!fits) {
            a.error(
              "u_height",
              `Device ${dev.name ?? dev.id} in rack ${rack?.name ?? ""} does not have sufficient space to accommodate a height of ${d.u_height}U`,
            );
            break;
          }
        }
      }
      if (a.before.subdevice_role === "parent" && d.subdevice_role !== "parent") {
        if ((await a.count("dcim.devicebaytemplate", { device_type: d.id })) > 0) {
          a.error(
            "subdevice_role",
            "Must delete all device bay templates associated with this device before declassifying it as a parent device.",
          );
        }
      }
    }
  },
});

export const deviceRole = defineModel({
  app: "dcim",
  name: "devicerole",
  verbose: "device role",
  path: "device-roles",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    color: f.str(6, { default: "9e9e9e", format: "color" }),
    vm_role: f.bool(true),
    description: f.description(),
    device_count: f.count("dcim.device", "device_role"),
    virtualmachine_count: f.count("virtualization.virtualmachine", "role"),
  },
  nested: ["name", "slug", "device_count", "virtualmachine_count"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    has_devices: { kind: "has", model: "dcim.device", via: "device_role" },
    has_virtual_machines: { kind: "has", model: "virtualization.virtualmachine", via: "role" },
  },
});

/** Primary IP rules shared by devices and VMs (Nautobot Device.clean / VirtualMachine.clean). */
export async function checkPrimaryIps(
  a: ValidateArgs,
  ifaceModel: string,
  ownerField: string,
  familyCheck: boolean,
): Promise<void> {
  for (const [field, fam] of [
    ["primary_ip4", 4],
    ["primary_ip6", 6],
  ] as const) {
    const ipId = a.data[field] as string | null;
    if (!ipId) continue;
    const ip = await a.get("ipam.ipaddress", ipId);
    if (!ip) continue;
    const isV6 = String(ip.address).includes(":");
    if (familyCheck && (fam === 4) === isV6) {
      a.error(field, `${ip.address} is not an IPv${fam} address.`);
      continue;
    }
    const onMine = async (x: Record<string, any> | undefined) => {
      if (!x || x.assigned_object_type !== ifaceModel || !x.assigned_object_id) return false;
      const iface = await a.get(ifaceModel, x.assigned_object_id);
      return !!iface && iface[ownerField] === a.data.id;
    };
    let ok = await onMine(ip);
    if (!ok && ip.nat_inside) ok = await onMine(await a.get("ipam.ipaddress", ip.nat_inside));
    if (!ok && ifaceModel === "dcim.interface" && a.data.virtual_chassis && ip.assigned_object_id) {
      const vc = await a.get("dcim.virtualchassis", a.data.virtual_chassis);
      if (vc?.master === a.data.id) {
        const iface = await a.get("dcim.interface", ip.assigned_object_id);
        const owner = iface ? await a.get("dcim.device", iface.device) : undefined;
        ok = !!owner && owner.virtual_chassis === vc?.id && !iface?.mgmt_only;
      }
    }
    if (!ok) {
      a.error(
        field,
        `The specified IP address (${ip.address}) is not assigned to this ${ifaceModel === "dcim.interface" ? "device" : "VM"}.`,
      );
    }
  }
}

export const device = defineModel({
  app: "dcim",
  name: "device",
  verbose: "device",
  path: "devices",
  changelog: true,
  customFields: true,
  tags: true,
  configContext: true,
  afterWrite: "device_components",
  serviceValidate: "localContext",
  fields: {
    name: f.str(64, { nullable: true, natural: true }),
    device_type: f.rfk("dcim.devicetype", "PROTECT", { relatedName: "instances" }),
    device_role: f.rfk("dcim.devicerole", "PROTECT", { idFilter: "role_id" }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    platform: f.ofk("dcim.platform", "SET_NULL"),
    serial: f.str(255, { default: "" }),
    asset_tag: f.str(100, { nullable: true, unique: true }),
    site: f.rfk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    rack: f.ofk("dcim.rack", "PROTECT"),
    position: f.int({ nullable: true, min: 1, max: 32_767 }),
    face: f.choice(FACES),
    parent_device: f.computed("parent_device"),
    status: f.status(),
    primary_ip: f.computed("primary_ip", { type: "nested object", target: { model: "ipam.ipaddress" } }),
    primary_ip4: f.ofk("ipam.ipaddress", "SET_NULL", { unique: true, filterKey: false }),
    primary_ip6: f.ofk("ipam.ipaddress", "SET_NULL", { unique: true, filterKey: false }),
    secrets_group: f.ofk("extras.secretsgroup", "SET_NULL"),
    cluster: f.ofk("virtualization.cluster", "SET_NULL"),
    virtual_chassis: f.ofk("dcim.virtualchassis", "SET_NULL", { filterKey: false, relatedName: "members" }),
    vc_position: f.int({ nullable: true, min: 0, max: 255 }),
    vc_priority: f.int({ nullable: true, min: 0, max: 255 }),
    device_redundancy_group: f.ofk("dcim.deviceredundancygroup", "SET_NULL"),
    device_redundancy_group_priority: f.int({
      nullable: true,
      min: 1,
      max: 32767,
      help: "The priority the device has in the device redundancy group.",
    }),
    comments: f.comments(),
    local_context_schema: f.ofk("extras.configcontextschema", "SET_NULL"),
    local_context_data: f.json({ nullable: true, object: true }),
    config_context: f.computed("config_context", { type: "json" }),
  },
  nested: ["name"],
  displayUses: ["device_type", "virtual_chassis"],
  display: (r, rel) =>
    r.name
      ? r.name
      : rel.virtual_chassis
        ? `${rel.virtual_chassis.display}:${r.vc_position} (${r.id})`
        : `${rel.device_type?.display ?? ""} (${r.id})`,
  ordering: ["name", "id"],
  search: [
    "asset_tag",
    "comments",
    "device_type.manufacturer.name",
    "<dcim.inventoryitem.device.serial",
    "name",
    "serial",
  ],
  uniqueTogether: [
    // Nautobot 1.6: `unique_together` (site, tenant, name) when there is a tenant ...
    {
      fields: ["site", "tenant", "name"],
      message: "Device with this Site, Tenant and Name already exists.",
      errorKey: "__all__",
    },
    // ... and `Device.validate_unique` without one; no name never conflicts.
    {
      fields: ["site", "name"],
      whereNull: ["tenant"],
      message: "A device with this name already exists.",
      errorKey: "name",
    },
    { fields: ["virtual_chassis", "vc_position"] },
    // DeviceSerializer.validate: its own UniqueTogetherValidator, checked before Device.clean().
    {
      fields: ["rack", "position", "face"],
      message:
        "The position and face is already occupied on this rack. The fields rack, position, face must make a unique set.",
      errorKey: "non_field_errors",
    },
  ],
  features: ["statuses", "locations"],
  filters: {
    manufacturer_id: { kind: "path", path: "device_type.manufacturer", key: "id" },
    manufacturer: { kind: "path", path: "device_type.manufacturer", key: "slug" },
    model: { kind: "path", path: "device_type", key: "slug" },
    role: { kind: "path", path: "device_role", key: "slug" },
    rack_group_id: { kind: "path", path: "rack.group", key: "id", tree: true },
    virtual_chassis_id: { kind: "path", path: "virtual_chassis", key: "id" },
    is_virtual_chassis_member: { kind: "notnull", field: "virtual_chassis" },
    virtual_chassis_member: { kind: "notnull", field: "virtual_chassis" },
    local_context_data: { kind: "notnull", field: "local_context_data" },
    is_full_depth: { kind: "custom", fn: "device_is_full_depth" },
    pass_through_ports: {
      kind: "custom",
      fn: "pass_through_ports",
      front: "dcim_frontport",
      rear: "dcim_rearport",
      via: "device_id",
    },
    has_primary_ip: { kind: "custom", fn: "has_primary_ip" },
    has_interfaces: { kind: "has", model: "dcim.interface", via: "device" },
    has_console_ports: { kind: "has", model: "dcim.consoleport", via: "device" },
    has_power_ports: { kind: "has", model: "dcim.powerport", via: "device" },
    has_front_ports: { kind: "has", model: "dcim.frontport", via: "device" },
    has_rear_ports: { kind: "has", model: "dcim.rearport", via: "device" },
    has_device_bays: { kind: "has", model: "dcim.devicebay", via: "device" },
    mac_address: { kind: "custom", fn: "device_mac_address" },
    ...locatable,
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Device.clean() and validate_unique(). */
  async validate(a) {
    const d = a.data;
    if (d.device_redundancy_group_priority != null && !d.device_redundancy_group)
      a.error(
        "device_redundancy_group_priority",
        "Must assign a redundancy group when defining a redundancy group priority.",
      );
    if (d.rack) {
      const r = await a.get("dcim.rack", d.rack);
      if (r && r.site !== d.site)
        a.error(
          "rack",
          `Rack ${r.name} does not belong to site ${(await a.get("dcim.site", d.site))?.name}.`,
        );
      if (r?.location && d.location && r.location !== d.location)
        a.error(
          "rack",
          `Rack ${r.name} does not belong to location ${(await a.get("dcim.location", d.location))?.name}.`,
        );
    } else {
      if (d.face) a.error("face", "Cannot select a rack face without assigning a rack.");
      if (d.position) a.error("position", "Cannot select a rack position without assigning a rack.");
    }
    await checkLocation(a, "dcim.device", "Devices");
    if (d.position && !d.face) a.error("face", "Must specify rack face when defining rack position.");
    const dt = await a.get("dcim.devicetype", d.device_type);
    if (dt) {
      if (d.position && dt.u_height === 0) {
        a.error("position", `A U0 device type (${dt.model}) cannot be assigned to a rack position.`);
      }
      if (dt.subdevice_role === "child") {
        if (d.face)
          a.error(
            "face",
            `Child device types cannot be assigned to a rack face. This is an attribute of the parent device.`,
          );
        if (d.position)
          a.error(
            "position",
            `Child device types cannot be assigned to a rack position. This is an attribute of the parent device.`,
          );
      }
      if (d.rack && d.position && d.face && dt.u_height > 0) {
        const want = new Set<number>();
        for (let u = d.position; u < d.position + dt.u_height; u++) want.add(u);
        const rackRow = await a.get("dcim.rack", d.rack);
        if (rackRow && d.position + dt.u_height - 1 > rackRow.u_height) {
          a.error(
            "position",
            `U${d.position} is already occupied or does not have sufficient space to accommodate this device type: ${dt.model} (${dt.u_height}U)`,
          );
        } else {
          const others = (await a.find("dcim.device", { rack: d.rack }, 10000)).filter(
            (o) => o.id !== d.id && o.position != null,
          );
          for (const o of others) {
            const odt = await a.get("dcim.devicetype", o.device_type);
            const sameFace = o.face === d.face || dt.is_full_depth || odt?.is_full_depth;
            if (!sameFace || !odt) continue;
            let clash = false;
            // 0U devices take no rack space (Nautobot Rack.get_available_units).
            for (let u = o.position; u < o.position + odt.u_height; u++) if (want.has(u)) clash = true;
            if (clash) {
              a.error(
                "position",
                `U${d.position} is already occupied or does not have sufficient space to accommodate this device type: ${dt.model} (${dt.u_height}U)`,
              );
              break;
            }
          }
        }
      }
      if (d.platform) {
        const p = await a.get("dcim.platform", d.platform);
        if (p?.manufacturer && p.manufacturer !== dt.manufacturer) {
          const m = await a.get("dcim.manufacturer", p.manufacturer);
          a.error(
            "platform",
            `The assigned platform is limited to ${m?.name} device types, but this device's type belongs to ${(await a.get("dcim.manufacturer", dt.manufacturer))?.name}.`,
          );
        }
      }
    }
    if (d.cluster) {
      const c = await a.get("virtualization.cluster", d.cluster);
      if (c?.site && c.site !== d.site)
        a.error(
          "cluster",
          `The assigned cluster belongs to a different site (${(await a.get("dcim.site", c.site))?.name})`,
        );
    }
    if (d.virtual_chassis && d.vc_position == null) {
      a.error("vc_position", "A device assigned to a virtual chassis must have its position defined.");
    }
    if (a.before?.virtual_chassis && a.before.virtual_chassis !== d.virtual_chassis) {
      const vc = await a.get("dcim.virtualchassis", a.before.virtual_chassis);
      if (vc?.master === d.id)
        a.error(
          "virtual_chassis",
          `The master device for the virtual chassis (${vc?.name}) may not be removed`,
        );
    }
    if (d.name && !d.tenant) {
      const same = (await a.find("dcim.device", { site: d.site, name: d.name, tenant: null })).filter(
        (x) => x.id !== d.id,
      );
      if (same.length) a.error("name", "A device with this name already exists.");
    }
    await checkPrimaryIps(a, "dcim.interface", "device", true);
  },
});

export const virtualChassis = defineModel({
  app: "dcim",
  name: "virtualchassis",
  naturalKeyFields: ["name"],
  naturalKeyNote:
    "Unique in Nautobot 2.x (`VirtualChassis.name`), not enforced in 1.6: duplicates make an upsert of them a 400",
  verbose: "virtual chassis",
  plural: "virtual chassis",
  path: "virtual-chassis",
  changelog: true,
  customFields: true,
  tags: true,
  afterWrite: "vc_master",
  fields: {
    name: f.name(64),
    domain: f.str(30, { default: "" }),
    // Nautobot 1.6 `NestedVirtualChassisSerializer.master` is a writable nested device.
    master: f.ofk("dcim.device", "PROTECT", { filterKey: "name", nestedWrite: "required" }),
    member_count: f.count("dcim.device", "virtual_chassis"),
  },
  nested: ["name", "master", "member_count"],
  nestedKeyOrder: ["display", "id", "name", "url"], // Nautobot 1.6 `NestedVirtualChassisSerializer`
  ordering: ["name"],
  search: ["domain", "<dcim.device.virtual_chassis.name", "name"],
  filters: {
    site_id: { kind: "path", path: "master.site", key: "id" },
    site: { kind: "path", path: "master.site", key: "slug" },
    has_members: { kind: "has", model: "dcim.device", via: "virtual_chassis" },
    // Nautobot 1.6 `VirtualChassisFilterSet`: the master's region and tenant.
    region_id: { kind: "path", path: "master.site.region", key: "id", tree: true },
    region: { kind: "path", path: "master.site.region", key: "slug", tree: true },
    tenant_id: { kind: "path", path: "master.tenant", key: "id" },
    tenant: { kind: "path", path: "master.tenant", key: "slug" },
  },
  /** Nautobot 1.6 VirtualChassis.clean(): on update the master must be a member. */
  async validate(a) {
    if (a.before && a.data.master) {
      const m = await a.get("dcim.device", a.data.master);
      if (m && m.virtual_chassis !== a.data.id)
        a.error("master", `The selected master (${m.name}) is not assigned to this virtual chassis.`);
    }
  },
});

export const powerPanel = defineModel({
  app: "dcim",
  name: "powerpanel",
  verbose: "power panel",
  path: "power-panels",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    site: f.rfk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    rack_group: f.ofk("dcim.rackgroup", "PROTECT"),
    name: f.name(100),
    powerfeed_count: f.count("dcim.powerfeed", "power_panel"),
  },
  nested: ["name", "powerfeed_count"],
  ordering: ["site", "name"],
  search: ["name"],
  uniqueTogether: [{ fields: ["site", "name"] }],
  features: ["locations"],
  filters: { ...locatable },
  /** Nautobot 1.6 PowerPanel.clean(). */
  async validate(a) {
    if (a.data.rack_group) {
      const g = await a.get("dcim.rackgroup", a.data.rack_group);
      if (g && g.site !== a.data.site)
        a.error("rack_group", `Rack group ${g.name} (${g.site}) is in a different site than ${a.data.site}`);
    }
    await checkLocation(a, "dcim.powerpanel", "Power panels");
  },
});

export const powerFeed = defineModel({
  app: "dcim",
  name: "powerfeed",
  verbose: "power feed",
  path: "power-feeds",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    power_panel: f.rfk("dcim.powerpanel", "PROTECT"),
    rack: f.ofk("dcim.rack", "PROTECT"),
    name: f.name(100),
    status: f.status(),
    type: f.choice(POWERFEED_TYPES, { default: "primary" }),
    supply: f.choice(POWERFEED_SUPPLY, { default: "ac" }),
    phase: f.choice(POWERFEED_PHASE, { default: "single-phase" }),
    voltage: f.int({ default: 120, min: -32_768, max: 32_767 }),
    amperage: f.int({ default: 20, min: 1, max: 32_767 }),
    max_utilization: f.int({ default: 80, min: 1, max: 100 }),
    comments: f.comments(),
    cable: f.ofk("dcim.cable", "SET_NULL", { readOnly: true, nestedFields: ["label"] }),
    cable_peer: f.computed("cable_peer"),
    cable_peer_type: f.computed("cable_peer_type"),
    connected_endpoint: f.computed("connected_endpoint"),
    connected_endpoint_type: f.computed("connected_endpoint_type"),
    connected_endpoint_reachable: f.computed("connected_endpoint_reachable"),
  },
  nested: ["name", "cable"],
  ordering: ["power_panel", "name"],
  search: ["comments", "name"],
  uniqueTogether: [{ fields: ["power_panel", "name"] }],
  features: ["statuses", "cable_terminations"],
  filters: {
    site_id: { kind: "path", path: "power_panel.site", key: "id" },
    site: { kind: "path", path: "power_panel.site", key: "slug" },
    region_id: { kind: "path", path: "power_panel.site.region", key: "id", tree: true },
    region: { kind: "path", path: "power_panel.site.region", key: "slug", tree: true },
    cabled: { kind: "notnull", field: "cable" },
    cable: { kind: "path", path: "cable", key: "id" },
    connected: { kind: "custom", fn: "connected" },
  },
  /** Nautobot 1.6 PowerFeed.clean(): rack in the panel's site; AC voltage cannot be negative. */
  async validate(a) {
    if (a.data.rack) {
      const r = await a.get("dcim.rack", a.data.rack);
      const p = await a.get("dcim.powerpanel", a.data.power_panel);
      if (r && p && r.site !== p.site)
        a.error(
          "rack",
          `Rack ${r.name} (${r.site}) and power panel ${p.name} (${p.site}) are in different sites`,
        );
    }
    if (a.data.supply === "ac" && typeof a.data.voltage === "number" && a.data.voltage < 0)
      a.error("voltage", "Voltage cannot be negative for AC supply");
  },
});

/** Cable end compatibility (Nautobot dcim/constants.py COMPATIBLE_TERMINATION_TYPES). */
export const COMPATIBLE_TERMINATIONS: Record<string, string[]> = {
  "circuits.circuittermination": [
    "dcim.interface",
    "dcim.frontport",
    "dcim.rearport",
    "circuits.circuittermination",
  ],
  "dcim.consoleport": ["dcim.consoleserverport", "dcim.frontport", "dcim.rearport"],
  "dcim.consoleserverport": ["dcim.consoleport", "dcim.frontport", "dcim.rearport"],
  "dcim.interface": ["dcim.interface", "circuits.circuittermination", "dcim.frontport", "dcim.rearport"],
  "dcim.frontport": [
    "dcim.consoleport",
    "dcim.consoleserverport",
    "dcim.interface",
    "dcim.frontport",
    "dcim.rearport",
    "circuits.circuittermination",
  ],
  "dcim.powerfeed": ["dcim.powerport"],
  "dcim.poweroutlet": ["dcim.powerport"],
  "dcim.powerport": ["dcim.poweroutlet", "dcim.powerfeed"],
  "dcim.rearport": [
    "dcim.consoleport",
    "dcim.consoleserverport",
    "dcim.interface",
    "dcim.frontport",
    "dcim.rearport",
    "circuits.circuittermination",
  ],
};

export const cable = defineModel({
  app: "dcim",
  name: "cable",
  naturalKeyFields: ["termination_a", "termination_b"],
  naturalKeyNote:
    "A cable is identified by its two terminations, in either order (Nautobot 1.6 unique_together per side: each termination has one cable; 2.x keys cables by pk)",
  verbose: "cable",
  path: "cables",
  changelog: true,
  customFields: true,
  tags: true,
  afterWrite: "cable",
  beforeDelete: "cable_delete",
  fields: {
    termination_a: f.gfk("cable_terminations", "CASCADE", { required: true }),
    termination_b: f.gfk("cable_terminations", "CASCADE", { required: true }),
    type: f.choice(CABLE_TYPES, { plain: true }),
    status: f.status(),
    label: f.str(100, { default: "" }),
    color: f.str(6, { default: "", format: "color" }),
    length: f.int({ nullable: true, min: 0, max: 32_767 }),
    length_unit: f.choice(LENGTH_UNITS),
  },
  nested: ["label"],
  display: (r) => (r.label ? r.label : `#${r.id}`),
  ordering: ["termination_a_type", "termination_a_id", "termination_b_type", "termination_b_id"],
  search: ["label"],
  // Nautobot 1.6 `Cable.Meta.unique_together`: one cable per A end and per B end (DRF's message).
  uniqueTogether: [
    { fields: ["termination_a_type", "termination_a_id"] },
    { fields: ["termination_b_type", "termination_b_id"] },
  ],
  features: ["statuses"],
  filters: {
    device_id: { kind: "custom", fn: "cable_device_id" },
    device: { kind: "custom", fn: "cable_device" },
    site_id: { kind: "custom", fn: "cable_site_id" },
    site: { kind: "custom", fn: "cable_site" },
    rack_id: { kind: "custom", fn: "cable_rack_id" },
    rack: { kind: "custom", fn: "cable_rack" },
    tenant_id: { kind: "custom", fn: "cable_tenant_id" },
    tenant: { kind: "custom", fn: "cable_tenant" },
  },
  /** Nautobot 1.6 Cable.clean(). */
  async validate(a) {
    const d = a.data;
    if (a.before) {
      for (const end of ["a", "b"]) {
        if (
          a.before[`termination_${end}_type`] !== d[`termination_${end}_type`] ||
          a.before[`termination_${end}_id`] !== d[`termination_${end}_id`]
        ) {
          a.error(
            `termination_${end}`,
            `Cannot modify termination ${end.toUpperCase()} of a connected cable. Delete and recreate the cable instead.`,
          );
        }
      }
      return;
    }
    const ends: Array<Record<string, any> | undefined> = [];
    for (const end of ["a", "b"]) {
      const type = d[`termination_${end}_type`] as string | null;
      const id = d[`termination_${end}_id`] as string | null;
      if (!type || !id) {
        ends.push(undefined);
        continue;
      }
      const t = await a.get(type, id);
      if (!t) {
        a.error(`termination_${end}_id`, `Invalid ID for type ${type}`);
        ends.push(undefined);
        continue;
      }
      if (type === "dcim.interface" && NONCONNECTABLE_INTERFACE_TYPES.has(t.type)) {
        a.error(`termination_${end}_id`, `Cables cannot be terminated to ${t.type} interfaces`);
      }
      if (type === "circuits.circuittermination" && t.provider_network) {
        a.error(`termination_${end}_id`, "Cables cannot be terminated to a Provider Network.");
      }
      if (t.cable && t.cable !== d.id) {
        a.error(
          `termination_${end}_id`,
          `${t.name ?? t.term_side ?? id} already has a cable attached (#${t.cable})`,
        );
      }
      ends.push(t);
    }
    const ta = d.termination_a_type as string;
    const tb = d.termination_b_type as string;
    if (ta && tb && !(COMPATIBLE_TERMINATIONS[ta] ?? []).includes(tb)) {
      a.error("termination_b_type", `Incompatible termination types: ${ta} and ${tb}`);
    }
    if (ta === tb && d.termination_a_id === d.termination_b_id) {
      a.error("__all__", `Cannot connect ${ta.replace(".", " | ")} to itself`);
    }
    const [ea, eb] = ends;
    if (ea && eb) {
      if (
        ta === "dcim.rearport" &&
        tb === "dcim.rearport" &&
        ea.positions > 1 &&
        eb.positions > 1 &&
        ea.positions !== eb.positions
      ) {
        a.error(
          "termination_b_id",
          `${ea.name} has ${ea.positions} position(s) but ${eb.name} has ${eb.positions}. Both terminations must have the same number of positions (if greater than one).`,
        );
      }
      if (
        (ta === "dcim.frontport" && tb === "dcim.rearport" && ea.rear_port === eb.id) ||
        (tb === "dcim.frontport" && ta === "dcim.rearport" && eb.rear_port === ea.id)
      ) {
        // Nautobot 1.6.32's wording, typo included (Cable.clean).
        a.error("__all__", "A front port cannot be connected to it corresponding rear port");
      }
    }
    if (d.length != null && !d.length_unit)
      a.error("length_unit", "Must specify a unit when setting a cable length");
    if (d.length == null) d.length_unit = "";
  },
});

export const models: ModelDef[] = [
  region,
  site,
  locationType,
  location,
  rackGroup,
  rackRole,
  rack,
  rackReservation,
  manufacturer,
  platform,
  deviceType,
  deviceRole,
  device,
  virtualChassis,
  powerPanel,
  powerFeed,
  cable,
];
