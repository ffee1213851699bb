/**
 * The words of the OpenAPI document (issue 13), derived from the registry: a summary and description per
 * operation, a description per filter parameter (the field's label and help text, what the lookup does,
 * that repeating it means OR), and one tag per app with its description, so that Swagger UI and generated
 * clients are usable.
 */
import { APP_LABELS, type Model } from "../registry/index.ts";

/** Operation ids as `openapi.ts` names them (`list`, `create`, `bulk_update`, ...). */
type OperationId =
  | "list"
  | "create"
  | "bulk_update"
  | "bulk_partial_update"
  | "bulk_destroy"
  | "retrieve"
  | "update"
  | "partial_update"
  | "destroy";

const an = (word: string) =>
  /^[aeiou]/i.test(word) && !/^(uni|use)/i.test(word) ? `an ${word}` : `a ${word}`;

/** Summary and description of one of a model's operations. */
export function operationText(m: Model, id: OperationId): { summary: string; description: string } {
  const one = m.verbose;
  const many = m.plural ?? `${m.verbose}s`;
  switch (id) {
    case "list":
      return {
        summary: `List ${many}`,
        description: `A page of ${many} (\`limit\`, \`offset\`; \`brief=1\` for nested representations), filtered by the query parameters: repeating a parameter matches any of its values, different parameters must all match.`,
      };
    case "create":
      return {
        summary: `Create ${an(one)}`,
        description: `Create ${an(one)}, or several with a JSON array (all or none). Related objects are given by id or by a dictionary of their attributes.`,
      };
    case "bulk_update":
      return {
        summary: `Replace several ${many}`,
        description: `Replace the ${many} of a JSON array, each with its \`id\` (all or none).`,
      };
    case "bulk_partial_update":
      return {
        summary: `Update several ${many}`,
        description: `Change the given fields of the ${many} of a JSON array, each with its \`id\` (all or none).`,
      };
    case "bulk_destroy":
      return {
        summary: `Delete several ${many}`,
        description: `Delete the ${many} of a JSON array of \`{"id": …}\` (all or none; 409 when other objects still need one).`,
      };
    case "retrieve":
      return { summary: `Get ${an(one)}`, description: `One ${one} by id, in its full representation.` };
    case "update":
      return { summary: `Replace ${an(one)}`, description: `Replace every writable field of the ${one}.` };
    case "partial_update":
      return { summary: `Update ${an(one)}`, description: `Change the given fields of the ${one}.` };
    case "destroy":
      return {
        summary: `Delete ${an(one)}`,
        description: `Delete the ${one} (409 when other objects still need it).`,
      };
  }
}

/** What each lookup suffix does (seed, Filtering; Nautobot's lookup expressions). */
const LOOKUP_TEXT: Record<string, string> = {
  n: "is not",
  lt: "is less than",
  lte: "is at most",
  gt: "is greater than",
  gte: "is at least",
  ic: "contains (case-insensitive)",
  nic: "does not contain (case-insensitive)",
  isw: "starts with (case-insensitive)",
  nisw: "does not start with (case-insensitive)",
  iew: "ends with (case-insensitive)",
  niew: "does not end with (case-insensitive)",
  ie: "equals (case-insensitive)",
  nie: "does not equal (case-insensitive)",
  re: "matches the regular expression (RE2)",
  nre: "does not match the regular expression (RE2)",
  ire: "matches the regular expression (RE2, case-insensitive)",
  nire: "does not match the regular expression (RE2, case-insensitive)",
  isnull: "is empty (`true`) or set (`false`)",
};

/** Words written in capitals in labels. */
const ACRONYMS = new Set([
  "asn",
  "ip",
  "ipv4",
  "ipv6",
  "vlan",
  "vrf",
  "rd",
  "mtu",
  "mac",
  "id",
  "vc",
  "vm",
  "cid",
  "url",
  "rir",
]);

const label = (m: Model, field: string) => {
  const fd = m.fields[field];
  const text =
    fd?.label ??
    field
      .split("_")
      .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w))
      .join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
};

/** The description of a list filter parameter of a model. */
export function parameterText(m: Model, param: string): string {
  if (param === "q")
    return "Search: the fields Nautobot's search covers for this model contain the text (case-insensitive).";
  if (param === "tag") return "Tag slug; repeated, the object must carry every tag given.";
  if (param.startsWith("cf_"))
    return `Custom field \`${param.slice(3).split("__")[0]}\`, by its filter logic.`;
  const [base = param, lookup] = param.split("__");
  const idOf = base.endsWith("_id") && !m.fields[base] ? base.slice(0, -3) : undefined;
  const field = idOf ?? base;
  const fd = m.fields[field];
  const help = fd?.help ? ` ${fd.help}` : "";
  const what = idOf
    ? `${label(m, field)} (by id)`
    : fd?.kind === "fk" || fd?.kind === "m2m"
      ? `${label(m, field)} (by ${fd.kind === "fk" && fd.filterKey ? fd.filterKey : "slug, name or id"})`
      : fd
        ? label(m, field)
        : label(m, base);
  const verb = lookup ? (LOOKUP_TEXT[lookup] ?? lookup) : "is";
  return `${what} ${verb} the value; repeat the parameter for several values (any of them).${help}`;
}

/** The tags of the document: one per app, with its description. */
export function appTags(apps: readonly string[]): Array<{ name: string; description: string }> {
  return apps.map((a) => ({
    name: a,
    description: `${APP_LABELS[a] ?? a}: every endpoint under /api/${a}/.`,
  }));
}
