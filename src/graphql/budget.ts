/**
 * The hard cap on the objects one GraphQL answer builds (issue 23: a nested query's answer may grow far
 * faster than the rows it loads, since the loaders load each row once while the answer repeats it under
 * every parent). Every field returning objects is wrapped to count them as its resolver returns them (one
 * per object, each entry of a list); past the cap the field fails once with a clear error and every later
 * object field of the request answers null without running its resolver, so no more work is done; the
 * plugin then answers the error alone (HTTP 400, as the limits checked before execution).
 */
import {
  defaultFieldResolver,
  GraphQLError,
  type GraphQLSchema,
  getNamedType,
  isCompositeType,
  isObjectType,
} from "graphql";

/** The object count of one request against its cap. */
export class ObjectBudget {
  /** Objects returned so far. */
  objects = 0;
  /** The error once the cap was passed (the request's answer). */
  exceeded: GraphQLError | undefined;
  /** Most objects the answer may hold (`INVENTORY_GRAPHQL_MAX_OBJECTS`). */
  readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /** Count a resolver's value (null: none, a list: its non-null entries, else one) and pass it on. */
  took<T>(value: T): T {
    if (value === null || value === undefined) return value;
    this.objects += Array.isArray(value) ? value.filter((v) => v !== null && v !== undefined).length : 1;
    if (this.objects > this.max) {
      this.exceeded = new GraphQLError(
        `Query builds more than ${this.max.toLocaleString("en-US")} objects; narrow it with filters or limit/offset.`,
        { extensions: { code: "TOO_MANY_OBJECTS" } },
      );
      throw this.exceeded;
    }
    return value;
  }
}

/**
 * Wrap the resolver of every field of `schema` whose type is an object, union or list of them (introspection
 * types aside) so that it counts against the request context's `budget`. Mutates and returns `schema`;
 * call once per schema.
 */
export function withObjectBudget(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isCompositeType(getNamedType(field.type))) continue;
      const inner = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: { budget: ObjectBudget }, info) => {
        const budget = context.budget;
        if (budget.exceeded) return null;
        const out = inner(source, args, context, info);
        return out instanceof Promise ? out.then((v) => budget.took(v)) : budget.took(out);
      };
    }
  }
  return schema;
}
