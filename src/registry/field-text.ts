import type { Model } from "./index.ts";
import type { FieldDef } from "./meta.ts";

/**
 * Labels and help texts of fields as Nautobot 1.6.32 shows them in OPTIONS where they differ from the
 * generic ones (its models' `verbose_name` and `help_text`), read from a running Nautobot 1.6.32 at API 1.2
 * on 2026-11-25, keyed by `app/path` and field name. A field's own `label`/`help` in its declaration wins.
 */
export const FIELD_TEXT: Readonly<
  Record<string, Readonly<Record<string, { label?: string; help?: string }>>>
> = {
  "circuits/circuit-terminations": {
    port_speed: { label: "Port speed (Kbps)" },
    pp_info: { label: "Patch panel/port(s)" },
    upstream_speed: { label: "Upstream speed (Kbps)", help: "Upstream speed, if different from port speed" },
    xconnect_id: { label: "Cross-connect ID" },
  },
  "circuits/circuits": {
    commit_rate: { label: "Commit rate (Kbps)" },
    install_date: { label: "Date installed" },
  },
  "circuits/providers": {
    account: { label: "Account number" },
    asn: { help: "32-bit autonomous system number" },
    noc_contact: { label: "NOC contact" },
    portal_url: { label: "Portal URL" },
  },
  "dcim/console-port-templates": {
    label: { help: "Physical label" },
  },
  "dcim/console-ports": {
    label: { help: "Physical label" },
  },
  "dcim/console-server-port-templates": {
    label: { help: "Physical label" },
  },
  "dcim/console-server-ports": {
    label: { help: "Physical label" },
  },
  "dcim/device-bay-templates": {
    label: { help: "Physical label" },
  },
  "dcim/device-bays": {
    label: { help: "Physical label" },
  },
  "dcim/device-roles": {
    vm_role: { label: "VM Role", help: "Virtual machines may be assigned to this role" },
  },
  "dcim/device-types": {
    is_full_depth: { help: "Device consumes both front and rear rack faces" },
    part_number: { help: "Discrete part number (optional)" },
    u_height: { label: "Height (U)" },
  },
  "dcim/devices": {
    asset_tag: { help: "A unique tag used to identify this device" },
    device_redundancy_group_priority: { label: "Device Redundancy Group Priority" },
    position: { label: "Position (U)", help: "The lowest-numbered unit occupied by the device" },
    serial: { label: "Serial number" },
  },
  "dcim/front-port-templates": {
    label: { help: "Physical label" },
  },
  "dcim/front-ports": {
    label: { help: "Physical label" },
  },
  "dcim/interface-redundancy-groups": {
    _custom_field_data: { label: " custom field data" },
  },
  "dcim/interface-templates": {
    label: { help: "Physical label" },
    mgmt_only: { label: "Management only" },
  },
  "dcim/interfaces": {
    label: { help: "Physical label" },
    mac_address: { label: "MAC Address" },
    mgmt_only: { label: "Management only", help: "This interface is used only for out-of-band management" },
    mtu: { label: "MTU" },
    status: { label: "Status" },
  },
  "dcim/inventory-items": {
    asset_tag: { help: "A unique tag used to identify this item" },
    discovered: { help: "This item was automatically discovered" },
    label: { help: "Physical label" },
    part_id: { label: "Part ID", help: "Manufacturer-assigned part identifier" },
    serial: { label: "Serial number" },
  },
  "dcim/location-types": {
    nestable: {
      help: "Allow Locations of this type to be parents/children of other Locations of this same type",
    },
  },
  "dcim/platforms": {
    napalm_args: {
      label: "NAPALM arguments",
      help: "Additional arguments to pass when initiating the NAPALM driver (JSON format)",
    },
    napalm_driver: {
      label: "NAPALM driver",
      help: "The name of the NAPALM driver to use when Nautobot internals interact with devices",
    },
    network_driver: {
      help: "The normalized network driver to use when interacting with devices, e.g. cisco_ios, arista_eos, etc. Library-specific driver names will be derived from this setting as appropriate",
    },
  },
  "dcim/power-feeds": {
    max_utilization: { help: "Maximum permissible draw (percentage)" },
  },
  "dcim/power-outlet-templates": {
    label: { help: "Physical label" },
  },
  "dcim/power-outlets": {
    label: { help: "Physical label" },
  },
  "dcim/power-port-templates": {
    allocated_draw: { help: "Allocated power draw (watts)" },
    label: { help: "Physical label" },
    maximum_draw: { help: "Maximum power draw (watts)" },
  },
  "dcim/power-ports": {
    allocated_draw: { help: "Allocated power draw (watts)" },
    label: { help: "Physical label" },
    maximum_draw: { help: "Maximum power draw (watts)" },
  },
  "dcim/racks": {
    asset_tag: { help: "A unique tag used to identify this rack" },
    desc_units: { label: "Descending units", help: "Units are numbered top-to-bottom" },
    facility_id: { help: "Locally-assigned identifier" },
    outer_depth: { help: "Outer dimension of rack (depth)" },
    outer_width: { help: "Outer dimension of rack (width)" },
    serial: { label: "Serial number" },
    u_height: { label: "Height (U)", help: "Height in rack units" },
  },
  "dcim/rear-port-templates": {
    label: { help: "Physical label" },
  },
  "dcim/rear-ports": {
    label: { help: "Physical label" },
  },
  "dcim/sites": {
    asn: { label: "ASN", help: "32-bit autonomous system number" },
    contact_email: { label: "Contact E-mail" },
    facility: { help: "Local facility ID or description" },
    latitude: { help: "GPS coordinate (latitude)" },
    longitude: { help: "GPS coordinate (longitude)" },
  },
  "extras/computed-fields": {
    label: { help: "Name of the field as displayed to users" },
    slug: { help: "Internal field name. Please use underscores rather than dashes in this slug." },
  },
  "extras/custom-fields": {
    name: { help: "Human-readable unique name of this field." },
    default: {
      help: 'Default value for the field (must be a JSON value). Encapsulate strings with double quotes (e.g. "Foo").',
    },
    description: { help: "A helpful description for this field." },
    required: {
      help: "If true, this field is required when creating new objects or editing an existing object.",
    },
    slug: { help: "Internal field name. Please use underscores rather than dashes in this slug." },
    validation_maximum: { label: "Maximum value", help: "Maximum allowed value (for numeric fields)." },
    validation_minimum: { label: "Minimum value", help: "Minimum allowed value (for numeric fields)." },
    validation_regex: {
      help: "Regular expression to enforce on text field values. Use ^ and $ to force matching of entire string. For example, <code>^[A-Z]{3}$</code> will limit values to exactly three uppercase letters. Regular expression on select and multi-select will be applied at <code>Custom Field Choices</code> definition.",
    },
    weight: { help: "Fields with higher weights appear lower in a form." },
  },
  "extras/custom-links": {
    button_class: { help: "The class of the first link in a group will be used for the dropdown button" },
    group_name: { help: "Links with the same group will appear as a dropdown menu" },
    new_window: { help: "Force link to open in a new window" },
    target_url: {
      help: "Jinja2 template code for link URL. Reference the object as <code>{{ obj }}</code> such as <code>{{ obj.platform.slug }}</code>.",
    },
    text: {
      help: "Jinja2 template code for link text. Reference the object as <code>{{ obj }}</code> such as <code>{{ obj.platform.slug }}</code>. Links which render as empty text will not be displayed.",
    },
  },
  "extras/export-templates": {
    file_extension: { help: "Extension to append to the rendered filename" },
    mime_type: { label: "MIME type", help: "Defaults to <code>text/plain</code>" },
    template_code: {
      help: "The list of objects being exported is passed as a context variable named <code>queryset</code>.",
    },
  },
  "extras/relationships": {
    destination_filter: {
      help: "Filterset filter matching the applicable destination objects of the selected type",
    },
    destination_hidden: {
      label: "Hide for destination object",
      help: "Hide this relationship on the destination object.",
    },
    destination_label: {
      label: "Destination Label",
      help: "Label for related source objects, as displayed on the destination object.",
    },
    name: { help: "Name of the relationship as displayed to users" },
    required_on: {
      help: "Objects on the specified side MUST implement this relationship. Not permitted for symmetric relationships.",
    },
    slug: { help: "Internal relationship name. Please use underscores rather than dashes in this slug." },
    source_filter: { help: "Filterset filter matching the applicable source objects of the selected type" },
    source_hidden: { label: "Hide for source object", help: "Hide this relationship on the source object." },
    source_label: {
      label: "Source Label",
      help: "Label for related destination objects, as displayed on the source object.",
    },
    type: { help: "Cardinality of this relationship" },
  },
  "extras/tags": {
    content_types: { label: "Content types" },
  },
  "extras/webhooks": {
    additional_headers: {
      help: "User-supplied HTTP headers to be sent with the request in addition to the HTTP content type. Headers should be defined in the format <code>Name: Value</code>. Jinja2 template processing is support with the same context as the request body (below).",
    },
    body_template: {
      help: "Jinja2 template for a custom request body. If blank, a JSON object representing the change will be included. Available context data includes: <code>event</code>, <code>model</code>, <code>timestamp</code>, <code>username</code>, <code>request_id</code>, and <code>data</code>.",
    },
    ca_file_path: {
      label: "CA File Path",
      help: "The specific CA certificate file to use for SSL verification. Leave blank to use the system defaults.",
    },
    http_content_type: {
      label: "HTTP content type",
      help: 'The complete list of official content types is available <a href="https://www.iana.org/assignments/media-types/media-types.xhtml">here</a>.',
    },
    http_method: { label: "HTTP method" },
    payload_url: { help: "A POST will be sent to this URL when the webhook is called." },
    secret: {
      help: "When provided, the request will include a 'X-Hook-Signature' header containing a HMAC hex digest of the payload body using the secret as the key. The secret is not transmitted in the request.",
    },
    ssl_verification: {
      label: "SSL verification",
      help: "Enable SSL certificate verification. Disable with caution!",
    },
    type_create: { help: "Call this webhook when a matching object is created." },
    type_delete: { help: "Call this webhook when a matching object is deleted." },
    type_update: { help: "Call this webhook when a matching object is updated." },
  },
  "ipam/ip-addresses": {
    dns_name: { label: "DNS Name", help: "Hostname or FQDN (not case-sensitive)" },
  },
  "ipam/prefixes": {
    is_pool: { label: "Is a pool", help: "All IP addresses within this prefix are considered usable" },
  },
  "ipam/rirs": {
    is_private: { label: "Private", help: "IP space managed by this RIR is considered private" },
  },
  "ipam/route-targets": {
    name: { help: "Route target value (formatted in accordance with RFC 4360)" },
  },
  "ipam/vrfs": {
    enforce_unique: {
      label: "Enforce unique space",
      help: "Prevent duplicate prefixes/IP addresses within this VRF",
    },
    rd: { help: "Unique route distinguisher (as defined in RFC 4364)" },
  },
  "users/permissions": {
    actions: { help: "The list of actions granted by this permission" },
    constraints: { help: "Queryset filter matching the applicable objects of the selected type(s)" },
  },
  "users/tokens": {
    write_enabled: { help: "Permit create/update/delete operations using this key" },
  },
  "users/users": {
    email: { label: "Email address" },
    is_active: {
      label: "Active",
      help: "Designates whether this user should be treated as active. Unselect this instead of deleting accounts.",
    },
    is_staff: { label: "Staff status", help: "Designates whether the user can log into this admin site." },
    username: { help: "Required. 150 characters or fewer. Letters, digits and @/./+/-/_ only." },
  },
  "virtualization/interfaces": {
    mac_address: { label: "MAC Address" },
    mtu: { label: "MTU" },
    status: { label: "Status" },
  },
  "virtualization/virtual-machines": {
    disk: { label: "Disk (GB)" },
    memory: { label: "Memory (MB)" },
    vcpus: { label: "VCPUs" },
  },
};

/**
 * The `description` of a model's API view in OPTIONS, where Nautobot 1.6.32 gives one (DRF's
 * `get_view_description`: the view class's docstring), read from a running Nautobot 1.6.32 on 2026-11-27,
 * keyed by `app/path`; other models' views have none ("").
 */
export const VIEW_DESCRIPTION: Readonly<Record<string, string>> = {
  "extras/statuses": "View and manage custom status choices for objects with a `status` field.",
  // Nautobot 1.6 `ConnectedDeviceViewSet`'s docstring, as DRF's `get_view_description` gives it.
  "dcim/connected-device": [
    "This endpoint allows a user to determine what device (if any) is connected to a given peer device and peer",
    "interface. This is useful in a situation where a device boots with no configuration, but can detect its neighbors",
    "via a protocol such as LLDP. Two query parameters must be included in the request:",
    "",
    "* `peer_device`: The name of the peer device",
    "* `peer_interface`: The name of the peer interface",
  ].join("\n"),
  "extras/webhooks": "Manage Webhooks through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/object-changes": "Retrieve a list of recent changes.",
  "extras/content-types":
    "Read-only list of ContentTypes. Limit results to ContentTypes pertinent to Nautobot objects.",
  "extras/computed-fields": "Manage Computed Fields through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/custom-links": "Manage Custom Links through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/dynamic-groups": "Manage Dynamic Groups through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/dynamic-group-memberships":
    "Manage Dynamic Group Memberships through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/secrets": "Manage Secrets through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/secrets-groups": "Manage Secrets Groups through DELETE, GET, POST, PUT, and PATCH requests.",
  "extras/secrets-groups-associations":
    "Manage Secrets Group Associations through DELETE, GET, POST, PUT, and PATCH requests.",
};

/**
 * A field's label and help text as Nautobot 1.6.32 shows them (OPTIONS `label`/`help_text`, which are its
 * model fields' `verbose_name`/`help_text` and so also its forms' labels): `FIELD_TEXT` first, then the
 * field's declared `label`/`help`, else the name with `_` as spaces and the first letter upper case (DRF's
 * `capfirst`). One source for OPTIONS (http/options.ts) and the web forms (ui/forms.ts, issue 25).
 */
export function fieldText(
  model: Pick<Model, "app" | "path">,
  name: string,
  fd?: Pick<FieldDef, "label" | "help">,
): { label: string; help?: string } {
  const text = FIELD_TEXT[`${model.app}/${model.path}`]?.[name];
  const label = text?.label ?? fd?.label ?? (name.charAt(0).toUpperCase() + name.slice(1)).replace(/_/g, " ");
  const help = text?.help ?? fd?.help;
  return help ? { label, help } : { label };
}
