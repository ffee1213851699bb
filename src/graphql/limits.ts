/**
 * Query limits checked before execution (issue 11: "one query cannot take the server down"; issue 23: "no
 * request may freeze or starve the service"): nesting depth, the number of fields selected, aliases
 * (Nautobot's `GRAPHQL_MAX_ALIASES`, default 10, counted per request here) and the estimated objects of the
 * answer (`cost.ts`), each counted through fragments as if expanded, with each fragment measured once. Each
 * is a graphql-js validation rule error (HTTP 400). The objects an answer really builds are capped while it
 * runs (`budget.ts`), the rows it loads by the loaders.
 */
import {
  type ASTVisitor,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type ValidationContext,
} from "graphql";
import { ESTIMATES, measurer } from "./cost.ts";

/** The limits, from the environment or their defaults. */
export interface QueryLimits {
  /** Deepest nesting of selections (`devices { site { region { … } } }` is 3). */
  maxDepth: number;
  /** Most field selections in one document (after expanding fragments; `__typename` counts). */
  maxFields: number;
  /** Most aliases in one document. */
  maxAliases: number;
  /** Most objects one request may load. */
  maxRows: number;
  /** Most objects the answer is estimated to hold, before execution (`cost.ts` `ESTIMATES`). */
  maxCost: number;
  /** Most objects one answer may build, counted while it runs. */
  maxObjects: number;
}

/**
 * Limits from `INVENTORY_GRAPHQL_MAX_DEPTH`, `_MAX_FIELDS`, `_MAX_ALIASES`, `_MAX_ROWS`, `_MAX_COST` and
 * `_MAX_OBJECTS` (non-negative integers; anything else keeps the default).
 */
export function limitsFromEnv(env: NodeJS.ProcessEnv): QueryLimits {
  const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);
  return {
    maxDepth: int(env.INVENTORY_GRAPHQL_MAX_DEPTH, 10),
    maxFields: int(env.INVENTORY_GRAPHQL_MAX_FIELDS, 500),
    maxAliases: int(env.INVENTORY_GRAPHQL_MAX_ALIASES, 10),
    maxRows: int(env.INVENTORY_GRAPHQL_MAX_ROWS, 500_000),
    maxCost: int(env.INVENTORY_GRAPHQL_MAX_COST, 1_000_000),
    maxObjects: int(env.INVENTORY_GRAPHQL_MAX_OBJECTS, 500_000),
  };
}

const n = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "infinitely many");

/**
 * A validation rule enforcing `limits` on each operation of a document. `variables` (the request's, not yet
 * coerced) give the values of `limit: $n` arguments for the cost estimate.
 */
export function limitRule(limits: QueryLimits, variables?: unknown) {
  return (context: ValidationContext): ASTVisitor => {
    const doc = context.getDocument();
    const fragments = new Map<string, FragmentDefinitionNode>();
    const values = new Map<string, number>();
    const given = variables && typeof variables === "object" ? (variables as Record<string, unknown>) : {};
    for (const d of doc.definitions) {
      if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
      if (d.kind !== Kind.OPERATION_DEFINITION) continue;
      for (const v of d.variableDefinitions ?? []) {
        const name = v.variable.name.value;
        const value = Object.hasOwn(given, name)
          ? given[name]
          : v.defaultValue?.kind === Kind.INT
            ? Number(v.defaultValue.value)
            : undefined;
        if (typeof value === "number" && Number.isInteger(value))
          values.set(name, Math.max(value, values.get(name) ?? value));
      }
    }
    const measure = measurer(context.getSchema(), fragments, values, limits.maxRows);
    return {
      OperationDefinition(op) {
        const type = op.operation === "query" ? (context.getSchema().getQueryType() ?? undefined) : undefined;
        const m = measure(op.selectionSet, type);
        const report = (message: string) => context.reportError(new GraphQLError(message, { nodes: [op] }));
        if (m.depth > limits.maxDepth)
          report(`Query is nested ${m.depth} levels deep; the limit is ${limits.maxDepth}.`);
        if (m.fields > limits.maxFields)
          report(
            `Query selects ${n(m.fields)} fields (fragments expanded); the limit is ${limits.maxFields}.`,
          );
        if (m.aliases > limits.maxAliases)
          report(`Query uses ${n(m.aliases)} aliases; the limit is ${limits.maxAliases}.`);
        if (m.cost > limits.maxCost)
          report(
            `Query may build about ${n(m.cost)} objects; the limit is ${n(limits.maxCost)} (estimated from ` +
              `limit arguments, or ${ESTIMATES.root} per list without one at the top and ${ESTIMATES.nested} ` +
              "per parent below, a tenth of that when filtered). Add limit arguments or narrow the query.",
          );
      },
    };
  };
}
