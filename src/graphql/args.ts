/**
 * List-field arguments: a model's REST filters (seed, Filtering; Nautobot 1.6
 * `generate_list_search_parameters`), typed as Nautobot types them: multi-value filters as lists
 * (`[String]`, `[Int]` for numbers), boolean filters as `Boolean`, `q` and dates as `String`; plus `limit`
 * and `offset`. `type` is spelled `_type` (graphene 2's reserved word, kept by Nautobot 1.6).
 */
import {
  GraphQLBoolean,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLString,
} from "graphql";
import { filterSetFor } from "../query/filters.ts";
import type { Model, Registry } from "../registry/index.ts";
import { boundedFilters } from "../service/read.ts";
import { asGraphError } from "./common.ts";
import { BigIntegerScalar } from "./scalars.ts";

const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** Custom filters taking a yes/no answer (Nautobot BooleanFilter / RelatedMembershipBooleanFilter). */
const BOOLEAN_FILTERS = new Set([
  "connected",
  "cabled",
  "local_context_data",
  "virtual_chassis_member",
  "console_ports",
  "console_server_ports",
  "power_ports",
  "power_outlets",
  "interfaces",
  "front_ports",
  "rear_ports",
  "device_bays",
  "pass_through_ports",
  "is_pool",
  "mgmt_only",
  "enabled",
  "is_full_depth",
]);

const STRING_LIST = new GraphQLList(GraphQLString);
const INT_LIST = new GraphQLList(GraphQLInt);
const BIGINT_LIST = new GraphQLList(BigIntegerScalar);

/** The GraphQL input type of one filter parameter. */
function argType(model: Model, param: string): GraphQLInputType {
  if (param === "q") return GraphQLString;
  const [base = param, lookup] = param.split("__");
  const fd = model.fields[base];
  if (fd?.kind === "bool" || (!lookup && BOOLEAN_FILTERS.has(base) && (!fd || fd.kind === "json")))
    return GraphQLBoolean;
  if (fd?.kind === "date" || fd?.kind === "datetime") return GraphQLString;
  if (!fd && (base === "created" || base === "last_updated")) return GraphQLString;
  // Choice filters take one value, except the `type` filters Nautobot declares multi-value.
  if (fd?.kind === "choice" && (!lookup || lookup === "n") && base !== "type") return GraphQLString;
  if (param === "family" || param === "mask_length") return GraphQLInt;
  if (fd?.kind === "int" && (fd.max ?? 0) > 2 ** 31 - 1) return BIGINT_LIST;
  if (fd?.kind === "int") return INT_LIST;
  if (!fd && !lookup && (base.startsWith("has_") || base.startsWith("is_") || BOOLEAN_FILTERS.has(base)))
    return GraphQLBoolean;
  return STRING_LIST;
}

const cache = new WeakMap<Model, { args: GraphQLFieldConfigArgumentMap; names: Map<string, string> }>();

/**
 * The arguments of a model's list fields and the map from argument name back to filter parameter
 * (`_type` → `type`). Derived once per model.
 */
export function listArgs(
  reg: Registry,
  model: Model,
): { args: GraphQLFieldConfigArgumentMap; names: Map<string, string> } {
  const hit = cache.get(model);
  if (hit) return hit;
  const args: GraphQLFieldConfigArgumentMap = {
    limit: { type: GraphQLInt },
    offset: { type: GraphQLInt },
  };
  const names = new Map<string, string>();
  for (const param of filterSetFor(reg, model).keys()) {
    const name = param === "type" ? "_type" : param;
    if (!NAME.test(name) || args[name]) continue;
    args[name] = { type: argType(model, param) };
    names.set(name, param);
  }
  const out = { args, names };
  cache.set(model, out);
  return out;
}

/**
 * GraphQL argument values as REST filter parameters (lists of strings), without `limit`/`offset`: client
 * input, so within the size bounds of client filters (service/read.ts `boundedFilters`, issue 23).
 * @throws GraphQLError naming the parameter, worded as a filter error (`asGraphError`)
 */
export function filterParams(
  names: ReadonlyMap<string, string>,
  given: Record<string, unknown>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of Object.entries(given)) {
    const param = names.get(k);
    if (!param || v === null || v === undefined) continue;
    const list = Array.isArray(v) ? v : [v];
    out.set(
      param,
      list.filter((x) => x !== null && x !== undefined).map((x) => String(x)),
    );
  }
  try {
    return boundedFilters(out, new Set());
  } catch (e) {
    return asGraphError(e);
  }
}

/** A stable key of a set of arguments (one loader per distinct argument set). */
export function argKey(given: Record<string, unknown>): string {
  return JSON.stringify(Object.entries(given).sort(([a], [b]) => (a < b ? -1 : 1)));
}
