/**
 * Circuits models: providers, provider networks, circuit types, circuits, circuit terminations
 * (Nautobot 1.6 `circuits` app; shared/reference/nautobot-models.md §2B).
 */
import { defineModel, f, type ModelDef } from "../meta.ts";
import { checkLocation } from "./dcim.ts";
import { tenancyFilters } from "./tenancy.ts";

export const TERM_SIDES = [
  ["A", "A"],
  ["Z", "Z"],
] as const;

export const provider = defineModel({
  app: "circuits",
  name: "provider",
  verbose: "provider",
  path: "providers",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    asn: f.int({ nullable: true, min: 1, max: 4294967295, label: "ASN" }),
    account: f.str(100, { default: "" }),
    portal_url: f.str(200, { default: "", format: "url" }),
    noc_contact: f.text(),
    admin_contact: f.text(),
    comments: f.comments(),
    circuit_count: f.count("circuits.circuit", "provider"),
  },
  nested: ["name", "slug", "circuit_count"],
  ordering: ["name"],
  search: ["name", "account", "noc_contact", "admin_contact", "comments"],
  // Nautobot 1.6 `ProviderFilterSet`: where the provider's circuits terminate.
  filters: {
    site_id: {
      kind: "path",
      path: "<circuits:circuit:provider.<circuits:circuittermination:circuit.site",
      key: "id",
    },
    site: {
      kind: "path",
      path: "<circuits:circuit:provider.<circuits:circuittermination:circuit.site",
      key: "slug",
    },
    region_id: {
      kind: "path",
      path: "<circuits:circuit:provider.<circuits:circuittermination:circuit.site.region",
      key: "id",
      tree: true,
    },
    region: {
      kind: "path",
      path: "<circuits:circuit:provider.<circuits:circuittermination:circuit.site.region",
      key: "slug",
      tree: true,
    },
    location: {
      kind: "path",
      path: "<circuits:circuit:provider.<circuits:circuittermination:circuit.location",
      key: "slug",
    },
  },
});

export const providerNetwork = defineModel({
  app: "circuits",
  name: "providernetwork",
  verbose: "provider network",
  path: "provider-networks",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    provider: f.rfk("circuits.provider", "PROTECT"),
    name: f.name(100),
    slug: f.slug("name", { unique: true }),
    description: f.description(),
    comments: f.comments(),
  },
  nested: ["name", "slug"],
  displayUses: ["provider"],
  display: (r, rel) => `${rel.provider?.display ?? ""} ${r.name}`,
  ordering: ["provider", "name"],
  search: ["name", "description", "comments"],
  uniqueTogether: [{ fields: ["provider", "name"] }],
});

export const circuitType = defineModel({
  app: "circuits",
  name: "circuittype",
  verbose: "circuit type",
  path: "circuit-types",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: f.slug("name", { unique: true }),
    description: f.description(),
    circuit_count: f.count("circuits.circuit", "type"),
  },
  nested: ["name", "slug", "circuit_count"],
  ordering: ["name"],
  search: ["name", "slug"],
});

// Nautobot 1.6 `CircuitCircuitTerminationSerializer`: the stamps and notes URL are on the wire too.
const TERMINATION_SLIM = [
  "site",
  "location",
  "provider_network",
  "connected_endpoint",
  "port_speed",
  "upstream_speed",
  "xconnect_id",
  "created",
  "last_updated",
  "notes_url",
];

export const circuit = defineModel({
  app: "circuits",
  name: "circuit",
  verbose: "circuit",
  path: "circuits",
  changelog: true,
  customFields: true,
  tags: true,
  fields: {
    cid: f.str(100, { required: true, label: "Circuit ID" }),
    provider: f.rfk("circuits.provider", "PROTECT"),
    type: f.rfk("circuits.circuittype", "PROTECT"),
    status: f.status(),
    tenant: f.ofk("tenancy.tenant", "PROTECT"),
    install_date: f.date({ nullable: true }),
    commit_rate: f.int({ nullable: true, min: 0, max: 2_147_483_647 }),
    description: f.description(),
    termination_a: f.ofk("circuits.circuittermination", "SET_NULL", {
      readOnly: true,
      nestedFields: TERMINATION_SLIM,
      filterKey: false,
    }),
    termination_z: f.ofk("circuits.circuittermination", "SET_NULL", {
      readOnly: true,
      nestedFields: TERMINATION_SLIM,
      filterKey: false,
    }),
    comments: f.comments(),
  },
  nested: ["cid"],
  display: "cid",
  ordering: ["provider", "cid"],
  search: [
    "cid",
    "comments",
    "description",
    "<circuits.circuittermination.circuit.description",
    "<circuits.circuittermination.circuit.pp_info",
    "<circuits.circuittermination.circuit.xconnect_id",
  ],
  uniqueTogether: [{ fields: ["provider", "cid"] }],
  features: ["statuses"],
  filters: {
    // Nautobot 1.6 `CircuitFilterSet`: through the circuit's terminations.
    site_id: { kind: "path", path: "<circuits:circuittermination:circuit.site", key: "id" },
    site: { kind: "path", path: "<circuits:circuittermination:circuit.site", key: "slug" },
    region_id: {
      kind: "path",
      path: "<circuits:circuittermination:circuit.site.region",
      key: "id",
      tree: true,
    },
    region: {
      kind: "path",
      path: "<circuits:circuittermination:circuit.site.region",
      key: "slug",
      tree: true,
    },
    location: { kind: "path", path: "<circuits:circuittermination:circuit.location", key: "slug" },
    provider_network_id: {
      kind: "path",
      path: "<circuits:circuittermination:circuit.provider_network",
      key: "id",
    },
    ...tenancyFilters,
  },
});

export const circuitTermination = defineModel({
  app: "circuits",
  name: "circuittermination",
  verbose: "circuit termination",
  path: "circuit-terminations",
  changelog: true,
  customFields: true,
  afterWrite: "circuit_termination",
  savesAlso: ["circuit"],
  fields: {
    circuit: f.rfk("circuits.circuit", "CASCADE", { filterKey: "cid" }),
    term_side: f.choice(TERM_SIDES, { plain: true, required: true, label: "Termination" }),
    // Declared writable in Nautobot 1.6 `CircuitCircuitTerminationSerializer` (a circuit's `termination_a/z`).
    site: f.ofk("dcim.site", "PROTECT", { nestedWrite: "required" }),
    location: f.ofk("dcim.location", "PROTECT", { nestedWrite: "optional" }),
    provider_network: f.ofk("circuits.providernetwork", "PROTECT", { nestedWrite: "required" }),
    port_speed: f.int({ nullable: true, min: 0, max: 2_147_483_647 }),
    upstream_speed: f.int({ nullable: true, min: 0, max: 2_147_483_647 }),
    xconnect_id: f.str(50, { default: "" }),
    pp_info: f.str(100, { default: "" }),
    description: f.description(),
    cable: f.ofk("dcim.cable", "SET_NULL", { readOnly: true, nestedFields: ["label"], filterKey: false }),
    cable_peer: f.computed("cable_peer"),
    cable_peer_type: f.computed("cable_peer_type"),
    connected_endpoint: f.computed("connected_endpoint"),
    connected_endpoint_type: f.computed("connected_endpoint_type"),
    connected_endpoint_reachable: f.computed("connected_endpoint_reachable"),
  },
  nested: ["circuit", "term_side", "cable"],
  displayUses: ["site", "provider_network"],
  // Nautobot `CircuitTermination.__str__`: "Termination A: <site or provider network>".
  display: (r, rel) =>
    `Termination ${r.term_side}: ${rel.site?.display ?? rel.site?.name ?? rel.provider_network?.display ?? ""}`,
  ordering: ["circuit", "term_side"],
  search: ["circuit.cid", "description", "pp_info", "xconnect_id"],
  uniqueTogether: [{ fields: ["circuit", "term_side"] }],
  features: ["cable_terminations", "locations"],
  filters: {
    cabled: { kind: "notnull", field: "cable" },
    cable: { kind: "path", path: "cable", key: "id" },
    connected: { kind: "custom", fn: "connected" },
    region_id: { kind: "path", path: "site.region", key: "id", tree: true },
    region: { kind: "path", path: "site.region", key: "slug", tree: true },
  },
  /** Nautobot 1.6 CircuitTermination.clean(). */
  async validate(a) {
    const d = a.data;
    if (d.site && d.provider_network)
      a.error("__all__", "A circuit termination cannot attach to both a site and a provider network.");
    else if (!d.site && !d.provider_network)
      a.error("__all__", "A circuit termination must attach to either a site or a provider network.");
    if (d.location && d.provider_network)
      a.error("location", "A circuit termination cannot attach to both a location and a provider network.");
    await checkLocation(a, "circuits.circuittermination", "Circuit terminations");
  },
});

export const models: ModelDef[] = [provider, providerNetwork, circuitType, circuit, circuitTermination];
