/**
 * Labels and help texts Nautobot 1.6.32's web forms show where they differ from its OPTIONS ones
 * (`field-text.ts`), keyed by `app/path` and field name: each model form's `Meta.labels` and
 * `Meta.help_texts`, the `label`/`help_text` of fields the form declares itself, and the model field's
 * `verbose_name` for the fields the form takes from the model (`primary_ip4` → "Primary IPv4", where the API's
 * serializer says "Primary ip4"). Read from the `<Model>Form` classes of nautobot/{circuits,dcim,ipam,
 * tenancy,virtualization,extras}/forms and the models of tag v1.6.32 (2026-11-29, issue 25); markup in
 * help texts (`<br>`, links) as plain text. Left out: the NAT section's "IP Address" label of an IP
 * address's `nat_inside` (without the section it would name the wrong thing).
 */
import { fieldText } from "./field-text.ts";
import type { Model } from "./index.ts";
import type { FieldDef } from "./meta.ts";

export const FORM_TEXT: Readonly<
  Record<string, Readonly<Record<string, { label?: string; help?: string }>>>
> = {
  "circuits/providers": {
    admin_contact: { help: "Administrative contact email address and phone number" },
    asn: { help: "BGP autonomous system number (if applicable)" },
    name: { help: "Full name of the provider" },
    noc_contact: { help: "NOC email address and phone number" },
    portal_url: { help: "URL of the provider's customer support portal" },
  },
  "circuits/circuits": {
    cid: { help: "Unique circuit ID" },
    commit_rate: { help: "Committed rate" },
  },
  "circuits/circuit-terminations": {
    port_speed: { help: "Physical circuit speed" },
    pp_info: { help: "Patch panel ID and port number(s)" },
    provider_network: { label: "Provider Network" },
    xconnect_id: { help: "ID of the local cross-connect" },
  },
  "dcim/sites": {
    asn: { help: "BGP autonomous system number" },
    description: { help: "Short description (will appear in sites list)" },
    facility: { help: "Data center provider and facility (e.g. Equinix NY7)" },
    latitude: { help: "Latitude in decimal format (xx.yyyyyy)" },
    longitude: { help: "Longitude in decimal format (xx.yyyyyy)" },
    name: { help: "Full name of the site" },
    physical_address: { help: "Physical location of the building (e.g. for GPS)" },
    shipping_address: { help: "If different from the physical address" },
    time_zone: { help: "Local time zone" },
  },
  "dcim/location-types": {
    content_types: { help: "The object type(s) that can be associated to a Location of this type" },
  },
  "dcim/racks": {
    facility_id: { help: "The unique rack ID assigned by the facility" },
    location: { help: "The specific location of the rack" },
    name: { help: "Organizational rack name" },
    site: { help: "The site at which the rack exists" },
  },
  "dcim/rack-reservations": {
    units: { help: "Comma-separated list of numeric unit IDs. A range may be specified using a hyphen." },
  },
  "dcim/devices": {
    device_role: { help: "The function this device serves" },
    local_context_data: {
      help: "Local config context data overwrites all source contexts in the final rendered config context",
    },
    serial: { help: "Chassis serial number" },
    face: { label: "Rack face" },
    primary_ip4: { label: "Primary IPv4" },
    primary_ip6: { label: "Primary IPv6" },
  },
  "dcim/interfaces": {
    bridge: { label: "Bridge interface", help: "Assigned bridge interface" },
    lag: { label: "LAG interface", help: "Assigned LAG interface" },
    mode: {
      label: "802.1Q Mode",
      help: "Access: One untagged VLAN; Tagged: One untagged VLAN and/or one or more tagged VLANs; Tagged (All): Implies all VLANs are available (w/optional untagged VLAN)",
    },
    parent_interface: { help: "Assigned parent interface" },
    tagged_vlans: { label: "Tagged VLANs" },
    untagged_vlan: { label: "Untagged VLAN" },
  },
  "dcim/interface-redundancy-groups": {
    protocol_group_id: {
      label: "Protocol Group ID",
      help: "Specify a group identifier, such as the VRRP group ID.",
    },
    protocol: { label: "Redundancy Protocol" },
  },
  "dcim/interface-redundancy-group-associations": {
    interface: { help: "Choose an interface to add to the Redundancy Group." },
    interface_redundancy_group: { help: "Choose a Interface Redundancy Group." },
    priority: { help: "Specify the interface priority as an integer." },
  },
  "ipam/vrfs": {
    rd: { label: "RD", help: "Route distinguisher in any format" },
  },
  "ipam/aggregates": {
    prefix: { help: "IPv4 or IPv6 network" },
    rir: { label: "RIR", help: "Regional Internet Registry responsible for this prefix" },
  },
  "ipam/prefixes": {
    vlan: { label: "VLAN" },
    vrf: { label: "VRF" },
  },
  "ipam/ip-addresses": {
    vrf: { label: "VRF" },
  },
  "ipam/vlans": {
    group: { help: "VLAN group (optional)" },
    name: { help: "Configured VLAN name" },
    role: { help: "The primary function of this VLAN" },
    site: { help: "Leave blank if this VLAN spans multiple sites" },
    status: { help: "Operational status of this VLAN" },
    vid: { help: "Configured VLAN ID" },
  },
  "ipam/services": {
    ipaddresses: {
      label: "IP addresses",
      help: "IP address assignment is optional. If no IPs are selected, the service is assumed to be reachable via all IPs assigned to the device.",
    },
    ports: {
      help: "Comma-separated list of one or more port numbers. A range may be specified using a hyphen.",
    },
  },
  "virtualization/virtual-machines": {
    local_context_data: {
      help: "Local config context data overwrites all sources contexts in the final rendered config context",
    },
    primary_ip4: { label: "Primary IPv4" },
    primary_ip6: { label: "Primary IPv6" },
  },
  "virtualization/interfaces": {
    bridge: { label: "Bridge interface", help: "Assigned bridge VMinterface" },
    mode: { label: "802.1Q Mode" },
    parent_interface: { help: "Assigned parent VMinterface" },
    tagged_vlans: { label: "Tagged VLANs" },
    untagged_vlan: { label: "Untagged VLAN" },
  },
  "extras/computed-fields": {
    content_type: { label: "Content Type" },
    slug: { help: "Internal name of this field. Please use underscores rather than dashes." },
    template: {
      help: "Jinja2 template code for field value. Use obj to refer to the object to which this computed field is attached.",
    },
  },
  "extras/custom-fields": {
    content_types: { help: "The object(s) to which this field applies." },
    label: { help: "Name of the field as displayed to users." },
    slug: { help: "Internal name of this field. Please use underscores rather than dashes." },
  },
  "extras/custom-links": {
    content_type: { label: "Content Type" },
  },
  "extras/dynamic-groups": {
    content_type: { label: "Content Type" },
  },
  "extras/export-templates": {
    content_type: { label: "Content Type" },
  },
  "extras/relationships": {
    destination_filter: {
      help: "Filterset filter matching the applicable destination objects of the selected type. Enter in JSON format.",
    },
    destination_type: { help: "The destination object type to which this relationship applies." },
    slug: { help: "Internal name of this relationship. Please use underscores rather than dashes." },
    source_filter: {
      help: "Filterset filter matching the applicable source objects of the selected type. Enter in JSON format.",
    },
    source_type: { help: "The source object type to which this relationship applies." },
  },
  "extras/secrets": {
    parameters: { help: "Enter parameters in JSON format." },
  },
  "extras/statuses": {
    content_types: { label: "Content Type(s)" },
  },
  "extras/webhooks": {
    content_types: { label: "Content Type(s)" },
  },
  "dcim/device-types": {
    subdevice_role: { label: "Parent/child status" },
  },
};

/**
 * A field's label and help text in a web form: Nautobot 1.6.32's form text (`FORM_TEXT`) over its OPTIONS
 * text (`fieldText`).
 */
export function formFieldText(
  model: Pick<Model, "app" | "path">,
  name: string,
  fd?: Pick<FieldDef, "label" | "help">,
): { label: string; help?: string } {
  const base = fieldText(model, name, fd);
  const form = FORM_TEXT[`${model.app}/${model.path}`]?.[name];
  const help = form?.help ?? base.help;
  return { label: form?.label ?? base.label, ...(help ? { help } : {}) };
}
