/**
 * Tenancy models: tenant groups and tenants (Nautobot 1.6 `tenancy` app;
 * shared/reference/nautobot-models.md §2D).
 */
import { defineModel, f, type ModelDef } from "../meta.ts";

export const tenantGroup = defineModel({
  app: "tenancy",
  name: "tenantgroup",
  verbose: "tenant group",
  path: "tenant-groups",
  changelog: true,
  customFields: true,
  tree: "parent",
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    parent: f.ofk("tenancy.tenantgroup", "CASCADE"),
    description: f.description(),
    tenant_count: f.count("tenancy.tenant", "group", { tree: true }),
    _depth: f.computed("tree_depth", { type: "integer" }),
  },
  nested: ["name", "slug", "tenant_count", "_depth"],
  ordering: ["name"],
  search: ["name", "slug"],
  filters: {
    parent_id: { kind: "path", path: "parent", key: "id" },
    parent: { kind: "path", path: "parent", key: "slug" },
  },
});

export const tenant = defineModel({
  app: "tenancy",
  name: "tenant",
  verbose: "tenant",
  path: "tenants",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    group: f.fk("tenancy.tenantgroup", "SET_NULL", { nullable: true, rejectNull: true, filterKey: false }),
    description: f.description(),
    comments: f.comments(),
    circuit_count: f.count("circuits.circuit", "tenant"),
    device_count: f.count("dcim.device", "tenant"),
    ipaddress_count: f.count("ipam.ipaddress", "tenant"),
    prefix_count: f.count("ipam.prefix", "tenant"),
    rack_count: f.count("dcim.rack", "tenant"),
    site_count: f.count("dcim.site", "tenant"),
    virtualmachine_count: f.count("virtualization.virtualmachine", "tenant"),
    vlan_count: f.count("ipam.vlan", "tenant"),
    vrf_count: f.count("ipam.vrf", "tenant"),
    cluster_count: f.count("virtualization.cluster", "tenant"),
  },
  nested: ["name", "slug"],
  ordering: ["group", "name"],
  search: ["comments", "description", "name", "slug"],
  filters: {
    group_id: { kind: "path", path: "group", key: "id", tree: true },
    group: { kind: "path", path: "group", key: "slug", tree: true },
  },
});

/**
 * Tenancy filters shared by every model with a `tenant` FK (Nautobot TenancyModelFilterSetMixin):
 * `tenant_group_id` / `tenant_group` (tree) besides the automatic `tenant` / `tenant_id`.
 */
export const tenancyFilters = {
  tenant_group_id: { kind: "path", path: "tenant.group", key: "id", tree: true },
  tenant_group: { kind: "path", path: "tenant.group", key: "slug", tree: true },
} as const;

export const models: ModelDef[] = [tenantGroup, tenant];
