/**
 * Pieces of the GraphQL schema shared by its builder (schema.ts): the resolver context, which models are
 * served, the synthetic `ContentTypeType` and `CablePathType`, per-parent paging and Nautobot's wording of
 * filter errors.
 */
import {
  GraphQLBoolean,
  GraphQLError,
  type GraphQLFieldConfig,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import type { Model, Registry } from "../registry/index.ts";
import { COMPATIBLE_TERMINATIONS } from "../registry/models/dcim.ts";
import type { CablePath } from "../service/cable-paths.ts";
import type { Ctx } from "../service/context.ts";
import { ValidationError } from "../service/errors.ts";
import type { Row } from "../service/rows.ts";
import type { ObjectBudget } from "./budget.ts";
import type { Loaders } from "./loaders.ts";
import { GenericScalar, UUIDScalar } from "./scalars.ts";

/** What every resolver gets as GraphQL context. */
export interface GraphContext {
  ctx: Ctx;
  loaders: Loaders;
  /** The cap on the objects of the answer (`budget.ts`). */
  budget: ObjectBudget;
}

export type Resolver = GraphQLFieldConfig<Row, GraphContext>;
export type Args = Record<string, unknown>;

/** The models a cable from `model` may end on (Nautobot `COMPATIBLE_TERMINATION_TYPES`). */
export const peers = (model: Model): readonly string[] => COMPATIBLE_TERMINATIONS[model.key] ?? [];

/** Models not served through GraphQL (as Nautobot 1.6: accounts and tokens; our delivery log). */
const HIDDEN_APPS = new Set(["users"]);
const HIDDEN_MODELS = new Set(["extras.webhookdelivery"]);

/** Whether a model has GraphQL fields. */
export function exposed(model: Model): boolean {
  return !HIDDEN_APPS.has(model.app) && !HIDDEN_MODELS.has(model.key);
}

export const MAX_INT32 = 2 ** 31 - 1;

/** Nautobot's `ContentTypeType`: a content type as `{id, app_label, model}`. */
export function contentType(reg: Registry): GraphQLObjectType<string, GraphContext> {
  return new GraphQLObjectType<string, GraphContext>({
    name: "ContentTypeType",
    fields: {
      id: { type: new GraphQLNonNull(GraphQLID), resolve: (k) => reg.models.get(k)?.ctId ?? k },
      app_label: { type: new GraphQLNonNull(GraphQLString), resolve: (k) => k.split(".")[0] },
      model: { type: new GraphQLNonNull(GraphQLString), resolve: (k) => k.split(".")[1] },
    },
  });
}

/** Page a list of a reverse relation per parent (`limit`/`offset` arguments). */
export function page<T>(list: T[], args: Args): T[] {
  const offset = typeof args.offset === "number" && args.offset > 0 ? args.offset : 0;
  const limit = typeof args.limit === "number" && args.limit > 0 ? args.limit : undefined;
  return limit === undefined ? list.slice(offset) : list.slice(offset, offset + limit);
}

/** Python's `repr` of a string, as Nautobot's messages print FilterSet errors. */
const pyStr = (s: string) => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/'/g, "\\'")}'`);

/**
 * A filter error as a GraphQL error, worded as Nautobot's (`GraphQLError(filterset.errors)`:
 * `{'status': ['Select a valid choice. nope is not one of the available choices.']}`).
 */
export function asGraphError(e: unknown): never {
  if (e instanceof ValidationError) {
    const errors = e.errors as Record<string, unknown>;
    const text = Object.entries(errors)
      .map(
        ([k, v]) => `${pyStr(k)}: [${(Array.isArray(v) ? v : [v]).map((m) => pyStr(String(m))).join(", ")}]`,
      )
      .join(", ");
    throw new GraphQLError(`{${text}}`, { extensions: { code: "BAD_FILTER" } });
  }
  throw e;
}

/**
 * Nautobot's `CablePathType`: a stored path from an endpoint (`path` and `_path` of endpoints). The nodes
 * (`path`, `"<type>:<id>"` each) and the destination are shown only when the user may view them: a hidden
 * node is `null` in `path` (its place kept), a hidden destination makes `destination_type` and
 * `destination_id` null, as a related object the user may not view is null everywhere in this schema
 * (issue 23). The origin is the endpoint the path was read from, already visible.
 */
export function cablePathType(
  ctType: GraphQLObjectType<string, GraphContext>,
): GraphQLObjectType<CablePath, GraphContext> {
  return new GraphQLObjectType<CablePath, GraphContext>({
    name: "CablePathType",
    fields: {
      id: { type: new GraphQLNonNull(UUIDScalar), resolve: (p) => p.id },
      origin_type: { type: new GraphQLNonNull(ctType), resolve: (p) => p.origin.type },
      origin_id: { type: new GraphQLNonNull(UUIDScalar), resolve: (p) => p.origin.id },
      destination_type: {
        type: ctType,
        resolve: async (p, _a, g) => ((await shown(p, g)).destination ? p.destination!.type : null),
      },
      destination_id: {
        type: UUIDScalar,
        resolve: async (p, _a, g) => ((await shown(p, g)).destination ? p.destination!.id : null),
      },
      path: {
        type: GenericScalar,
        resolve: async (p, _a, g) => {
          const { nodes } = await shown(p, g);
          return p.path.map((n, i) => (nodes[i] ? `${n.type}:${n.id}` : null));
        },
      },
      is_active: { type: new GraphQLNonNull(GraphQLBoolean), resolve: (p) => p.isActive },
      is_split: { type: new GraphQLNonNull(GraphQLBoolean), resolve: (p) => p.isSplit },
    },
  });
}

/** Which nodes and whether the destination of a path the user may view (set-wise through the loaders). */
async function shown(p: CablePath, g: GraphContext): Promise<{ nodes: boolean[]; destination: boolean }> {
  const seen = await g.loaders.visible(p.destination ? [...p.path, p.destination] : p.path);
  return { nodes: seen.slice(0, p.path.length), destination: !!p.destination && !!seen[p.path.length] };
}
