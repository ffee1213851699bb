/**
 * The model registry's meta-schema: how a model is declared, as data.
 *
 * A model declaration (`ModelDef`) names its fields (`FieldDef`), representation rules (nested fields,
 * display), uniqueness, ordering, filters and validation. Everything else (DDL, SQL, representations,
 * filters, OPTIONS metadata, change events) is derived by generic code from these declarations.
 * Field semantics follow Nautobot 1.6 (see shared/reference/nautobot-models.md, legend table).
 */
import type { TargetPolicy } from "../net/targets.ts";

/** A choice set: ordered `[value, label]` pairs (Nautobot `ChoiceSet`). */
export type Choices = ReadonlyArray<readonly [string | number, string]>;

/** What happens to a referencing row when its target is deleted (Django `on_delete`). */
export type OnDelete = "PROTECT" | "CASCADE" | "SET_NULL";

interface FieldBase {
  /** Human label (OPTIONS `label`); defaults to the field name with `_` as spaces, first letter upper. */
  label?: string;
  /** Help text (OPTIONS `help_text`). */
  help?: string;
  /** Required on create (POST) and on PUT. */
  required?: boolean;
  /** Read-only on the wire. */
  readOnly?: boolean;
  /** Write-only on the wire (never rendered). */
  writeOnly?: boolean;
  /**
   * Stored as a one-way hash (token keys): rendered as null from the database, so the hash never reaches a
   * response, the change log or a webhook payload (issue 12). The clear value appears once, in the
   * response that creates it.
   */
  hashed?: boolean;
  /** JSON `null` accepted and stored. */
  nullable?: boolean;
  /** Whole-table uniqueness (DRF message "<model> with this <field> already exists."). */
  unique?: boolean;
  /**
   * The message of a `unique` violation when the model's own `clean()` checks it instead of DRF (Nautobot
   * 1.6 `ConfigContext.clean`: "A ConfigContext with this name already exists.", under the field's name).
   */
  uniqueMessage?: string;
  /** Not rendered in the full representation (still stored, filterable). */
  hidden?: boolean;
  /** Do not generate the automatic exact filter for this field. */
  noFilter?: boolean;
  /**
   * Every REST API write (create, PUT, PATCH, bulk) whose data does not give the field sets it to its
   * `default`, also on update and also at API versions where the field is off the wire, as a serializer's
   * `validate()` does (Nautobot 1.6 `VMInterfaceSerializerVersion12.validate`, inherited by
   * `VMInterfaceSerializer`: a VM interface written without a status becomes `active`). Web-form writes
   * keep the stored value (`Ctx.restApi`).
   */
  defaultOnWrite?: boolean;
  /**
   * API versions at which the field is on the wire, as declared (Nautobot 1.6's `*SerializerVersion1x`
   * classes, nautobot-models.md §0.2): from `since` through `until` (either open). At other versions it is
   * hidden and read-only (a create stores its `default`, or for a tag's content types every taggable model);
   * `registryAt` applies this. Versions are `1.x` strings compared numerically.
   */
  versions?: {
    since?: string;
    until?: string;
    /** Required from this API version on (Nautobot 1.6 `CustomFieldSerializer`: `label` and `slug` from 1.4). */
    requiredSince?: string;
  };
}

export interface StrField extends FieldBase {
  kind: "str";
  max?: number;
  min?: number;
  default?: string | null;
  /** Regular expression the value must match, with its error message. */
  pattern?: readonly [RegExp, string];
  /** `email`, `url`, `color` (6 hex) — validation flavours. */
  format?: "email" | "url" | "color" | "hex";
  /** Store a naturalized sort key in `<name>_nat` (Nautobot natural ordering). */
  natural?: boolean;
}
export interface TextField extends FieldBase {
  kind: "text";
  default?: string;
  /**
   * Most characters (UTF-16 code units, after trimming) accepted on write; default `SIZE_LIMITS.text`.
   * Nautobot's TextFields have no maximum; ours are capped so one object cannot hold megabytes that every
   * page view would render (issue 23).
   */
  max?: number;
}
export interface SlugField extends FieldBase {
  kind: "slug";
  max?: number;
  /** Field(s) the slug is generated from when omitted (AutoSlugField `populate_from`). */
  from?: string;
  /** Field the slug is generated from when `from` is blank (Nautobot `CustomField`: `label or name`). */
  orFrom?: string;
  /** Use `_` instead of `-` (custom fields). */
  underscore?: boolean;
}
export interface IntField extends FieldBase {
  kind: "int";
  min?: number;
  max?: number;
  default?: number | null;
}
export interface BoolField extends FieldBase {
  kind: "bool";
  default?: boolean;
}
export interface DecimalField extends FieldBase {
  kind: "decimal";
  digits: number;
  places: number;
}
export interface DateField extends FieldBase {
  kind: "date";
}
export interface DateTimeField extends FieldBase {
  kind: "datetime";
  /** Set to now on create when omitted. */
  autoNow?: boolean;
}
export interface JsonField extends FieldBase {
  kind: "json";
  /** Value must be a JSON object (e.g. local_context_data). */
  object?: boolean;
  /** Value must be a JSON array (e.g. ports, actions). */
  array?: "int" | "str";
  default?: unknown;
  /** For `array: "int"`: bounds of each element. */
  itemMin?: number;
  itemMax?: number;
  /** Most characters of the value as compact JSON (`JSON.stringify`) accepted on write; default `SIZE_LIMITS.json`. */
  max?: number;
}
export interface ChoiceField extends FieldBase {
  kind: "choice";
  choices: Choices;
  /** Rendered as the bare value both ways (DRF auto ChoiceField, "plain-choice"). */
  plain?: boolean;
  /**
   * In nested forms, DRF's plain ChoiceField derived from the model field, as the model's nested serializer
   * does not declare the field (Nautobot 1.6 `NestedDeviceRedundancyGroupSerializer` `failover_strategy`,
   * `NestedInterfaceRedundancyGroupSerializer` `protocol`): the bare value, and in OPTIONS the model field's
   * `label` (verbose_name) and `required` (false for a field with `blank=True` or a default).
   */
  nestedAuto?: { label?: string; required: boolean };
  /** Values are integers (rack width). */
  int?: boolean;
  default?: string | number;
}
export interface FkField extends FieldBase {
  kind: "fk";
  /** Target model key `app.model`. */
  to: string;
  onDelete: OnDelete;
  /** Omitted-on-write default is null but explicit `null` is rejected (Tenant.group). */
  rejectNull?: boolean;
  /** Render with this list of target fields instead of the target's nested representation. */
  nestedFields?: readonly string[];
  /**
   * Render as a bare UUID in every form (Nautobot 1.6 serializers' `PrimaryKeyRelatedField`: inventory item
   * `parent`, device redundancy group `secrets_group`); written as a UUID too.
   */
  asId?: boolean;
  /**
   * How the model's nested serializers declare this FK when they list it (`nested` or an FK's
   * `nestedFields`), where Nautobot 1.6 does not make it `read_only=True`: a writable nested serializer,
   * `required` unless declared `required=False` (`NestedVirtualChassisSerializer.master`,
   * `CircuitCircuitTerminationSerializer.site`). Only OPTIONS shows it (nested writes are not supported).
   */
  nestedWrite?: "optional" | "required";
  /** Restrict writable targets: extra equality conditions on the target's columns. */
  limitTo?: Readonly<Record<string, unknown>>;
  /** Filter name exposed as `<name>` with this natural key (slug or name); false disables it. */
  filterKey?: string | false;
  /** Name of the `<x>_id` filter; default `<field>_id`. */
  idFilter?: string;
  /**
   * Django's `related_name`: the name of the reverse filters on the target (`<name>`, `<name>__n`,
   * `has_<name>`); default the declaring model's URL path with `_` (`devices`, `console_ports`).
   */
  relatedName?: string;
}
export interface M2mField extends FieldBase {
  kind: "m2m";
  to: string;
  /** Join table name; default `<model table>_<field>`. */
  through?: string;
  filterKey?: string | false;
}
export interface StatusField extends FieldBase {
  kind: "status";
  /** Status slug stored on create when the field is read-only on the wire (interfaces at API 1.2). */
  default?: string;
}
/**
 * How the filter of a content-type field reads its values, as Nautobot 1.6's FilterSets (issue 24):
 * - `text`: `ContentTypeFilter`, one free `app.model` (the last one given), case-insensitive, anything
 *   else matches nothing; the default of `ct` fields;
 * - `choice`: `ContentTypeMultipleChoiceFilter`, every value one of the field's allowed types (else
 *   "Select a valid choice. <v> is not one of the available choices."), several values AND for `cts`
 *   fields, OR otherwise; the default of `cts` and generic-FK `_type` fields;
 * - `model`: an automatic `ModelChoiceFilter` (ExportTemplate.content_type): one value, an unknown one is
 *   "Select a valid choice. That choice is not one of the available choices.";
 * - `pk`: an automatic `ModelMultipleChoiceFilter` over content-type ids (ObjectPermission.object_types);
 *   this API names content types by `app.model`, anything else is Nautobot's 400 for that value.
 */
export type ContentTypeFilterMode = "text" | "choice" | "model" | "pk";
export interface ContentTypeField extends FieldBase {
  kind: "ct";
  /** Allowed `app.model` values, or a feature name of the registry (`cable_terminations`). */
  allowed: readonly string[] | string;
  ctFilter?: ContentTypeFilterMode;
}
export interface ContentTypesField extends FieldBase {
  kind: "cts";
  allowed: readonly string[] | string;
  ctFilter?: ContentTypeFilterMode;
}
/** Generic FK: `<name>_type` + `<name>_id` on the wire, `<name>` read back as a nested object. */
export interface GenericFkField extends FieldBase {
  kind: "gfk";
  allowed: readonly string[] | string;
  /** How `<name>_type` filters (see ContentTypeFilterMode). */
  ctFilter?: ContentTypeFilterMode;
  /** What happens to this row when the target is deleted. */
  onDelete: OnDelete;
  /** The object id is not checked for existence (IPAddress.assigned_object_id). */
  unchecked?: boolean;
  /**
   * Render only `<name>_type` and `<name>_id`, not the object (Nautobot `RelationshipAssociation`'s
   * `source_type`/`source_id`); the object is still loaded when `display` uses it.
   */
  bare?: boolean;
}
export interface IpField extends FieldBase {
  kind: "ip";
  /** `network`: host bits cleared (prefix, aggregate); `host`: host bits kept (IP address). */
  mode: "network" | "host";
}
export interface MacField extends FieldBase {
  kind: "mac";
}
/**
 * A read-only count of rows of `model` whose `via` FK points at this row. Nautobot annotates it on the
 * viewset's queryset, so a create's response leaves it out (see `ComputedField.annotation`).
 */
export interface CountField extends FieldBase {
  kind: "count";
  model: string;
  via: string;
  /** Count across the tree (this node and its descendants). */
  tree?: boolean;
  /**
   * Nautobot reads a model property rather than an annotation (`Interface.count_ipaddresses`), so the
   * count is in create responses and related objects too.
   */
  property?: boolean;
}
/** A read-only value computed set-wise by a named loader (see service/computed.ts). */
export interface ComputedField extends FieldBase {
  kind: "computed";
  loader: string;
  /**
   * Nautobot 1.6 computes the value as a queryset annotation, which the instance a create saves does not
   * carry: a create's response leaves the key out (`"absent"`: an `IntegerField(read_only=True)`, which DRF
   * skips) or shows null (`"null"`: a `SerializerMethodField` reading `getattr(obj, name, None)`, such as
   * `tree_depth`). Count fields (`CountField`) are annotations and always left out.
   */
  annotation?: "absent" | "null";
  /**
   * OPTIONS type to report, as DRF's SimpleMetadata names the Nautobot 1.6.32 serializer field ("integer"
   * for an IntegerField, "nested object" for a nested serializer); default "field" (SerializerMethodField,
   * ReadOnlyField, Nautobot's ChoiceField, TimeZoneSerializerField). "json" marks a JSON value (GraphQL's
   * GenericScalar) and is reported as "field", as DRF reports Nautobot's JSONField.
   */
  type?: string;
  /** OPTIONS type in the model's nested serializer when it differs (a nested IP address's `family` is an "integer"). */
  nestedType?: string;
  /**
   * The model whose nested serializer the value is (Nautobot's `NestedIPAddressSerializer` for
   * `primary_ip`): OPTIONS shows its `children`, or with `many` a list ("field") whose `child` has them.
   */
  target?: { model: string; many?: boolean };
  /**
   * For the `reverse_nested` loader: the rows of `model` whose FK `via` points at this row, nested, in
   * that model's ordering (a secrets group's `secrets`, a dynamic group's `children`).
   */
  of?: { model: string; via: string };
}

export type FieldDef =
  | StrField
  | TextField
  | SlugField
  | IntField
  | BoolField
  | DecimalField
  | DateField
  | DateTimeField
  | JsonField
  | ChoiceField
  | FkField
  | M2mField
  | StatusField
  | ContentTypeField
  | ContentTypesField
  | GenericFkField
  | IpField
  | MacField
  | CountField
  | ComputedField;

export type FieldKind = FieldDef["kind"];

/**
 * Size caps of the field kinds that Nautobot leaves unbounded (issue 23: a 15 MB note was accepted and every
 * view of its object then rendered 32 MB of HTML with the event loop blocked). Counted in characters
 * (UTF-16 code units) as DRF's `max_length`; checked on every write by `service/input.ts`, which answers
 * 400 `{"<field>": ["Ensure this field has no more than N characters."]}`. `str` and `slug` fields keep
 * their own `max` (Nautobot's `CharField.max_length`: descriptions 200, names 100, URLs 500, ...).
 */
export const SIZE_LIMITS = {
  /** `text` fields: comments, notes, provider contacts, export templates, webhook body and headers templates, GraphQL saved queries (64 KiB). */
  text: 65_536,
  /** `json` fields as compact JSON: config-context data, local context data, filters, constraints (64 KiB). */
  json: 65_536,
  /** One custom-field value: text, URL and Markdown values as they are, other types as compact JSON (64 KiB). */
  customFieldValue: 65_536,
} as const;

/**
 * The most characters a field's value may have on write: its declared `max`, or the `SIZE_LIMITS` default
 * of its kind for `text` and `json`; undefined for kinds whose size is bounded otherwise (numbers, choices,
 * relations) or that are not written by clients.
 */
export function sizeLimit(fd: FieldDef): number | undefined {
  switch (fd.kind) {
    case "str":
    case "slug":
      return fd.max;
    case "text":
      return fd.max ?? SIZE_LIMITS.text;
    case "json":
      return fd.max ?? SIZE_LIMITS.json;
    default:
      return undefined;
  }
}

/** A partial index of a model: rows matching `where` only (both engines support them). */
export interface PartialIndex {
  columns: readonly string[];
  where: string;
  /** Suffix of the index name (`ix_<table>_<columns>_<name>`). */
  name: string;
}

/** A uniqueness rule over several fields (Django `unique_together` / serializer validators). */
export interface UniqueTogether {
  fields: readonly string[];
  /** Error message; default DRF's "The fields a, b must make a unique set." under non_field_errors. */
  message?: string;
  /** Key the error is reported under; default `non_field_errors` (or `__all__` with a message). */
  errorKey?: string;
  /** Only enforced when every listed field is non-null (SQL semantics). Default true. */
  skipNulls?: boolean;
  /**
   * Fields whose NULL is a value like any other (two rows with NULL there and equal other fields conflict),
   * while NULL in the other fields still skips the rule: Nautobot's device (site, tenant, name) with no
   * tenant. `skipNulls: false` means every field is such a field.
   */
  nullMatches?: readonly string[];
  /**
   * The rule applies only to rows where these fields are NULL (Nautobot's device without a tenant: one
   * name per site, reported as `{"name": ["A device with this name already exists."]}`).
   */
  whereNull?: readonly string[];
}

/** An extra filter beyond the automatic ones; compiled by a named filter kind in query/filters.ts. */
export interface FilterDef {
  /** Filter kind: see `query/filters.ts` FILTER_KINDS. */
  kind: string;
  /** Field or path the filter works on. */
  field?: string;
  /** Target model for relation filters. */
  to?: string;
  /** Natural key column on the target (`slug`, `name`). */
  key?: string;
  /** Other kind-specific options. */
  [option: string]: unknown;
}

/**
 * Regular expressions as the layers below the registry provide them (the registry imports no store code):
 * RE2 syntax with the size bounds of store/regex.ts, matched in linear time, long searches off the event
 * loop within a per-request budget (service/value-regex.ts). Used for custom-field `validation_regex`.
 */
export interface RegexMatcher {
  /** Why `pattern` is not usable (not RE2 syntax, or too large), in words for a message; undefined when it is. */
  problem(pattern: string): string | undefined;
  /**
   * Whether `value` contains a match of `pattern` (a search, as Python `re.search`); false for an unusable
   * pattern; undefined when the search could not finish within the request's matching budget.
   */
  search(pattern: string, value: string): Promise<boolean | undefined>;
}

/** Validation context passed to a model's `validate` rule (Django `clean()`). */
export interface ValidateArgs {
  /** The merged record after applying the write: column-level values keyed by field name. */
  data: Record<string, any>;
  /** The stored record before the write (undefined on create). */
  before: Record<string, any> | undefined;
  /** Load one row of a model by id (raw field values) or undefined. */
  get(model: string, id: string | null | undefined): Promise<Record<string, any> | undefined>;
  /** Find rows of a model matching simple equality conditions on fields. */
  find(model: string, where: Record<string, unknown>, limit?: number): Promise<Record<string, any>[]>;
  /** Count rows of a model matching equality conditions. */
  count(model: string, where: Record<string, unknown>): Promise<number>;
  /** Record an error for a field (or `__all__`). */
  error(field: string, message: string): void;
  /** Settings relevant to validation (ENFORCE_GLOBAL_UNIQUE, webhook target policy). */
  settings: { enforceGlobalUnique: boolean; webhookTargets: TargetPolicy };
  /** Who writes: undefined for the system (importer, CLI), else the user (id, username, superuser). */
  actor: { id: string; username: string; isSuperuser: boolean } | undefined;
  /** Bounded RE2 matching (custom-field `validation_regex` and defaults). */
  regex: RegexMatcher;
}

/** After-write side effects run inside the same transaction (signals in Nautobot). */
export interface AfterWriteArgs {
  action: "create" | "update";
  id: string;
  data: Record<string, any>;
  before: Record<string, any> | undefined;
  /** Service handle for nested writes (component instantiation, denormalised fields). */
  service: unknown;
}

export interface ModelDef {
  /** Application label: circuits, dcim, extras, ipam, tenancy, users, virtualization. */
  app: string;
  /** Lower-case model name (`device`, `vminterface`); the content type is `app.name`. */
  name: string;
  /** Verbose name, lower case (`ip address`); drives messages and OPTIONS `name`. */
  verbose: string;
  /** Verbose plural. */
  plural?: string;
  /** URL segment under the app (`ip-addresses`). */
  path: string;
  /** Table name; default `<app>_<name>`. */
  table?: string;
  fields: Readonly<Record<string, FieldDef>>;
  /** Fields of the nested representation besides `id`, `url`, `display` (Nautobot Nested serializer). */
  nested: readonly string[];
  /** Display rule: a field name, or a function over the raw row and its loaded relations. */
  display?: string | ((row: Record<string, any>, rel: Record<string, any>) => string);
  /** FK fields that `display` reads (loaded even in nested mode). */
  displayUses?: readonly string[];
  /** Capabilities. */
  tags?: boolean;
  customFields?: boolean;
  /** created / last_updated (change-logged models). */
  changelog?: boolean;
  /**
   * Notes can be attached (`notes_url` key, `…/notes/` action; Nautobot `NotesMixin`). Default: the value
   * of `customFields` (Nautobot's primary and organizational models have both).
   */
  notes?: boolean;
  /**
   * The opt-in `relationships` key and writable relationship associations (Nautobot
   * `RelationshipModelSerializerMixin`). Default: the value of `customFields`.
   */
  relationships?: boolean;
  /**
   * Key order of the full representation where Nautobot's serializer lists fields explicitly in another
   * order than the generic one (users: `display` first; clusters: `tags` before the counts). Keys not
   * listed follow in their generic order.
   */
  keyOrder?: readonly string[];
  /**
   * Key order of the nested representation (and of its OPTIONS `children`) where Nautobot's nested
   * serializer lists `id`, `url` and `display` elsewhere than first (`NestedVRFSerializer`: `display` after
   * `rd`). Keys not listed follow in their generic order.
   */
  nestedKeyOrder?: readonly string[];
  /** Devices and VMs render config_context. */
  configContext?: boolean;
  /** Read-only endpoint (content types, object changes). */
  readOnly?: boolean;
  /**
   * Always needs a login, even with anonymous reads enabled (issue 12): accounts, permissions, webhooks
   * (receiver credentials in headers), deliveries and the change log.
   */
  loginRequired?: boolean;
  /**
   * A foreign key (field name) whose target must be visible too: a row is seen only by users who may view
   * the object it points at, whatever their permissions on this model (issue 23: a webhook delivery is seen
   * only with its webhook). Applied by `service/permissions.ts` `restriction` to every action.
   */
  viewThrough?: string;
  /** Parent FK for tree models (region, location...). */
  tree?: string;
  /** Ordering columns (field names; `-` prefix for descending; `<field>_nat` allowed). `id` is appended. */
  ordering?: readonly string[];
  uniqueTogether?: readonly UniqueTogether[];
  /**
   * The fields that identify an object without its id (issue 28: upsert by natural key), as Nautobot 2.x's
   * `natural_key_field_names`. Declared only where the default does not fit; otherwise derived by
   * `naturalKeyOf` as Nautobot 2.x derives it: the first `uniqueTogether` rule, else the first `unique` field.
   * An empty list means the model has no natural key (it cannot be upserted). FK fields are matched by the
   * related object's id (a body may give a nested natural-key dict); `ip` fields by their host (addresses)
   * or network (prefixes); a field missing from a body matches NULL.
   */
  naturalKeyFields?: readonly string[];
  /**
   * Why the declared `naturalKeyFields` are not (exactly) a uniqueness rule of the model, or why there are
   * none: required whenever they are not backed by a `unique` field or a `uniqueTogether` rule (checked by
   * test/unit/natural-keys.test.ts).
   */
  naturalKeyNote?: string;
  /**
   * Extra (non-unique) indexes: lists of column names, or a partial index (`where`: an SQL predicate both
   * engines read, over quoted column names; `name` distinguishes it from a full index of the same columns).
   */
  indexes?: ReadonlyArray<readonly string[] | PartialIndex>;
  /** Fields searched by `q` (icontains, OR). */
  search?: readonly string[];
  /** Extra filters by query parameter name. */
  filters?: Readonly<Record<string, FilterDef>>;
  /** Model-level validation (`clean()`). */
  validate?: (args: ValidateArgs) => Promise<void> | void;
  /** Named service-level validation rule (src/service/validators.ts), run after `validate`. */
  serviceValidate?: string;
  /** Named side-effect hooks after create/update (in the write transaction). */
  afterWrite?: string;
  /**
   * Named side-effect hook run before a delete (src/service/hooks.ts, Nautobot's `pre_delete` signals), for
   * every object the delete removes, cascaded ones included, before any row changes (a cable re-saves
   * its terminations: `dcim/signals.py::nullify_connected_endpoints`).
   */
  beforeDelete?: string;
  /**
   * Named rule (src/service/delete-guards.ts) run for the objects a delete names directly, not those it
   * cascades to (Nautobot's `Model.delete()` overrides): the ids it returns are refused with the 409 of a
   * protected delete, naming those objects (a custom-field choice in use or a field's default).
   */
  deleteGuard?: string;
  /**
   * Foreign keys whose targets Nautobot saves again whenever this object is saved (created, updated, or
   * re-saved as a side effect), so they are change-logged (and webhooked) as updated in the same request:
   * a circuit termination saves its circuit (`circuits/signals.py::update_circuit`).
   */
  savesAlso?: readonly string[];
  /**
   * Whether writes are recorded in the change log and sent to webhooks. Default: `changelog` (Nautobot's
   * `ChangeLoggedModel`, which brings created/last_updated and `to_objectchange`). Set for models that
   * define `to_objectchange` without the timestamps (VM interfaces); plain `BaseModel`s (relationship and
   * secrets-group associations, tokens, users, groups, permissions) are not logged.
   */
  changeLogged?: boolean;
  /**
   * Keep history (issue 27) though not change-logged: a model Nautobot does not log whose rows show in
   * logged objects' responses at a point (relationship associations, under `relationships`). Change-logged
   * models always keep history.
   */
  history?: boolean;
  /** Features this model belongs to (`cable_terminations`, `locations`, `statuses`, ...). */
  features?: readonly string[];
}

/** Field builders: terse constructors used by the model declarations. */
export const f = {
  str: (max: number, o: Omit<StrField, "kind" | "max"> = {}): StrField => ({ kind: "str", max, ...o }),
  text: (o: Omit<TextField, "kind"> = {}): TextField => ({ kind: "text", ...o }),
  slug: (from: string, o: Omit<SlugField, "kind" | "from"> = {}): SlugField => ({
    kind: "slug",
    from,
    max: 100,
    ...o,
  }),
  int: (o: Omit<IntField, "kind"> = {}): IntField => ({ kind: "int", ...o }),
  bool: (def: boolean, o: Omit<BoolField, "kind" | "default"> = {}): BoolField => ({
    kind: "bool",
    default: def,
    ...o,
  }),
  decimal: (digits: number, places: number, o: Omit<DecimalField, "kind" | "digits" | "places"> = {}) =>
    ({ kind: "decimal", digits, places, ...o }) as DecimalField,
  date: (o: Omit<DateField, "kind"> = {}): DateField => ({ kind: "date", ...o }),
  datetime: (o: Omit<DateTimeField, "kind"> = {}): DateTimeField => ({ kind: "datetime", ...o }),
  json: (o: Omit<JsonField, "kind"> = {}): JsonField => ({ kind: "json", ...o }),
  choice: (choices: Choices, o: Omit<ChoiceField, "kind" | "choices"> = {}): ChoiceField => ({
    kind: "choice",
    choices,
    ...o,
  }),
  fk: (to: string, onDelete: OnDelete, o: Omit<FkField, "kind" | "to" | "onDelete"> = {}): FkField => ({
    kind: "fk",
    to,
    onDelete,
    ...o,
  }),
  m2m: (to: string, o: Omit<M2mField, "kind" | "to"> = {}): M2mField => ({ kind: "m2m", to, ...o }),
  status: (): StatusField => ({ kind: "status", required: true }),
  ct: (allowed: readonly string[] | string, o: Omit<ContentTypeField, "kind" | "allowed"> = {}) =>
    ({ kind: "ct", allowed, ...o }) as ContentTypeField,
  cts: (allowed: readonly string[] | string, o: Omit<ContentTypesField, "kind" | "allowed"> = {}) =>
    ({ kind: "cts", allowed, ...o }) as ContentTypesField,
  gfk: (
    allowed: readonly string[] | string,
    onDelete: OnDelete,
    o: Omit<GenericFkField, "kind" | "allowed" | "onDelete"> = {},
  ) => ({ kind: "gfk", allowed, onDelete, ...o }) as GenericFkField,
  ip: (mode: "network" | "host", o: Omit<IpField, "kind" | "mode"> = {}): IpField => ({
    kind: "ip",
    mode,
    ...o,
  }),
  mac: (o: Omit<MacField, "kind"> = {}): MacField => ({ kind: "mac", ...o }),
  count: (model: string, via: string, o: Omit<CountField, "kind" | "model" | "via"> = {}): CountField => ({
    kind: "count",
    model,
    via,
    readOnly: true,
    ...o,
  }),
  computed: (loader: string, o: Omit<ComputedField, "kind" | "loader"> = {}): ComputedField => ({
    kind: "computed",
    loader,
    readOnly: true,
    ...o,
  }),
  /** `description` str(200), the most common field. */
  description: (): StrField => ({ kind: "str", max: 200, default: "" }),
  /** `name` str(n) required. */
  name: (max = 100, o: Omit<StrField, "kind" | "max"> = {}): StrField => ({
    kind: "str",
    max,
    required: true,
    ...o,
  }),
  /** `comments` text. */
  comments: (): TextField => ({ kind: "text", default: "" }),
  /** Optional nullable FK. */
  ofk: (to: string, onDelete: OnDelete, o: Omit<FkField, "kind" | "to" | "onDelete"> = {}): FkField => ({
    kind: "fk",
    to,
    onDelete,
    nullable: true,
    ...o,
  }),
  /** Required FK. */
  rfk: (to: string, onDelete: OnDelete, o: Omit<FkField, "kind" | "to" | "onDelete"> = {}): FkField => ({
    kind: "fk",
    to,
    onDelete,
    required: true,
    ...o,
  }),
};

/** Declare a model (identity function that keeps the literal type checked). */
export function defineModel(def: ModelDef): ModelDef {
  return def;
}

/** Django's `str(ContentType)` of every model a registry was built with, by content type key. */
const CONTENT_TYPE_LABELS = new Map<string, string>();

/** Remember a model's content type label (called by the `Registry` constructor for each model). */
export function noteContentTypeLabel(def: ModelDef): void {
  CONTENT_TYPE_LABELS.set(`${def.app}.${def.name}`, `${def.app} | ${def.verbose}`);
}

/**
 * Django's `str(ContentType)` for a content type key: `<app_label> | <verbose_name>` (`dcim | region`,
 * `ipam | IP address`; Django 3.2 `ContentType.app_labeled_name`); the key itself for an unknown one.
 */
export function contentTypeLabel(key: string): string {
  return CONTENT_TYPE_LABELS.get(key) ?? key;
}
