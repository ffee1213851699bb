/**
 * Device components and component templates (Nautobot 1.6 `dcim/models/device_components.py`,
 * `device_component_templates.py`; shared/reference/nautobot-models.md §2A).
 */
import {
  CONSOLE_PORT_TYPES,
  FEED_LEGS,
  INTERFACE_MODES,
  INTERFACE_TYPES,
  NONCONNECTABLE_INTERFACE_TYPES,
  PORT_TYPES,
  POWER_OUTLET_TYPES,
  POWER_PORT_TYPES,
  VIRTUAL_INTERFACE_TYPES,
} from "../choices/dcim.ts";
import { defineModel, type FieldDef, type FilterDef, f, type ModelDef, type ValidateArgs } from "../meta.ts";

const componentDisplay = (r: Record<string, any>) => (r.label ? `${r.name} (${r.label})` : r.name);

/** Fields every device component starts with. */
const base = (): Record<string, FieldDef> => ({
  device: f.rfk("dcim.device", "CASCADE", { filterKey: "name" }),
  name: f.name(64, { natural: true }),
  label: f.str(64, { default: "" }),
});

/** Read-only cable fields of cable-termination components. */
const cableFields = (): Record<string, FieldDef> => ({
  cable: f.ofk("dcim.cable", "SET_NULL", { readOnly: true, nestedFields: ["label"], filterKey: false }),
  cable_peer: f.computed("cable_peer"),
  cable_peer_type: f.computed("cable_peer_type"),
});

/** Read-only path fields of path-endpoint components. */
const pathFields = (): Record<string, FieldDef> => ({
  connected_endpoint: f.computed("connected_endpoint"),
  connected_endpoint_type: f.computed("connected_endpoint_type"),
  connected_endpoint_reachable: f.computed("connected_endpoint_reachable"),
});

/** Filters shared by device components (DeviceComponentModelFilterSetMixin). */
const componentFilters: Record<string, FilterDef> = {
  site_id: { kind: "path", path: "device.site", key: "id" },
  site: { kind: "path", path: "device.site", key: "slug" },
  region_id: { kind: "path", path: "device.site.region", key: "id", tree: true },
  region: { kind: "path", path: "device.site.region", key: "slug", tree: true },
};
const cableFilters: Record<string, FilterDef> = {
  cabled: { kind: "notnull", field: "cable" },
  cable: { kind: "path", path: "cable", key: "id" },
};

/** Declare a device component model. */
function component(args: {
  name: string;
  verbose: string;
  path: string;
  fields: Record<string, FieldDef>;
  cable?: boolean;
  endpoint?: boolean;
  /** Fields rendered after the cable and path fields (Nautobot's serializer order). */
  trailing?: Record<string, FieldDef>;
  nested?: string[];
  validate?: ModelDef["validate"];
  filters?: Record<string, FilterDef>;
  tree?: string;
  uniqueFields?: string[];
  /** `ModelDef.keyOrder` (inventory items: `parent` before `name`, as Nautobot's serializer). */
  keyOrder?: readonly string[];
  /** `ModelDef.ordering`; default by device, then natural name. */
  ordering?: readonly string[];
  /** `ModelDef.search`; default name, label and description (Nautobot's component FilterSets). */
  search?: readonly string[];
}): ModelDef {
  const fields: Record<string, FieldDef> = { ...base(), ...args.fields };
  if (args.cable) Object.assign(fields, cableFields());
  if (args.endpoint) Object.assign(fields, pathFields());
  if (args.trailing) Object.assign(fields, args.trailing);
  return defineModel({
    app: "dcim",
    name: args.name,
    verbose: args.verbose,
    path: args.path,
    changelog: true,
    customFields: true,
    tags: true,
    fields,
    nested: args.nested ?? (args.cable ? ["device", "name", "cable"] : ["device", "name"]),
    display: componentDisplay,
    ordering: args.ordering ?? ["device", "name"],
    search: args.search ?? ["name", "label", "description"],
    uniqueTogether: [{ fields: args.uniqueFields ?? ["device", "name"] }],
    features: args.cable ? ["cable_terminations"] : [],
    filters: { ...componentFilters, ...(args.cable ? cableFilters : {}), ...(args.filters ?? {}) },
    ...(args.tree ? { tree: args.tree } : {}),
    ...(args.validate ? { validate: args.validate } : {}),
    ...(args.keyOrder ? { keyOrder: args.keyOrder } : {}),
  });
}

/** Same device, or a device in the same virtual chassis. */
async function sameDeviceOrVc(a: ValidateArgs, otherDevice: string): Promise<boolean> {
  if (otherDevice === a.data.device) return true;
  const mine = await a.get("dcim.device", a.data.device);
  const other = await a.get("dcim.device", otherDevice);
  return !!mine?.virtual_chassis && mine.virtual_chassis === other?.virtual_chassis;
}

/** VLAN mode rules shared by device and VM interfaces (BaseInterface / serializer validate). */
export async function checkVlans(a: ValidateArgs, siteOf: () => Promise<string | null>): Promise<void> {
  const d = a.data;
  if (d.untagged_vlan) {
    if (!d.mode) a.error("untagged_vlan", "Mode must be set when specifying untagged_vlan");
    const v = await a.get("ipam.vlan", d.untagged_vlan);
    const site = await siteOf();
    if (v?.site && v.site !== site) {
      a.error(
        "untagged_vlan",
        `The untagged VLAN (${v.name}) must belong to the same site as the interface's parent device, or it must be global.`,
      );
    }
  }
  const tagged = (d.tagged_vlans ?? []) as string[];
  if (tagged.length) {
    if (d.mode !== "tagged")
      a.error("tagged_vlans", `Mode must be set to tagged when specifying tagged_vlans`);
    const site = await siteOf();
    for (const id of tagged) {
      const v = await a.get("ipam.vlan", id);
      if (v?.site && v.site !== site) {
        a.error("tagged_vlans", `Tagged VLAN with ID ${id} not found in site ${site} or global.`);
        break;
      }
    }
  }
}

export const interfaceModel = component({
  name: "interface",
  verbose: "interface",
  path: "interfaces",
  cable: true,
  endpoint: true,
  // A model property in Nautobot 1.6 (`BaseInterface.count_ipaddresses`), not an annotation.
  trailing: { count_ipaddresses: f.count("ipam.ipaddress", "assigned_object", { property: true }) },
  fields: {
    // Nautobot 1.6: a required status from API 1.4; `InterfaceSerializerVersion12` (API 1.2 and 1.3) has none on the
    // wire (a given status is ignored) and a new interface is `active`.
    status: { ...f.status(), default: "active", versions: { since: "1.4" } },
    type: f.choice(INTERFACE_TYPES, { required: true }),
    enabled: f.bool(true),
    parent_interface: f.ofk("dcim.interface", "CASCADE", {
      filterKey: "name",
      relatedName: "child_interfaces",
    }),
    bridge: f.ofk("dcim.interface", "SET_NULL", { filterKey: "name", relatedName: "bridged_interfaces" }),
    lag: f.ofk("dcim.interface", "SET_NULL", { filterKey: "name", relatedName: "member_interfaces" }),
    mtu: f.int({ nullable: true, min: 1, max: 65536 }),
    mac_address: f.mac({ nullable: true }),
    mgmt_only: f.bool(false),
    description: f.description(),
    mode: f.choice(INTERFACE_MODES),
    untagged_vlan: f.ofk("ipam.vlan", "SET_NULL", { filterKey: "vid" }),
    tagged_vlans: f.m2m("ipam.vlan", { filterKey: "vid" }),
  },
  filters: {
    kind: { kind: "custom", fn: "interface_kind" },
    lag_id: { kind: "path", path: "lag", key: "id" },
    has_tagged_vlans: { kind: "has", model: "dcim.interface", via: "tagged_vlans", forward: true },
    vlan_id: { kind: "custom", fn: "interface_vlan_id" },
    device_with_common_vc: { kind: "custom", fn: "device_with_common_vc" },
    interface_redundancy_groups: {
      kind: "path",
      path: "<dcim:interfaceredundancygroupassociation:interface.interface_redundancy_group",
      key: "name",
    },
    vlan: { kind: "custom", fn: "interface_vlan" },
    connected: { kind: "custom", fn: "connected" },
  },
  /** Nautobot 1.6 Interface.clean() (+ serializer VLAN checks). */
  async validate(a) {
    const d = a.data;
    const type = d.type as string;
    if (d.cable && NONCONNECTABLE_INTERFACE_TYPES.has(type))
      a.error("type", `${type} interfaces cannot have a cable attached.`);
    if (d.parent_interface) {
      if (d.parent_interface === d.id) a.error("parent_interface", "An interface cannot be its own parent.");
      const p = await a.get("dcim.interface", d.parent_interface);
      if (p) {
        if (!(await sameDeviceOrVc(a, p.device)))
          a.error(
            "parent_interface",
            `The selected parent interface (${p.name}) belongs to a different device`,
          );
        if (p.type === "virtual")
          a.error("parent_interface", "Virtual interfaces may not be parents of other interfaces.");
      }
      if (type !== "virtual")
        a.error("parent_interface", "Only virtual interfaces may be assigned to a parent interface.");
    }
    if (d.bridge) {
      if (d.bridge === d.id) a.error("bridge", "An interface cannot be bridged to itself.");
      const b = await a.get("dcim.interface", d.bridge);
      if (b && !(await sameDeviceOrVc(a, b.device)))
        a.error("bridge", `The selected bridge interface (${b.name}) belongs to a different device`);
    }
    if (d.lag) {
      if (d.lag === d.id) a.error("lag", "A LAG interface cannot be its own parent.");
      const l = await a.get("dcim.interface", d.lag);
      if (l) {
        if (l.type !== "lag") a.error("lag", `The selected LAG interface (${l.name}) is not a LAG.`);
        if (!(await sameDeviceOrVc(a, l.device))) {
          // Interface.clean: names the LAG's device, and the virtual chassis when this device is in one.
          const mine = await a.get("dcim.device", d.device);
          const theirs = await a.get("dcim.device", l.device);
          const vc = mine?.virtual_chassis
            ? await a.get("dcim.virtualchassis", mine.virtual_chassis)
            : undefined;
          a.error(
            "lag",
            vc
              ? `The selected LAG interface (${l.name}) belongs to ${theirs?.name}, which is not part of virtual chassis ${vc.name}.`
              : `The selected LAG interface (${l.name}) belongs to a different device (${theirs?.name}).`,
          );
        }
      }
      if (VIRTUAL_INTERFACE_TYPES.has(type) && type === "virtual")
        a.error("lag", "Virtual interfaces cannot have a parent LAG interface.");
    }
    if (!d.status) d.status = "active";
    await checkVlans(a, async () => ((await a.get("dcim.device", d.device))?.site as string | null) ?? null);
  },
});

export const frontPort = component({
  name: "frontport",
  verbose: "front port",
  path: "front-ports",
  cable: true,
  fields: {
    type: f.choice(PORT_TYPES, { required: true }),
    // Nautobot 1.6 `FrontPortRearPortSerializer` (name, label and the change-log stamps).
    rear_port: f.rfk("dcim.rearport", "CASCADE", {
      nestedFields: ["name", "label", "created", "last_updated"],
      filterKey: "name",
    }),
    rear_port_position: f.int({ default: 1, min: 1, max: 1024 }),
    description: f.description(),
  },
  /** Nautobot 1.6 FrontPort.clean(). */
  async validate(a) {
    const rp = await a.get("dcim.rearport", a.data.rear_port);
    if (!rp) return;
    if (rp.device !== a.data.device)
      a.error("rear_port", `Rear port (${rp.name}) must belong to the same device`);
    if (a.data.rear_port_position > rp.positions) {
      a.error(
        "rear_port_position",
        `Invalid rear port position (${a.data.rear_port_position}): Rear port ${rp.name} has only ${rp.positions} positions`,
      );
    }
    const clash = (
      await a.find("dcim.frontport", { rear_port: rp.id, rear_port_position: a.data.rear_port_position })
    ).filter((x) => x.id !== a.data.id);
    if (clash.length)
      a.error("__all__", "Front port with this Rear port and Rear port position already exists.");
  },
});

export const rearPort = component({
  name: "rearport",
  verbose: "rear port",
  path: "rear-ports",
  cable: true,
  fields: {
    type: f.choice(PORT_TYPES, { required: true }),
    positions: f.int({ default: 1, min: 1, max: 1024 }),
    description: f.description(),
  },
  filters: { has_front_ports: { kind: "has", model: "dcim.frontport", via: "rear_port" } },
  /** Nautobot 1.6 RearPort.clean(): positions may not drop below the mapped front ports. */
  async validate(a) {
    if (!a.before) return;
    const fps = await a.find("dcim.frontport", { rear_port: a.data.id });
    const max = Math.max(0, ...fps.map((x) => x.rear_port_position as number));
    if (a.data.positions < max) {
      a.error(
        "positions",
        `The number of positions cannot be less than the number of mapped front ports (${fps.length})`,
      );
    }
  },
});

export const consolePort = component({
  name: "consoleport",
  verbose: "console port",
  path: "console-ports",
  cable: true,
  endpoint: true,
  fields: { type: f.choice(CONSOLE_PORT_TYPES), description: f.description() },
  filters: { connected: { kind: "custom", fn: "connected" } },
});

export const consoleServerPort = component({
  name: "consoleserverport",
  verbose: "console server port",
  path: "console-server-ports",
  cable: true,
  endpoint: true,
  fields: { type: f.choice(CONSOLE_PORT_TYPES), description: f.description() },
  filters: { connected: { kind: "custom", fn: "connected" } },
});

export const powerPort = component({
  name: "powerport",
  verbose: "power port",
  path: "power-ports",
  cable: true,
  endpoint: true,
  fields: {
    type: f.choice(POWER_PORT_TYPES),
    maximum_draw: f.int({ nullable: true, min: 1, max: 32_767 }),
    allocated_draw: f.int({ nullable: true, min: 1, max: 32_767 }),
    description: f.description(),
  },
  filters: {
    connected: { kind: "custom", fn: "connected" },
    has_power_outlets: { kind: "has", model: "dcim.poweroutlet", via: "power_port" },
  },
  /** Nautobot 1.6 PowerPort.clean(). */
  validate(a) {
    const { maximum_draw: max, allocated_draw: alloc } = a.data;
    if (max != null && alloc != null && alloc > max) {
      a.error("allocated_draw", `Allocated draw cannot exceed the maximum draw (${max}W).`);
    }
  },
});

export const powerOutlet = component({
  name: "poweroutlet",
  verbose: "power outlet",
  path: "power-outlets",
  cable: true,
  endpoint: true,
  fields: {
    type: f.choice(POWER_OUTLET_TYPES),
    power_port: f.fk("dcim.powerport", "SET_NULL", { nullable: true, rejectNull: true, filterKey: "name" }),
    feed_leg: f.choice(FEED_LEGS),
    description: f.description(),
  },
  filters: { connected: { kind: "custom", fn: "connected" } },
  /** Nautobot 1.6 PowerOutlet.clean(): the power port belongs to the same device. */
  async validate(a) {
    if (!a.data.power_port) return;
    const pp = await a.get("dcim.powerport", a.data.power_port);
    if (pp && pp.device !== a.data.device)
      a.error("power_port", `Parent power port (${pp.name}) must belong to the same device`);
  },
});

export const deviceBay = component({
  name: "devicebay",
  verbose: "device bay",
  path: "device-bays",
  fields: {
    description: f.description(),
    installed_device: f.ofk("dcim.device", "SET_NULL", { unique: true, filterKey: "name" }),
  },
  nested: ["device", "name"],
  /** Nautobot 1.6 DeviceBay.clean(). */
  async validate(a) {
    const dev = await a.get("dcim.device", a.data.device);
    const dt = dev ? await a.get("dcim.devicetype", dev.device_type) : undefined;
    if (dt && dt.subdevice_role !== "parent") {
      a.error("device", `This type of device (${dt.model}) does not support device bays.`);
    }
    if (a.data.installed_device) {
      if (a.data.installed_device === a.data.device)
        a.error("installed_device", "Cannot install a device into itself.");
      const child = await a.get("dcim.device", a.data.installed_device);
      const cdt = child ? await a.get("dcim.devicetype", child.device_type) : undefined;
      if (cdt && cdt.subdevice_role !== "child") {
        a.error(
          "installed_device",
          `Cannot install device ${child?.name}; device-type ${cdt.model} has no subdevice_role.`,
        );
      }
    }
  },
});

export const inventoryItem = component({
  name: "inventoryitem",
  keyOrder: ["id", "display", "url", "device", "parent"],
  // Nautobot 1.6 `InventoryItem.Meta.ordering`: ("device__id", "parent__id", "_name"), by the raw ids.
  ordering: ["device_id", "parent_id", "name"],
  search: ["asset_tag", "description", "name", "part_id", "serial"],
  verbose: "inventory item",
  path: "inventory-items",
  tree: "parent",
  fields: {
    // Nautobot 1.6 `InventoryItemSerializer`: `parent` is a plain `PrimaryKeyRelatedField` (a bare id).
    parent: { ...f.ofk("dcim.inventoryitem", "CASCADE", { relatedName: "child_items" }), asId: true },
    manufacturer: f.ofk("dcim.manufacturer", "PROTECT"),
    part_id: f.str(50, { default: "" }),
    serial: f.str(255, { default: "" }),
    asset_tag: f.str(50, { nullable: true, unique: true }),
    discovered: f.bool(false),
    description: f.description(),
    _depth: f.computed("tree_depth", { type: "integer" }),
  },
  nested: ["device", "name", "_depth"],
  uniqueFields: ["device", "parent", "name"],
});

/** Declare a component template model. */
function template(args: {
  name: string;
  verbose: string;
  path: string;
  fields: Record<string, FieldDef>;
  validate?: ModelDef["validate"];
  filters?: Record<string, FilterDef>;
}): ModelDef {
  return defineModel({
    app: "dcim",
    name: args.name,
    verbose: args.verbose,
    path: args.path,
    changelog: true,
    customFields: true,
    notes: false, // Nautobot 1.6 component templates have no notes
    fields: {
      device_type: f.rfk("dcim.devicetype", "CASCADE", { idFilter: "devicetype_id" }),
      name: f.name(64, { natural: true }),
      label: f.str(64, { default: "" }),
      ...args.fields,
      description: f.description(),
    },
    nested: ["name"],
    display: componentDisplay,
    ordering: ["device_type", "name"],
    search: ["name"], // Nautobot 1.6 template FilterSets search name (and a slug they do not have)
    uniqueTogether: [{ fields: ["device_type", "name"] }],
    ...(args.validate ? { validate: args.validate } : {}),
    ...(args.filters ? { filters: args.filters } : {}),
  });
}

export const interfaceTemplate = template({
  name: "interfacetemplate",
  verbose: "interface template",
  path: "interface-templates",
  fields: { type: f.choice(INTERFACE_TYPES, { required: true }), mgmt_only: f.bool(false) },
});
export const frontPortTemplate = template({
  name: "frontporttemplate",
  verbose: "front port template",
  path: "front-port-templates",
  // Nautobot 1.6 `FrontPortTemplateFilterSet.rear_port_template`.
  filters: { rear_port_template: { kind: "path", path: "rear_port", key: "name" } },
  fields: {
    type: f.choice(PORT_TYPES, { required: true }),
    rear_port: f.rfk("dcim.rearporttemplate", "CASCADE", { filterKey: "name" }),
    rear_port_position: f.int({ default: 1, min: 1, max: 1024 }),
  },
  /** Nautobot 1.6 FrontPortTemplate.clean(). */
  async validate(a) {
    const rp = await a.get("dcim.rearporttemplate", a.data.rear_port);
    if (!rp) return;
    if (rp.device_type !== a.data.device_type)
      a.error("rear_port", `Rear port (${rp.name}) must belong to the same device type`);
    if (a.data.rear_port_position > rp.positions) {
      a.error(
        "rear_port_position",
        `Invalid rear port position (${a.data.rear_port_position}); rear port ${rp.name} has only ${rp.positions} positions`,
      );
    }
  },
});
export const rearPortTemplate = template({
  name: "rearporttemplate",
  verbose: "rear port template",
  path: "rear-port-templates",
  fields: {
    type: f.choice(PORT_TYPES, { required: true }),
    positions: f.int({ default: 1, min: 1, max: 1024 }),
  },
});
export const consolePortTemplate = template({
  name: "consoleporttemplate",
  verbose: "console port template",
  path: "console-port-templates",
  fields: { type: f.choice(CONSOLE_PORT_TYPES) },
});
export const consoleServerPortTemplate = template({
  name: "consoleserverporttemplate",
  verbose: "console server port template",
  path: "console-server-port-templates",
  fields: { type: f.choice(CONSOLE_PORT_TYPES) },
});
export const powerPortTemplate = template({
  name: "powerporttemplate",
  verbose: "power port template",
  path: "power-port-templates",
  fields: {
    type: f.choice(POWER_PORT_TYPES),
    maximum_draw: f.int({ nullable: true, min: 1, max: 32_767 }),
    allocated_draw: f.int({ nullable: true, min: 1, max: 32_767 }),
  },
  validate(a) {
    const { maximum_draw: max, allocated_draw: alloc } = a.data;
    if (max != null && alloc != null && alloc > max)
      a.error("allocated_draw", `Allocated draw cannot exceed the maximum draw (${max}W).`);
  },
});
export const powerOutletTemplate = template({
  name: "poweroutlettemplate",
  verbose: "power outlet template",
  path: "power-outlet-templates",
  // Nautobot 1.6 `PowerOutletTemplateFilterSet.power_port_template`.
  filters: { power_port_template: { kind: "path", path: "power_port", key: "name" } },
  fields: {
    type: f.choice(POWER_OUTLET_TYPES),
    power_port: f.fk("dcim.powerporttemplate", "SET_NULL", {
      nullable: true,
      rejectNull: true,
      filterKey: "name",
    }),
    feed_leg: f.choice(FEED_LEGS),
  },
  /** Nautobot 1.6 PowerOutletTemplate.clean(). */
  async validate(a) {
    if (!a.data.power_port) return;
    const pp = await a.get("dcim.powerporttemplate", a.data.power_port);
    if (pp && pp.device_type !== a.data.device_type)
      a.error("power_port", `Parent power port (${pp.name}) must belong to the same device type`);
  },
});
export const deviceBayTemplate = template({
  name: "devicebaytemplate",
  verbose: "device bay template",
  path: "device-bay-templates",
  fields: {},
  /** Nautobot 1.6 DeviceBayTemplate.clean(): the device type must be a parent. */
  async validate(a) {
    const dt = await a.get("dcim.devicetype", a.data.device_type);
    if (dt && dt.subdevice_role !== "parent") {
      a.error(
        "device_type",
        `Subdevice role of device type (${dt.model}) must be set to "parent" to allow device bays.`,
      );
    }
  },
});

export const models: ModelDef[] = [
  interfaceModel,
  frontPort,
  rearPort,
  consolePort,
  consoleServerPort,
  powerPort,
  powerOutlet,
  deviceBay,
  inventoryItem,
  interfaceTemplate,
  frontPortTemplate,
  rearPortTemplate,
  consolePortTemplate,
  consoleServerPortTemplate,
  powerPortTemplate,
  powerOutletTemplate,
  deviceBayTemplate,
];
