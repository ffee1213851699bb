/**
 * Query limits checked before execution (issue 11: "one query cannot take the server down"): nesting
 * depth, the number of fields selected, and aliases (Nautobot's `GRAPHQL_MAX_ALIASES`, default 10, counted
 * per request here). Each is a graphql-js validation rule giving a clear error.
 */
import {
  type ASTVisitor,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql";

/** The limits, from the environment or their defaults. */
export interface QueryLimits {
  /** Deepest nesting of selections (`devices { site { region { … } } }` is 3). */
  maxDepth: number;
  /** Most field selections in one document (after expanding fragments). */
  maxFields: number;
  /** Most aliases in one document. */
  maxAliases: number;
  /** Most objects one request may load. */
  maxRows: number;
}

/** Limits from `INVENTORY_GRAPHQL_MAX_DEPTH`, `_MAX_FIELDS`, `_MAX_ALIASES`, `_MAX_ROWS`. */
export function limitsFromEnv(env: NodeJS.ProcessEnv): QueryLimits {
  const int = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);
  return {
    maxDepth: int(env.INVENTORY_GRAPHQL_MAX_DEPTH, 10),
    maxFields: int(env.INVENTORY_GRAPHQL_MAX_FIELDS, 500),
    maxAliases: int(env.INVENTORY_GRAPHQL_MAX_ALIASES, 10),
    maxRows: int(env.INVENTORY_GRAPHQL_MAX_ROWS, 500_000),
  };
}

/** A validation rule enforcing `limits` on a whole document. */
export function limitRule(limits: QueryLimits) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of context.getDocument().definitions)
      if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    let fields = 0;
    let aliases = 0;
    let deepest = 0;
    const walk = (set: SelectionSetNode, depth: number, via: Set<string>): void => {
      deepest = Math.max(deepest, depth);
      if (deepest > limits.maxDepth || fields > limits.maxFields) return;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          // Introspection (`__schema`, `__type`) reads no data: tools' standard query nests deeper than
          // the limit and is not counted.
          if (s.name.value.startsWith("__")) continue;
          fields++;
          if (s.alias) aliases++;
          if (s.selectionSet) walk(s.selectionSet, depth + 1, via);
        } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet, depth, via);
        else {
          const f = fragments.get(s.name.value);
          if (f && !via.has(f.name.value)) walk(f.selectionSet, depth, new Set([...via, f.name.value]));
        }
      }
    };
    return {
      OperationDefinition(op) {
        walk(op.selectionSet, 0, new Set());
        if (deepest > limits.maxDepth)
          context.reportError(
            new GraphQLError(`Query is nested ${deepest} levels deep; the limit is ${limits.maxDepth}.`, {
              nodes: [op],
            }),
          );
        if (fields > limits.maxFields)
          context.reportError(
            new GraphQLError(
              `Query selects more than ${limits.maxFields} fields; the limit is ${limits.maxFields}.`,
              {
                nodes: [op],
              },
            ),
          );
        if (aliases > limits.maxAliases)
          context.reportError(
            new GraphQLError(`Query uses ${aliases} aliases; the limit is ${limits.maxAliases}.`, {
              nodes: [op],
            }),
          );
      },
    };
  };
}
