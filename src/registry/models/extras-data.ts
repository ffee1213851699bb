/**
 * Extras that attach data to other objects: custom-field choices, notes, relationships and their
 * associations, computed fields, custom links, export templates and dynamic groups (Nautobot 1.6.32
 * `extras` app: models in `nautobot/extras/models/`, serializers in `nautobot/extras/api/serializers.py`,
 * field lists compared against a running Nautobot 1.6.32 at API 1.2).
 */

import { GraphQLError, Kind, parse, print } from "graphql";
import { checkTemplate } from "../../template/jinja.ts";
import { defineModel, f, type ModelDef } from "../meta.ts";
import { djangoSlugify, pythonIsoNow } from "../slug.ts";

/** Nautobot 1.6 `RelationshipTypeChoices`. */
export const RELATIONSHIP_TYPES = [
  ["one-to-one", "One to One"],
  ["symmetric-one-to-one", "Symmetric One to One"],
  ["one-to-many", "One to Many"],
  ["many-to-many", "Many to Many"],
  ["symmetric-many-to-many", "Symmetric Many to Many"],
] as const;

/** Nautobot 1.6 `RelationshipRequiredSideChoices`. */
export const RELATIONSHIP_REQUIRED_SIDES = [
  ["", "Neither side required"],
  ["source", "Source objects MUST implement this relationship"],
  ["destination", "Destination objects MUST implement this relationship"],
] as const;

/** Nautobot 1.6 `ButtonClassChoices`. */
export const BUTTON_CLASSES = [
  ["default", "Default"],
  ["primary", "Primary (blue)"],
  ["success", "Success (green)"],
  ["info", "Info (aqua)"],
  ["warning", "Warning (orange)"],
  ["danger", "Danger (red)"],
  ["link", "None (link)"],
] as const;

/** Nautobot 1.6 `DynamicGroupOperatorChoices`. */
export const DYNAMIC_GROUP_OPERATORS = [
  ["union", "Include (OR)"],
  ["intersection", "Restrict (AND)"],
  ["difference", "Exclude (NOT)"],
] as const;

/** Nautobot 1.6 registry `model_features["custom_links"]` (models we serve are kept). */
export const CUSTOM_LINK_MODELS = [
  "circuits.circuit",
  "circuits.circuittermination",
  "circuits.provider",
  "circuits.providernetwork",
  "dcim.cable",
  "dcim.device",
  "dcim.deviceredundancygroup",
  "dcim.devicetype",
  "dcim.interfaceredundancygroup",
  "dcim.location",
  "dcim.locationtype",
  "dcim.powerfeed",
  "dcim.powerpanel",
  "dcim.rack",
  "dcim.rackreservation",
  "dcim.site",
  "dcim.virtualchassis",
  "extras.dynamicgroup",
  "extras.secret",
  "extras.secretsgroup",
  "extras.status",
  "ipam.aggregate",
  "ipam.ipaddress",
  "ipam.prefix",
  "ipam.routetarget",
  "ipam.service",
  "ipam.vlan",
  "ipam.vrf",
  "tenancy.tenant",
  "virtualization.cluster",
  "virtualization.virtualmachine",
  "virtualization.vminterface",
] as const;

/** Nautobot 1.6 registry `model_features["export_templates"]` (models we serve are kept). */
export const EXPORT_TEMPLATE_MODELS = [
  ...CUSTOM_LINK_MODELS.filter((k) => k !== "extras.secret" && k !== "extras.secretsgroup"),
  "dcim.consoleport",
  "dcim.interface",
  "dcim.inventoryitem",
  "dcim.manufacturer",
  "dcim.powerport",
  "dcim.rackgroup",
  "dcim.region",
].sort();

/** Nautobot 1.6 registry `model_features["dynamic_groups"]`. */
export const DYNAMIC_GROUP_MODELS = [
  "dcim.device",
  "dcim.deviceredundancygroup",
  "dcim.rack",
  "ipam.ipaddress",
  "ipam.prefix",
  "virtualization.cluster",
  "virtualization.virtualmachine",
] as const;

const templateProblem = (error: (f: string, m: string) => void, field: string, src: unknown) => {
  const problem = checkTemplate(String(src ?? ""));
  if (problem) error(field, `Invalid template: ${problem}`);
};

/** A choice of a selection custom field (Nautobot 1.6 `CustomFieldChoice`). */
export const customFieldChoice = defineModel({
  app: "extras",
  name: "customfieldchoice",
  verbose: "custom field choice",
  path: "custom-field-choices",
  changelog: true,
  deleteGuard: "customFieldChoiceInUse",
  fields: {
    field: f.rfk("extras.customfield", "CASCADE", { filterKey: "name" }),
    value: f.str(100, { required: true }),
    weight: f.int({ default: 100, min: 0, max: 32_767, help: "Higher weights appear later in the list" }),
  },
  nested: ["value"],
  display: "value",
  ordering: ["field", "weight", "value"],
  search: ["value"],
  uniqueTogether: [{ fields: ["field", "value"] }],
  async validate({ data, get, error }) {
    const cf = await get("extras.customfield", data.field);
    if (cf && cf.type !== "select" && cf.type !== "multi-select")
      error("field", "Custom field must be of type 'select' or 'multi-select'.");
  },
});

/** A note attached to an object (Nautobot 1.6 `Note`); the author is the acting user. */
export const note = defineModel({
  app: "extras",
  name: "note",
  naturalKeyFields: [],
  naturalKeyNote:
    "No natural key: notes have no uniqueness rule (Nautobot 2.x keys them by pk); not upserted",
  verbose: "note",
  path: "notes",
  changelog: true,
  fields: {
    user: f.ofk("users.user", "SET_NULL", { readOnly: true, filterKey: "username" }),
    user_name: f.str(150, { readOnly: true }),
    assigned_object: f.gfk("notes", "CASCADE", { required: true, ctFilter: "text" }),
    note: f.text({ required: true }),
    slug: f.str(100, { readOnly: true }),
  },
  nested: ["assigned_object", "note", "user", "slug"],
  display: "slug",
  ordering: ["created"],
  search: ["assigned_object_id", "note", "user_name"],
  async validate({ data, before, get, actor }) {
    if (before) return;
    data.user = actor?.id ?? null;
    data.user_name = actor?.username ?? "";
    const target = data.assigned_object_type
      ? await get(String(data.assigned_object_type), data.assigned_object_id)
      : undefined;
    const label = String(target?.name ?? target?.slug ?? data.assigned_object_id ?? "note");
    // Nautobot 1.6 `Note.slugify_function`: slugify(f"{str(assigned_object)[:50]}-{datetime.now().isoformat()}"),
    // e.g. `site-a-2026-11-27t003339186725`; the slug field holds 100 characters.
    data.slug = djangoSlugify(`${label.slice(0, 50)}-${pythonIsoNow()}`).slice(0, 100);
  },
});

/** A user-defined relationship between two content types (Nautobot 1.6 `Relationship`). */
export const relationship = defineModel({
  app: "extras",
  name: "relationship",
  verbose: "relationship",
  path: "relationships",
  changelog: true,
  notes: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { underscore: true, unique: true }) },
    description: f.description(),
    type: f.choice(RELATIONSHIP_TYPES, { default: "many-to-many", plain: true }),
    required_on: f.choice(RELATIONSHIP_REQUIRED_SIDES, { default: "", plain: true }),
    source_type: f.ct("relationships", { required: true, ctFilter: "choice" }),
    source_label: f.str(50, { default: "" }),
    source_hidden: f.bool(false),
    source_filter: f.json({ nullable: true, object: true }),
    destination_type: f.ct("relationships", { required: true, ctFilter: "choice" }),
    destination_label: f.str(50, { default: "" }),
    destination_hidden: f.bool(false),
    destination_filter: f.json({ nullable: true, object: true }),
  },
  nested: ["name", "slug"],
  display: (r) => String(r.name).replace(/_/g, " "),
  ordering: ["name"],
  search: ["description", "name"],
  validate({ data, before, error }) {
    const symmetric = String(data.type).startsWith("symmetric-");
    if (symmetric && data.source_type !== data.destination_type)
      error("destination_type", "Must match source_type for a symmetric relationship");
    if (symmetric && data.required_on)
      error("required_on", "Symmetric relationships cannot be marked as required.");
    if (before && before.type !== data.type)
      error(
        "type",
        "Not supported to change the type of the relationship when some associations are present.",
      );
  },
});

/** One association of a relationship (Nautobot 1.6 `RelationshipAssociation`). */
export const relationshipAssociation = defineModel({
  app: "extras",
  name: "relationshipassociation",
  verbose: "relationship association",
  path: "relationship-associations",
  // Not change-logged (a `BaseModel` in Nautobot), but shown under `relationships` of logged objects, which
  // read at a point need the associations of that point.
  history: true,
  fields: {
    relationship: f.rfk("extras.relationship", "CASCADE", { filterKey: "slug" }),
    source: f.gfk("relationships", "CASCADE", { bare: true, required: true }),
    destination: f.gfk("relationships", "CASCADE", { bare: true, required: true }),
  },
  nested: ["relationship", "source", "destination"],
  displayUses: ["relationship", "source", "destination"],
  // Nautobot 1.6 `RelationshipAssociation.__str__` (which writes "<->" for symmetric relationships; here
  // always "->", the relationship's type is not loaded for display).
  display: (_r, rel) =>
    `${(rel.source as { display?: string } | null)?.display ?? "unknown"} -> ${(rel.destination as { display?: string } | null)?.display ?? "unknown"} - ${(rel.relationship as { display?: string } | null)?.display ?? ""}`,
  ordering: ["relationship"],
  search: [],
  filters: { peer_id: { kind: "custom", fn: "peer_id" } },
  uniqueTogether: [
    { fields: ["relationship", "source_type", "source_id", "destination_type", "destination_id"] },
  ],
  serviceValidate: "relationshipAssociation",
});

/** A read-only value rendered from a Jinja template per object (Nautobot 1.6 `ComputedField`). */
export const computedField = defineModel({
  app: "extras",
  name: "computedfield",
  verbose: "computed field",
  path: "computed-fields",
  changelog: true,
  notes: true,
  fields: {
    slug: { ...f.slug("label", { underscore: true, unique: true }) },
    label: f.name(100),
    description: f.description(),
    content_type: f.ct("custom_fields", { required: true }),
    template: f.str(500, { required: true, help: "Jinja2 template code for field value" }),
    fallback_value: f.str(500, {
      default: "",
      help: "Fallback value (if any) to be output for the field in the case of a template rendering error.",
    }),
    weight: f.int({ default: 100, min: 0, max: 32_767 }),
  },
  nested: ["content_type", "label"],
  display: "label",
  ordering: ["weight", "slug"],
  search: ["content_type", "description", "fallback_value", "label", "template"],
  validate({ data, error }) {
    templateProblem(error, "template", data.template);
  },
});

/** A link shown on an object's page (Nautobot 1.6 `CustomLink`). */
export const customLink = defineModel({
  app: "extras",
  name: "customlink",
  verbose: "custom link",
  path: "custom-links",
  changelog: true,
  notes: true,
  fields: {
    target_url: f.str(500, { required: true, label: "URL" }),
    name: f.name(100, { unique: true }),
    content_type: f.ct(CUSTOM_LINK_MODELS, { required: true }),
    text: f.str(500, { required: true }),
    weight: f.int({ default: 100, min: 0, max: 32_767 }),
    group_name: f.str(50, { default: "" }),
    button_class: f.choice(BUTTON_CLASSES, { default: "default", plain: true }),
    new_window: { ...f.bool(false), required: true },
  },
  nested: ["content_type", "name"],
  ordering: ["group_name", "weight", "name"],
  search: ["content_type", "name", "target_url", "text"],
  validate({ data, error }) {
    templateProblem(error, "text", data.text);
    templateProblem(error, "target_url", data.target_url);
  },
});

/** A Jinja template rendering a list of objects (Nautobot 1.6 `ExportTemplate`). */
export const exportTemplate = defineModel({
  app: "extras",
  name: "exporttemplate",
  verbose: "export template",
  path: "export-templates",
  changelog: true,
  notes: true,
  relationships: true,
  fields: {
    content_type: f.ct(EXPORT_TEMPLATE_MODELS, { required: true, ctFilter: "model" }),
    owner_content_type: f.ct([], { nullable: true, readOnly: true }),
    owner_object_id: f.str(36, { nullable: true, readOnly: true }),
    owner: f.computed("null", { type: "field" }),
    name: f.name(100),
    description: f.description(),
    template_code: f.text({ required: true }),
    mime_type: f.str(50, { default: "" }),
    file_extension: f.str(15, { default: "" }),
  },
  nested: ["name"],
  display: (r) => `${String(r.content_type).replace(".", " | ")}: ${r.name}`,
  ordering: ["content_type", "name"],
  search: ["name", "description", "template_code"],
  // ExportTemplate.clean's own check (owner NULL), keyed by name.
  uniqueTogether: [
    {
      fields: ["content_type", "name"],
      message: "An ExportTemplate with this name and content type already exists.",
      errorKey: "name",
    },
  ],
  validate({ data, error }) {
    templateProblem(error, "template_code", data.template_code);
  },
});

/** A group of objects defined by a filter (Nautobot 1.6 `DynamicGroup`). */
export const dynamicGroup = defineModel({
  app: "extras",
  name: "dynamicgroup",
  verbose: "dynamic group",
  path: "dynamic-groups",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true, help: "Dynamic Group name" }),
    slug: { ...f.slug("name", { unique: true }), help: "Unique slug" },
    description: f.description(),
    content_type: f.ct(DYNAMIC_GROUP_MODELS, { required: true, ctFilter: "choice" }),
    filter: f.json({
      object: true,
      required: true,
      help: "A JSON-encoded dictionary of filter parameters for group membership",
    }),
    children: f.computed("reverse_nested", {
      type: "field",
      of: { model: "extras.dynamicgroupmembership", via: "parent_group" },
    }),
  },
  nested: ["name", "slug", "content_type"],
  ordering: ["content_type", "name"],
  search: ["content_type", "description", "name", "slug"],
  serviceValidate: "dynamicGroup",
});

/** A child group of a dynamic group with its set operator (Nautobot 1.6 `DynamicGroupMembership`). */
export const dynamicGroupMembership = defineModel({
  app: "extras",
  name: "dynamicgroupmembership",
  verbose: "dynamic group membership",
  path: "dynamic-group-memberships",
  fields: {
    // Writable in Nautobot 1.6 `NestedDynamicGroupMembershipSerializer` (a dynamic group's `children`).
    group: f.rfk("extras.dynamicgroup", "CASCADE", { filterKey: "slug", nestedWrite: "required" }),
    parent_group: f.rfk("extras.dynamicgroup", "CASCADE", { filterKey: "slug", nestedWrite: "required" }),
    operator: f.choice(DYNAMIC_GROUP_OPERATORS, { required: true, plain: true }),
    weight: f.int({ required: true, min: 0, max: 32_767 }),
  },
  nested: ["group", "parent_group", "operator", "weight"],
  displayUses: ["group", "parent_group"],
  display: (r, rel) =>
    `${(rel.parent_group as { display?: string } | null)?.display ?? ""} > ${r.operator} (${r.weight}) > ${(rel.group as { display?: string } | null)?.display ?? ""}`,
  ordering: ["parent_group", "weight", "group"],
  search: ["group.name", "group.slug", "operator", "parent_group.name", "parent_group.slug"],
  uniqueTogether: [{ fields: ["group", "parent_group", "operator", "weight"] }],
  validate({ data, error }) {
    if (data.group && data.group === data.parent_group) error("group", "A group cannot be its own parent.");
  },
});

/**
 * A saved GraphQL query (Nautobot 1.6 `GraphQLQuery`), run by `POST …/graphql-queries/<id>/run/`. Saving
 * parses the query (a syntax error is reported under `query`) and sets `variables` to its variables with
 * their default values as text, "" when none (Nautobot's `GraphQLQuery.save`).
 */
export const graphqlQuery = defineModel({
  app: "extras",
  name: "graphqlquery",
  verbose: "GraphQL query",
  plural: "GraphQL queries",
  path: "graphql-queries",
  changelog: true,
  notes: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { unique: true }) },
    query: f.text({ required: true }),
    variables: f.json({ default: {}, object: true }),
  },
  nested: ["name"],
  ordering: ["slug"],
  search: ["name", "slug", "query"],
  validate({ data, error }) {
    if (typeof data.query !== "string" || !data.query.trim()) return;
    try {
      const doc = parse(data.query);
      const variables: Record<string, string> = {};
      for (const d of doc.definitions)
        if (d.kind === Kind.OPERATION_DEFINITION)
          for (const v of d.variableDefinitions ?? [])
            variables[v.variable.name.value] = !v.defaultValue
              ? ""
              : v.defaultValue.kind === Kind.STRING
                ? v.defaultValue.value
                : print(v.defaultValue);
      data.variables = variables;
    } catch (e) {
      error("query", e instanceof GraphQLError ? e.message : String(e));
    }
  },
});

export const models: ModelDef[] = [
  customFieldChoice,
  note,
  relationship,
  relationshipAssociation,
  computedField,
  customLink,
  exportTemplate,
  dynamicGroup,
  dynamicGroupMembership,
  graphqlQuery,
];
