/**
 * How models are presented by the web interface (issue 25), declared once here as data over the model
 * keys: the navigation menu's group of every model (Nautobot 1.6's top menu: Organization, Devices,
 * Connections, IPAM, Virtualization, Circuits, Power, Extensibility, Admin; `nautobot/<app>/navigation.py`)
 * and the default list columns of the models whose Nautobot table declares them (`default_columns` of
 * the `nautobot/<app>/tables` modules). Models without declared columns get the generic choice of `src/ui`.
 */
import type { ModelDef } from "./meta.ts";

/** One group of the navigation menu: its label and its models' keys (`app.name`), in menu order. */
export interface MenuGroup {
  label: string;
  models: readonly string[];
}

/**
 * The navigation menu: every browsable model in exactly one group (checked by test/ui/lists.test.ts). A
 * model of the registry that is missing here falls into the group of its app (`menuGroupOf`).
 */
export const MENU: readonly MenuGroup[] = [
  {
    label: "Organization",
    models: [
      "dcim.site",
      "dcim.region",
      "dcim.location",
      "dcim.locationtype",
      "dcim.rack",
      "dcim.rackgroup",
      "dcim.rackrole",
      "dcim.rackreservation",
      "tenancy.tenant",
      "tenancy.tenantgroup",
      "extras.tag",
      "extras.status",
      "extras.dynamicgroup",
      "extras.dynamicgroupmembership",
    ],
  },
  {
    label: "Devices",
    models: [
      "dcim.device",
      "dcim.devicerole",
      "dcim.platform",
      "dcim.virtualchassis",
      "dcim.deviceredundancygroup",
      "dcim.interfaceredundancygroup",
      "dcim.interfaceredundancygroupassociation",
      "dcim.devicetype",
      "dcim.manufacturer",
      "dcim.interface",
      "dcim.frontport",
      "dcim.rearport",
      "dcim.consoleport",
      "dcim.consoleserverport",
      "dcim.powerport",
      "dcim.poweroutlet",
      "dcim.devicebay",
      "dcim.inventoryitem",
      "dcim.interfacetemplate",
      "dcim.frontporttemplate",
      "dcim.rearporttemplate",
      "dcim.consoleporttemplate",
      "dcim.consoleserverporttemplate",
      "dcim.powerporttemplate",
      "dcim.poweroutlettemplate",
      "dcim.devicebaytemplate",
    ],
  },
  { label: "Connections", models: ["dcim.cable"] },
  {
    label: "IPAM",
    models: [
      "ipam.ipaddress",
      "ipam.prefix",
      "ipam.aggregate",
      "ipam.rir",
      "ipam.vrf",
      "ipam.routetarget",
      "ipam.vlan",
      "ipam.vlangroup",
      "ipam.role",
      "ipam.service",
    ],
  },
  {
    label: "Virtualization",
    models: [
      "virtualization.virtualmachine",
      "virtualization.vminterface",
      "virtualization.cluster",
      "virtualization.clustertype",
      "virtualization.clustergroup",
    ],
  },
  {
    label: "Circuits",
    models: [
      "circuits.circuit",
      "circuits.circuittermination",
      "circuits.circuittype",
      "circuits.provider",
      "circuits.providernetwork",
    ],
  },
  { label: "Power", models: ["dcim.powerfeed", "dcim.powerpanel"] },
  {
    label: "Extensibility",
    models: [
      "extras.webhook",
      "extras.webhookdelivery",
      "extras.objectchange",
      "extras.customfield",
      "extras.customfieldchoice",
      "extras.customlink",
      "extras.exporttemplate",
      "extras.computedfield",
      "extras.relationship",
      "extras.relationshipassociation",
      "extras.configcontext",
      "extras.configcontextschema",
      "extras.graphqlquery",
      "extras.note",
      "extras.secret",
      "extras.secretsgroup",
      "extras.secretsgroupassociation",
    ],
  },
  { label: "Admin", models: ["users.user", "users.group", "users.objectpermission", "users.token"] },
];

/** The menu group of an app's models that are not listed in `MENU`. */
const APP_GROUP: Record<string, string> = {
  dcim: "Devices",
  ipam: "IPAM",
  circuits: "Circuits",
  virtualization: "Virtualization",
  tenancy: "Organization",
  extras: "Extensibility",
  users: "Admin",
};

/** The menu group label of a model: its `MENU` group, else its app's group, else "Other". */
export function menuGroupOf(model: Pick<ModelDef, "app" | "name">): string {
  const key = `${model.app}.${model.name}`;
  return MENU.find((g) => g.models.includes(key))?.label ?? APP_GROUP[model.app] ?? "Other";
}

/**
 * Default list columns (field names of the API representation, after the object's own display column),
 * as Nautobot 1.6's tables list them by default. Names a model does not have are skipped by the UI.
 */
export const LIST_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  "dcim.device": ["status", "tenant", "site", "location", "rack", "device_role", "device_type", "primary_ip"],
  "dcim.site": ["status", "facility", "region", "tenant", "description"],
  "dcim.rack": ["site", "location", "group", "status", "facility_id", "tenant", "role", "u_height"],
  "dcim.interface": ["device", "label", "enabled", "type", "description"],
  "dcim.cable": ["termination_a", "termination_b", "status", "type", "label"],
  "ipam.prefix": ["status", "vrf", "tenant", "site", "location", "vlan", "role", "description"],
  "ipam.vlan": ["vid", "site", "location", "group", "status", "tenant", "role", "description"],
  "ipam.ipaddress": ["vrf", "status", "role", "tenant", "assigned_object", "dns_name", "description"],
  "circuits.circuit": [
    "provider",
    "type",
    "status",
    "tenant",
    "termination_a",
    "termination_z",
    "description",
  ],
  "virtualization.virtualmachine": ["status", "cluster", "role", "tenant", "primary_ip"],
};

/**
 * Models whose detail pages are split into tabs (issue 25), as Nautobot 1.6 splits a device's page
 * (`dcim/device/base.html`: Interfaces, Front Ports, …, Config Context, Notes, Change Log): models whose
 * child lists are long. The tabs themselves are derived by the web interface from the registry (the
 * models whose required FK named after this model cascades from it, plus the declared child tables).
 */
export const TABBED_DETAIL_PAGES: ReadonlySet<string> = new Set([
  "dcim.device",
  "virtualization.virtualmachine",
  "dcim.rack",
]);

/**
 * The columns of a child model's table on its parent's tab, after the name (field names of the API
 * representation, plus `cable`, `connection` (the path's far end), `cable_peer` and `ip_addresses`):
 * Nautobot 1.6's `Device*Table` / `VirtualMachineVMInterfaceTable` `default_columns` without `pk`,
 * `name` and `actions` (nautobot/dcim/tables/devices.py, nautobot/virtualization/tables.py). Names a model
 * does not have are skipped. Models not listed here get their list columns minus the FK to the parent.
 */
export const TAB_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  "dcim.interface": [
    "status",
    "label",
    "enabled",
    "type",
    "parent_interface",
    "lag",
    "mtu",
    "mode",
    "description",
    "ip_addresses",
    "cable",
    "connection",
  ],
  "dcim.frontport": [
    "label",
    "type",
    "rear_port",
    "rear_port_position",
    "description",
    "cable",
    "cable_peer",
  ],
  "dcim.rearport": ["label", "type", "positions", "description", "cable", "cable_peer"],
  "dcim.consoleport": ["label", "type", "description", "cable", "connection"],
  "dcim.consoleserverport": ["label", "type", "description", "cable", "connection"],
  "dcim.powerport": ["label", "type", "maximum_draw", "allocated_draw", "description", "cable", "connection"],
  "dcim.poweroutlet": ["label", "type", "power_port", "feed_leg", "description", "cable", "connection"],
  "dcim.devicebay": ["label", "installed_device", "description"],
  "dcim.inventoryitem": [
    "label",
    "manufacturer",
    "part_id",
    "serial",
    "asset_tag",
    "description",
    "discovered",
  ],
  "virtualization.vminterface": [
    "status",
    "enabled",
    "parent_interface",
    "mac_address",
    "mtu",
    "mode",
    "description",
    "ip_addresses",
  ],
};
