/**
 * The size of a GraphQL document, measured before execution (issue 23: "no request may freeze or starve the
 * service"): nesting depth, field selections, aliases and an estimate of the objects its answer may hold.
 * Every selection set is measured once: a fragment's measure is memoised by name and reused at each spread,
 * so a document of fragments that each spread the previous one twice costs time linear in its length
 * (its expanded size, which doubles per level, is still what is measured and compared with the limits).
 * A fragment reached again while it is being measured (a cycle, rejected by graphql-js's
 * `NoFragmentCyclesRule`) measures as nothing.
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";

/** The measure of a selection set (or document), expanded through its fragments. */
export interface Measure {
  /** Deepest nesting of selections below it (`{ devices { site { name } } }` is 2). */
  depth: number;
  /** Field selections, `__typename` included; introspection (`__schema`, `__type`) is not counted. */
  fields: number;
  /** Aliased field selections. */
  aliases: number;
  /** Estimated objects of the answer (see `ESTIMATES`); may be `Infinity`. */
  cost: number;
}

/**
 * How many objects a list field is taken to return, when nothing bounds it. Static and count-free (no
 * database read): a list with a `limit` argument counts as `limit` objects (per parent, for a reverse
 * relation); without one, a top-level list counts as `root` objects and a nested list (reverse relation,
 * many-to-many, tags) as `nested` objects per parent; a list with a filter argument (anything but `limit`
 * and `offset`) is taken to be `filtered` times smaller (at least 1). Related objects count 1.
 */
export const ESTIMATES = { root: 1000, nested: 20, filtered: 10 } as const;

const ZERO: Measure = { depth: 0, fields: 0, aliases: 0, cost: 0 };

/**
 * A measurer for one document against `schema`. `variables` give the values of `limit: $n` arguments
 * (request variables first, then the largest default an operation declares); a variable without a value
 * counts as no limit. `maxList` bounds a `limit` argument's count (a request never loads more rows).
 */
export function measurer(
  schema: GraphQLSchema,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: ReadonlyMap<string, number>,
  maxList: number,
): (set: SelectionSetNode, type: GraphQLNamedType | undefined) => Measure {
  const memo = new Map<string, Measure>();
  const active = new Set<string>();
  const root = schema.getQueryType();

  const intArg = (v: ValueNode | undefined): number | undefined => {
    if (v?.kind === Kind.INT) return Number(v.value);
    if (v?.kind === Kind.VARIABLE) return variables.get(v.name.value);
    return undefined;
  };

  /** The objects a field selection is taken to return per parent object. */
  const fanOut = (field: GraphQLField<unknown, unknown> | undefined, node: FieldNode, atRoot: boolean) => {
    if (!field) return 1;
    const type = isNonNullType(field.type) ? field.type.ofType : field.type;
    if (!isListType(type)) return 1;
    const args = node.arguments ?? [];
    const limit = intArg(args.find((a) => a.name.value === "limit")?.value);
    if (limit !== undefined && limit > 0) return Math.min(limit, maxList);
    const base = atRoot ? ESTIMATES.root : ESTIMATES.nested;
    const filtered = args.some((a) => a.name.value !== "limit" && a.name.value !== "offset");
    return filtered ? Math.max(1, base / ESTIMATES.filtered) : base;
  };

  const add = (into: Measure, m: Measure): void => {
    into.depth = Math.max(into.depth, m.depth);
    into.fields += m.fields;
    into.aliases += m.aliases;
    into.cost += m.cost;
  };

  const ofFragment = (name: string): Measure => {
    const known = memo.get(name);
    if (known) return known;
    const def = fragments.get(name);
    if (!def || active.has(name)) return ZERO;
    active.add(name);
    const m = ofSet(def.selectionSet, schema.getType(def.typeCondition.name.value));
    active.delete(name);
    memo.set(name, m);
    return m;
  };

  const ofSet = (set: SelectionSetNode, type: GraphQLNamedType | undefined): Measure => {
    const out: Measure = { ...ZERO };
    const atRoot = !!type && type === root;
    for (const s of set.selections) {
      if (s.kind === Kind.FRAGMENT_SPREAD) add(out, ofFragment(s.name.value));
      else if (s.kind === Kind.INLINE_FRAGMENT)
        add(out, ofSet(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) : type));
      else {
        const name = s.name.value;
        // Introspection reads no data, and tools' standard query nests deeper than the limit.
        if (name === "__schema" || name === "__type") continue;
        out.fields++;
        if (s.alias) out.aliases++;
        if (!s.selectionSet) continue;
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
        const inner = ofSet(s.selectionSet, field ? getNamedType(field.type) : undefined);
        out.depth = Math.max(out.depth, inner.depth + 1);
        out.fields += inner.fields;
        out.aliases += inner.aliases;
        out.cost += fanOut(field, s, atRoot) * (1 + inner.cost);
      }
    }
    return out;
  };
  return ofSet;
}
