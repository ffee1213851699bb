/**
 * Filters too specific for the generic filter kinds (`{kind: "custom", fn}` in a model declaration).
 * Each entry builds a filter from its declaration; the semantics are Nautobot 1.6's (filters.py of the
 * app), stated per entry.
 */
import { type RawBuilder, sql } from "kysely";
import { VIRTUAL_INTERFACE_TYPES, WIRELESS_INTERFACE_TYPES } from "../registry/choices/dcim.ts";
import type { FilterDef } from "../registry/meta.ts";
import { storedTime } from "../store/values.ts";
import { contentTypeFilter } from "./content-type-filters.ts";
import type { Filter, FilterEnv } from "./filters.ts";

type Cond = RawBuilder<boolean>;

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const TRUE = new Set(["true", "True", "1"]);
const FALSE = new Set(["false", "False", "0"]);
const list = (values: string[]) => sql.join(values.length ? values : ["__none__"]);
const bool = (values: string[]) => {
  const v = values[values.length - 1] ?? "";
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
};

/**
 * Validate UUID values; records Django's UUIDField message "Enter a valid UUID." (what Nautobot answers for
 * `device_with_common_vc`, `available_on_device`; a 500 for the method filters by id) and returns undefined
 * on a bad one.
 */
function uuids(env: FilterEnv, param: string, values: string[]): string[] | undefined {
  for (const v of values) {
    if (!UUID_RE.test(v)) {
      env.error(param, "Enter a valid UUID.");
      return undefined;
    }
  }
  return values.map((v) => v.toLowerCase());
}

/**
 * A filter from a function of (values, env) → condition. Blank values are dropped first and a filter given
 * only blanks is left out, as django-filter skips EMPTY_VALUES before a filter's method runs (issue 24).
 */
const make =
  (fn: (values: string[], env: FilterEnv, def: FilterDef) => Promise<Cond | undefined> | Cond | undefined) =>
  (def: FilterDef): Filter => ({
    apply: async (values, env) => {
      const given = values.filter((v) => v.trim() !== "");
      return given.length ? fn(given, env, def) : undefined;
    },
  });

/** IPs assigned to interfaces of the given devices (by id or name). */
const ipOnDevices = (by: "id" | "name") =>
  make((values, env, def) => {
    const ids = by === "id" ? uuids(env, String(def.param), values) : values;
    if (!ids) return undefined;
    const devCond = by === "id" ? sql`d.id IN (${list(ids)})` : sql`d.name IN (${list(ids)})`;
    return sql<boolean>`(t.assigned_object_type = 'dcim.interface' AND t.assigned_object_id IN (SELECT i.id FROM dcim_interface i JOIN dcim_device d ON d.id = i.device_id WHERE ${devCond}))`;
  });

/** IPs assigned to interfaces of the given VMs (by id or name). */
const ipOnVms = (by: "id" | "name") =>
  make((values, env, def) => {
    const ids = by === "id" ? uuids(env, String(def.param), values) : values;
    if (!ids) return undefined;
    const vmCond = by === "id" ? sql`v.id IN (${list(ids)})` : sql`v.name IN (${list(ids)})`;
    return sql<boolean>`(t.assigned_object_type = 'virtualization.vminterface' AND t.assigned_object_id IN (SELECT i.id FROM virtualization_vminterface i JOIN virtualization_virtualmachine v ON v.id = i.virtual_machine_id WHERE ${vmCond}))`;
  });

/** IPs assigned to the given interfaces (by id or name). */
const ipOnIface = (type: "dcim.interface" | "virtualization.vminterface", by: "id" | "name") =>
  make((values, env, def) => {
    if (by === "id") {
      const ids = uuids(env, String(def.param), values);
      if (!ids) return undefined;
      return sql<boolean>`(t.assigned_object_type = ${type} AND t.assigned_object_id IN (${list(ids)}))`;
    }
    const table = type === "dcim.interface" ? "dcim_interface" : "virtualization_vminterface";
    return sql<boolean>`(t.assigned_object_type = ${type} AND t.assigned_object_id IN (SELECT id FROM ${sql.table(table)} WHERE name IN (${list(values)})))`;
  });

/** Cables with either end on an interface/port of the given devices. */
const cableOnDevices = (
  by: "id" | "name" | "site_id" | "site" | "rack_id" | "rack" | "tenant_id" | "tenant",
) =>
  make((values, env, def) => {
    let devices: Cond;
    if (by === "id") {
      const ids = uuids(env, String(def.param), values);
      if (!ids) return undefined;
      devices = sql<boolean>`d.id IN (${list(ids)})`;
    } else if (by === "name") devices = sql<boolean>`d.name IN (${list(values)})`;
    else if (by === "site_id") {
      const ids = uuids(env, String(def.param), values);
      if (!ids) return undefined;
      devices = sql<boolean>`d.site_id IN (${list(ids)})`;
    } else if (by === "rack_id" || by === "tenant_id") {
      const ids = uuids(env, String(def.param), values);
      if (!ids) return undefined;
      devices = sql<boolean>`${sql.ref(`d.${by}`)} IN (${list(ids)})`;
    } else if (by === "rack")
      devices = sql<boolean>`d.rack_id IN (SELECT id FROM dcim_rack WHERE name IN (${list(values)}))`;
    else if (by === "tenant")
      devices = sql<boolean>`d.tenant_id IN (SELECT id FROM tenancy_tenant WHERE slug IN (${list(values)}))`;
    else devices = sql<boolean>`d.site_id IN (SELECT id FROM dcim_site WHERE slug IN (${list(values)}))`;
    const tables = [
      "dcim_interface",
      "dcim_frontport",
      "dcim_rearport",
      "dcim_consoleport",
      "dcim_consoleserverport",
      "dcim_powerport",
      "dcim_poweroutlet",
    ];
    const parts = tables.map(
      (tb) =>
        sql`SELECT c.cable_id FROM ${sql.table(tb)} c JOIN dcim_device d ON d.id = c.device_id WHERE c.cable_id IS NOT NULL AND ${devices}`,
    );
    return sql<boolean>`t.id IN (${sql.join(parts, sql` UNION `)})`;
  });

/** A bound on the `time` column from an ISO 8601 date or date-time; bad values are errors. */
function timeBound(op: ">=" | "<=") {
  return make((values, env, def) => {
    const conds: Cond[] = [];
    for (const v of values) {
      const d = new Date(v);
      if (!/^\d{4}-\d\d-\d\d/.test(v) || Number.isNaN(d.getTime())) {
        env.error(String(def.param), "Enter a valid date/time.");
        return undefined;
      }
      conds.push(sql<boolean>`t.time ${sql.raw(op)} ${storedTime(d)}`);
    }
    return conds.length ? sql<boolean>`(${sql.join(conds, sql` AND `)})` : undefined;
  });
}

/**
 * VRF membership including route-target leaking (Nautobot present_in_vrf). A ModelChoiceFilter: a value
 * that names no VRF (malformed or unknown id, unknown RD) is Django's "Select a valid choice. That choice
 * is not one of the available choices."
 */
const presentInVrf = (by: "id" | "rd") =>
  make(async (values, env, def) => {
    const v = (values[values.length - 1] ?? "").trim();
    const row =
      UUID_RE.test(v) || by === "rd"
        ? await env.db
            .selectFrom("ipam_vrf")
            .select("id")
            .where(by === "id" ? "id" : "rd", "=", by === "id" ? v.toLowerCase() : v)
            .executeTakeFirst()
        : undefined;
    if (!row) {
      env.error(String(def.param), "Select a valid choice. That choice is not one of the available choices.");
      return undefined;
    }
    const vrfId = row.id as string;
    return sql<boolean>`(t.vrf_id = ${vrfId} OR t.vrf_id IN (SELECT e.source_id FROM ipam_vrf_export_targets e WHERE e.target_id IN (SELECT i.target_id FROM ipam_vrf_import_targets i WHERE i.source_id = ${vrfId})))`;
  });

export const CUSTOM_FILTERS: Record<string, (def: FilterDef) => Filter> = {
  /** Device/VM `has_primary_ip`: primary_ip4 or primary_ip6 set. */
  has_primary_ip: make((values) => {
    const b = bool(values);
    if (b === undefined) return undefined;
    return b
      ? sql<boolean>`(t.primary_ip4_id IS NOT NULL OR t.primary_ip6_id IS NOT NULL)`
      : sql<boolean>`(t.primary_ip4_id IS NULL AND t.primary_ip6_id IS NULL)`;
  }),
  /** Device `is_full_depth`: its device type is (not) full depth (Nautobot 1.6 `DeviceFilterSet`). */
  device_is_full_depth: make((values, env) => {
    // Not a boolean: ignored, as Nautobot's BooleanFilter (NullBooleanField) does.
    const b = bool(values);
    if (b === undefined) return undefined;
    return sql<boolean>`t.device_type_id IN (SELECT id FROM dcim_devicetype WHERE is_full_depth = ${env.dialect.engine === "sqlite" ? (b ? 1 : 0) : b})`;
  }),
  /**
   * `pass_through_ports` (devices, device types): has front or rear ports (templates); false: neither
   * (Nautobot 1.6 `_pass_through_ports`). `def.front`/`def.rear` name the tables, `def.via` their FK column.
   */
  pass_through_ports: make((values, _env, def) => {
    const b = bool(values);
    if (b === undefined) return undefined;
    const via = sql.id(String(def.via));
    const has = sql<boolean>`(EXISTS (SELECT 1 FROM ${sql.table(String(def.front))} x WHERE x.${via} = t.id) OR EXISTS (SELECT 1 FROM ${sql.table(String(def.rear))} y WHERE y.${via} = t.id))`;
    return b ? has : sql<boolean>`NOT ${has}`;
  }),
  /** Interface `device_with_common_vc`: interfaces of the devices and of every member of their chassis. */
  device_with_common_vc: make((values, env, def) => {
    const ids = uuids(env, String(def.param), values);
    if (!ids) return undefined;
    return sql<boolean>`t.device_id IN (SELECT id FROM dcim_device WHERE id IN (${list(ids)}) OR virtual_chassis_id IN (SELECT virtual_chassis_id FROM dcim_device WHERE id IN (${list(ids)}) AND virtual_chassis_id IS NOT NULL))`;
  }),
  /** Relationship association `peer_id`: the object is either end. */
  peer_id: make((values, env, def) => {
    const ids = uuids(env, String(def.param), values);
    if (!ids) return undefined;
    return sql<boolean>`(t.source_id IN (${list(ids)}) OR t.destination_id IN (${list(ids)}))`;
  }),
  /** Device `mac_address`: any interface of the device has the MAC. */
  device_mac_address: make(
    (values) =>
      sql<boolean>`t.id IN (SELECT device_id FROM dcim_interface WHERE mac_address IN (${list(values.map((v) => v.toUpperCase()))}))`,
  ),
  cable_device_id: cableOnDevices("id"),
  cable_device: cableOnDevices("name"),
  cable_site_id: cableOnDevices("site_id"),
  cable_site: cableOnDevices("site"),
  /** ObjectChange `time_after` / `time_before` (Nautobot DateTimeFromToRangeFilter, inclusive bounds). */
  time_after: timeBound(">="),
  time_before: timeBound("<="),
  cable_rack_id: cableOnDevices("rack_id"),
  cable_rack: cableOnDevices("rack"),
  cable_tenant_id: cableOnDevices("tenant_id"),
  cable_tenant: cableOnDevices("tenant"),
  /** Locations whose type is the parent of the given location type (slug or id), Nautobot LocationFilterSet. */
  location_child_location_type: make((values) => {
    const ids = values.filter((v) => UUID_RE.test(v)).map((v) => v.toLowerCase());
    return sql<boolean>`t.location_type_id IN (SELECT parent_id FROM dcim_locationtype WHERE id IN (${list(ids)}) OR slug IN (${list(values)}))`;
  }),
  /**
   * Locations whose type allows every given content type (`app.model`; Nautobot LocationFilterSet's
   * `ContentTypeMultipleChoiceFilter` over the `locations` feature, conjoined).
   */
  location_content_type: (def) => ({
    apply: (values, env) =>
      contentTypeFilter(String(def.param), {
        mode: "choice",
        allowed: () => env.reg.resolveAllowed("locations"),
        conjoined: true,
        match: (ct) =>
          sql<boolean>`t.location_type_id IN (SELECT source_id FROM dcim_locationtype_content_types WHERE content_type = ${ct})`,
      }).apply(values, env),
  }),
  /** Interface `kind`: physical | virtual | wireless; any other value matches nothing (`filter_kind`). */
  interface_kind: make((values) => {
    const v = values[values.length - 1] ?? "";
    const virtual = [...VIRTUAL_INTERFACE_TYPES];
    const wireless = [...WIRELESS_INTERFACE_TYPES];
    if (v === "virtual") return sql<boolean>`t.type IN (${sql.join(virtual)})`;
    if (v === "wireless") return sql<boolean>`t.type IN (${sql.join(wireless)})`;
    if (v === "physical") return sql<boolean>`t.type NOT IN (${sql.join([...virtual, ...wireless])})`;
    return sql<boolean>`1 = 0`;
  }),
  /** `connected`: the component has a cable whose far end is a path endpoint (direct connection). */
  connected: make((values) => {
    const b = bool(values);
    if (b === undefined) return undefined;
    return b ? sql<boolean>`t.cable_id IS NOT NULL` : sql<boolean>`t.cable_id IS NULL`;
  }),
  present_in_vrf_id: presentInVrf("id"),
  present_in_vrf: presentInVrf("rd"),
  ip_device_id: ipOnDevices("id"),
  ip_device: ipOnDevices("name"),
  ip_vm_id: ipOnVms("id"),
  ip_vm: ipOnVms("name"),
  ip_interface_id: ipOnIface("dcim.interface", "id"),
  ip_interface: ipOnIface("dcim.interface", "name"),
  ip_vminterface_id: ipOnIface("virtualization.vminterface", "id"),
  ip_vminterface: ipOnIface("virtualization.vminterface", "name"),
  /** VLAN `available_on_device`: global VLANs and those of the device's site. */
  vlan_available_on_device: make((values, env, def) => {
    const ids = uuids(env, String(def.param), values);
    if (!ids) return undefined;
    return sql<boolean>`(t.site_id IS NULL OR t.site_id IN (SELECT site_id FROM dcim_device WHERE id IN (${list(ids)})))`;
  }),
  /** Service `port`: services whose port list contains N. */
  service_port: make((values, env, def) => {
    // django-filter NumberFilter: "Enter a number."; a number that is no port (-1, 1.5) matches nothing.
    const v = (values[values.length - 1] ?? "").trim();
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(v)) {
      env.error(String(def.param), "Enter a number.");
      return undefined;
    }
    if (!/^\+?\d{1,5}$/.test(v)) return sql<boolean>`1 = 0`;
    return env.dialect.engine === "sqlite"
      ? sql<boolean>`EXISTS (SELECT 1 FROM json_each(t.ports) WHERE value = ${Number(v)})`
      : sql<boolean>`(t.ports)::jsonb @> ${`[${Number(v)}]`}::jsonb`;
  }),
  /**
   * Interface `vlan_id`: untagged on, or tagged with, the VLAN (Nautobot 1.6 `InterfaceFilterSet.filter_vlan_id`,
   * a single value; blank selects everything).
   */
  interface_vlan_id: make((values, env, def) => {
    const v = (values[values.length - 1] ?? "").trim();
    if (!v) return undefined;
    const ids = uuids(env, String(def.param), [v]);
    if (!ids) return undefined;
    const jt = sql.table(`${env.model.table}_tagged_vlans`);
    return sql<boolean>`(t.untagged_vlan_id = ${ids[0]} OR EXISTS (SELECT 1 FROM ${jt} s WHERE s.source_id = t.id AND s.target_id = ${ids[0]}))`;
  }),
  /** Interface `vlan`: untagged on, or tagged with, a VLAN of that VID (`InterfaceFilterSet.filter_vlan`). */
  interface_vlan: make((values, env, def) => {
    const v = (values[values.length - 1] ?? "").trim();
    if (!v) return undefined;
    if (!/^-?\d+(\.0*)?$/.test(v)) {
      env.error(String(def.param), "Enter a number.");
      return undefined;
    }
    const vid = Math.trunc(Number(v));
    const jt = sql.table(`${env.model.table}_tagged_vlans`);
    return sql<boolean>`(t.untagged_vlan_id IN (SELECT id FROM ipam_vlan WHERE vid = ${vid}) OR EXISTS (SELECT 1 FROM ${jt} s JOIN ipam_vlan v ON v.id = s.target_id WHERE s.source_id = t.id AND v.vid = ${vid}))`;
  }),
};
