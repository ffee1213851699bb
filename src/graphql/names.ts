/**
 * Nautobot 1.6's GraphQL names, derived from the registry: type names (`<ClassName>Type`), query field
 * names (`str_to_var_name` of the verbose names), choice enums (graphene-django's
 * `<App><ClassName><Field>Choices` with values named by `to_const`) and reverse relation names.
 */
import type { Model } from "../registry/index.ts";

/** Words spelled in capitals in Django class names (`IPAddress`, `VLANGroup`, `VMInterface`). */
const ACRONYMS: Record<string, string> = {
  ip: "IP",
  vlan: "VLAN",
  vrf: "VRF",
  rir: "RIR",
  vm: "VM",
  graphql: "GraphQL",
};

/** Django's class name of a model, from its verbose name (`ip address` → `IPAddress`). */
export function className(model: Model): string {
  return model.verbose
    .split(/[\s-]+/)
    .map((w) => ACRONYMS[w.toLowerCase()] ?? w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/** The GraphQL object type of a model (Nautobot `generate_schema_type`: `<ClassName>Type`). */
export function typeName(model: Model): string {
  return `${className(model)}Type`;
}

/** Nautobot `str_to_var_name`: lower case, spaces and hyphens to underscores (`VLAN group` → `vlan_group`). */
export function varName(text: string): string {
  return text.toLowerCase().replace(/[\s-]+/g, "_");
}

/** The single-object and list query fields of a model (`ip_address`, `ip_addresses`). */
export function queryNames(model: Model): { single: string; list: string } {
  return { single: varName(model.verbose), list: varName(model.plural ?? `${model.verbose}s`) };
}

const camel = (s: string) =>
  s
    .split("_")
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

/** graphene-django's enum of a choice field: `DcimInterfaceTypeChoices`, `IpamIPAddressRoleChoices`. */
export function enumName(model: Model, field: string): string {
  return `${camel(model.app)}${className(model)}${camel(field)}Choices`;
}

/**
 * graphene-django's `convert_choice_name`: the value in upper case with runs of non-word characters as
 * `_`, prefixed `A_` when it does not start like a name (`1000base-t` → `A_1000BASE_T`, `http(s)` →
 * `HTTP_S_`, the blank choice → `A_`).
 */
export function enumValueName(value: string | number): string {
  const name = String(value)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9_]+/g, "_")
    .toUpperCase();
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && name !== "" ? name : `A_${name}`;
}

/**
 * Nautobot 1.6's reverse relation names where Django's `related_name` differs from the child's verbose
 * plural (`<child app>.<child model>.<foreign key>` → name): device components are `consoleports`,
 * `devicebays`…, models without a related name use Django's `<model>_set`.
 */
const REVERSE_NAMES: Record<string, string> = {
  "dcim.consoleport.device": "consoleports",
  "dcim.consoleserverport.device": "consoleserverports",
  "dcim.powerport.device": "powerports",
  "dcim.poweroutlet.device": "poweroutlets",
  "dcim.frontport.device": "frontports",
  "dcim.rearport.device": "rearports",
  "dcim.devicebay.device": "devicebays",
  "dcim.inventoryitem.device": "inventoryitems",
  "dcim.device.device_redundancy_group": "members",
  "dcim.interface.untagged_vlan": "interfaces_as_untagged",
  "dcim.powerpanel.site": "powerpanel_set",
  "dcim.powerpanel.rack_group": "powerpanel_set",
  "dcim.powerfeed.rack": "powerfeed_set",
  "dcim.powerfeed.power_panel": "powerfeeds",
  "dcim.powerpanel.location": "powerpanels",
  "circuits.circuittermination.circuit": "terminations",
  "virtualization.vminterface.virtual_machine": "interfaces",
  "virtualization.vminterface.untagged_vlan": "vminterfaces_as_untagged",
  "ipam.ipaddress.nat_inside": "nat_outside_list",
};

/**
 * The name of a reverse relation on the target's type: Nautobot's related name (above, or declared in the
 * registry), `children` for a tree's parent key, else the child's verbose plural (`ip_addresses`,
 * `virtual_machines`); undefined when the child points here through several keys and none is named.
 */
export function reverseName(
  from: Model,
  field: string,
  declared: string | undefined,
  only: boolean,
): string | undefined {
  const known = REVERSE_NAMES[`${from.key}.${field}`] ?? declared;
  if (known) return known;
  if (from.tree === field) return "children";
  return only ? varName(from.plural ?? `${from.verbose}s`) : undefined;
}

/** Nautobot's one-to-one reverse fields (a single object, not a list): an IP's `primary_ip4_for`. */
const ONE_TO_ONE: Record<string, string> = {
  "dcim.device.primary_ip4": "primary_ip4_for",
  "dcim.device.primary_ip6": "primary_ip6_for",
  "dcim.devicebay.installed_device": "parent_bay",
  "dcim.virtualchassis.master": "vc_master_for",
};

/** The one-to-one reverse field of `<from>.<field>` on its target, if Nautobot has one. */
export function oneToOneName(from: Model, field: string): string | undefined {
  return ONE_TO_ONE[`${from.key}.${field}`];
}

/** Nautobot's reverse many-to-many lists: a VLAN's `interfaces_as_tagged`, a route target's VRFs. */
const MANY_TO_MANY: Record<string, string> = {
  "dcim.interface.tagged_vlans": "interfaces_as_tagged",
  "virtualization.vminterface.tagged_vlans": "vminterfaces_as_tagged",
  "ipam.vrf.import_targets": "importing_vrfs",
  "ipam.vrf.export_targets": "exporting_vrfs",
};

/** The reverse list of the many-to-many field `<from>.<field>` on its target, if Nautobot has one. */
export function manyToManyName(from: Model, field: string): string | undefined {
  return MANY_TO_MANY[`${from.key}.${field}`];
}
