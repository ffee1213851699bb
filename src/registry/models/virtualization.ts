/**
 * Virtualization models: cluster types and groups, clusters, virtual machines, VM interfaces
 * (Nautobot 1.6 `virtualization` app; shared/reference/nautobot-models.md §2E).
 */
import { INTERFACE_MODES } from "../choices/dcim.ts";
import { defineModel, f, type ModelDef } from "../meta.ts";
import { checkLocation, checkPrimaryIps } from "./dcim.ts";
import { checkVlans } from "./dcim-components.ts";
import { tenancyFilters } from "./tenancy.ts";

const org = (name: string, verbose: string, path: string) =>
  defineModel({
    app: "virtualization",
    name,
    verbose,
    path,
    changelog: true,
    customFields: true,
    fields: {
      name: f.name(100, { unique: true }),
      slug: f.slug("name", { unique: true }),
      description: f.description(),
      cluster_count: f.count("virtualization.cluster", name === "clustertype" ? "type" : "group"),
    },
    nested: ["name", "slug", "cluster_count"],
    ordering: ["name"],
    search: ["name", "slug"],
  });

export const clusterType = org("clustertype", "cluster type", "cluster-types");
export const clusterGroup = org("clustergroup", "cluster group", "cluster-groups");

export const cluster = defineModel({
  app: "virtualization",
  name: "cluster",
  // Nautobot 1.6 `ClusterSerializer.Meta.fields`: tags before the counts.
  keyOrder: [
    "id",
    "display",
    "url",
    "name",
    "type",
    "group",
    "tenant",
    "site",
    "location",
    "comments",
    "tags",
  ],
  verbose: "cluster",
  path: "clusters",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    type: f.rfk("virtualization.clustertype", "PROTECT"),
    group: f.ofk("virtualization.clustergroup", "PROTECT"),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    site: f.ofk("dcim.site", "PROTECT"),
    location: f.ofk("dcim.location", "PROTECT"),
    comments: f.comments(),
    device_count: f.count("dcim.device", "cluster"),
    virtualmachine_count: f.count("virtualization.virtualmachine", "cluster"),
  },
  nested: ["name", "virtualmachine_count"],
  ordering: ["name"],
  search: ["comments", "name"],
  features: ["locations"],
  filters: {
    region_id: { kind: "path", path: "site.region", key: "id", tree: true },
    region: { kind: "path", path: "site.region", key: "slug", tree: true },
    has_virtual_machines: { kind: "has", model: "virtualization.virtualmachine", via: "cluster" },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 Cluster.clean(): host devices stay in the cluster's site. */
  async validate(a) {
    await checkLocation(a, "virtualization.cluster", "Clusters");
    if (a.before && a.data.site) {
      const bad = (await a.find("dcim.device", { cluster: a.data.id })).filter(
        (dv) => dv.site !== a.data.site,
      );
      if (bad.length) {
        const s = await a.get("dcim.site", a.data.site);
        a.error(
          "site",
          `${bad.length} devices are assigned as hosts for this cluster but are not in site ${s?.name}`,
        );
      }
    }
  },
});

export const virtualMachine = defineModel({
  app: "virtualization",
  name: "virtualmachine",
  verbose: "virtual machine",
  path: "virtual-machines",
  changelog: true,
  customFields: true,
  tags: true,
  configContext: true,
  serviceValidate: "localContext",
  fields: {
    name: f.name(64, { natural: true }),
    status: f.status(),
    site: {
      ...f.computed("via", { type: "nested object", target: { model: "dcim.site" } }),
      path: "cluster.site",
    } as never,
    location: {
      ...f.computed("via", { type: "nested object", target: { model: "dcim.location" } }),
      path: "cluster.location",
    } as never,
    cluster: f.rfk("virtualization.cluster", "PROTECT"),
    role: f.ofk("dcim.devicerole", "PROTECT", { limitTo: { vm_role: true } }),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    platform: f.ofk("dcim.platform", "SET_NULL"),
    primary_ip: f.computed("primary_ip", { type: "nested object", target: { model: "ipam.ipaddress" } }),
    primary_ip4: f.ofk("ipam.ipaddress", "SET_NULL", { unique: true, filterKey: false }),
    primary_ip6: f.ofk("ipam.ipaddress", "SET_NULL", { unique: true, filterKey: false }),
    vcpus: f.int({ nullable: true, min: 0, max: 32767 }),
    memory: f.int({ nullable: true, min: 0, max: 2_147_483_647 }),
    disk: f.int({ nullable: true, min: 0, max: 2_147_483_647 }),
    comments: f.comments(),
    local_context_data: f.json({ nullable: true, object: true }),
    local_context_schema: f.ofk("extras.configcontextschema", "SET_NULL"),
    config_context: f.computed("config_context", { type: "json" }),
  },
  nested: ["name"],
  ordering: ["name"],
  search: ["comments", "name"],
  features: ["statuses"],
  uniqueTogether: [
    {
      fields: ["cluster", "tenant", "name"],
      message: "A virtual machine with this name already exists in the assigned cluster.",
      errorKey: "__all__",
      skipNulls: false,
    },
  ],
  filters: {
    cluster_group_id: { kind: "path", path: "cluster.group", key: "id" },
    cluster_group: { kind: "path", path: "cluster.group", key: "slug" },
    location: { kind: "path", path: "cluster.location", key: "slug" },
    local_context_data: { kind: "notnull", field: "local_context_data" },
    cluster_type_id: { kind: "path", path: "cluster.type", key: "id" },
    cluster_type: { kind: "path", path: "cluster.type", key: "slug" },
    site_id: { kind: "path", path: "cluster.site", key: "id" },
    site: { kind: "path", path: "cluster.site", key: "slug" },
    region_id: { kind: "path", path: "cluster.site.region", key: "id", tree: true },
    region: { kind: "path", path: "cluster.site.region", key: "slug", tree: true },
    has_primary_ip: { kind: "custom", fn: "has_primary_ip" },
    has_interfaces: { kind: "has", model: "virtualization.vminterface", via: "virtual_machine" },
    ...tenancyFilters,
  },
  /** Nautobot 1.6 VirtualMachine.clean()/validate_unique(). */
  async validate(a) {
    if (a.data.name && !a.data.tenant) {
      const same = (
        await a.find("virtualization.virtualmachine", {
          cluster: a.data.cluster,
          name: a.data.name,
          tenant: null,
        })
      ).filter((x) => x.id !== a.data.id);
      if (same.length)
        a.error("__all__", "A virtual machine with this name already exists in the assigned cluster.");
    }
    await checkPrimaryIps(a, "virtualization.vminterface", "virtual_machine", false);
  },
});

export const vmInterface = defineModel({
  app: "virtualization",
  name: "vminterface",
  verbose: "VM interface",
  path: "interfaces",
  // Nautobot's VMInterface is a BaseModel with its own `to_objectchange`: logged, without timestamps.
  changeLogged: true,
  customFields: true,
  tags: true,
  fields: {
    virtual_machine: f.rfk("virtualization.virtualmachine", "CASCADE", { filterKey: "name" }),
    name: f.name(64, { natural: true }),
    enabled: f.bool(true),
    // Nautobot 1.6: a required status from API 1.4; `VMInterfaceSerializerVersion12` (API 1.2 and 1.3) has none on the
    // wire (a given status is ignored) and a new interface is `active`.
    // Every REST write that gives no status makes it `active`, updates included and at every version
    // (`VMInterfaceSerializerVersion12.validate`, inherited by the 1.4+ `VMInterfaceSerializer`).
    status: { ...f.status(), default: "active", versions: { since: "1.4" }, defaultOnWrite: true },
    parent_interface: f.ofk("virtualization.vminterface", "CASCADE", {
      filterKey: "name",
      relatedName: "child_interfaces",
    }),
    bridge: f.ofk("virtualization.vminterface", "SET_NULL", {
      filterKey: "name",
      relatedName: "bridged_interfaces",
    }),
    mtu: f.int({ nullable: true, min: 1, max: 65536 }),
    mac_address: f.mac({ nullable: true }),
    description: f.description(),
    mode: f.choice(INTERFACE_MODES),
    untagged_vlan: f.ofk("ipam.vlan", "SET_NULL", { filterKey: "vid" }),
    tagged_vlans: f.m2m("ipam.vlan", { filterKey: "vid" }),
  },
  nested: ["virtual_machine", "name"],
  ordering: ["virtual_machine", "name"],
  search: ["name"],
  uniqueTogether: [{ fields: ["virtual_machine", "name"] }],
  features: ["statuses"],
  filters: {
    cluster_id: { kind: "path", path: "virtual_machine.cluster", key: "id" },
    cluster: { kind: "path", path: "virtual_machine.cluster", key: "name" },
    has_tagged_vlans: {
      kind: "has",
      model: "virtualization.vminterface",
      via: "tagged_vlans",
      forward: true,
    },
    // Nautobot 1.6 `VMInterfaceFilterSet`: the IP addresses assigned to the interface.
    has_ip_addresses: { kind: "has", model: "ipam.ipaddress", via: "assigned_object" },
    ip_addresses: { kind: "reverse", model: "ipam.ipaddress", via: "assigned_object", key: "address" },
  },
  /** BaseInterface rules for VM interfaces (status defaults to active in API 1.2). */
  async validate(a) {
    if (!a.data.status) a.data.status = "active";
    await checkVlans(a, async () => {
      const vm = await a.get("virtualization.virtualmachine", a.data.virtual_machine);
      const c = vm ? await a.get("virtualization.cluster", vm.cluster) : undefined;
      return (c?.site as string | null) ?? null;
    });
  },
});

export const models: ModelDef[] = [clusterType, clusterGroup, cluster, virtualMachine, vmInterface];
