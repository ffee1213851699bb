/**
 * The filter compiler: query parameters → SQL conditions on a model's table (alias `t`).
 *
 * Two stages: `filterSetFor(model)` derives, once per model, the table of accepted parameter names
 * (automatic field filters, lookup variants, declared filters); `compileFilters` turns the parameters
 * of a request into one boolean SQL expression. Semantics (nautobot-api-core.md §9, seed "Filtering rules"):
 * different parameters AND, repeated values of one parameter OR (rule 2), `tag` ANDs (rule 3), `__n`-style
 * lookups negate, unknown parameters are a 400 (STRICT_FILTERING).
 */

import { type RawBuilder, sql } from "kysely";
import { containsCidr, ipKey } from "../net/ip.ts";
import {
  type NetValue,
  netaddrAddress,
  netaddrNetwork,
  netRange,
  pyStrip,
  searchNetworks,
} from "../net/netaddr.ts";
import type { Model, Registry } from "../registry/index.ts";
import type { ContentTypeFilterMode, FieldDef, FilterDef } from "../registry/meta.ts";
import type { Db } from "../store/db.ts";
import { joinTable } from "../store/ddl.ts";
import type { Dialect } from "../store/dialect.ts";
import { regexProblem } from "../store/regex.ts";
import { contentTypeFilter } from "./content-type-filters.ts";
import { CUSTOM_FILTERS } from "./custom-filters.ts";
import { LOOKUPS, type LookupKind, lookupKindOf } from "./lookups.ts";

/** A boolean SQL expression. */
export type Cond = RawBuilder<boolean>;

/** What a filter needs at compile time. */
export interface FilterEnv {
  db: Db;
  dialect: Dialect;
  reg: Registry;
  model: Model;
  /** Error sink: parameter → messages. */
  error(param: string, message: string): void;
}

/** A compiled-on-demand filter: values of one parameter → condition (undefined = no condition). */
export interface Filter {
  apply(values: string[], env: FilterEnv): Promise<Cond | undefined>;
}

/** Parameters that are never filters (nautobot-api-core.md §9.1). */
export const RESERVED_PARAMS = new Set([
  "limit",
  "offset",
  "brief",
  "format",
  "include",
  "api_version",
  // A point of history (issue 27, http/as-of.ts).
  "as_of",
  "as_of_seq",
]);

const TRUE = new Set(["true", "True", "1"]);
const FALSE = new Set(["false", "False", "0"]);
const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** Canonical lower-case hyphenated UUID, or undefined when the value is not a UUID. */
export function normalizeUuid(v: string): string | undefined {
  let s = v.trim();
  if (s.startsWith("urn:uuid:")) s = s.slice(9);
  if (s.startsWith("{") && s.endsWith("}")) s = s.slice(1, -1);
  if (!UUID_RE.test(s)) return undefined;
  const h = s.replace(/-/g, "").toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Escape `%`, `_` and `\` for a LIKE pattern with ESCAPE '\'. */
export function escapeLike(v: string): string {
  return v.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const col = (name: string, alias = "t") => sql.ref(`${alias}.${name}`);
const or = (conds: Cond[]): Cond =>
  conds.length === 1 ? conds[0]! : sql<boolean>`(${sql.join(conds, sql` OR `)})`;
const and = (conds: Cond[]): Cond =>
  conds.length === 1 ? conds[0]! : sql<boolean>`(${sql.join(conds, sql` AND `)})`;
/** Negation that keeps rows where the condition is NULL, as Django's `exclude()` does. */
const not = (c: Cond): Cond => sql<boolean>`NOT COALESCE((${c}), FALSE)`;
const inList = (expr: RawBuilder<unknown>, values: unknown[]): Cond =>
  values.length ? sql<boolean>`${expr} IN (${sql.join(values)})` : sql<boolean>`1 = 0`;

/**
 * `<param>__isnull=true|false` over `expr` (repeated values OR); a value that is not a boolean is an
 * error on `param`.
 */
function isnullCond(
  expr: RawBuilder<unknown>,
  values: string[],
  param: string,
  env: FilterEnv,
): Cond | undefined {
  const flags = values.map((v) => (TRUE.has(v) ? true : FALSE.has(v) ? false : undefined));
  if (flags.some((f) => f === undefined)) {
    env.error(param, "Enter a valid boolean: true or false.");
    return undefined;
  }
  return or(flags.map((f) => LOOKUPS.isnull!.sql(expr, f, env.dialect)));
}

/** Coerce a filter value for a field kind; records an error and returns undefined on failure. */
function coerce(kind: LookupKind, fd: FieldDef, param: string, v: string, env: FilterEnv): unknown {
  if (v === "null" && kind !== "bool") return null;
  switch (kind) {
    case "number": {
      if (fd.kind === "decimal") {
        const n = Number(v);
        if (v.trim() === "" || Number.isNaN(n)) {
          env.error(param, "Enter a number.");
          return undefined;
        }
        return n;
      }
      if (!/^[+-]?\d+$/.test(v.trim())) {
        env.error(param, "Enter a whole number.");
        return undefined;
      }
      if (Math.abs(Number(v)) > Number.MAX_SAFE_INTEGER) {
        env.error(
          param,
          `Ensure this value is between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`,
        );
        return undefined;
      }
      return Number(v);
    }
    case "bool":
      if (TRUE.has(v)) return true;
      if (FALSE.has(v)) return false;
      // Nautobot's NullBooleanField ignores such values: the filter is left out (issue 24).
      return undefined;
    case "choice": {
      if (fd.kind !== "choice") return v;
      const ok = fd.choices.some(([val]) => String(val) === v);
      if (!ok) {
        env.error(param, `Select a valid choice. ${v} is not one of the available choices.`);
        return undefined;
      }
      return fd.int ? Number(v) : v;
    }
    case "uuid": {
      const u = normalizeUuid(v);
      if (!u) {
        env.error(param, `“${v}” is not a valid UUID.`);
        return undefined;
      }
      return u;
    }
    case "date":
      if (!(fd.kind === "date" ? isDate(v) : isDateTime(v))) {
        env.error(param, fd.kind === "date" ? "Enter a valid date." : "Enter a valid date/time.");
        return undefined;
      }
      return v;
    default:
      return fd.kind === "mac" ? v.toUpperCase() : v;
  }
}

/** A calendar date `YYYY-MM-DD` that exists (Django DateField's ISO input format). */
function isDate(v: string): boolean {
  const m = /^(\d{4})-(\d\d)-(\d\d)$/.exec(v.trim());
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/**
 * An ISO 8601 date or date-time as Django 3.2's DateTimeField reads it (`datetime.fromisoformat`):
 * `YYYY-MM-DD[(T| )HH:MM[:SS[.ffffff]]][Z|±HH[:]MM]`.
 */
function isDateTime(v: string): boolean {
  const m = /^(\d{4}-\d\d-\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:\.\d{1,6})?)?(?:Z|[+-]\d\d:?\d\d)?)?$/.exec(
    v.trim(),
  );
  if (!m || !isDate(m[1]!)) return false;
  return Number(m[2] ?? 0) < 24 && Number(m[3] ?? 0) < 60 && Number(m[4] ?? 0) < 60;
}

/** A field filter with a lookup (`name`, `name__ic`, ...). */
function fieldFilter(name: string, column: string, fd: FieldDef, kind: LookupKind, suffix: string): Filter {
  const lookup = LOOKUPS[suffix]!;
  return {
    async apply(values, env) {
      const param = suffix ? `${name}__${suffix}` : name;
      if (lookup.op === "isnull") return isnullCond(col(column), values, param, env);
      // Blank values are no filter (django-filter skips EMPTY_VALUES); only blanks: the filter is left out.
      const given = values.filter((v) => v !== "");
      if (!given.length) return undefined;
      const conds: Cond[] = [];
      let hasNull = false;
      const vals: unknown[] = [];
      for (const raw of given) {
        const v = lookup.text ? raw : coerce(kind, fd, param, raw, env);
        if (v === undefined) continue;
        if (v === null) hasNull = true;
        else vals.push(v);
      }
      if (kind === "bool" && !vals.length && !hasNull) return undefined;
      const c = col(column);
      if (lookup.op === "eq") {
        if (vals.length) conds.push(inList(c, vals));
        if (hasNull) conds.push(sql<boolean>`${c} IS NULL`);
      } else {
        for (const v of vals) conds.push(lookup.sql(c, v, env.dialect));
        if (hasNull) conds.push(sql<boolean>`${c} IS NULL`);
      }
      if (!conds.length) return sql<boolean>`1 = 0`;
      const joined = or(conds);
      return lookup.negate ? sql<boolean>`(${c} IS NULL OR ${not(joined)})` : joined;
    },
  };
}

/**
 * Resolve values (UUIDs or natural keys) of a model to ids. A value naming no object (malformed, or a UUID
 * or key that does not exist) is Django's ModelMultipleChoiceField error "Select a valid choice. <v> is
 * not one of the available choices.", as Nautobot answers for `site`, `region_id`, `user_id`... (issue 24).
 */
async function resolveIds(
  env: FilterEnv,
  param: string,
  target: Model,
  key: string,
  values: string[],
): Promise<string[] | undefined> {
  const ids: string[] = [];
  const keys: string[] = [];
  for (const v of values) {
    if (v === "null") continue;
    const u = normalizeUuid(v);
    if (key === "id") {
      if (!u) {
        env.error(param, `Select a valid choice. ${v} is not one of the available choices.`);
        return undefined;
      }
      ids.push(u);
    } else if (u) ids.push(u);
    else keys.push(v);
  }
  if (keys.length) {
    // A natural key of integers (VLAN vid): anything else can match nothing, and must not reach SQL.
    const intKey = target.fields[key]?.kind === "int";
    const bad = intKey ? keys.find((k) => !/^[+-]?\d{1,15}$/.test(k.trim())) : undefined;
    if (bad !== undefined) {
      env.error(param, `Select a valid choice. ${bad} is not one of the available choices.`);
      return undefined;
    }
    const rows = await env.db
      .selectFrom(target.table)
      .select(["id", key])
      .where(key, "in", intKey ? keys.map(Number) : keys)
      .execute();
    const found = new Set(rows.map((r) => String(r[key])));
    for (const k of keys) {
      if (!found.has(k)) {
        env.error(param, `Select a valid choice. ${k} is not one of the available choices.`);
        return undefined;
      }
    }
    ids.push(...rows.map((r) => r.id as string));
  }
  if (ids.length) {
    // UUIDs must exist (ModelMultipleChoiceFilter, NaturalKeyOrPKMultipleChoiceFilter).
    const found = await env.db.selectFrom(target.table).select("id").where("id", "in", ids).execute();
    const ok = new Set(found.map((r) => r.id as string));
    for (const id of ids) {
      if (!ok.has(id)) {
        env.error(param, `Select a valid choice. ${id} is not one of the available choices.`);
        return undefined;
      }
    }
  }
  return ids;
}

/** Expand ids of a tree model to include all descendants. */
async function withDescendants(env: FilterEnv, model: Model, ids: string[]): Promise<string[]> {
  if (!model.tree || !ids.length) return ids;
  const rows = await env.db
    .selectFrom(model.table)
    .select(["id", `${model.tree}_id as p`])
    .execute();
  const children = new Map<string, string[]>();
  for (const r of rows) if (r.p) children.set(r.p, [...(children.get(r.p) ?? []), r.id]);
  const out = new Set(ids);
  const stack = [...ids];
  while (stack.length) {
    const id = stack.pop()!;
    for (const c of children.get(id) ?? []) {
      if (!out.has(c)) {
        out.add(c);
        stack.push(c);
      }
    }
  }
  return [...out];
}

/** `{kind: "path"}`: follow FK hops, then match the final target. Also used for automatic FK filters. */
function pathFilter(def: FilterDef): Filter {
  return {
    async apply(values, env) {
      const param = def.param as string;
      // Hops are FK or M2M fields, or `<app:model:fk>` for the rows of another model pointing back
      // (Django's reverse relation: a circuit's `terminations__site`).
      const hops = String(def.path).split(".");
      const models: Model[] = [env.model];
      for (const hop of hops) {
        if (hop.startsWith("<")) {
          const [app, name] = hop.slice(1).split(":") as [string, string];
          models.push(env.reg.get(`${app}.${name}`));
          continue;
        }
        const fd = models[models.length - 1]!.fields[hop];
        if (fd?.kind !== "fk" && fd?.kind !== "m2m")
          throw new Error(`${env.model.key}: bad filter path ${def.path}`);
        models.push(env.reg.get(fd.to));
      }
      const target = models[models.length - 1]!;
      const key = (def.key as string | undefined) ?? target.naturalKey ?? "id";
      const wantNull = values.includes("null");
      let ids = await resolveIds(env, param, target, key, values);
      if (!ids) return undefined;
      if (def.tree) ids = await withDescendants(env, target, ids);
      // Build from the far end back: ids of models[i] matching.
      let cond: Cond | undefined;
      let idsExpr: RawBuilder<unknown> | undefined;
      for (let i = hops.length - 1; i >= 0; i--) {
        const owner = models[i]!;
        const hop = hops[i]!;
        const fd = owner.fields[hop];
        const alias = i === 0 ? "t" : `p${i}`;
        let c: Cond;
        if (hop.startsWith("<")) {
          const via = hop.split(":")[2]!;
          const src = models[i + 1]!;
          const inner = idsExpr ? sql`${idsExpr}` : sql.join(ids.length ? ids : ["__none__"]);
          c = sql<boolean>`${col("id", alias)} IN (SELECT ${sql.id(`${via}_id`)} FROM ${sql.table(src.table)} WHERE id IN (${inner}))`;
        } else if (!fd) {
          throw new Error(`${env.model.key}: bad filter path ${def.path}`);
        } else if (fd.kind === "m2m") {
          const jt = joinTable(owner, hop);
          const inner = idsExpr ? sql`${idsExpr}` : sql.join(ids.length ? ids : ["__none__"]);
          c = sql<boolean>`${col("id", alias)} IN (SELECT source_id FROM ${sql.table(jt)} WHERE target_id IN (${inner}))`;
        } else {
          const ref = col(`${hop}_id`, alias);
          if (idsExpr) c = sql<boolean>`${ref} IN (${idsExpr})`;
          else {
            const parts: Cond[] = [];
            if (ids.length) parts.push(inList(ref, ids));
            if (wantNull && i === hops.length - 1) parts.push(sql<boolean>`${ref} IS NULL`);
            c = parts.length ? or(parts) : sql<boolean>`1 = 0`;
          }
        }
        if (i === 0) cond = c;
        else
          idsExpr = sql`SELECT ${col("id", alias)} FROM ${sql.table(owner.table)} AS ${sql.id(alias)} WHERE ${c}`;
      }
      return def.negate ? not(cond!) : cond;
    },
  };
}

const boolValue = (values: string[]): boolean | undefined => {
  const v = values[values.length - 1] ?? "";
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
};

function hasFilter(def: FilterDef): Filter {
  return {
    async apply(values, env) {
      const b = boolValue(values);
      if (b === undefined) return undefined;
      const src = env.reg.get(String(def.model));
      const via = src.fields[String(def.via)];
      let sub: Cond;
      if (via?.kind === "gfk") {
        sub = sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(src.table)} s WHERE s.${sql.id(`${def.via}_type`)} = ${env.model.key} AND s.${sql.id(`${def.via}_id`)} = t.id)`;
      } else if (via?.kind === "m2m") {
        // `forward`: the row's own M2M field has members (`has_tagged_vlans`); else rows of `model` link to it.
        const col = def.forward ? "source_id" : "target_id";
        sub = sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(joinTable(src, String(def.via)))} s WHERE s.${sql.id(col)} = t.id)`;
      } else {
        sub = sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(src.table)} s WHERE s.${sql.id(`${def.via}_id`)} = t.id)`;
      }
      return b ? sub : not(sub);
    },
  };
}

function reverseFilter(def: FilterDef): Filter {
  return {
    async apply(values, env) {
      if (def.negate) {
        const pos = await reverseFilter({ ...def, negate: false }).apply(values, env);
        return pos ? not(pos) : undefined;
      }
      const src = env.reg.get(String(def.model));
      const ids = await resolveIds(
        env,
        String(def.param),
        src,
        String(def.key ?? src.naturalKey ?? "id"),
        values,
      );
      if (!ids) return undefined;
      const via = src.fields[String(def.via)];
      if (via?.kind === "m2m") {
        return sql<boolean>`t.id IN (SELECT target_id FROM ${sql.table(joinTable(src, String(def.via)))} WHERE source_id IN (${sql.join(ids.length ? ids : ["__none__"])}))`;
      }
      if (via?.kind === "gfk") {
        return sql<boolean>`t.id IN (SELECT ${sql.id(`${def.via}_id`)} FROM ${sql.table(src.table)} WHERE ${sql.id(`${def.via}_type`)} = ${env.model.key} AND id IN (${sql.join(ids.length ? ids : ["__none__"])}))`;
      }
      return sql<boolean>`t.id IN (SELECT ${sql.id(`${def.via}_id`)} FROM ${sql.table(src.table)} WHERE id IN (${sql.join(ids.length ? ids : ["__none__"])}))`;
    },
  };
}

function notNullFilter(def: FilterDef): Filter {
  return {
    async apply(values, env) {
      const b = boolValue(values);
      if (b === undefined) return undefined;
      const fd = env.model.fields[String(def.field)];
      const c = col(fd?.kind === "fk" ? `${def.field}_id` : String(def.field));
      return b ? sql<boolean>`${c} IS NOT NULL` : sql<boolean>`${c} IS NULL`;
    },
  };
}

/** IP filters (nautobot-models.md §3.3). */
function ipFilter(def: FilterDef): Filter {
  return {
    async apply(values, env) {
      const f = String(def.field);
      const fam = col(`${f}_family`);
      const start = col(`${f}_start`);
      const end = col(`${f}_end`);
      const len = col(`${f}_len`);
      const host = col(`${f}_host`);
      const conds: Cond[] = [];
      const masked: NetValue[] = [];
      const unmasked: NetValue[] = [];
      // Blank values are no filter (Nautobot's `search_*` methods return the queryset for a blank value);
      // values are stripped as Django's CharField strips them.
      const given = values.map(pyStrip).filter((x) => x !== "");
      const last = given[given.length - 1];
      for (const v of given) {
        if (def.op === "mask_length" || def.op === "family") {
          // django-filter NumberFilter: "Enter a number." for what is no decimal number.
          if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(v) || Number.isNaN(Number(v))) {
            env.error(String(def.param), "Enter a number.");
            return undefined;
          }
          // Beyond what a double holds exactly stays a 400 (issue 23; Nautobot answers 200 with no rows).
          if (Math.abs(Number(v)) > Number.MAX_SAFE_INTEGER) {
            env.error(
              String(def.param),
              `Ensure this value is between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`,
            );
            return undefined;
          }
        }
        if (def.op === "mask_length") {
          // Any number compares (a mask length of -1 or 1.5 matches nothing, as in Nautobot).
          const cmp = def.cmp === "gte" ? sql`>=` : def.cmp === "lte" ? sql`<=` : sql`=`;
          conds.push(sql<boolean>`${len} ${cmp} ${Number(v)}`);
          continue;
        }
        if (def.op === "family") {
          // Nautobot 1.6.32 answers 500 for a number other than 4 or 6 (`IPAddressFilterSet.filter_family`).
          if (v !== "4" && v !== "6") {
            env.error(String(def.param), `Select a valid choice. ${v} is not one of the available choices.`);
            return undefined;
          }
          conds.push(sql<boolean>`${fam} = ${Number(v)}`);
          continue;
        }
        if (def.op === "address") {
          // `IPAddressFilterSet.filter_address` → `net_in`: hosts given with a length match host and any of
          // the lengths given, hosts without one match the host; an unreadable value is Nautobot's 500
          // (AddrFormatError), a 400 here.
          const n = netaddrNetwork(v);
          if (!n) {
            env.error(String(def.param), `Invalid IP address format: ${v}`);
            return undefined;
          }
          (v.includes("/") ? masked : unmasked).push(n);
          continue;
        }
        // The network filters are single-valued CharFilters: the last value counts (`QueryDict.get`).
        if (v !== last) continue;
        // `search_contains` without a `/` reads an address (`IPAddress`), everything else a network
        // (`IPNetwork`); what netaddr refuses matches nothing (`queryset.none()`, issue 24).
        const n = def.op === "contains" && !v.includes("/") ? netaddrAddress(v) : netaddrNetwork(v);
        if (!n) {
          conds.push(sql<boolean>`1 = 0`);
          continue;
        }
        const r = netRange(n);
        const s = ipKey(n.family, r.start);
        const e = ipKey(n.family, r.end);
        const L = n.prefixLength;
        switch (def.op) {
          case "prefix":
            conds.push(sql<boolean>`(${fam} = ${n.family} AND ${start} = ${s} AND ${len} = ${L})`);
            break;
          case "within":
            conds.push(
              sql<boolean>`(${fam} = ${n.family} AND ${start} >= ${s} AND ${end} <= ${e} AND ${len} > ${L})`,
            );
            break;
          case "within_include":
            conds.push(
              sql<boolean>`(${fam} = ${n.family} AND ${start} >= ${s} AND ${end} <= ${e} AND ${len} >= ${L})`,
            );
            break;
          case "contains":
            conds.push(
              v.includes("/")
                ? sql<boolean>`(${fam} = ${n.family} AND ${start} <= ${s} AND ${end} >= ${e} AND ${len} <= ${L})`
                : sql<boolean>`(${fam} = ${n.family} AND ${start} <= ${s} AND ${end} >= ${s})`,
            );
            break;
          case "parent":
            conds.push(sql<boolean>`(${fam} = ${n.family} AND ${host} >= ${s} AND ${host} <= ${e})`);
            break;
          default:
            throw new Error(`unknown ip op ${String(def.op)}`);
        }
      }
      if (masked.length)
        conds.push(
          sql<boolean>`(${inList(
            host,
            masked.map((n) => ipKey(n.family, n.value)),
          )} AND ${inList(
            len,
            masked.map((n) => n.prefixLength),
          )})`,
        );
      if (unmasked.length)
        conds.push(
          inList(
            host,
            unmasked.map((n) => ipKey(n.family, n.value)),
          ),
        );
      return conds.length ? or(conds) : undefined;
    },
  };
}

function statusFilter(negate: boolean): Filter {
  return {
    async apply(values, env) {
      const slugs = values.map((v) => v.toLowerCase());
      const rows = await env.db
        .selectFrom("extras_status")
        .select(["id", "slug"])
        .where("slug", "in", slugs)
        .execute();
      const found = new Set(rows.map((r) => r.slug));
      for (const s of slugs) {
        if (!found.has(s)) {
          env.error(
            negate ? "status__n" : "status",
            `Select a valid choice. ${s} is not one of the available choices.`,
          );
          return undefined;
        }
      }
      const c = inList(
        col("status_id"),
        rows.map((r) => r.id),
      );
      return negate ? not(c) : c;
    },
  };
}

function tagFilter(negate: boolean): Filter {
  return {
    async apply(values, env) {
      const param = negate ? "tag__n" : "tag";
      const conds: Cond[] = [];
      for (const v of values) {
        const row = await env.db
          .selectFrom("extras_tag")
          .select("id")
          .where("slug", "=", v)
          .executeTakeFirst();
        if (!row) {
          env.error(param, `Select a valid choice. ${v} is not one of the available choices.`);
          return undefined;
        }
        conds.push(
          sql<boolean>`t.id IN (SELECT object_id FROM extras_taggeditem WHERE content_type = ${env.model.key} AND tag_id = ${row.id})`,
        );
      }
      return negate ? not(or(conds)) : and(conds);
    },
  };
}

function searchFilter(fields: readonly string[]): Filter {
  return {
    async apply(values, env) {
      const v = (values[values.length - 1] ?? "").trim();
      if (!v) return undefined;
      const conds: Cond[] = [];
      let ipSearch = false;
      const pattern = `%${escapeLike(v)}%`;
      for (const name of fields) {
        const fd = env.model.fields[name];
        if (fd?.kind === "ip") {
          // `BaseNetworkQuerySet.string_search`: the networks the text stands for (a partial address
          // padded, 0.0.0.0/32 when it is none); IP addresses whose host lies in one, prefixes and
          // aggregates within one or containing it.
          const f = (c: string) => col(`${name}_${c}`);
          for (const net of searchNetworks(pyStrip(v))) {
            const r = netRange(net);
            const s = ipKey(net.family, r.start);
            const e = ipKey(net.family, r.end);
            conds.push(
              fd.mode === "host"
                ? sql<boolean>`(${f("family")} = ${net.family} AND ${f("host")} >= ${s} AND ${f("host")} <= ${e})`
                : sql<boolean>`(${f("family")} = ${net.family} AND ${f("start")} <= ${e} AND ${f("end")} >= ${s})`,
            );
          }
          ipSearch = true;
          continue;
        }
        if (fd?.kind === "int") {
          if (/^\d{1,15}$/.test(v)) conds.push(sql<boolean>`${col(name)} = ${Number(v)}`);
          continue;
        }
        if (name.startsWith("<")) {
          // `<app.model.via.attr`: rows of another model pointing here through `via` (a circuit's
          // terminations, a device's inventory items) whose `attr` contains the value.
          const [app, mname, via, attr] = name.slice(1).split(".") as [string, string, string, string];
          const src = env.reg.get(`${app}.${mname}`);
          conds.push(
            sql<boolean>`t.id IN (SELECT ${sql.id(`${via}_id`)} FROM ${sql.table(src.table)} WHERE ${env.dialect.ilike(sql.ref(attr), pattern)})`,
          );
          continue;
        }
        if (name.includes(".")) {
          // A path of FKs (`device_type.manufacturer.name`), resolved innermost first.
          const hops = name.split(".");
          const attr = hops.pop() as string;
          const models: Model[] = [env.model];
          for (const hop of hops) {
            const hfd = models[models.length - 1]!.fields[hop];
            if (hfd?.kind !== "fk") throw new Error(`${env.model.key}: bad search path ${name}`);
            models.push(env.reg.get(hfd.to));
          }
          let inner: Cond = env.dialect.ilike(sql.ref(attr), pattern);
          for (let i = hops.length - 1; i >= 0; i--) {
            const target = models[i + 1]!;
            const ids = sql`SELECT id FROM ${sql.table(target.table)} WHERE ${inner}`;
            inner =
              i === 0
                ? sql<boolean>`${col(`${hops[i]}_id`)} IN (${ids})`
                : sql<boolean>`${sql.ref(`${hops[i]}_id`)} IN (${ids})`;
          }
          conds.push(inner);
          continue;
        }
        if (fd?.kind === "cts") {
          conds.push(
            sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(joinTable(env.model, name))} j WHERE j.source_id = t.id AND ${env.dialect.ilike(sql.ref("j.content_type"), pattern)})`,
          );
          continue;
        }
        if (fd?.kind === "json") {
          conds.push(env.dialect.ilike(sql`CAST(${col(name)} AS TEXT)`, pattern));
          continue;
        }
        if (!fd && name.endsWith("_id")) {
          // A generic relation's object id (`assigned_object_id`): exact, as Nautobot's `exact` predicate.
          const u = normalizeUuid(v);
          if (u) conds.push(sql<boolean>`${col(name)} = ${u}`);
          continue;
        }
        conds.push(env.dialect.ilike(col(name), pattern));
      }
      // Nautobot's IPAM `q` (a CharFilter calling `string_search`) does not match ids; `SearchFilter` does.
      const u = ipSearch ? undefined : normalizeUuid(v);
      if (u) conds.push(sql<boolean>`t.id = ${u}`);
      return conds.length ? or(conds) : sql<boolean>`1 = 0`;
    },
  };
}

/** The content-type filter of a `ct`/`cts` field or a generic FK's `<name>_type` (content-type-filters.ts). */
function ctFilter(reg: Registry, model: Model, name: string, fd: FieldDef, negate: boolean): Filter {
  const f = fd as FieldDef & { allowed: readonly string[] | string; ctFilter?: ContentTypeFilterMode };
  const jt = fd.kind === "cts" ? joinTable(model, name) : "";
  const column = fd.kind === "gfk" ? `${name}_type` : name;
  return contentTypeFilter(`${column}${negate ? "__n" : ""}`, {
    mode: f.ctFilter ?? (fd.kind === "ct" ? "text" : "choice"),
    allowed: () => reg.resolveAllowed(f.allowed),
    conjoined: fd.kind === "cts" && f.ctFilter !== "pk",
    match: (ct) =>
      fd.kind === "cts"
        ? sql<boolean>`t.id IN (SELECT source_id FROM ${sql.table(jt)} WHERE content_type = ${ct})`
        : sql<boolean>`${col(column)} = ${ct}`,
    negate,
  });
}

/**
 * `cf_<name>[__<lookup>]` (seed, Filtering rule 4; nautobot-api-core.md §9.7): the custom field must exist,
 * apply to the model and not have filter logic `disabled` (else "Unknown filter field"). The bare filter
 * honours the field's logic (loose = case-insensitive partial match for text types, exact = whole value);
 * lookups follow the field's type (text: string lookups; integer/date: numeric ones). Repeated values OR.
 */
function customFieldFilter(param: string): Filter {
  return {
    async apply(values, env) {
      let name = param;
      let suffix = "";
      const at = param.lastIndexOf("__");
      if (at > 0 && LOOKUPS[param.slice(at + 2)]) {
        name = param.slice(0, at);
        suffix = param.slice(at + 2);
      }
      const full = `cf_${param}`;
      const cf = await env.db
        .selectFrom("extras_customfield")
        .selectAll()
        .where("name", "=", name)
        .executeTakeFirst();
      const cfModel = env.reg.get("extras.customfield");
      const applies =
        cf &&
        (await env.db
          .selectFrom(joinTable(cfModel, "content_types"))
          .select("source_id")
          .where("source_id", "=", cf.id)
          .where("content_type", "=", env.model.key)
          .executeTakeFirst());
      if (!cf || !applies || cf.filter_logic === "disabled") {
        env.error(full, "Unknown filter field");
        return undefined;
      }
      const type = String(cf.type);
      const kind: LookupKind =
        type === "integer" ? "number" : type === "date" ? "date" : type === "boolean" ? "bool" : "string";
      const lookup = LOOKUPS[suffix]!;
      if (!lookup.kinds.includes(kind)) {
        env.error(full, "Unknown filter field");
        return undefined;
      }
      const text = env.dialect.jsonText(col("_custom_field_data"), name);
      if (lookup.op === "isnull") return isnullCond(text, values, full, env);
      const num = sql`CAST(${text} AS ${sql.raw(env.dialect.columnType("real"))})`;
      const conds: Cond[] = [];
      for (const v of values) {
        if (v === "null" && !suffix) {
          conds.push(sql<boolean>`${text} IS NULL`);
          continue;
        }
        if (kind === "bool") {
          const b = TRUE.has(v) ? true : FALSE.has(v) ? false : undefined;
          if (b === undefined) {
            env.error(full, "Enter a valid boolean: true or false.");
            return undefined;
          }
          conds.push(
            sql<boolean>`lower(CAST(${text} AS TEXT)) IN (${b ? "true" : "false"}, ${b ? "1" : "0"})`,
          );
          continue;
        }
        if (kind === "number") {
          if (!/^-?\d+(\.\d+)?$/.test(v.trim())) {
            env.error(full, "Enter a number.");
            return undefined;
          }
          conds.push(
            lookup.op === "eq"
              ? sql<boolean>`${num} = ${Number(v)}`
              : lookup.sql(num, Number(v), env.dialect),
          );
          continue;
        }
        if (lookup.op === "eq") {
          const exact = type === "select" || type === "date" || cf.filter_logic === "exact" || suffix === "n";
          conds.push(exact ? sql<boolean>`${text} = ${v}` : env.dialect.ilike(text, `%${escapeLike(v)}%`));
        } else conds.push(lookup.sql(text, v, env.dialect));
      }
      if (!conds.length) return undefined;
      const joined = or(conds);
      return lookup.negate ? sql<boolean>`(${text} IS NULL OR ${not(joined)})` : joined;
    },
  };
}

const filterSetCache = new Map<string, Map<string, Filter>>();

/** The accepted filter parameters of a model (derived once). */
export function filterSetFor(reg: Registry, model: Model): Map<string, Filter> {
  const cached = filterSetCache.get(model.key);
  if (cached) return cached;
  const fs = new Map<string, Filter>();
  const addLookups = (name: string, column: string, fd: FieldDef, kind: LookupKind) => {
    for (const [suffix, lk] of Object.entries(LOOKUPS)) {
      if (!lk.kinds.includes(kind)) continue;
      fs.set(suffix ? `${name}__${suffix}` : name, fieldFilter(name, column, fd, kind, suffix));
    }
  };
  addLookups("id", "id", { kind: "str" }, "uuid");
  for (const [name, fd] of model.fieldList) {
    if (fd.noFilter || fd.writeOnly) continue;
    if (fd.kind === "ct") {
      // Nautobot generates only the negation for content-type filters (no string lookups).
      fs.set(name, ctFilter(reg, model, name, fd, false));
      fs.set(`${name}__n`, ctFilter(reg, model, name, fd, true));
      continue;
    }
    const kind = lookupKindOf(fd);
    if (kind) {
      addLookups(name, name, fd, kind);
      continue;
    }
    if (fd.kind === "fk" || fd.kind === "m2m") {
      const target = reg.get(fd.to);
      const idName = fd.kind === "fk" && fd.idFilter ? fd.idFilter : `${name}_id`;
      fs.set(idName, pathFilter({ kind: "path", path: name, key: "id", param: idName }));
      fs.set(
        `${idName}__n`,
        pathFilter({ kind: "path", path: name, key: "id", param: `${idName}__n`, negate: true }),
      );
      const key = fd.filterKey === false ? undefined : (fd.filterKey ?? target.naturalKey);
      if (key) {
        fs.set(name, pathFilter({ kind: "path", path: name, key, param: name }));
        fs.set(
          `${name}__n`,
          pathFilter({ kind: "path", path: name, key, param: `${name}__n`, negate: true }),
        );
      }
    } else if (fd.kind === "status") {
      fs.set("status", statusFilter(false));
      fs.set("status__n", statusFilter(true));
    } else if (fd.kind === "gfk") {
      fs.set(`${name}_type`, ctFilter(reg, model, name, fd, false));
      fs.set(`${name}_type__n`, ctFilter(reg, model, name, fd, true));
      // The object id is a UUID column with every string lookup (Nautobot's `<x>_id` UUIDField filters).
      addLookups(`${name}_id`, `${name}_id`, { kind: "str" }, "uuid");
    } else if (fd.kind === "cts") {
      fs.set(name, ctFilter(reg, model, name, fd, false));
      fs.set(`${name}__n`, ctFilter(reg, model, name, fd, true));
    }
  }
  if (model.changelog) {
    const created = { kind: "date" } as FieldDef;
    addLookups("created", "created", created, "date");
    addLookups("last_updated", "last_updated", { kind: "datetime" }, "date");
  }
  if (model.tags) {
    fs.set("tag", tagFilter(false));
    fs.set("tag__n", tagFilter(true));
  }
  fs.set("q", searchFilter(model.search ?? (model.fields.name ? ["name"] : [])));
  for (const [param, def] of Object.entries(model.filters ?? {})) {
    const d = { ...def, param };
    switch (def.kind) {
      case "path":
        fs.set(param, pathFilter(d));
        // Every relation filter has its negation (Nautobot's NaturalKeyOrPK filters generate `__n`).
        if (!def.negate && !model.filters?.[`${param}__n`])
          fs.set(`${param}__n`, pathFilter({ ...d, param: `${param}__n`, negate: true }));
        break;
      case "has":
        fs.set(param, hasFilter(d));
        break;
      case "reverse":
        fs.set(param, reverseFilter(d));
        if (!model.filters?.[`${param}__n`])
          fs.set(`${param}__n`, reverseFilter({ ...d, param: `${param}__n`, negate: true }));
        break;
      case "notnull":
        fs.set(param, notNullFilter(d));
        break;
      case "ip":
        fs.set(param, ipFilter(d));
        if (def.op === "mask_length") {
          fs.set(`${param}__gte`, ipFilter({ ...d, param: `${param}__gte`, cmp: "gte" }));
          fs.set(`${param}__lte`, ipFilter({ ...d, param: `${param}__lte`, cmp: "lte" }));
        }
        break;
      case "custom": {
        const impl = CUSTOM_FILTERS[String(def.fn)];
        if (!impl) break;
        const positive = impl(d);
        // `negate`: the same filter inverted (Django's `exclude`).
        fs.set(
          param,
          def.negate
            ? {
                async apply(values, env) {
                  const c = await positive.apply(values, env);
                  return c ? not(c) : undefined;
                },
              }
            : positive,
        );
        break;
      }
      default:
        throw new Error(`${model.key}: unknown filter kind ${def.kind}`);
    }
  }
  addReverseFilters(reg, model, fs);
  filterSetCache.set(model.key, fs);
  return fs;
}

/**
 * Filters over the objects pointing at a model through an FK, named as Nautobot's related names (a device
 * role's `devices`, a site's `racks`, a tree node's `children`): `<name>` (natural key or id of a related
 * object, OR), `<name>__n` and `has_<name>`. Names a model already declares are left alone.
 */
function addReverseFilters(reg: Registry, model: Model, fs: Map<string, Filter>): void {
  for (const r of reg.reverseOf(model.key)) {
    if (r.def.kind !== "fk" || r.from.readOnly) continue;
    const declared = (r.def as { relatedName?: string }).relatedName;
    const name =
      declared ?? (r.from === model && r.field === model.tree ? "children" : r.from.path.replace(/-/g, "_"));
    const base = { model: r.from.key, via: r.field, key: r.from.naturalKey ?? "id" };
    if (!fs.has(name)) fs.set(name, reverseFilter({ kind: "reverse", ...base, param: name }));
    if (!fs.has(`${name}__n`))
      fs.set(`${name}__n`, reverseFilter({ kind: "reverse", ...base, param: `${name}__n`, negate: true }));
    if (!fs.has(`has_${name}`))
      fs.set(`has_${name}`, hasFilter({ kind: "has", ...base, param: `has_${name}` }));
  }
}

/**
 * Compile request parameters into one condition. Custom-field filters (`cf_<name>`) are accepted for any
 * model with custom fields. The size bounds of client input (`filterSizeErrors`, issue 23) are the
 * callers' to apply where that input enters; the compiler takes what its callers give.
 * @returns the condition (undefined when no filter applies) and field errors.
 */
export async function compileFilters(
  env: Omit<FilterEnv, "error">,
  params: ReadonlyMap<string, string[]>,
  ignore: ReadonlySet<string> = RESERVED_PARAMS,
): Promise<{ cond: Cond | undefined; errors: Record<string, string[]> }> {
  const errors: Record<string, string[]> = {};
  const error = (p: string, m: string) => {
    errors[p] = [...(errors[p] ?? []), m];
  };
  const fenv: FilterEnv = { ...env, error };
  const fs = filterSetFor(env.reg, env.model);
  const conds: Cond[] = [];
  for (const [param, values] of params) {
    if (ignore.has(param)) continue;
    let filter = fs.get(param);
    if (!filter && env.model.customFields && param.startsWith("cf_"))
      filter = customFieldFilter(param.slice(3));
    if (!filter) {
      error(param, "Unknown filter field");
      continue;
    }
    // Same 400s on both engines (issue 12): PostgreSQL text cannot hold NUL, and patterns are RE2.
    if (values.some((v) => v.includes("\u0000"))) {
      error(param, "Null characters are not allowed.");
      continue;
    }
    if (/__n?i?re$/.test(param)) {
      const problem = values.map(regexProblem).find((x) => x !== undefined);
      if (problem !== undefined) {
        error(param, `Invalid regular expression: ${problem}`);
        continue;
      }
    }
    const c = await filter.apply(values, fenv);
    if (c) conds.push(c);
  }
  return { cond: conds.length ? and(conds) : undefined, errors };
}

export { containsCidr };

/** OR of conditions (a single condition is returned as is). */
export function anyOf(conds: Cond[]): Cond {
  return conds.length ? or(conds) : sql<boolean>`1 = 0`;
}
