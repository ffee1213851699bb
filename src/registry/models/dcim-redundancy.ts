/**
 * Device and interface redundancy groups (Nautobot 1.6.32 `DeviceRedundancyGroup`,
 * `InterfaceRedundancyGroup`, `InterfaceRedundancyGroupAssociation`; serializers in
 * `nautobot/dcim/api/serializers.py`, shapes compared against a running Nautobot 1.6.32 at API 1.2).
 */
import { defineModel, f, type ModelDef } from "../meta.ts";

/** Nautobot 1.6 `DeviceRedundancyGroupFailoverStrategyChoices`. */
export const FAILOVER_STRATEGIES = [
  ["", "(unspecified)"],
  ["active-active", "Active/Active"],
  ["active-passive", "Active/Passive"],
] as const;

/** Nautobot 1.6 `InterfaceRedundancyGroupProtocolChoices`. */
export const REDUNDANCY_PROTOCOLS = [
  ["hsrp", "HSRP"],
  ["vrrp", "VRRP"],
  ["glbp", "GLBP"],
  ["carp", "CARP"],
] as const;

export const deviceRedundancyGroup = defineModel({
  app: "dcim",
  name: "deviceredundancygroup",
  verbose: "device redundancy group",
  path: "device-redundancy-groups",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { unique: true }) },
    description: f.description(),
    failover_strategy: {
      ...f.choice(FAILOVER_STRATEGIES, { default: "" }),
      nestedAuto: { required: false },
    },
    // Nautobot 1.6 `DeviceRedundancyGroupSerializer`: a plain `PrimaryKeyRelatedField` (a bare id).
    secrets_group: { ...f.ofk("extras.secretsgroup", "SET_NULL"), asId: true },
    comments: f.comments(),
    status: f.status(),
  },
  // Nautobot 1.6 `NestedDeviceRedundancyGroupSerializer`: name, slug, failover_strategy.
  nested: ["name", "slug", "failover_strategy"],
  // Nautobot 1.6 `DeviceRedundancyGroupSerializer`: `status` (from its mixin) after the timestamps.
  keyOrder: [
    "id",
    "display",
    "url",
    "name",
    "slug",
    "description",
    "failover_strategy",
    "secrets_group",
    "comments",
    "created",
    "last_updated",
    "status",
  ],
  ordering: ["name"],
  search: ["comments", "name"],
  features: ["statuses"],
});

export const interfaceRedundancyGroup = defineModel({
  app: "dcim",
  name: "interfaceredundancygroup",
  verbose: "interface redundancy group",
  path: "interface-redundancy-groups",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    description: f.description(),
    protocol: {
      // Nautobot 1.6 `InterfaceRedundancyGroupSerializer`: required, not blank.
      ...f.choice(REDUNDANCY_PROTOCOLS, { required: true }),
      // The model field (`blank=True`, verbose_name "Redundancy Protocol") as the nested serializer has it.
      nestedAuto: { label: "Redundancy Protocol", required: false },
    },
    protocol_group_id: f.str(50, { default: "" }),
    secrets_group: f.ofk("extras.secretsgroup", "SET_NULL"),
    virtual_ip: f.ofk("ipam.ipaddress", "CASCADE"),
    status: f.status(),
    interfaces: f.computed("reverse_nested", {
      type: "field",
      of: { model: "dcim.interfaceredundancygroupassociation", via: "interface_redundancy_group" },
    }),
  },
  // Nautobot 1.6 `NestedInterfaceRedundancyGroupSerializer`: name, protocol.
  nested: ["name", "protocol"],
  // Nautobot's serializer lists `fields = "__all__"`; this is the order it renders.
  keyOrder: [
    "id",
    "display",
    "relationships",
    "computed_fields",
    "custom_fields",
    "notes_url",
    "tags",
    "status",
    "url",
    "protocol",
    "interfaces",
    "virtual_ip",
    "secrets_group",
    "last_updated",
    "name",
    "created",
    "description",
    "protocol_group_id",
  ],
  ordering: ["name"],
  search: ["name"],
  features: ["statuses"],
});

export const interfaceRedundancyGroupAssociation = defineModel({
  app: "dcim",
  name: "interfaceredundancygroupassociation",
  verbose: "interface redundancy group association",
  path: "interface-redundancy-group-associations",
  changelog: true,
  tags: true,
  fields: {
    interface_redundancy_group: f.rfk("dcim.interfaceredundancygroup", "CASCADE"),
    interface: f.rfk("dcim.interface", "CASCADE"),
    priority: f.int({ required: true, min: 0, max: 32767 }),
  },
  nested: ["interface_redundancy_group", "interface", "priority"],
  keyOrder: [
    "id",
    "display",
    "tags",
    "url",
    "interface",
    "interface_redundancy_group",
    "created",
    "last_updated",
    "priority",
  ],
  displayUses: ["interface_redundancy_group", "interface"],
  // Nautobot 1.6 `InterfaceRedundancyGroupAssociation.__str__`: "<group>: <device> <interface>: <priority>".
  display: (r, rel) => {
    const iface = rel.interface as { display?: string; device?: { display?: string } } | null;
    const dev = iface?.device?.display;
    return `${(rel.interface_redundancy_group as { display?: string } | null)?.display ?? ""}: ${dev ? `${dev} ` : ""}${iface?.display ?? ""}: ${r.priority}`;
  },
  ordering: ["interface_redundancy_group", "-priority"],
  search: [],
  uniqueTogether: [{ fields: ["interface_redundancy_group", "interface"] }],
  // A relationship content type in Nautobot 1.6 (registry `model_features["relationships"]`), though its
  // serializer has no `relationships` key.
  features: ["relationships"],
});

export const models: ModelDef[] = [
  deviceRedundancyGroup,
  interfaceRedundancyGroup,
  interfaceRedundancyGroupAssociation,
];
