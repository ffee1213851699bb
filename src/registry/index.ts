/**
 * The model registry: every model declaration, validated and indexed at start-up.
 *
 * Derived facts live here so that generic code never re-derives them: table and column names,
 * reverse relations (for on-delete rules and counts), features (content-type groups), URL lookup.
 */
import { type FieldDef, type ModelDef, noteContentTypeLabel } from "./meta.ts";
import { models as circuits } from "./models/circuits.ts";
import { models as dcim } from "./models/dcim.ts";
import { models as dcimComponents } from "./models/dcim-components.ts";
import { models as dcimRedundancy } from "./models/dcim-redundancy.ts";
import { models as extras } from "./models/extras.ts";
import { models as extrasConfig } from "./models/extras-config.ts";
import { models as extrasData } from "./models/extras-data.ts";
import { models as ipam } from "./models/ipam.ts";
import { models as tenancy } from "./models/tenancy.ts";
import { models as users } from "./models/users.ts";
import { models as virtualization } from "./models/virtualization.ts";

/** The application segments under /api/, in Nautobot's order. */
export const APPS = [
  "circuits",
  "dcim",
  "extras",
  "ipam",
  "plugins",
  "tenancy",
  "users",
  "virtualization",
] as const;

/**
 * The inventory apps: with `--anonymous-read` their models are readable without a login; every other
 * model (accounts, and every `extras` model: notes, secrets, saved GraphQL queries, computed fields, export
 * templates, webhooks, the change log, …) needs one unless its definition says `loginRequired: false`
 * (issue 23; `Model.loginRequired` is derived from this).
 */
export const INVENTORY_APPS: ReadonlySet<string> = new Set([
  "circuits",
  "dcim",
  "ipam",
  "tenancy",
  "virtualization",
]);

/** Human names of the apps (content type display "DCIM | device"). */
export const APP_LABELS: Record<string, string> = {
  circuits: "Circuits",
  dcim: "DCIM",
  extras: "Extras",
  ipam: "IPAM",
  tenancy: "Tenancy",
  users: "Users",
  virtualization: "Virtualization",
};

/** A physical column of a model's table. */
export interface Column {
  name: string;
  /**
   * Logical SQL type; the dialect maps it. `version` is the object version counter (`VERSION_COLUMN`): an
   * integer, not null, 1 for rows written before it existed or inserted without it.
   */
  type: "text" | "int" | "bigint" | "real" | "bool" | "json" | "version";
  /** Field the column belongs to. */
  field: string;
}

/**
 * The column holding every model row's version (issue 26, conditional requests): a counter starting at 1,
 * raised by one in the statement of every UPDATE of the row (store/version-bump.ts), never a timestamp.
 * Declared here once for every model; not a field, so never in a representation or a write body.
 */
export const VERSION_COLUMN = "_version";

/** A registered model: its declaration plus derived facts. */
export interface Model extends ModelDef {
  /** `app.name`: the content type. */
  key: string;
  table: string;
  /** Ordered `[name, def]` field list. */
  fieldList: ReadonlyArray<readonly [string, FieldDef]>;
  columns: Column[];
  /** Integer content-type id (stable: position in the sorted key list, from 1). */
  ctId: number;
  /** Natural key used by `<fk>` filters and nested lookups: slug if present, else name. */
  naturalKey: string | undefined;
  /** Writes are change-logged and webhooked (`ModelDef.changeLogged`, resolved; never for read-only models). */
  changeLogged: boolean;
  /** Keeps history (issue 27): change-logged, or `ModelDef.history`; never for read-only models. */
  versioned: boolean;
  /** The fields identifying an object without its id (`ModelDef.naturalKeyFields`, resolved by `naturalKeyOf`). */
  naturalKeyFields: readonly string[];
}

/**
 * A model's natural key (issue 28): its declared `naturalKeyFields`, else Nautobot 2.x's default
 * (`BaseModel.natural_key_field_lookups`): the fields of the first `uniqueTogether` rule, else the first
 * `unique` field in declaration order; empty when there is none (read-only models have none).
 */
export function naturalKeyOf(def: ModelDef): readonly string[] {
  if (def.naturalKeyFields) return def.naturalKeyFields;
  if (def.readOnly) return [];
  const together = def.uniqueTogether?.[0];
  // A generic FK's two columns (`source_type`, `source_id`) are one field (`source`).
  const field = (c: string) =>
    c in def.fields ? c : c.replace(/_(type|id)$/, "") in def.fields ? c.replace(/_(type|id)$/, "") : c;
  if (together) return [...new Set(together.fields.map(field))];
  const unique = Object.entries(def.fields).find(([, fd]) => fd.unique);
  return unique ? [unique[0]] : [];
}

/** A relation pointing at a model: `from.field` references it. */
export interface ReverseRelation {
  from: Model;
  field: string;
  def: FieldDef & { kind: "fk" | "gfk" | "m2m" };
}

/** Error raised by the registry self-check at start-up. */
export class RegistryError extends Error {
  override name = "RegistryError";
}

function columnsOf(name: string, def: FieldDef): Column[] {
  switch (def.kind) {
    case "str":
      return def.natural
        ? [
            { name, type: "text", field: name },
            { name: `${name}_nat`, type: "text", field: name },
          ]
        : [{ name, type: "text", field: name }];
    case "text":
    case "slug":
    case "date":
    case "datetime":
    case "mac":
    case "ct":
      return [{ name, type: "text", field: name }];
    case "int":
      return [{ name, type: "bigint", field: name }];
    case "bool":
      return [{ name, type: "bool", field: name }];
    case "decimal":
      return [{ name, type: "real", field: name }];
    case "json":
      return [{ name, type: "json", field: name }];
    case "choice":
      return [{ name, type: def.int ? "int" : "text", field: name }];
    case "fk":
      return [{ name: `${name}_id`, type: "text", field: name }];
    case "status":
      return [{ name: "status_id", type: "text", field: name }];
    case "gfk":
      return [
        { name: `${name}_type`, type: "text", field: name },
        { name: `${name}_id`, type: "text", field: name },
      ];
    case "ip":
      return [
        { name, type: "text", field: name },
        { name: `${name}_family`, type: "int", field: name },
        { name: `${name}_start`, type: "text", field: name },
        { name: `${name}_end`, type: "text", field: name },
        { name: `${name}_len`, type: "int", field: name },
        { name: `${name}_host`, type: "text", field: name },
      ];
    case "m2m":
    case "cts":
    case "count":
    case "computed":
      return [];
  }
}

/** The registry: all models, indexed. Build once with `buildRegistry()`. */
export class Registry {
  readonly models = new Map<string, Model>();
  private readonly byPath = new Map<string, Model>();
  private readonly reverse = new Map<string, ReverseRelation[]>();
  private readonly features = new Map<string, string[]>();

  /**
   * @param defs the model declarations
   * @param apiVersion the API version these models are shaped for (`registryAt`)
   */
  readonly apiVersion: string;

  constructor(defs: readonly ModelDef[], apiVersion: string = BASE_API_VERSION) {
    this.apiVersion = apiVersion;
    const keys = defs.map((d) => `${d.app}.${d.name}`).sort();
    for (const def of defs) {
      const key = `${def.app}.${def.name}`;
      if (this.models.has(key)) throw new RegistryError(`duplicate model ${key}`);
      const fieldList = Object.entries(def.fields);
      const columns: Column[] = [{ name: "id", type: "text", field: "id" }];
      for (const [name, fd] of fieldList) columns.push(...columnsOf(name, fd));
      if (def.customFields)
        columns.push({ name: "_custom_field_data", type: "json", field: "custom_fields" });
      if (def.changelog) {
        columns.push({ name: "created", type: "text", field: "created" });
        columns.push({ name: "last_updated", type: "text", field: "last_updated" });
      }
      columns.push({ name: VERSION_COLUMN, type: "version", field: VERSION_COLUMN });
      const model: Model = {
        ...def,
        // No prototype: a client's attribute name ("constructor", "__proto__") is never a field (issue 12).
        fields: Object.assign(Object.create(null) as ModelDef["fields"], def.fields),
        key,
        table: def.table ?? `${def.app}_${def.name}`,
        fieldList,
        columns,
        ctId: keys.indexOf(key) + 1,
        naturalKey: def.fields.slug ? "slug" : def.fields.name ? "name" : undefined,
        loginRequired: def.loginRequired ?? !INVENTORY_APPS.has(def.app),
        changeLogged: !def.readOnly && (def.changeLogged ?? !!def.changelog),
        versioned: !def.readOnly && ((def.changeLogged ?? !!def.changelog) || !!def.history),
        naturalKeyFields: naturalKeyOf(def),
      };
      noteContentTypeLabel(def);
      this.models.set(key, model);
      const pathKey = `${def.app}/${def.path}`;
      if (this.byPath.has(pathKey)) throw new RegistryError(`duplicate path ${pathKey}`);
      this.byPath.set(pathKey, model);
      for (const feat of def.features ?? []) {
        const list = this.features.get(feat) ?? [];
        list.push(key);
        this.features.set(feat, list);
      }
    }
    for (const model of this.models.values()) {
      for (const [name, fd] of model.fieldList) {
        if (fd.kind === "fk" || fd.kind === "m2m") {
          if (!this.models.has(fd.to))
            throw new RegistryError(`${model.key}.${name}: unknown target ${fd.to}`);
          const list = this.reverse.get(fd.to) ?? [];
          list.push({ from: model, field: name, def: fd });
          this.reverse.set(fd.to, list);
        } else if (fd.kind === "gfk") {
          for (const target of this.resolveAllowed(fd.allowed)) {
            const list = this.reverse.get(target) ?? [];
            list.push({ from: model, field: name, def: fd });
            this.reverse.set(target, list);
          }
        } else if (fd.kind === "count") {
          if (!this.models.has(fd.model))
            throw new RegistryError(`${model.key}.${name}: unknown model ${fd.model}`);
        }
      }
      for (const n of model.naturalKeyFields)
        if (!(n in model.fields))
          throw new RegistryError(`${model.key}: natural key field ${n} is not a field`);
      for (const n of model.nested) {
        if (!(n in model.fields)) throw new RegistryError(`${model.key}: nested field ${n} is not a field`);
      }
    }
  }

  /** Resolve an `allowed` spec (list of keys, or a feature name) to model keys. */
  resolveAllowed(allowed: readonly string[] | string): string[] {
    if (typeof allowed === "string") return this.feature(allowed);
    // Nautobot's lists name models we may not serve (jobs): only registered ones count.
    return allowed.filter((k) => this.models.has(k));
  }

  /**
   * Models of a feature. Declared features (`cable_terminations`, `locations`) come from the model
   * declarations; derived ones: `all`, `statuses` (models with a status field), `taggable`,
   * `custom_fields`, `webhooks` (every writable model, Nautobot's list is a subset).
   */
  feature(name: string): string[] {
    const all = [...this.models.values()];
    switch (name) {
      case "all":
        return all.map((m) => m.key).sort();
      case "statuses":
        return all
          .filter((m) => m.fieldList.some(([, d]) => d.kind === "status"))
          .map((m) => m.key)
          .sort();
      case "taggable":
        return this.taggable();
      case "custom_fields":
        return all
          .filter((m) => m.customFields)
          .map((m) => m.key)
          .sort();
      case "notes":
        return all
          .filter((m) => hasNotes(m))
          .map((m) => m.key)
          .sort();
      case "relationships":
        // Models with the `relationships` key, and those declaring the feature without the key (Nautobot
        // 1.6 lists interface redundancy group associations as relationship content types).
        return all
          .filter((m) => hasRelationships(m) || (m.features ?? []).includes("relationships"))
          .map((m) => m.key)
          .sort();
      case "webhooks":
        return all
          .filter((m) => !m.readOnly)
          .map((m) => m.key)
          .sort();
      default:
        return [...(this.features.get(name) ?? [])].sort();
    }
  }

  /** The model at `/api/<app>/<path>/`, if any. */
  byUrl(app: string, path: string): Model | undefined {
    return this.byPath.get(`${app}/${path}`);
  }

  /** The model with key `app.name`. @throws RegistryError when unknown. */
  get(key: string): Model {
    const m = this.models.get(key);
    if (!m) throw new RegistryError(`unknown model ${key}`);
    return m;
  }

  /** Relations (FK, generic FK, M2M) that point at a model. */
  reverseOf(key: string): readonly ReverseRelation[] {
    return this.reverse.get(key) ?? [];
  }

  /** Models of an app, sorted by URL path (app root listing order). */
  appModels(app: string): Model[] {
    return [...this.models.values()].filter((m) => m.app === app).sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  /** Every model with tags enabled (content types a tag may apply to). */
  taggable(): string[] {
    return [...this.models.values()]
      .filter((m) => m.tags)
      .map((m) => m.key)
      .sort();
  }
}

/** Whether objects of a model carry notes (`ModelDef.notes`, default `customFields`). */
export function hasNotes(m: ModelDef): boolean {
  return m.notes ?? !!m.customFields;
}

/** Whether a model takes part in relationships (`ModelDef.relationships`, default `customFields`). */
export function hasRelationships(m: ModelDef): boolean {
  return m.relationships ?? !!m.customFields;
}

/** The API version a registry serves when none is named (Nautobot 1.6's default, nautobot-api-core.md §1.6). */
export const BASE_API_VERSION = "1.2";

/** Whether API version `a` is before `b` (`1.x` strings compared numerically). */
export function versionBefore(a: string, b: string): boolean {
  const [am = 0, an = 0] = a.split(".").map(Number);
  const [bm = 0, bn = 0] = b.split(".").map(Number);
  return am !== bm ? am < bm : an < bn;
}

/**
 * A field as it is at `version`: as declared inside its `versions` range, else hidden and read-only (never
 * required), as Nautobot's older serializer classes leave it out (`FieldBase.versions`); from `requiredSince`
 * required, and a slug then has to be given (not generated).
 */
export function fieldAtVersion(fd: FieldDef, version: string): FieldDef {
  const v = fd.versions;
  if (!v) return fd;
  const on = !(v.since && versionBefore(version, v.since)) && !(v.until && versionBefore(v.until, version));
  if (!on) return { ...fd, hidden: true, readOnly: true, required: false };
  if (!v.requiredSince || versionBefore(version, v.requiredSince)) return fd;
  // A slug required on the wire is no longer generated when omitted (Nautobot 1.6 `CustomFieldSerializer`).
  return fd.kind === "slug"
    ? { ...fd, required: true, from: undefined, orFrom: undefined }
    : { ...fd, required: true };
}

function declarationsAt(version: string): ModelDef[] {
  return [
    ...circuits,
    ...dcim,
    ...dcimComponents,
    ...extras,
    ...extrasData,
    ...extrasConfig,
    ...dcimRedundancy,
    ...ipam,
    ...tenancy,
    ...users,
    ...virtualization,
  ].map((def) =>
    Object.values(def.fields).some((fd) => fd.versions)
      ? {
          ...def,
          fields: Object.fromEntries(
            Object.entries(def.fields).map(([name, fd]) => [name, fieldAtVersion(fd, version)]),
          ),
        }
      : def,
  );
}

const byVersion = new Map<string, Registry>();

/**
 * The registry as the API serves it at `version` (one of `API_VERSIONS`): the same models, with fields
 * outside their `versions` range hidden and read-only. Built once per version; table and column names are
 * the same at every version. @throws RegistryError on a bad declaration.
 */
export function registryAt(version: string): Registry {
  let reg = byVersion.get(version);
  if (!reg) {
    reg = new Registry(declarationsAt(version), version);
    byVersion.set(version, reg);
  }
  return reg;
}

/** The registry at the default API version 1.2 (importer, CLI, webhooks). @throws RegistryError on a bad declaration. */
export function registry(): Registry {
  return registryAt(BASE_API_VERSION);
}
