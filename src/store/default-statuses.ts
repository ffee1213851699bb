/**
 * Nautobot's default Status rows and the content types each is enabled for
 * (nautobot-models.md §2.1, from `extras/management/__init__.py` CHOICESET_MAP/COLOR_MAP/DESCRIPTION_MAP).
 */
export interface DefaultStatus {
  slug: string;
  name: string;
  color: string;
  description: string;
  contentTypes: string[];
}

const s = (
  slug: string,
  name: string,
  color: string,
  description: string,
  contentTypes: string[],
): DefaultStatus => ({
  slug,
  name,
  color,
  description,
  contentTypes,
});

export const DEFAULT_STATUSES: DefaultStatus[] = [
  s("active", "Active", "4caf50", "Unit is active", [
    "circuits.circuit",
    "dcim.device",
    "dcim.interface",
    "dcim.location",
    "dcim.powerfeed",
    "dcim.rack",
    "dcim.deviceredundancygroup",
    "dcim.interfaceredundancygroup",
    "dcim.site",
    "ipam.ipaddress",
    "ipam.prefix",
    "ipam.vlan",
    "virtualization.virtualmachine",
    "virtualization.vminterface",
  ]),
  s("available", "Available", "4caf50", "Unit is available", ["dcim.rack"]),
  s("connected", "Connected", "4caf50", "Cable is connected", ["dcim.cable"]),
  s("container", "Container", "9e9e9e", "Network contains children", ["ipam.prefix"]),
  s("decommissioned", "Decommissioned", "9e9e9e", "Circuit has been decommissioned", ["circuits.circuit"]),
  s("decommissioning", "Decommissioning", "ffc107", "Unit is being decommissioned", [
    "dcim.cable",
    "dcim.device",
    "dcim.interface",
    "dcim.location",
    "dcim.deviceredundancygroup",
    "dcim.interfaceredundancygroup",
    "dcim.site",
    "virtualization.virtualmachine",
    "virtualization.vminterface",
  ]),
  s("deprecated", "Deprecated", "f44336", "Unit has been deprecated", [
    "dcim.rack",
    "ipam.ipaddress",
    "ipam.prefix",
    "ipam.vlan",
  ]),
  s("deprovisioning", "Deprovisioning", "ffc107", "Circuit is being deprovisioned", ["circuits.circuit"]),
  s("dhcp", "DHCP", "4caf50", "Dynamically assigned IPv4/IPv6 address", ["ipam.ipaddress"]),
  s("failed", "Failed", "f44336", "Unit has failed", [
    "dcim.device",
    "dcim.interface",
    "dcim.powerfeed",
    "virtualization.virtualmachine",
    "virtualization.vminterface",
  ]),
  s("inventory", "Inventory", "9e9e9e", "Device is in inventory", ["dcim.device"]),
  s("maintenance", "Maintenance", "9e9e9e", "Unit is under maintenance", [
    "dcim.interface",
    "virtualization.vminterface",
  ]),
  s("offline", "Offline", "ffc107", "Unit is offline", [
    "circuits.circuit",
    "dcim.device",
    "dcim.powerfeed",
    "virtualization.virtualmachine",
  ]),
  s("planned", "Planned", "00bcd4", "Unit has been planned", [
    "circuits.circuit",
    "dcim.cable",
    "dcim.device",
    "dcim.interface",
    "dcim.location",
    "dcim.powerfeed",
    "dcim.rack",
    "dcim.deviceredundancygroup",
    "dcim.interfaceredundancygroup",
    "dcim.site",
    "virtualization.virtualmachine",
    "virtualization.vminterface",
  ]),
  s("provisioning", "Provisioning", "2196f3", "Circuit is being provisioned", ["circuits.circuit"]),
  s("reserved", "Reserved", "00bcd4", "Unit is reserved", [
    "dcim.rack",
    "ipam.ipaddress",
    "ipam.prefix",
    "ipam.vlan",
  ]),
  s("retired", "Retired", "f44336", "Site or Location has been retired", [
    "dcim.location",
    "dcim.deviceredundancygroup",
    "dcim.interfaceredundancygroup",
    "dcim.site",
  ]),
  s("slaac", "SLAAC", "4caf50", "Dynamically assigned IPv6 address", ["ipam.ipaddress"]),
  s("staged", "Staged", "2196f3", "Unit has been staged", ["dcim.device", "virtualization.virtualmachine"]),
  s("staging", "Staging", "2196f3", "Site or Location is in the process of being staged", [
    "dcim.location",
    "dcim.deviceredundancygroup",
    "dcim.interfaceredundancygroup",
    "dcim.site",
  ]),
];
