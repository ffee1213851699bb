/**
 * What client filter input may hold before the filter compiler looks at it (issue 23, "no request may
 * crash, freeze or starve the service"). The bounds are applied where client input enters, not in
 * `compileFilters` (the service's own lookups, such as a bulk request's 1,000 ids, are not client filters):
 * REST query parameters, the web interface's list, export, search and lookup queries and CSV-import
 * references (`boundedFilters` in service/read.ts), GraphQL arguments (graphql/args.ts `filterParams`),
 * dynamic-group filters when saved and at each member read (they are stored, so a value no query string
 * could carry must not reach SQL), and object-permission constraints when saved and when a user's grants
 * are loaded.
 *
 * - One value holds at most `MAX_FILTER_VALUE_CHARS` characters: beyond that SQLite refuses a `LIKE`
 *   pattern ("LIKE or GLOB pattern too complex", 50,000 bytes: a 100,000-character `q` was a 500 on every
 *   member read) and a contains-search costs pattern × text per row.
 * - All parameters together hold at most `MAX_FILTER_CHARS` characters, counting each name and value plus
 *   one separator: Node's HTTP parser caps a request's header (so its query string) at 16 KiB, and a
 *   stored filter or a GraphQL argument list gets the same bound, which also bounds the number of values
 *   (bind parameters) one filter set compiles to.
 * - A dynamic-group filter is a JSON object whose values are strings, numbers, booleans or null, or lists
 *   of them (what a query string can say); anything else (`{"name": {"nested": 1}}`) is an error naming
 *   the key, never coerced to `[object Object]`.
 */

/** Largest number of characters (UTF-16 code units) of one filter value. */
export const MAX_FILTER_VALUE_CHARS = 1000;

/** Largest number of characters of all filter names and values of one request or stored filter. */
export const MAX_FILTER_CHARS = 16384;

/** Error sink of the checks: parameter → messages. */
export type FilterErrors = Record<string, string[]>;

/**
 * The size bounds above over query-style parameters (name → values), skipping `ignore`d names.
 * @returns parameter → messages (Django's MaxLengthValidator wording for one value); empty when within bounds.
 */
export function filterSizeErrors(
  params: ReadonlyMap<string, readonly string[]>,
  ignore: ReadonlySet<string>,
): FilterErrors {
  const errors: FilterErrors = {};
  let total = 0;
  let over = false;
  for (const [param, values] of params) {
    if (ignore.has(param)) continue;
    total += param.length + 1;
    const long = values.find((v) => v.length > MAX_FILTER_VALUE_CHARS);
    if (long !== undefined)
      errors[param] = [
        `Ensure this value has at most ${MAX_FILTER_VALUE_CHARS} characters (it has ${long.length}).`,
      ];
    for (const v of values) total += v.length + 1;
    if (total > MAX_FILTER_CHARS && !over && long === undefined) {
      over = true;
      errors[param] = [`The filters hold more than ${MAX_FILTER_CHARS} characters in all.`];
    }
  }
  return errors;
}

/**
 * A dynamic group's stored or submitted `filter` (an object, or its JSON text) as query parameters: each
 * value a list of strings (`null` → `"null"`, numbers and booleans as JSON writes them).
 * @returns the parameters and the errors of keys whose value is not a scalar or a list of scalars, plus
 *   `filter` → "Filter must be a dict" (Nautobot 1.6 `DynamicGroup.clean_filter`) when it is no object.
 */
export function filterObjectParams(filter: unknown): { params: Map<string, string[]>; errors: FilterErrors } {
  const params = new Map<string, string[]>();
  const errors: FilterErrors = {};
  let obj = filter ?? {};
  if (typeof obj === "string") {
    try {
      obj = JSON.parse(obj);
    } catch {
      return { params, errors: { filter: ["Filter must be a dict"] } };
    }
  }
  if (!obj || typeof obj !== "object" || Array.isArray(obj))
    return { params, errors: { filter: ["Filter must be a dict"] } };
  for (const [k, v] of Object.entries(obj)) {
    const list: unknown[] = Array.isArray(v) ? v : [v];
    if (!list.every(isScalar)) {
      errors[k] = ["Enter a string, number, boolean or null, or a list of them."];
      continue;
    }
    params.set(
      k,
      list.map((x) => (typeof x === "string" ? x : JSON.stringify(x))),
    );
  }
  return { params, errors };
}

function isScalar(x: unknown): boolean {
  return (
    x === null ||
    typeof x === "string" ||
    typeof x === "boolean" ||
    (typeof x === "number" && Number.isFinite(x))
  );
}
