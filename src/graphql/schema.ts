/**
 * The GraphQL schema, generated from the model registry with Nautobot 1.6's names (issue 11): one object
 * type per model (`DeviceType`, `IPAddressType`), a list field per model taking its REST filters
 * (`devices(site: ["ams1"], limit: 10)`), a single field by `id`, every field of the model (related objects
 * as nested types, choices as graphene enums, statuses as `StatusType`), reverse relations with the child's
 * filters (`site { devices { interfaces(name: "eth0") { ip_addresses { address } } } }`), tags, custom fields
 * as `cf_<name>` and `_custom_field_data`, `config_context`, and an IP's `host`, `prefix_length` and
 * `family`. Resolvers read through `Loaders`, one query per relation per level.
 */

import {
  GraphQLEnumType as EnumType,
  GraphQLBoolean,
  type GraphQLEnumType,
  GraphQLError,
  type GraphQLFieldConfigMap,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
} from "graphql";
import { formatAddress, parseCidr } from "../net/ip.ts";
import { normalizeUuid } from "../query/filters.ts";
import type { Model, Registry } from "../registry/index.ts";
import type { FieldDef } from "../registry/meta.ts";
import { detailUrl } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import { parseJsonColumn } from "../store/values.ts";
import { argKey, filterParams, listArgs } from "./args.ts";
import { POINT_ARGS } from "./as-of.ts";
import { withObjectBudget } from "./budget.ts";
import {
  type Args,
  asGraphError,
  cablePathType,
  contentType,
  exposed,
  type GraphContext,
  MAX_INT32,
  page,
  peers,
  type Resolver,
} from "./common.ts";
import { modelOf, type Ref } from "./loaders.ts";
import {
  enumName,
  enumValueName,
  manyToManyName,
  oneToOneName,
  queryNames,
  reverseName,
  typeName,
  varName,
} from "./names.ts";
import {
  BigIntegerScalar,
  DateScalar,
  DateTimeScalar,
  DecimalScalar,
  GenericScalar,
  UUIDScalar,
} from "./scalars.ts";

export { exposed, type GraphContext } from "./common.ts";

/**
 * Build the schema. `customFields` gives, per model key, the names of its custom fields (`cf_<name>`
 * fields); the schema is rebuilt when they change.
 */
export function buildSchema(
  reg: Registry,
  customFields: ReadonlyMap<string, readonly string[]>,
): GraphQLSchema {
  // Content types are the synthetic `ContentTypeType` (ids and keys from the registry), not rows.
  const models = [...reg.models.values()].filter((m) => exposed(m) && typeName(m) !== "ContentTypeType");
  const types = new Map<string, GraphQLObjectType<Row, GraphContext>>();
  const enums = new Map<string, GraphQLEnumType>();
  const ctType = contentType(reg);
  const pathType = cablePathType(ctType);

  const enumOf = (model: Model, field: string, fd: FieldDef & { kind: "choice" }) => {
    const name = enumName(model, field);
    let e = enums.get(name);
    if (!e) {
      const values: Record<string, { value: unknown; description: string }> = {};
      for (const [v, label] of fd.choices) values[enumValueName(v)] ??= { value: v, description: label };
      e = new EnumType({ name, values });
      enums.set(name, e);
    }
    return e;
  };

  /**
   * A reverse relation: the objects of `from` whose `column` holds this object's id, taking `from`'s
   * filters and `limit`/`offset` (paged per parent).
   */
  const childList = (from: Model, column: string): Resolver => {
    const { args, names } = listArgs(reg, from);
    return {
      type: new GraphQLList(types.get(from.key)!),
      args,
      resolve: async (row, given: Args, g) => {
        const { limit: _l, offset: _o, ...rest } = given;
        const list = await g.loaders
          .children(from, column, filterParams(names, rest), argKey(rest))
          .load(row.id)
          .catch(asGraphError);
        return page(list, given);
      },
    };
  };

  /**
   * Unions of object types (Nautobot's `CableTerminationTypes`, `PathEndpointTypes`, `AssignedObjectType`),
   * resolved from the row's model.
   */
  const unions = new Map<string, GraphQLUnionType>();
  const unionOf = (name: string, members: readonly Model[]) => {
    let u = unions.get(name);
    if (!u) {
      u = new GraphQLUnionType({
        name,
        types: () => members.map((m) => types.get(m.key)!),
        resolveType: (row: Row) => {
          const key = modelOf(row);
          return key ? types.get(key)?.name : undefined;
        },
      });
      unions.set(name, u);
    }
    return u;
  };
  const termination = models.filter((m) => m.fields.cable_peer?.kind === "computed");
  const endpoints = models.filter((m) => m.fields.connected_endpoint?.kind === "computed");
  const groupable = new Set<string>(
    (() => {
      const ct = reg.get("extras.dynamicgroup").fields.content_type;
      return ct?.kind === "ct" && Array.isArray(ct.allowed) ? ct.allowed : [];
    })(),
  );
  /** A union field and one typed field per member (`cable_peer` + `cable_peer_interface`…). */
  const refFields = (
    add: (name: string, f: Resolver) => void,
    name: string,
    prefix: string,
    union: GraphQLUnionType,
    members: readonly Model[],
    load: (r: Row, g: GraphContext) => Promise<Ref | null>,
  ) => {
    const target = async (r: Row, g: GraphContext, only?: string) => {
      const ref = await load(r, g);
      if (!ref || (only && ref.type !== only)) return null;
      const m = reg.models.get(ref.type);
      return m && exposed(m) ? g.loaders.byId(m).load(ref.id) : null;
    };
    add(name, { type: union, resolve: (r, _a, g) => target(r, g) });
    if (name === "cable_peer") {
      add("_cable_peer_type", {
        type: ctType,
        resolve: async (r, _a, g) => (await load(r, g))?.type ?? null,
      });
      add("_cable_peer_id", {
        type: UUIDScalar,
        resolve: async (r, _a, g) => (await load(r, g))?.id ?? null,
      });
    }
    for (const m of members)
      add(`${prefix}${varName(m.verbose)}`, {
        type: types.get(m.key)!,
        resolve: (r, _a, g) => target(r, g, m.key),
      });
  };

  /** The fields of one model's type. */
  const fieldsOf = (model: Model): GraphQLFieldConfigMap<Row, GraphContext> => {
    const out: GraphQLFieldConfigMap<Row, GraphContext> = {
      id: { type: new GraphQLNonNull(UUIDScalar), resolve: (r) => r.id },
    };
    const add = (name: string, f: Resolver) => {
      if (!out[name]) out[name] = f;
    };
    const fk = (target: Model, column: string): Resolver => ({
      type: types.get(target.key)!,
      resolve: (r, _a, g) => (r[column] ? g.loaders.byId(target).load(String(r[column])) : null),
    });
    if (model.changelog) {
      add("created", { type: DateScalar, resolve: (r) => r.created ?? null });
      add("last_updated", { type: DateTimeScalar, resolve: (r) => r.last_updated ?? null });
    }
    for (const [name, fd] of model.fieldList) {
      if (fd.hidden || fd.writeOnly) continue;
      const scalar = (type: GraphQLOutputType, read: (v: unknown) => unknown = (v) => v ?? null): void =>
        add(name, { type, resolve: (r) => read(r[name]) });
      switch (fd.kind) {
        case "str":
          scalar(fd.max === 36 && name.endsWith("_id") ? UUIDScalar : GraphQLString);
          break;
        case "text":
        case "slug":
        case "mac":
          scalar(GraphQLString);
          break;
        case "int":
          scalar((fd.max ?? 0) > MAX_INT32 ? BigIntegerScalar : GraphQLInt, (v) =>
            v == null ? null : Number(v),
          );
          break;
        case "bool":
          scalar(GraphQLBoolean, (v) => (v == null ? null : !!v));
          break;
        case "decimal":
          scalar(DecimalScalar);
          break;
        case "date":
          scalar(DateScalar);
          break;
        case "datetime":
          scalar(name === "created" ? DateScalar : DateTimeScalar);
          break;
        case "json":
          scalar(GenericScalar, (v) => parseJsonColumn(v));
          break;
        case "choice": {
          const e = enumOf(model, name, fd);
          const known = new Set(fd.choices.map(([v]) => v));
          scalar(e, (v) => (v === null || v === undefined || !known.has(v as string) ? null : v));
          break;
        }
        case "ip": {
          scalar(GraphQLString);
          const text = (r: Row) => String(r[name] ?? "");
          add(fd.mode === "host" ? "host" : "network", {
            type: GraphQLString,
            resolve: (r) => text(r).split("/")[0],
          });
          add("prefix_length", { type: GraphQLInt, resolve: (r) => Number(text(r).split("/")[1] ?? 0) });
          add("family", { type: GraphQLInt, resolve: (r) => Number(r[`${name}_family`]) || null });
          add("broadcast", {
            type: GraphQLString,
            resolve: (r) => {
              const c = r[name] ? parseCidr(String(r[name])) : undefined;
              return c ? formatAddress(c.family, c.end) : null;
            },
          });
          break;
        }
        case "fk": {
          const target = reg.get(fd.to);
          if (exposed(target)) add(name, fk(target, `${name}_id`));
          break;
        }
        case "status":
          add(name, fk(reg.get("extras.status"), "status_id"));
          break;
        case "m2m": {
          const target = reg.get(fd.to);
          if (!exposed(target)) break;
          add(name, {
            type: new GraphQLList(types.get(target.key)!),
            resolve: async (r, _a, g) =>
              g.loaders.many(target, await g.loaders.links(model, name).load(r.id)),
          });
          break;
        }
        case "ct":
          add(name, { type: ctType, resolve: (r) => r[name] ?? null });
          break;
        case "cts":
          add(name, {
            type: new GraphQLList(ctType),
            resolve: (r, _a, g) => g.loaders.links(model, name).load(r.id),
          });
          break;
        case "gfk": {
          add(`${name}_type`, { type: ctType, resolve: (r) => r[`${name}_type`] ?? null });
          add(`${name}_id`, { type: UUIDScalar, resolve: (r) => r[`${name}_id`] ?? null });
          // An IP's `assigned_object` union and `interface` / `vminterface` (Nautobot `IPAddressType`).
          if (name === "assigned_object" && Array.isArray(fd.allowed)) {
            const members = fd.allowed.map((k) => reg.get(k)).filter(exposed);
            add(name, {
              type: unionOf("AssignedObjectType", members),
              resolve: (r, _a, g) => {
                const m = reg.models.get(String(r[`${name}_type`] ?? ""));
                return m && exposed(m) && r[`${name}_id`]
                  ? g.loaders.byId(m).load(String(r[`${name}_id`]))
                  : null;
              },
            });
          }
          if (name === "assigned_object" && Array.isArray(fd.allowed))
            for (const key of fd.allowed) {
              const target = reg.get(key);
              add(target.name, {
                type: types.get(target.key)!,
                resolve: (r, _a, g) =>
                  r[`${name}_type`] === key && r[`${name}_id`]
                    ? g.loaders.byId(target).load(r[`${name}_id`])
                    : null,
              });
            }
          break;
        }
        case "computed":
          if (name === "cable_peer")
            refFields(
              add,
              name,
              "cable_peer_",
              unionOf("CableTerminationTypes", termination),
              termination.filter((m) => peers(model).includes(m.key)),
              (r, g) => g.loaders.cablePeer(model).load(r),
            );
          else if (name === "connected_endpoint") {
            for (const pathName of ["path", "_path"])
              add(pathName, { type: pathType, resolve: (r, _a, g) => g.loaders.path(model).load(r) });
            refFields(
              add,
              name,
              "connected_",
              unionOf("PathEndpointTypes", endpoints),
              endpoints.filter((m) => peers(model).includes(m.key)),
              (r, g) => g.loaders.connected(model).load(r),
            );
          } else if (fd.type === "json")
            add(name, {
              type: GenericScalar,
              resolve: (r, _a, g) => g.loaders.computed(model, name, fd).load(r),
            });
          break;
        default:
          break;
      }
    }
    if (model.tags) {
      const tag = reg.get("extras.tag");
      add("tags", {
        type: new GraphQLList(types.get(tag.key)!),
        resolve: async (r, _a, g) => g.loaders.many(tag, await g.loaders.tags(model).load(r.id)),
      });
    }
    if (groupable.has(model.key)) {
      const dg = reg.get("extras.dynamicgroup");
      add("dynamic_groups", {
        type: new GraphQLList(types.get(dg.key)!),
        resolve: (r, _a, g) => g.loaders.dynamicGroups(model).load(r.id),
      });
    }
    if (model.customFields) {
      const data = (r: Row) => parseJsonColumn<Record<string, unknown>>(r._custom_field_data) ?? {};
      add("_custom_field_data", { type: GenericScalar, resolve: data });
      for (const cf of customFields.get(model.key) ?? [])
        if (/^[_A-Za-z][_0-9A-Za-z]*$/.test(cf))
          add(`cf_${cf}`, { type: GenericScalar, resolve: (r) => data(r)[cf] ?? null });
    }
    // Reverse relations: objects whose foreign key (or generic relation) points here, with their filters.
    const reverse = reg.reverseOf(model.key).filter((r) => exposed(r.from));
    const seen = new Map<string, number>();
    for (const r of reverse) {
      const key = `${r.from.key}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const r of reverse) {
      let name: string | undefined;
      if (r.def.kind === "fk") {
        // Django's related name; a model pointing here through several keys needs a declared one.
        name = reverseName(r.from, r.field, r.def.relatedName, seen.get(r.from.key) === 1);
      } else if (r.def.kind === "gfk" && Array.isArray(r.def.allowed)) {
        name = varName(r.from.plural ?? `${r.from.verbose}s`);
      }
      const one = oneToOneName(r.from, r.field);
      if (one && r.def.kind === "fk") {
        const from = r.from;
        const column = `${r.field}_id`;
        add(one, {
          type: types.get(from.key)!,
          resolve: async (row, _a, g) =>
            (await g.loaders.children(from, column, new Map(), "").load(row.id))[0] ?? null,
        });
        continue;
      }
      if (r.def.kind === "m2m") {
        const m2m = manyToManyName(r.from, r.field);
        const from = r.from;
        const field = r.field;
        if (m2m)
          add(m2m, {
            type: new GraphQLList(types.get(from.key)!),
            resolve: async (row, _a, g) =>
              g.loaders.many(from, await g.loaders.links(from, field, "target").load(row.id)),
          });
        continue;
      }
      if (!name) continue;
      add(name, childList(r.from, `${r.field}_id`));
    }
    // A status's objects (Nautobot's `related_name="%(app_label)s_%(class)s_related"`).
    if (model.key === "extras.status")
      for (const from of models)
        if (from.fields.status?.kind === "status")
          add(`${from.app}_${from.name}_related`, childList(from, "status_id"));
    add("url", { type: GraphQLString, resolve: (r, _a, g) => detailUrl(g.ctx, model, r.id) });
    return out;
  };

  for (const m of models)
    types.set(
      m.key,
      new GraphQLObjectType<Row, GraphContext>({ name: typeName(m), fields: () => fieldsOf(m) }),
    );

  const query: GraphQLFieldConfigMap<unknown, GraphContext> = {};
  for (const m of models) {
    const { single, list } = queryNames(m);
    const { names } = listArgs(reg, m);
    // Issue 27: a change-logged model's root fields read a point of history (graphql/as-of.ts).
    const point = m.versioned ? POINT_ARGS : {};
    if (single !== list)
      query[single] = {
        type: types.get(m.key)!,
        args: { id: { type: GraphQLID }, ...point },
        resolve: async (_s, args, g) => {
          if (args.id === undefined || args.id === null) return null;
          const id = normalizeUuid(String(args.id));
          if (!id) throw new GraphQLError(`['“${String(args.id)}” is not a valid UUID.']`);
          // Nautobot answers null, without an error, for an id it does not find (or may not show).
          return g.loaders.byId(m).load(id);
        },
      };
    query[list] = {
      type: new GraphQLList(types.get(m.key)!),
      args: { ...listArgs(reg, m).args, ...point },
      resolve: async (_s, args: Args, g) => {
        const { limit, offset, as_of: _a, as_of_seq: _s2, ...rest } = args;
        return g.loaders
          .list(m, {
            params: filterParams(names, rest),
            limit: typeof limit === "number" && limit > 0 ? limit : undefined,
            offset: typeof offset === "number" && offset > 0 ? offset : 0,
          })
          .catch(asGraphError);
      },
    };
  }
  const cts = [...reg.models.values()].sort((a, b) => a.ctId - b.ctId);
  query.content_type = {
    type: ctType,
    args: { id: { type: GraphQLID } },
    resolve: (_s, args) => cts.find((m) => String(m.ctId) === String(args.id))?.key ?? null,
  };
  query.content_types = {
    type: new GraphQLList(ctType),
    args: { limit: { type: GraphQLInt }, offset: { type: GraphQLInt } },
    resolve: (_s, args: Args) =>
      page(
        cts.map((m) => m.key),
        args,
      ),
  };
  return withObjectBudget(
    new GraphQLSchema({ query: new GraphQLObjectType({ name: "Query", fields: query }) }),
  );
}
