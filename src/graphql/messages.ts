/**
 * GraphQL errors worded as Nautobot 1.6.32 words them (issue 24). Nautobot answers through graphene 2 on
 * graphql-core 2.3, whose messages differ from graphql-js 16's; clients and tests match on the text, so
 * the differences that a request can show are reworded here:
 *
 * - syntax errors: `Syntax Error GraphQL (line:column) <description>\n\n<source excerpt with a caret>`
 *   (graphql-core 2 `GraphQLSyntaxError` and `highlight_source_at_location`), token descriptions without
 *   quotes around punctuators and `EOF` for the end of the document (graphql-core 2 `lexer.get_token_desc`);
 * - unknown arguments: `Unknown argument "x" on field "sites" of type "Query". Did you mean "a" or "b"?`
 *   (or `on directive "@skip"`) with graphql-core 2's suggestions (`suggestion_list`: edit distance within
 *   half the length, at most 5, nearest first, ties in declaration order) — the rule `knownArgumentNames`
 *   replaces graphql-js's;
 * - argument values: one error per argument, `Argument "limit" has invalid value "x".\nExpected type
 *   "Int", found "x".` (graphql-core 2 `ArgumentsOfCorrectType` and `is_valid_literal_value`) — the rule
 *   `argumentsOfCorrectType` takes the field and directive arguments from graphql-js's
 *   `ValuesOfCorrectTypeRule`, which still checks variable defaults;
 * - variable positions: `Variable "n" of type …` (graphql-core 2 `VariablesInAllowedPosition` names the
 *   variable without its `$`); missing required arguments: `Field "sites" argument "x" of type "Int!" is
 *   required but not provided.` (`ProvidedNonNullArguments`, directives named without their `@`).
 *
 * Not reworded: the `null` literal (graphql-core 2 cannot parse it: a syntax error there, a value here),
 * errors of variable values (graphene 2 answers some with Python exception texts such as
 * "could not convert string to float: 'x'", or not at all), and execution errors (already Nautobot's).
 */
import {
  type ASTVisitor,
  GraphQLError,
  type GraphQLInputType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  KnownArgumentNamesRule,
  print,
  specifiedRules,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
  ValuesOfCorrectTypeRule,
  visitInParallel,
} from "graphql";

/** Levenshtein distance (graphql-core 2's `lexical_distance`, whose transposition case never applies). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The options close to `input`, nearest first (ties keep the options' order): graphql-core 2
 * `suggestion_list` (an option is close when its distance is at most half of the longer length, or 1).
 */
export function suggestionList(input: string, options: readonly string[]): string[] {
  const close: Array<[string, number]> = [];
  for (const o of options) {
    const d = distance(input, o);
    if (d <= Math.max(input.length / 2, o.length / 2, 1)) close.push([o, d]);
  }
  return close.sort((x, y) => x[1] - y[1]).map(([o]) => o);
}

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"` of the first five items (graphql-core 2 `quoted_or_list`). */
export function quotedOrList(items: readonly string[]): string {
  const q = items.slice(0, 5).map((t) => `"${t}"`);
  return q.length > 1 ? `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}` : (q[0] ?? "");
}

/** Unknown field and directive arguments as graphql-core 2's `KnownArgumentNames` reports them. */
export function knownArgumentNames(context: ValidationContext): ASTVisitor {
  return {
    Argument(node) {
      if (context.getArgument()) return;
      const directive = context.getDirective();
      const field = context.getFieldDef();
      const parent = context.getParentType();
      const where = directive
        ? `directive "@${directive.name}"`
        : field && parent
          ? `field "${field.name}" of type "${parent.name}"`
          : undefined;
      if (!where) return;
      const suggested = suggestionList(
        node.name.value,
        (directive ?? field)!.args.map((a) => a.name),
      );
      context.reportError(
        new GraphQLError(
          `Unknown argument "${node.name.value}" on ${where}.${
            suggested.length ? ` Did you mean ${quotedOrList(suggested)}?` : ""
          }`,
          { nodes: node },
        ),
      );
    },
  };
}

/** Why `value` is not a literal of `type`, one line per problem (graphql-core 2 `is_valid_literal_value`). */
function literalProblems(type: GraphQLInputType, value: ValueNode | undefined): string[] {
  if (isNonNullType(type)) {
    if (!value || value.kind === Kind.NULL) return [`Expected "${String(type)}", found null.`];
    return literalProblems(type.ofType, value);
  }
  if (!value || value.kind === Kind.VARIABLE || value.kind === Kind.NULL) return [];
  if (isListType(type)) {
    if (value.kind !== Kind.LIST) return literalProblems(type.ofType, value);
    return value.values.flatMap((item, i) =>
      literalProblems(type.ofType, item).map((p) => `In element #${i}: ${p}`),
    );
  }
  if (isInputObjectType(type)) {
    if (value.kind !== Kind.OBJECT) return [`Expected "${type.name}", found not an object.`];
    const fields = type.getFields();
    const given = new Map(value.fields.map((f) => [f.name.value, f.value]));
    const out = value.fields
      .filter((f) => !(f.name.value in fields))
      .map((f) => `In field "${f.name.value}": Unknown field.`);
    for (const [name, def] of Object.entries(fields))
      out.push(...literalProblems(def.type, given.get(name)).map((p) => `In field "${name}": ${p}`));
    return out;
  }
  let parsed: unknown;
  try {
    parsed = type.parseLiteral(value, undefined);
  } catch {
    parsed = undefined;
  }
  return parsed === undefined || (typeof parsed === "number" && Number.isNaN(parsed))
    ? [`Expected type "${type.name}", found ${print(value)}.`]
    : [];
}

/**
 * Argument values checked as graphql-core 2's `ArgumentsOfCorrectType`: one error per argument, on its
 * value, listing every problem. graphql-js's `ValuesOfCorrectTypeRule` still runs for the values outside
 * arguments (variable defaults); its reports inside arguments are dropped.
 */
export function argumentsOfCorrectType(context: ValidationContext): ASTVisitor {
  let inArgument = 0;
  const quiet = Object.create(context, {
    reportError: {
      value: (e: GraphQLError) => {
        if (!inArgument) context.reportError(e);
      },
    },
  }) as ValidationContext;
  const ours: ASTVisitor = {
    Argument: {
      enter(node) {
        const def = context.getArgument();
        inArgument++;
        if (!def) return;
        const problems = literalProblems(def.type, node.value);
        if (problems.length)
          context.reportError(
            new GraphQLError(
              `Argument "${node.name.value}" has invalid value ${print(node.value)}.\n${problems.join("\n")}`,
              { nodes: node.value },
            ),
          );
      },
      leave() {
        inArgument--;
      },
    },
  };
  return visitInParallel([ours, ValuesOfCorrectTypeRule(quiet)]);
}

/** graphql-js's specified rules with the argument rules worded as graphql-core 2's. */
export const nautobotRules: readonly ValidationRule[] = specifiedRules.map((r) =>
  r === KnownArgumentNamesRule
    ? knownArgumentNames
    : r === ValuesOfCorrectTypeRule
      ? argumentsOfCorrectType
      : r,
);

const PUNCTUATORS = new Set(["!", "$", "&", "(", ")", "...", ":", "=", "@", "[", "]", "{", "|", "}"]);

/** Python's line boundaries (`str.splitlines`): \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029. */
const LINE_BREAKS = new Set([0x0a, 0x0d, 0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029]);

/** `body` split as Python's `str.splitlines()` splits it (no empty last line after a final break). */
function splitLines(body: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (!LINE_BREAKS.has(body.charCodeAt(i))) continue;
    lines.push(body.slice(start, i));
    if (body[i] === "\r" && body[i + 1] === "\n") i++;
    start = i + 1;
  }
  if (start < body.length) lines.push(body.slice(start));
  return lines;
}

/** The source lines around `line` with a caret under `column` (graphql-core 2 `highlight_source_at_location`). */
function highlight(body: string, line: number, column: number): string {
  const lines = splitLines(body);
  const pad = String(line + 1).length;
  const row = (n: number, text: string) => `${String(n).padStart(pad)}: ${text}\n`;
  let out = "";
  if (line >= 2) out += row(line - 1, lines[line - 2] ?? "");
  if (line <= lines.length) {
    out += row(line, lines[line - 1]!);
    out += `${" ".repeat(1 + pad + column)}^\n`;
  }
  if (line < lines.length) out += row(line + 1, lines[line]!);
  return out;
}

/** A graphql-js syntax description in graphql-core 2's words (`Expected Name, found EOF`). */
function syntaxDescription(desc: string): string {
  if (desc === "Unterminated string.") return "Unterminated string";
  const character = /^(Unexpected|Invalid) character: (.*)$/.exec(desc);
  if (character) return `${character[1]} character ${character[2]}`;
  // Token descriptions (graphql-core 2 `get_token_desc`): bare punctuators, `EOF`, no final period.
  if (!/^(Expected|Unexpected) /.test(desc)) return desc;
  return desc
    .replace(/"([^"]*)"/g, (m, t: string) => (PUNCTUATORS.has(t) ? t : m))
    .replace(/<EOF>/g, "EOF")
    .replace(/\.$/, "");
}

/** The message of a GraphQL error as Nautobot 1.6.32 words it (see the module comment). */
export function nautobotMessage(err: GraphQLError): string {
  const m = err.message;
  const syntax = /^Syntax Error: ([\s\S]*)$/.exec(m);
  if (syntax && err.source && err.locations?.[0]) {
    const { line, column } = err.locations[0];
    return `Syntax Error GraphQL (${line}:${column}) ${syntaxDescription(syntax[1]!)}\n\n${highlight(
      err.source.body,
      line,
      column,
    )}`;
  }
  return m
    .replace(
      /^Variable "\$([^"]+)" of type ("[^"]*" used in position expecting type)/,
      'Variable "$1" of type $2',
    )
    .replace(
      /^(Field|Directive) "@?([^"]+)" (argument "[^"]+" of type "[^"]+") is required, but it was not provided\.$/,
      '$1 "$2" $3 is required but not provided.',
    );
}
