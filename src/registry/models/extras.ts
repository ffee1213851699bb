/**
 * Extras models: statuses, tags, custom fields, config contexts, webhooks, object changes and content
 * types (Nautobot 1.6 `extras` app; shared/reference/nautobot-models.md §2F, nautobot-webhooks.md §1, §7).
 */

import { targetProblem } from "../../net/targets.ts";
import { CA_FILE_UNUSABLE, readCaFile } from "../../net/tls.ts";
import { checkTemplate } from "../../template/jinja.ts";
import { customValueError, pythonStr } from "../custom-values.ts";
import { contentTypeLabel, defineModel, f, type ModelDef, type ValidateArgs } from "../meta.ts";

const COLOR = f.str(6, { default: "9e9e9e", format: "color" });

export const CUSTOM_FIELD_TYPES = [
  ["text", "Text"],
  ["integer", "Integer"],
  ["boolean", "Boolean (true/false)"],
  ["date", "Date"],
  ["url", "URL"],
  ["select", "Selection"],
  ["multi-select", "Multiple selection"],
  ["json", "JSON"],
  ["markdown", "Markdown"],
] as const;

export const FILTER_LOGIC = [
  ["disabled", "Disabled"],
  ["loose", "Loose"],
  ["exact", "Exact"],
] as const;

export const HTTP_METHODS = [
  ["GET", "GET"],
  ["POST", "POST"],
  ["PUT", "PUT"],
  ["PATCH", "PATCH"],
  ["DELETE", "DELETE"],
] as const;

export const CHANGE_ACTIONS = [
  ["create", "Created"],
  ["update", "Updated"],
  ["delete", "Deleted"],
] as const;

export const status = defineModel({
  app: "extras",
  name: "status",
  verbose: "status",
  plural: "statuses",
  path: "statuses",
  changelog: true,
  customFields: true,
  fields: {
    content_types: f.cts("statuses", { required: true }),
    name: f.name(50, { unique: true }),
    slug: f.slug("name", { max: 50, unique: true }),
    color: COLOR,
    description: { ...f.description(), hidden: true },
  },
  nested: ["name", "slug"],
  ordering: ["name"],
  search: ["content_types", "name", "slug"],
});

export const tag = defineModel({
  app: "extras",
  name: "tag",
  verbose: "tag",
  path: "tags",
  changelog: true,
  customFields: true,
  fields: {
    name: f.name(100, { unique: true }),
    slug: { ...f.slug("name", { unique: true }), required: true },
    color: COLOR,
    description: f.description(),
    tagged_items: f.computed("tagged_items", { type: "integer", annotation: "absent" }),
    // Nautobot 1.6 `TagSerializer` (API 1.3+): required content types; `TagSerializerVersion12` (API 1.2)
    // has none, a given list is ignored and the tag applies to every taggable model.
    content_types: { ...f.cts("taggable", { required: true }), versions: { since: "1.3" } },
  },
  nested: ["name", "slug", "color"],
  ordering: ["name"],
  search: ["content_types", "name", "slug"],
  serviceValidate: "tagContentTypes",
});

export const customField = defineModel({
  app: "extras",
  name: "customfield",
  notes: true,
  verbose: "custom field",
  path: "custom-fields",
  changelog: true,
  fields: {
    content_types: f.cts("custom_fields", { required: true }),
    type: f.choice(CUSTOM_FIELD_TYPES, { required: true }),
    // `label` before `name`, as Nautobot 1.6 `CustomFieldSerializerVersion12` renders them.
    label: { ...f.str(50, { default: "" }), versions: { requiredSince: "1.4" } },
    // On the wire at API 1.2 and 1.3 only (`CustomFieldSerializerVersion12`); from 1.4 a new field's name
    // is its slug, and the slug comes from the label.
    name: {
      ...f.str(50, {
        required: true,
        unique: true,
        pattern: [/^[a-z0-9_]+$/i, "Only alphanumeric characters and underscores are allowed."],
      }),
      versions: { until: "1.3" },
    },
    // Nautobot 1.6 `CustomField.slug` is populated from the label (`label or name` when blank,
    // `_fixup_empty_fields`), at API 1.2/1.3 as well (`CustomFieldSerializerVersion12.validate`).
    slug: {
      ...f.slug("label", { max: 50, underscore: true, unique: true, orFrom: "name" }),
      versions: { requiredSince: "1.4" },
    },
    description: f.description(),
    required: f.bool(false),
    filter_logic: f.choice(FILTER_LOGIC, { default: "loose" }),
    default: f.json({ nullable: true }),
    weight: f.int({ default: 100, min: 0, max: 32_767 }),
    validation_minimum: f.int({ nullable: true }),
    validation_maximum: f.int({ nullable: true }),
    validation_regex: f.str(500, { default: "" }),
    /**
     * Inline choices of earlier releases, kept only so `upgrade` can move them to custom-field choices;
     * never on the wire (Nautobot 1.6 keeps choices in `CustomFieldChoice`, issue 9).
     */
    choices: f.json({ array: "str", default: [], hidden: true, readOnly: true, noFilter: true }),
  },
  nested: ["name"],
  display: (r) => (r.label ? r.label : r.name),
  ordering: ["weight", "name"],
  search: ["description", "label", "name"],
  async validate({ data, before, error, find, regex }) {
    // API 1.2: a field created without a label is labelled with its name (CustomFieldSerializerVersion12).
    if (!before && !data.label) data.label = data.name;
    // API 1.4+: no name on the wire, and the (required) slug is the name.
    if (!before && !data.name) data.name = data.slug;
    // The field's own validator (Nautobot `validate_regex`, run before `clean`): the pattern must compile,
    // here as RE2 within the size bounds of regex lookups (task t5; Nautobot's Python `re` also accepts
    // backreferences and lookaround). Checked on every save, so a stored pattern RE2 cannot compile must be
    // fixed with the next edit of its field.
    const pattern = String(data.validation_regex ?? "");
    const bad = pattern ? regex.problem(pattern) : undefined;
    if (bad)
      return error(
        "validation_regex",
        `${pattern} is not a valid regular expression (RE2: ${bad.replace(/\.$/, "")}).`,
      );
    // Nautobot 1.6 `CustomField.clean`: its rules in its order, the first one broken only.
    if (before && before.name !== data.name) return error("name", "Name cannot be changed once created");
    if (before && before.slug !== data.slug) return error("slug", "Slug cannot be changed once created");
    if (before && before.type !== data.type) return error("type", "Type cannot be changed once created");
    const why = await defaultProblem(data, before, find, regex);
    if (why) return error("default", `Invalid default value "${pythonStr(data.default)}": ${why}`);
    if (data.validation_minimum != null && data.type !== "integer")
      return error("validation_minimum", "A minimum value may be set only for numeric fields");
    if (data.validation_maximum != null && data.type !== "integer")
      return error("validation_maximum", "A maximum value may be set only for numeric fields");
    if (data.validation_regex && !["text", "url", "select", "multi-select"].includes(String(data.type)))
      error(
        "validation_regex",
        "Regular expression validation is supported only for text, URL and select fields",
      );
    // `CustomField.clean`'s last rule (a select default among the choices) is never reached: `validate`
    // above has already refused such a default with its own words, as Nautobot 1.6.32 answers.
  },
});

/**
 * Why a custom field's `default` is not a value of the field, or undefined (Nautobot 1.6 `CustomField.clean`
 * runs `CustomField.validate(default)` unless the default is null). An empty default ("" or []) is refused
 * only by a required field. Choices are rows of custom-field choices, so a field being created has none:
 * Nautobot refuses any non-empty default of a new selection field ("Available choices are: ").
 */
async function defaultProblem(
  data: Record<string, any>,
  before: Record<string, any> | undefined,
  find: ValidateArgs["find"],
  regex: ValidateArgs["regex"],
): Promise<string | undefined> {
  const value: unknown = data.default;
  if (value === null || value === undefined) return undefined;
  if (value === "" || (Array.isArray(value) && value.length === 0))
    return data.required ? "Required field cannot be empty." : undefined;
  const selection = data.type === "select" || data.type === "multi-select";
  const rows =
    before && selection ? await find("extras.customfieldchoice", { field: before.id }, 10_000) : [];
  // `CustomFieldChoice.Meta.ordering`: weight, then value.
  rows.sort((x, y) => x.weight - y.weight || (x.value < y.value ? -1 : x.value > y.value ? 1 : 0));
  return customValueError(
    {
      type: String(data.type),
      validation_regex: String(data.validation_regex ?? ""),
      validation_minimum: data.validation_minimum ?? null,
      validation_maximum: data.validation_maximum ?? null,
      choices: rows.map((r) => String(r.value)),
    },
    value,
    regex,
  );
}

export const configContext = defineModel({
  app: "extras",
  name: "configcontext",
  notes: true,
  verbose: "config context",
  path: "config-contexts",
  changelog: true,
  serviceValidate: "configContextData",
  fields: {
    // Nautobot 1.6 `ConfigContext.clean` checks the name itself (unique together with the owner, which is
    // never set through the API), in its own words.
    name: f.name(100, { unique: true, uniqueMessage: "A ConfigContext with this name already exists." }),
    owner_content_type: f.ct([], { nullable: true, readOnly: true }),
    owner_object_id: f.str(36, { nullable: true, readOnly: true }),
    owner: f.computed("null", { type: "field" }),
    weight: f.int({ default: 1000, min: 0, max: 32767 }),
    description: f.description(),
    schema: f.ofk("extras.configcontextschema", "SET_NULL"),
    is_active: f.bool(true),
    regions: f.m2m("dcim.region"),
    sites: f.m2m("dcim.site"),
    locations: f.m2m("dcim.location"),
    roles: f.m2m("dcim.devicerole"),
    device_types: f.m2m("dcim.devicetype"),
    platforms: f.m2m("dcim.platform"),
    cluster_groups: f.m2m("virtualization.clustergroup"),
    clusters: f.m2m("virtualization.cluster"),
    tenant_groups: f.m2m("tenancy.tenantgroup"),
    tenants: f.m2m("tenancy.tenant"),
    device_redundancy_groups: f.m2m("dcim.deviceredundancygroup"),
    tags: f.m2m("extras.tag", { filterKey: "slug" }),
    data: f.json({ object: true, required: true }),
  },
  nested: ["name"],
  ordering: ["weight", "name"],
  search: ["data", "description", "name"],
  // Nautobot 1.6 `ConfigContextFilterSet`: one singular filter (and `_id`) per assignment list.
  filters: Object.fromEntries(
    (
      [
        ["region", "regions", "slug"],
        ["site", "sites", "slug"],
        ["location", "locations", "slug"],
        ["role", "roles", "slug"],
        ["device_type", "device_types", "slug"],
        ["platform", "platforms", "slug"],
        ["cluster_group", "cluster_groups", "slug"],
        ["cluster", "clusters", "name"],
        ["tenant_group", "tenant_groups", "slug"],
        ["tenant", "tenants", "slug"],
        ["device_redundancy_group", "device_redundancy_groups", "slug"],
      ] as ReadonlyArray<readonly [string, string, string]>
    )
      .flatMap(([name, path, key]) => [
        [name, { kind: "path", path, key }],
        [`${name}_id`, { kind: "path", path, key: "id" }],
      ])
      .concat([["tag", { kind: "path", path: "tags", key: "slug" }]]),
  ),
});

export const webhook = defineModel({
  app: "extras",
  name: "webhook",
  notes: true,
  loginRequired: true,
  verbose: "webhook",
  path: "webhooks",
  changelog: true,
  fields: {
    content_types: f.cts("webhooks", { required: true }),
    name: f.name(150, { unique: true }),
    type_create: f.bool(false),
    type_update: f.bool(false),
    type_delete: f.bool(false),
    payload_url: f.str(500, { required: true, label: "URL" }),
    enabled: f.bool(true),
    // A plain string on the wire, as Nautobot 1.6's serializer sends it (issue 9).
    http_method: f.choice(HTTP_METHODS, { default: "POST", plain: true }),
    http_content_type: f.str(100, { default: "application/json" }),
    additional_headers: f.text(),
    body_template: f.text(),
    secret: f.str(255, {
      default: "",
      writeOnly: true,
      noFilter: true,
      help: "When provided, the request will include a 'X-Hook-Signature' header containing a HMAC hex digest of the payload body using the secret as the key. The secret is not transmitted in the request and never returned.",
    }),
    ssl_verification: f.bool(true),
    ca_file_path: f.str(4096, { nullable: true }),
    /** Saved by a superuser/the system or under an allowing policy: may target restricted addresses. */
    trusted_target: f.bool(false, { readOnly: true, hidden: true, noFilter: true }),
  },
  nested: ["name"],
  ordering: ["name"],
  search: ["additional_headers", "body_template", "name", "payload_url"],
  /**
   * Nautobot 1.6 `Webhook.clean()` and `check_for_conflicts()` (nautobot-webhooks.md §1.1–1.2), plus what it
   * leaves to delivery time (W11): the URL and the templates.
   */
  async validate({ data, before, error, find, actor, settings }) {
    if (!data.type_create && !data.type_update && !data.type_delete) {
      error("__all__", "You must select at least one type: create, update, and/or delete.");
    }
    if (!data.ssl_verification && data.ca_file_path) {
      error("ca_file_path", "Do not specify a CA certificate file if SSL verification is disabled.");
    } else if (data.ca_file_path && !readCaFile(String(data.ca_file_path))) {
      error("ca_file_path", CA_FILE_UNUSABLE);
    }
    const url = String(data.payload_url ?? "");
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !["http:", "https:"].includes(parsed.protocol) || !parsed.hostname) {
      error("payload_url", "Enter a valid URL (http:// or https:// with a host).");
    }
    // Restricted targets (loopback, private, link-local…) need a superuser or an allowing policy (issue 12).
    // A webhook keeps its trust while its URL is unchanged, so others may still edit its other fields.
    const trusted =
      !actor ||
      actor.isSuperuser ||
      settings.webhookTargets.allowPrivate ||
      (!!before?.trusted_target && before.payload_url === url);
    data.trusted_target = trusted;
    if (parsed?.hostname && !trusted) {
      const problem = await targetProblem(parsed.hostname, settings.webhookTargets);
      if (problem) error("payload_url", problem);
    }
    // Another webhook with the same URL, a shared content type and the same event type is a conflict.
    const mine = new Set<string>((data.content_types as string[] | undefined) ?? []);
    if (parsed && mine.size) {
      const others = (await find("extras.webhook", { payload_url: url })).filter((w) => w.id !== before?.id);
      for (const [flag, action] of [
        ["type_create", "create"],
        ["type_update", "update"],
        ["type_delete", "delete"],
      ] as const) {
        if (!data[flag]) continue;
        for (const w of others) {
          if (!w[flag]) continue;
          const shared = ((w.content_types as string[] | undefined) ?? []).filter((ct) => mine.has(ct));
          for (const ct of shared)
            error(flag, `A webhook already exists for ${action} on ${ct.replace(".", " | ")} to URL ${url}`);
        }
      }
    }
    for (const field of ["body_template", "additional_headers"]) {
      const src = String(data[field] ?? "");
      if (!src.trim()) continue;
      const problem = checkTemplate(src);
      if (problem) error(field, `Invalid template: ${problem}`);
    }
  },
});

export const DELIVERY_STATES = [
  ["queued", "Queued"],
  ["sending", "Sending"],
  ["retry", "Waiting to retry"],
  ["succeeded", "Succeeded"],
  ["failed", "Failed"],
] as const;

export const EVENTS = [
  ["created", "Created"],
  ["updated", "Updated"],
  ["deleted", "Deleted"],
] as const;

/** The states of a delivery not finished yet (webhooks/worker.ts claims among them). */
export const UNFINISHED = `"state" IN ('queued', 'sending', 'retry')`;

/**
 * One webhook delivery: the outbox row written with the change it reports (issue 4), then claimed,
 * attempted and finished by a worker. Not in Nautobot (it keeps no delivery record, W4).
 */
export const webhookDelivery = defineModel({
  app: "extras",
  name: "webhookdelivery",
  loginRequired: true,
  verbose: "webhook delivery",
  plural: "webhook deliveries",
  path: "webhook-deliveries",
  readOnly: true,
  viewThrough: "webhook",
  fields: {
    webhook: f.fk("extras.webhook", "CASCADE", { readOnly: true }),
    object_change: f.fk("extras.objectchange", "CASCADE", { readOnly: true, hidden: true }),
    event: f.choice(EVENTS, { readOnly: true }),
    changed_object_type: f.ct("all", { readOnly: true }),
    changed_object_id: f.str(36, { readOnly: true }),
    request_id: f.str(36, { readOnly: true }),
    state: f.choice(DELIVERY_STATES, { readOnly: true }),
    attempts: f.int({ readOnly: true, default: 0 }),
    max_attempts: f.int({ readOnly: true, default: 5 }),
    created: f.datetime({ readOnly: true }),
    next_attempt_at: f.datetime({ readOnly: true, nullable: true }),
    last_attempt_at: f.datetime({ readOnly: true, nullable: true }),
    completed_at: f.datetime({ readOnly: true, nullable: true }),
    last_status_code: f.int({ readOnly: true, nullable: true }),
    last_error: f.text({ readOnly: true }),
    last_duration_ms: f.int({ readOnly: true, nullable: true, label: "Last duration (ms)" }),
    request: f.json({ readOnly: true, help: "The last request as sent (signature redacted)." }),
    attempt_log: f.json({ readOnly: true, help: "Every attempt: number, start, duration, status, error." }),
    seq: f.int({ readOnly: true, hidden: true, noFilter: true }),
    claims: f.int({ readOnly: true, hidden: true, noFilter: true, default: 0 }),
    lease_owner: f.str(100, { readOnly: true, hidden: true, noFilter: true, nullable: true }),
    lease_until: f.datetime({ readOnly: true, hidden: true, noFilter: true, nullable: true }),
  },
  nested: ["state"],
  display: (r) => `${r.event} ${r.changed_object_type} ${r.changed_object_id} (${r.state})`,
  ordering: ["-seq"],
  search: ["changed_object_id", "request_id", "last_error"],
  // The workers' claim reads unfinished rows only, in `seq` order, and per object the earliest unfinished
  // one: partial indexes keep both probes short however many deliveries have succeeded (a full index made
  // each probe walk every finished delivery of a busy object, and the claim slowed down as they piled up).
  indexes: [
    ["state", "next_attempt_at"],
    ["webhook_id", "changed_object_id", "seq"],
    { columns: ["seq"], where: UNFINISHED, name: "unfinished" },
    { columns: ["webhook_id", "changed_object_id", "seq"], where: UNFINISHED, name: "unfinished" },
  ],
});

export const objectChange = defineModel({
  app: "extras",
  name: "objectchange",
  loginRequired: true,
  verbose: "object change",
  path: "object-changes",
  readOnly: true,
  fields: {
    time: f.datetime({ readOnly: true }),
    user: f.ofk("users.user", "SET_NULL", { readOnly: true, filterKey: "username" }),
    user_name: f.str(150, { readOnly: true }),
    request_id: f.str(36, { readOnly: true }),
    action: f.choice(CHANGE_ACTIONS, { readOnly: true }),
    changed_object_type: f.ct("all", { readOnly: true }),
    changed_object_id: f.str(36, { readOnly: true }),
    changed_object: f.computed("changed_object", { type: "nested object" }),
    related_object_type: f.ct("all", { readOnly: true, hidden: true, nullable: true }),
    related_object_id: f.str(36, { readOnly: true, hidden: true, nullable: true }),
    object_repr: f.str(200, { readOnly: true, hidden: true }),
    object_data: f.json({ readOnly: true }),
    prechange_data: f.json({ readOnly: true, hidden: true, noFilter: true }),
    base_url: f.str(300, { readOnly: true, hidden: true, noFilter: true, nullable: true }),
    // The change sequence (issue 26; service/change-feed.ts): set at commit, in commit order; read by the
    // change feed and webhook replay only, never on the wire of Nautobot's endpoints.
    seq: f.int({ readOnly: true, hidden: true, noFilter: true, nullable: true }),
  },
  // `changed_object_id`: an object's change log (its Change Log tab, `?changed_object_id=`) is an index
  // probe, not a scan of every change (issue 25: a device's tabs under 50 ms on the bench data).
  indexes: [["seq"], ["changed_object_id"]],
  nested: [],
  // Nautobot 1.6 `ObjectChange.__str__`: "<str(content type)> <object_repr> <action, lower case> by <user_name>".
  display: (r) =>
    `${contentTypeLabel(String(r.changed_object_type))} ${r.object_repr} ${r.action === "create" ? "created" : r.action === "update" ? "updated" : "deleted"} by ${r.user_name}`,
  ordering: ["-time"],
  search: ["object_repr", "user_name"],
  filters: {
    time_after: { kind: "custom", fn: "time_after" },
    time_before: { kind: "custom", fn: "time_before" },
  },
});

export const contentType = defineModel({
  app: "extras",
  name: "contenttype",
  verbose: "content type",
  path: "content-types",
  table: "extras_contenttype",
  readOnly: true,
  fields: {
    app_label: f.str(100, { readOnly: true }),
    model: f.str(100, { readOnly: true }),
    display_name: f.str(200, { readOnly: true, hidden: true }),
  },
  nested: ["app_label", "model"],
  display: "display_name",
  ordering: ["app_label", "model"],
  search: ["app_label", "model"],
});

export const models: ModelDef[] = [
  status,
  tag,
  customField,
  configContext,
  webhook,
  webhookDelivery,
  objectChange,
  contentType,
];
