/**
 * The NetBox → inventory mapping, as a table: one entry per imported NetBox model, in dependency
 * order, turning a NetBox 3.x record into an API write body of our model (Nautobot 1.6 field names).
 * Records of NetBox models not listed here are skipped with the reason in `SKIPPED`.
 */
import type { NetboxRecord } from "./read.ts";

/** Write body of one of our models. */
export type Body = Record<string, unknown>;

/** References and lookups available to mapping functions. */
export interface Mapper {
  /** Our id of a NetBox record (model, pk); a placeholder id when it was not imported. */
  ref(model: string, pk: unknown): string | null;
  /** Our ids of a list of NetBox pks. */
  refs(model: string, pks: unknown): string[];
  /** NetBox content-type pk → `app.model`. */
  ct(pk: unknown): string | null;
  /** Our content type for a NetBox `app.model` (NetBox and Nautobot share most names). */
  ourCt(netboxCt: string | null): string | null;
  /** Id of the location type created for NetBox locations (NetBox 3.x locations have no type). */
  locationType(): string;
  /** Cable ends from `dcim.cabletermination` records: cable pk → A/B ends. */
  cableEnds(cablePk: unknown): { a: NetboxRecord[]; b: NetboxRecord[] };
  /** A raw record of the dump (records of skipped models too: ASNs, choice sets). */
  record(model: string, pk: unknown): NetboxRecord | undefined;
  /**
   * Report data of the current record that is imported only in part (a value with no equivalent was
   * dropped); shown with its count under "notes" in the summary.
   */
  note(message: string): void;
}

/** One mapping row. */
export interface Mapping {
  /** NetBox model (`dcim.device`). */
  netbox: string;
  /** Our model key. */
  model: string;
  /** Body for creation; a string is a reason to skip the record. */
  body(r: NetboxRecord, m: Mapper): Body | string;
  /**
   * Fields of the body that identify an existing object (idempotent re-import); alternatives are tried in
   * order, each usable when its last field is set.
   */
  natural: readonly string[] | ReadonlyArray<readonly string[]>;
  /** Fields applied in a second pass once every record exists (self references, primary IPs). */
  later?(r: NetboxRecord, m: Mapper): Body | undefined;
  /** Order records (trees: parents first). */
  order?(records: NetboxRecord[]): NetboxRecord[];
}

const int = (v: unknown) => (v === null || v === undefined || v === "" ? null : Math.trunc(Number(v)));
const str = (v: unknown) => (v === null || v === undefined ? "" : String(v));

/** Parents before children for self-referencing trees. */
export function treeOrder(field: string) {
  return (records: NetboxRecord[]): NetboxRecord[] => {
    const byPk = new Map(records.map((r) => [String(r.pk), r]));
    const depth = (r: NetboxRecord): number => {
      let d = 0;
      let p = r.fields[field];
      while (p !== null && p !== undefined && d < 50) {
        d++;
        p = byPk.get(String(p))?.fields[field];
      }
      return d;
    };
    return [...records].sort((a, b) => depth(a) - depth(b));
  };
}

/** NetBox model → why it is not imported. */
export const SKIPPED: Record<string, string> = {
  "contenttypes.contenttype": "used only to resolve generic references",
  "sessions.session": "web sessions are not data",
  "admin.logentry": "admin log of the NetBox UI",
  "auth.permission": "Django permission catalogue",
  "auth.group": "accounts are not migrated; create users with `inventory createsuperuser`",
  "auth.user": "accounts are not migrated; create users with `inventory createsuperuser`",
  "users.userconfig": "UI preferences",
  "users.token": "tokens are not migrated",
  "users.objectpermission": "permissions are not migrated",
  "dcim.sitegroup": "no site groups in Nautobot 1.6",
  "ipam.asn": "no ASN model in Nautobot 1.6 (site.asn holds one ASN)",
  "ipam.iprange": "no IP range model in Nautobot 1.6",
  "tenancy.contactgroup": "no contacts in Nautobot 1.6",
  "tenancy.contactrole": "no contacts in Nautobot 1.6",
  "tenancy.contact": "no contacts in Nautobot 1.6",
  "tenancy.contactassignment": "no contacts in Nautobot 1.6",
  "dcim.module": "no modules in Nautobot 1.6",
  "dcim.moduletype": "no modules in Nautobot 1.6",
  "dcim.modulebay": "no modules in Nautobot 1.6",
  "dcim.modulebaytemplate": "no modules in Nautobot 1.6",
  "dcim.cablepath": "cable paths are derived from cables",
  "dcim.cabletermination": "merged into cables (termination_a / termination_b)",
  "extras.taggeditem": "applied as tags of the tagged objects",
  "extras.objectchange": "change history is not migrated",
  "extras.journalentry": "no journal in Nautobot 1.6",
  "extras.savedfilter": "no saved filters in Nautobot 1.6",
  "extras.imageattachment": "image files are not in the dump",
  "extras.customfieldchoiceset": "merged into the custom fields' choices",
  "extras.webhook": "webhooks are not migrated (endpoints and secrets are site-specific)",
  "extras.eventrule": "no event rules in Nautobot 1.6",
  "extras.exporttemplate": "export templates (Jinja2 for NetBox) are not migrated",
  "extras.customlink": "custom links (Jinja2 for NetBox) are not migrated",
  "extras.cachedvalue": "NetBox search cache",
  "extras.configrevision": "NetBox configuration history",
  "extras.bookmark": "UI bookmarks",
  "extras.report": "NetBox reports are code",
  "extras.script": "NetBox scripts are code",
  "dcim.inventoryitemrole": "no inventory item roles in Nautobot 1.6",
  "dcim.inventoryitemtemplate": "no inventory item templates in Nautobot 1.6",
  "dcim.virtualdevicecontext": "no virtual device contexts in Nautobot 1.6",
  "circuits.provideraccount": "no provider accounts in Nautobot 1.6 (provider.account holds one)",
  "ipam.fhrpgroup": "no FHRP groups in Nautobot 1.6",
  "ipam.fhrpgroupassignment": "no FHRP groups in Nautobot 1.6",
  "ipam.servicetemplate": "no service templates in Nautobot 1.6",
  "ipam.l2vpn": "no L2VPN models in Nautobot 1.6",
  "ipam.l2vpntermination": "no L2VPN models in Nautobot 1.6",
};

/** Reasons for whole NetBox applications with no equivalent. */
const SKIPPED_APPS: Record<string, string> = {
  wireless: "no wireless models in Nautobot 1.6",
  core: "NetBox data sources and jobs are not data of the network",
  vpn: "no VPN models in Nautobot 1.6",
  django_rq: "NetBox task queue",
  taggit: "tags come from extras.tag",
};

/** Why records of an unmapped NetBox model are skipped. */
export function skipReason(netboxModel: string): string {
  return (
    SKIPPED[netboxModel] ||
    SKIPPED_APPS[netboxModel.split(".")[0] ?? ""] ||
    "no equivalent model in Nautobot 1.6"
  );
}

/**
 * NetBox 3.x status values are the slugs of Nautobot 1.6's default statuses for the same models (checked
 * against store/default-statuses.ts), so they map by value.
 */
const status = (v: unknown, fallback = "active") => (v ? String(v) : fallback);

const component = (
  netbox: string,
  model: string,
  extra: (f: Record<string, any>, m: Mapper) => Body,
): Mapping => ({
  netbox,
  model,
  natural: ["device", "name"],
  body: (r, m) => {
    // Components installed in a module are imported onto the device (modules are not supported).
    return {
      device: m.ref("dcim.device", r.fields.device),
      name: r.fields.name,
      label: str(r.fields.label),
      description: str(r.fields.description),
      ...extra(r.fields, m),
    };
  },
});

const template = (
  netbox: string,
  model: string,
  extra: (f: Record<string, any>, m: Mapper) => Body,
): Mapping => ({
  netbox,
  model,
  natural: ["device_type", "name"],
  body: (r, m) => {
    if (!r.fields.device_type) return "belongs to a module type (modules are not supported)";
    return {
      device_type: m.ref("dcim.devicetype", r.fields.device_type),
      name: r.fields.name,
      label: str(r.fields.label),
      description: str(r.fields.description),
      ...extra(r.fields, m),
    };
  },
});

/**
 * Nautobot 1.6 sites and providers hold one `asn` number; NetBox 3.x links them to ASN objects (`asns`).
 * One ASN is carried over; with several, none is (noted).
 */
const asn = (r: NetboxRecord, m: Mapper): Body => {
  const list = (r.fields.asns ?? []) as unknown[];
  if (list.length === 0) return r.fields.asn ? { asn: r.fields.asn } : {};
  if (list.length > 1) {
    m.note(`${list.length} ASNs, Nautobot 1.6 holds one: asn left empty`);
    return {};
  }
  const rec = m.record("ipam.asn", list[0]);
  return rec ? { asn: rec.fields.asn } : {};
};

const cf = (f: Record<string, any>) =>
  f.custom_field_data && Object.keys(f.custom_field_data).length
    ? { custom_fields: f.custom_field_data }
    : {};

/** The mapping table, in dependency order. */
export const MAPPINGS: Mapping[] = [
  {
    netbox: "extras.tag",
    model: "extras.tag",
    natural: ["slug"],
    body: (r) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      color: r.fields.color || "9e9e9e",
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "extras.customfield",
    model: "extras.customfield",
    natural: ["name"],
    body: (r, m) => {
      // NetBox CustomFieldTypeChoices → Nautobot CustomFieldTypeChoices (longtext renders as Markdown in
      // NetBox); decimal, datetime, object and multiobject have no equivalent.
      const types: Record<string, string> = {
        text: "text",
        longtext: "markdown",
        integer: "integer",
        boolean: "boolean",
        date: "date",
        url: "url",
        json: "json",
        select: "select",
        multiselect: "multi-select",
      };
      const type = types[String(r.fields.type)];
      if (!type) return `custom field type ${r.fields.type} has no equivalent`;
      // NetBox ≤ 3.5: `choices` on the field; 3.6: a choice set with `extra_choices` [[value, label], ...].
      let choices: string[] = [];
      if (Array.isArray(r.fields.choices)) choices = r.fields.choices.map(String);
      else if (r.fields.choice_set) {
        const set = m.record("extras.customfieldchoiceset", r.fields.choice_set);
        if (!set) return `choice set ${r.fields.choice_set} is not in the dump`;
        if (set.fields.base_choices)
          m.note(`predefined choice set ${set.fields.base_choices} not carried over`);
        choices = ((set.fields.extra_choices ?? []) as unknown[][]).map((c) => String(c[0]));
      }
      const cts = ((r.fields.content_types ?? []) as unknown[])
        .map((c) => (Array.isArray(c) ? `${c[0]}.${c[1]}` : m.ct(c)))
        .map((c) => m.ourCt(c))
        .filter(Boolean);
      return {
        name: r.fields.name,
        label: str(r.fields.label),
        type,
        description: str(r.fields.description),
        required: !!r.fields.required,
        filter_logic: r.fields.filter_logic || "loose",
        default: r.fields.default ?? null,
        weight: r.fields.weight ?? 100,
        validation_minimum: r.fields.validation_minimum ?? null,
        validation_maximum: r.fields.validation_maximum ?? null,
        validation_regex: str(r.fields.validation_regex),
        ...(type === "select" || type === "multi-select" ? { choices } : {}),
        content_types: cts,
      };
    },
  },
  {
    netbox: "tenancy.tenantgroup",
    model: "tenancy.tenantgroup",
    natural: ["name"],
    order: treeOrder("parent"),
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      parent: m.ref("tenancy.tenantgroup", r.fields.parent),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "tenancy.tenant",
    model: "tenancy.tenant",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      ...(r.fields.group ? { group: m.ref("tenancy.tenantgroup", r.fields.group) } : {}),
      description: str(r.fields.description),
      comments: str(r.fields.comments),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "dcim.region",
    model: "dcim.region",
    natural: ["name"],
    order: treeOrder("parent"),
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      parent: m.ref("dcim.region", r.fields.parent),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "dcim.site",
    model: "dcim.site",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      status: status(r.fields.status),
      region: m.ref("dcim.region", r.fields.region),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      facility: str(r.fields.facility),
      time_zone: r.fields.time_zone || null,
      description: str(r.fields.description),
      physical_address: str(r.fields.physical_address),
      shipping_address: str(r.fields.shipping_address),
      latitude: r.fields.latitude ?? null,
      longitude: r.fields.longitude ?? null,
      comments: str(r.fields.comments),
      ...asn(r, m),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "dcim.location",
    model: "dcim.location",
    natural: ["slug"],
    order: treeOrder("parent"),
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      status: status(r.fields.status),
      location_type: m.locationType(),
      parent: m.ref("dcim.location", r.fields.parent),
      site: r.fields.parent ? null : m.ref("dcim.site", r.fields.site),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "dcim.rackrole",
    model: "dcim.rackrole",
    natural: ["name"],
    body: (r) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      color: r.fields.color || "9e9e9e",
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "dcim.rack",
    model: "dcim.rack",
    natural: ["site", "name"],
    body: (r, m) => ({
      name: r.fields.name,
      facility_id: r.fields.facility_id || null,
      site: m.ref("dcim.site", r.fields.site),
      location: m.ref("dcim.location", r.fields.location),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      status: status(r.fields.status),
      role: m.ref("dcim.rackrole", r.fields.role),
      serial: str(r.fields.serial),
      asset_tag: r.fields.asset_tag || null,
      type: str(r.fields.type),
      width: r.fields.width ?? 19,
      u_height: int(r.fields.u_height) ?? 42,
      desc_units: !!r.fields.desc_units,
      outer_width: int(r.fields.outer_width),
      outer_depth: int(r.fields.outer_depth),
      outer_unit: str(r.fields.outer_unit),
      comments: str(r.fields.comments),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "dcim.rackreservation",
    model: "dcim.rackreservation",
    natural: ["rack", "description"],
    body: (r, m) => ({
      rack: m.ref("dcim.rack", r.fields.rack),
      units: r.fields.units,
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      description: str(r.fields.description) || "Reservation",
    }),
  },
  {
    netbox: "dcim.manufacturer",
    model: "dcim.manufacturer",
    natural: ["name"],
    body: (r) => ({ name: r.fields.name, slug: r.fields.slug, description: str(r.fields.description) }),
  },
  {
    netbox: "dcim.platform",
    model: "dcim.platform",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      manufacturer: m.ref("dcim.manufacturer", r.fields.manufacturer),
      napalm_driver: str(r.fields.napalm_driver),
      napalm_args: r.fields.napalm_args ?? null,
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "dcim.devicetype",
    model: "dcim.devicetype",
    natural: ["manufacturer", "model"],
    body: (r, m) => ({
      manufacturer: m.ref("dcim.manufacturer", r.fields.manufacturer),
      model: r.fields.model,
      slug: r.fields.slug,
      part_number: str(r.fields.part_number),
      u_height: int(r.fields.u_height) ?? 1,
      is_full_depth: r.fields.is_full_depth !== false,
      subdevice_role: r.fields.subdevice_role || "",
      comments: str(r.fields.comments),
      ...cf(r.fields),
    }),
  },
  template("dcim.consoleporttemplate", "dcim.consoleporttemplate", (f) => ({ type: str(f.type) })),
  template("dcim.consoleserverporttemplate", "dcim.consoleserverporttemplate", (f) => ({
    type: str(f.type),
  })),
  template("dcim.powerporttemplate", "dcim.powerporttemplate", (f) => ({
    type: str(f.type),
    maximum_draw: f.maximum_draw ?? null,
    allocated_draw: f.allocated_draw ?? null,
  })),
  template("dcim.poweroutlettemplate", "dcim.poweroutlettemplate", (f, m) => ({
    type: str(f.type),
    feed_leg: str(f.feed_leg),
    ...(f.power_port ? { power_port: m.ref("dcim.powerporttemplate", f.power_port) } : {}),
  })),
  template("dcim.interfacetemplate", "dcim.interfacetemplate", (f) => ({
    type: f.type,
    mgmt_only: !!f.mgmt_only,
  })),
  template("dcim.rearporttemplate", "dcim.rearporttemplate", (f) => ({
    type: f.type,
    positions: f.positions ?? 1,
  })),
  template("dcim.frontporttemplate", "dcim.frontporttemplate", (f, m) => ({
    type: f.type,
    rear_port: m.ref("dcim.rearporttemplate", f.rear_port),
    rear_port_position: f.rear_port_position ?? 1,
  })),
  template("dcim.devicebaytemplate", "dcim.devicebaytemplate", () => ({})),
  {
    netbox: "dcim.devicerole",
    model: "dcim.devicerole",
    natural: ["name"],
    body: (r) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      color: r.fields.color || "9e9e9e",
      vm_role: r.fields.vm_role !== false,
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "virtualization.clustertype",
    model: "virtualization.clustertype",
    natural: ["name"],
    body: (r) => ({ name: r.fields.name, slug: r.fields.slug, description: str(r.fields.description) }),
  },
  {
    netbox: "virtualization.clustergroup",
    model: "virtualization.clustergroup",
    natural: ["name"],
    body: (r) => ({ name: r.fields.name, slug: r.fields.slug, description: str(r.fields.description) }),
  },
  {
    netbox: "virtualization.cluster",
    model: "virtualization.cluster",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      type: m.ref("virtualization.clustertype", r.fields.type),
      group: m.ref("virtualization.clustergroup", r.fields.group),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      site: m.ref("dcim.site", r.fields.site),
      comments: str(r.fields.comments),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "ipam.rir",
    model: "ipam.rir",
    natural: ["name"],
    body: (r) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      is_private: !!r.fields.is_private,
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "ipam.aggregate",
    model: "ipam.aggregate",
    natural: ["prefix"],
    body: (r, m) => ({
      prefix: r.fields.prefix,
      rir: m.ref("ipam.rir", r.fields.rir),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      date_added: r.fields.date_added ?? null,
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "ipam.routetarget",
    model: "ipam.routetarget",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "ipam.vrf",
    model: "ipam.vrf",
    // rd is unique when set; a VRF without one is matched by name among VRFs without rd.
    natural: [["rd"], ["rd", "name"]],
    body: (r, m) => ({
      name: r.fields.name,
      rd: r.fields.rd || null,
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      enforce_unique: r.fields.enforce_unique !== false,
      description: str(r.fields.description),
      import_targets: m.refs("ipam.routetarget", r.fields.import_targets),
      export_targets: m.refs("ipam.routetarget", r.fields.export_targets),
    }),
  },
  {
    netbox: "ipam.role",
    model: "ipam.role",
    natural: ["name"],
    body: (r) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      weight: r.fields.weight ?? 1000,
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "ipam.vlangroup",
    model: "ipam.vlangroup",
    natural: ["site", "name"],
    body: (r, m) => {
      const scope = m.ct(r.fields.scope_type);
      if (scope && scope !== "dcim.site" && scope !== "dcim.location")
        m.note(
          `scope ${scope} has no equivalent (Nautobot 1.6 groups belong to a site or location): group made global`,
        );
      return {
        name: r.fields.name,
        slug: r.fields.slug,
        site: scope === "dcim.site" ? m.ref("dcim.site", r.fields.scope_id) : null,
        location: scope === "dcim.location" ? m.ref("dcim.location", r.fields.scope_id) : null,
        description: str(r.fields.description),
      };
    },
  },
  {
    netbox: "ipam.vlan",
    model: "ipam.vlan",
    natural: ["group", "site", "vid", "name"],
    body: (r, m) => ({
      site: m.ref("dcim.site", r.fields.site),
      group: m.ref("ipam.vlangroup", r.fields.group),
      vid: r.fields.vid,
      name: r.fields.name,
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      status: status(r.fields.status),
      role: m.ref("ipam.role", r.fields.role),
      description: str(r.fields.description),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "dcim.virtualchassis",
    model: "dcim.virtualchassis",
    natural: ["name"],
    body: (r) => ({ name: r.fields.name, domain: str(r.fields.domain) }),
    later: (r, m) => (r.fields.master ? { master: m.ref("dcim.device", r.fields.master) } : undefined),
  },
  {
    netbox: "dcim.device",
    model: "dcim.device",
    natural: [
      ["site", "name"],
      ["virtual_chassis", "vc_position"],
      ["rack", "face", "position"],
    ],
    body: (r, m) => ({
      name: r.fields.name ?? null,
      device_type: m.ref("dcim.devicetype", r.fields.device_type),
      device_role: m.ref("dcim.devicerole", r.fields.role ?? r.fields.device_role),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      platform: m.ref("dcim.platform", r.fields.platform),
      serial: str(r.fields.serial),
      asset_tag: r.fields.asset_tag || null,
      site: m.ref("dcim.site", r.fields.site),
      location: m.ref("dcim.location", r.fields.location),
      rack: m.ref("dcim.rack", r.fields.rack),
      position: int(r.fields.position),
      face: str(r.fields.face),
      status: status(r.fields.status),
      cluster: m.ref("virtualization.cluster", r.fields.cluster),
      virtual_chassis: m.ref("dcim.virtualchassis", r.fields.virtual_chassis),
      vc_position: r.fields.vc_position ?? null,
      vc_priority: r.fields.vc_priority ?? null,
      comments: str(r.fields.comments),
      local_context_data: r.fields.local_context_data ?? null,
      ...cf(r.fields),
    }),
    later: (r, m) =>
      r.fields.primary_ip4 || r.fields.primary_ip6
        ? {
            primary_ip4: m.ref("ipam.ipaddress", r.fields.primary_ip4),
            primary_ip6: m.ref("ipam.ipaddress", r.fields.primary_ip6),
          }
        : undefined,
  },
  component("dcim.consoleport", "dcim.consoleport", (f) => ({ type: str(f.type) })),
  component("dcim.consoleserverport", "dcim.consoleserverport", (f) => ({ type: str(f.type) })),
  component("dcim.powerport", "dcim.powerport", (f) => ({
    type: str(f.type),
    maximum_draw: f.maximum_draw ?? null,
    allocated_draw: f.allocated_draw ?? null,
  })),
  component("dcim.poweroutlet", "dcim.poweroutlet", (f, m) => ({
    type: str(f.type),
    feed_leg: str(f.feed_leg),
    ...(f.power_port ? { power_port: m.ref("dcim.powerport", f.power_port) } : {}),
  })),
  component("dcim.interface", "dcim.interface", (f, m) => ({
    type: f.type,
    enabled: f.enabled !== false,
    mtu: f.mtu ?? null,
    mac_address: f.mac_address || null,
    mgmt_only: !!f.mgmt_only,
    mode: str(f.mode),
    untagged_vlan: m.ref("ipam.vlan", f.untagged_vlan),
    tagged_vlans: m.refs("ipam.vlan", f.tagged_vlans),
    // NetBox interfaces have no status; Nautobot 1.4's own migration set every interface to Active.
    status: "active",
  })),
  component("dcim.rearport", "dcim.rearport", (f) => ({ type: f.type, positions: f.positions ?? 1 })),
  component("dcim.frontport", "dcim.frontport", (f, m) => ({
    type: f.type,
    rear_port: m.ref("dcim.rearport", f.rear_port),
    rear_port_position: f.rear_port_position ?? 1,
  })),
  component("dcim.devicebay", "dcim.devicebay", () => ({})),
  {
    ...component("dcim.inventoryitem", "dcim.inventoryitem", (f, m) => ({
      parent: m.ref("dcim.inventoryitem", f.parent),
      manufacturer: m.ref("dcim.manufacturer", f.manufacturer),
      part_id: str(f.part_id),
      serial: str(f.serial),
      asset_tag: f.asset_tag || null,
      discovered: !!f.discovered,
    })),
    natural: ["device", "parent", "name"],
    order: treeOrder("parent"),
  },
  {
    netbox: "virtualization.virtualmachine",
    model: "virtualization.virtualmachine",
    natural: ["cluster", "name"],
    body: (r, m) => ({
      name: r.fields.name,
      status: status(r.fields.status),
      cluster: m.ref("virtualization.cluster", r.fields.cluster),
      role: m.ref("dcim.devicerole", r.fields.role),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      platform: m.ref("dcim.platform", r.fields.platform),
      vcpus: int(r.fields.vcpus),
      memory: r.fields.memory ?? null,
      disk: r.fields.disk ?? null,
      comments: str(r.fields.comments),
      local_context_data: r.fields.local_context_data ?? null,
      ...cf(r.fields),
    }),
    later: (r, m) =>
      r.fields.primary_ip4 || r.fields.primary_ip6
        ? {
            primary_ip4: m.ref("ipam.ipaddress", r.fields.primary_ip4),
            primary_ip6: m.ref("ipam.ipaddress", r.fields.primary_ip6),
          }
        : undefined,
  },
  {
    netbox: "virtualization.vminterface",
    model: "virtualization.vminterface",
    natural: ["virtual_machine", "name"],
    body: (r, m) => ({
      virtual_machine: m.ref("virtualization.virtualmachine", r.fields.virtual_machine),
      name: r.fields.name,
      enabled: r.fields.enabled !== false,
      mtu: r.fields.mtu ?? null,
      mac_address: r.fields.mac_address || null,
      description: str(r.fields.description),
      mode: str(r.fields.mode),
      untagged_vlan: m.ref("ipam.vlan", r.fields.untagged_vlan),
      tagged_vlans: m.refs("ipam.vlan", r.fields.tagged_vlans),
      status: "active",
    }),
  },
  {
    netbox: "ipam.prefix",
    model: "ipam.prefix",
    natural: ["vrf", "prefix"],
    body: (r, m) => ({
      prefix: r.fields.prefix,
      site: m.ref("dcim.site", r.fields.site),
      vrf: m.ref("ipam.vrf", r.fields.vrf),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      vlan: m.ref("ipam.vlan", r.fields.vlan),
      status: status(r.fields.status),
      role: m.ref("ipam.role", r.fields.role),
      is_pool: !!r.fields.is_pool,
      description: str(r.fields.description),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "ipam.ipaddress",
    model: "ipam.ipaddress",
    natural: ["vrf", "address"],
    body: (r, m) => {
      const type = m.ourCt(m.ct(r.fields.assigned_object_type));
      const netboxType = m.ct(r.fields.assigned_object_type);
      if (netboxType && !type)
        m.note(`assigned to a ${netboxType}, which has no equivalent: left unassigned`);
      return {
        address: r.fields.address,
        vrf: m.ref("ipam.vrf", r.fields.vrf),
        tenant: m.ref("tenancy.tenant", r.fields.tenant),
        status: status(r.fields.status),
        role: str(r.fields.role),
        assigned_object_type: type,
        assigned_object_id: type && netboxType ? m.ref(netboxType, r.fields.assigned_object_id) : null,
        dns_name: str(r.fields.dns_name),
        description: str(r.fields.description),
        ...cf(r.fields),
      };
    },
    later: (r, m) =>
      r.fields.nat_inside ? { nat_inside: m.ref("ipam.ipaddress", r.fields.nat_inside) } : undefined,
  },
  {
    netbox: "ipam.service",
    model: "ipam.service",
    natural: ["device", "virtual_machine", "protocol", "name"],
    body: (r, m) => ({
      device: m.ref("dcim.device", r.fields.device),
      virtual_machine: m.ref("virtualization.virtualmachine", r.fields.virtual_machine),
      name: r.fields.name,
      ports: r.fields.ports ?? [],
      protocol: r.fields.protocol,
      ipaddresses: m.refs("ipam.ipaddress", r.fields.ipaddresses),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "extras.configcontext",
    model: "extras.configcontext",
    natural: ["name"],
    body: (r, m) => {
      // Dropping a scope NetBox has and Nautobot 1.6 lacks would widen the context: skip instead.
      for (const k of ["site_groups", "cluster_types"])
        if (((r.fields[k] ?? []) as unknown[]).length) return `scoped by ${k}, which has no equivalent`;
      return {
        name: r.fields.name,
        weight: r.fields.weight ?? 1000,
        description: str(r.fields.description),
        is_active: r.fields.is_active !== false,
        regions: m.refs("dcim.region", r.fields.regions),
        sites: m.refs("dcim.site", r.fields.sites),
        locations: m.refs("dcim.location", r.fields.locations),
        roles: m.refs("dcim.devicerole", r.fields.roles),
        device_types: m.refs("dcim.devicetype", r.fields.device_types),
        platforms: m.refs("dcim.platform", r.fields.platforms),
        cluster_groups: m.refs("virtualization.clustergroup", r.fields.cluster_groups),
        clusters: m.refs("virtualization.cluster", r.fields.clusters),
        tenant_groups: m.refs("tenancy.tenantgroup", r.fields.tenant_groups),
        tenants: m.refs("tenancy.tenant", r.fields.tenants),
        tags: m.refs("extras.tag", r.fields.tags),
        data: r.fields.data ?? {},
      };
    },
  },
  {
    netbox: "circuits.provider",
    model: "circuits.provider",
    natural: ["name"],
    body: (r, m) => ({
      name: r.fields.name,
      slug: r.fields.slug,
      comments: str(r.fields.comments),
      ...asn(r, m),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "circuits.providernetwork",
    model: "circuits.providernetwork",
    natural: ["provider", "name"],
    body: (r, m) => ({
      provider: m.ref("circuits.provider", r.fields.provider),
      name: r.fields.name,
      description: str(r.fields.description),
      comments: str(r.fields.comments),
    }),
  },
  {
    netbox: "circuits.circuittype",
    model: "circuits.circuittype",
    natural: ["name"],
    body: (r) => ({ name: r.fields.name, slug: r.fields.slug, description: str(r.fields.description) }),
  },
  {
    netbox: "circuits.circuit",
    model: "circuits.circuit",
    natural: ["provider", "cid"],
    body: (r, m) => ({
      cid: r.fields.cid,
      provider: m.ref("circuits.provider", r.fields.provider),
      type: m.ref("circuits.circuittype", r.fields.type),
      status: status(r.fields.status),
      tenant: m.ref("tenancy.tenant", r.fields.tenant),
      install_date: r.fields.install_date ?? null,
      commit_rate: r.fields.commit_rate ?? null,
      description: str(r.fields.description),
      comments: str(r.fields.comments),
      ...cf(r.fields),
    }),
  },
  {
    netbox: "circuits.circuittermination",
    model: "circuits.circuittermination",
    natural: ["circuit", "term_side"],
    body: (r, m) => ({
      circuit: m.ref("circuits.circuit", r.fields.circuit),
      term_side: r.fields.term_side,
      site: m.ref("dcim.site", r.fields.site),
      provider_network: m.ref("circuits.providernetwork", r.fields.provider_network),
      port_speed: r.fields.port_speed ?? null,
      upstream_speed: r.fields.upstream_speed ?? null,
      xconnect_id: str(r.fields.xconnect_id),
      pp_info: str(r.fields.pp_info),
      description: str(r.fields.description),
    }),
  },
  {
    netbox: "dcim.powerpanel",
    model: "dcim.powerpanel",
    natural: ["site", "name"],
    body: (r, m) => ({
      site: m.ref("dcim.site", r.fields.site),
      location: m.ref("dcim.location", r.fields.location),
      name: r.fields.name,
    }),
  },
  {
    netbox: "dcim.powerfeed",
    model: "dcim.powerfeed",
    natural: ["power_panel", "name"],
    body: (r, m) => ({
      power_panel: m.ref("dcim.powerpanel", r.fields.power_panel),
      rack: m.ref("dcim.rack", r.fields.rack),
      name: r.fields.name,
      status: status(r.fields.status),
      type: r.fields.type || "primary",
      supply: r.fields.supply || "ac",
      phase: r.fields.phase || "single-phase",
      voltage: r.fields.voltage ?? 120,
      amperage: r.fields.amperage ?? 20,
      max_utilization: r.fields.max_utilization ?? 80,
      comments: str(r.fields.comments),
    }),
  },
  {
    netbox: "dcim.cable",
    model: "dcim.cable",
    natural: ["termination_a_type", "termination_a_id"],
    body: (r, m) => {
      const { a, b } = m.cableEnds(r.pk);
      if (a.length !== 1 || b.length !== 1)
        return `has ${a.length} A-end and ${b.length} B-end terminations (one per end is supported)`;
      const end = (t: NetboxRecord) => {
        const nb = m.ct(t.fields.termination_type);
        return { type: m.ourCt(nb), id: nb ? m.ref(nb, t.fields.termination_id) : null };
      };
      const ea = end(a[0]!);
      const eb = end(b[0]!);
      return {
        termination_a_type: ea.type,
        termination_a_id: ea.id,
        termination_b_type: eb.type,
        termination_b_id: eb.id,
        type: str(r.fields.type),
        status: status(r.fields.status, "connected"),
        label: str(r.fields.label),
        color: str(r.fields.color),
        length: int(r.fields.length),
        length_unit: r.fields.length == null ? "" : str(r.fields.length_unit),
      };
    },
  },
];

/** Second passes for self references inside one model (interface parent/LAG/bridge). */
export const SELF_REFERENCES: Record<string, (r: NetboxRecord, m: Mapper) => Body | undefined> = {
  "dcim.interface": (r, m) => {
    const f = r.fields;
    if (!f.parent && !f.lag && !f.bridge) return undefined;
    return {
      ...(f.parent ? { parent_interface: m.ref("dcim.interface", f.parent) } : {}),
      ...(f.lag ? { lag: m.ref("dcim.interface", f.lag) } : {}),
      ...(f.bridge ? { bridge: m.ref("dcim.interface", f.bridge) } : {}),
    };
  },
  "dcim.devicebay": (r, m) =>
    r.fields.installed_device
      ? { installed_device: m.ref("dcim.device", r.fields.installed_device) }
      : undefined,
  "virtualization.vminterface": (r, m) =>
    r.fields.parent ? { parent_interface: m.ref("virtualization.vminterface", r.fields.parent) } : undefined,
};
