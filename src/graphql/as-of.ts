/**
 * The point of history a GraphQL query reads (issue 27): every root field of a change-logged model takes
 * `as_of_seq: Int` and `as_of: String` (RFC 3339), as the REST list and detail endpoints take them; a query
 * reads one point, so the root fields that give one must agree. `?as_of_seq=`/`?as_of=` on the URL is the
 * same for the whole query (http/as-of.ts).
 */
import {
  type DocumentNode,
  GraphQLError,
  GraphQLInt,
  GraphQLString,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

/** The point arguments of a root field. */
export const POINT_ARGS = { as_of_seq: { type: GraphQLInt }, as_of: { type: GraphQLString } };

/** A value node's value, variables substituted; undefined when absent or null. */
function argValue(node: ValueNode, vars: Record<string, unknown>): string | undefined {
  switch (node.kind) {
    case Kind.INT:
    case Kind.STRING:
      return node.value;
    case Kind.VARIABLE: {
      const v = vars[node.name.value];
      return v === null || v === undefined ? undefined : String(v);
    }
    default:
      return undefined;
  }
}

/**
 * The point the operation's root fields ask for (`{asOfSeq}` or `{asOf}`), undefined when none does.
 * @throws GraphQLError when root fields ask for different points
 */
export function rootPoint(
  doc: DocumentNode,
  vars: Record<string, unknown>,
  operationName: string | undefined,
): { asOf?: string; asOfSeq?: string } | undefined {
  const ops = doc.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const op = operationName ? ops.find((o) => o.name?.value === operationName) : ops[0];
  if (!op) return undefined;
  const fragments = new Map(
    doc.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const found = new Set<string>();
  let out: { asOf?: string; asOfSeq?: string } | undefined;
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const point: { asOf?: string; asOfSeq?: string } = {};
        for (const a of s.arguments ?? []) {
          if (a.name.value === "as_of_seq") {
            const v = argValue(a.value, vars);
            if (v !== undefined) point.asOfSeq = v;
          } else if (a.name.value === "as_of") {
            const v = argValue(a.value, vars);
            if (v !== undefined) point.asOf = v;
          }
        }
        if (point.asOf !== undefined || point.asOfSeq !== undefined) {
          found.add(JSON.stringify(point));
          out = point;
        }
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (s.kind === Kind.FRAGMENT_SPREAD && !seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = fragments.get(s.name.value);
        if (f) walk(f.selectionSet);
      }
    }
  };
  walk(op.selectionSet);
  if (found.size > 1)
    throw new GraphQLError("A query reads one point: its root fields' as_of_seq and as_of must agree.");
  return out;
}
