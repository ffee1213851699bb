/**
 * Alphanumeric range expansion of component names and labels, as Nautobot 1.6's `ExpandableNameField`
 * (`nautobot/utilities/forms/utils.py` `expand_alphanumeric_pattern` / `parse_alphanumeric_range`,
 * `ALPHANUMERIC_EXPANSION_PATTERN` in `utilities/forms/constants.py`):
 *
 * - a bracket holds items separated by `,`; each item is `begin-end` or a single value: `eth[0-47]`,
 *   `ge-0/0/[0-3]`, `[a-c]`, `[1,3,5-7]`, `[ge,xe]-0/0/[0-9]`;
 * - several brackets expand as a cartesian product, the first bracket varying slowest;
 * - a numeric range loses leading zeros (`[01-03]` gives 1, 2, 3) and is empty when begin > end; an
 *   alphabetic range is of single letters of one case (`[a-c]`, `[A-C]`);
 * - an item mixing digits and letters, or letters of both cases (`[1-c]`, `[a-C]`), makes the whole bracket
 *   expand to nothing, which the form reports as "This field is required."; a range of longer words
 *   (`[ab-cd]`) is `Range "ab-cd" is invalid.`.
 *
 * Our addition: at most {@link MAX_EXPANSION} names per pattern, so a pattern cannot make the server build
 * millions of strings (issue 23).
 */
import { ValidationError } from "./errors.ts";

/** Nautobot's `ALPHANUMERIC_EXPANSION_PATTERN` (one bracket, captured without its brackets). */
const BRACKET = /\[((?:[a-zA-Z0-9]+[?:,-])+[a-zA-Z0-9]+)\]/;

/** Most names one pattern may expand to. */
export const MAX_EXPANSION = 10_000;

/** A pattern that cannot be expanded; `message` is the text Nautobot's form shows. */
export class PatternError extends Error {
  override name = "PatternError";
}

const isDigits = (s: string) => /^[0-9]+$/.test(s);
const isAlpha = (s: string) => /^[a-zA-Z]+$/.test(s);

/**
 * The values of one bracket's content (`a-d,f` → a, b, c, d, f; `0-3,a-d` → 0…3, a…d), in order and with
 * duplicates kept, as `parse_alphanumeric_range`. An invalid mix returns [] (Nautobot's behaviour).
 * @throws PatternError `Range "<item>" is invalid.` for a range of multi-character words.
 */
export function parseAlphanumericRange(text: string): string[] {
  const values: string[] = [];
  for (const item of text.split(",")) {
    const parts = item.split("-");
    let begin = item;
    let end = item;
    if (parts.length === 2) {
      [begin, end] = parts as [string, string];
      const vals = begin + end;
      const oneCase = vals === vals.toLowerCase() || vals === vals.toUpperCase();
      if (!(isDigits(vals) || isAlpha(vals)) || (isAlpha(vals) && !oneCase)) return [];
    }
    if (isDigits(begin) && isDigits(end)) {
      for (let n = Number.parseInt(begin, 10); n <= Number.parseInt(end, 10); n++) {
        values.push(String(n));
        if (values.length > MAX_EXPANSION) throw tooMany();
      }
    } else if (begin === end) values.push(begin);
    else {
      if (begin.length !== 1 || end.length !== 1) throw new PatternError(`Range "${item}" is invalid.`);
      for (let c = begin.charCodeAt(0); c <= end.charCodeAt(0); c++) values.push(String.fromCharCode(c));
    }
  }
  return values;
}

const tooMany = () => new PatternError(`The pattern expands to more than ${MAX_EXPANSION} names.`);

/**
 * Every string a pattern expands to, in Nautobot's order; a text without a bracket is itself.
 * @throws PatternError for an invalid range or more than {@link MAX_EXPANSION} results.
 */
export function expandAlphanumericPattern(text: string): string[] {
  const m = BRACKET.exec(text);
  if (!m) return [text];
  const lead = text.slice(0, m.index);
  const remnant = text.slice(m.index + m[0].length);
  const values = parseAlphanumericRange(m[1]!);
  if (!values.length) return [];
  const rest = expandAlphanumericPattern(remnant);
  if (values.length * rest.length > MAX_EXPANSION) throw tooMany();
  return values.flatMap((v) => rest.map((r) => `${lead}${v}${r}`));
}

/**
 * Names (and labels) of a bulk component create, as Nautobot's `ComponentCreateForm`: `name_pattern`
 * required and expanded, `label_pattern` optional and expanded to the same count.
 * @returns one `{ name, label? }` per component, in expansion order.
 * @throws ValidationError (400) keyed `name_pattern` / `label_pattern` with Nautobot's texts: "This field is
 *   required.", `Range "…" is invalid.`, and "The provided name pattern will create N components, however M
 *   labels will be generated. These counts must match."
 */
export function expandComponentNames(
  namePattern: string,
  labelPattern = "",
): Array<{ name: string; label?: string }> {
  const errors: Record<string, string[]> = {};
  const expand = (field: string, text: string): string[] | undefined => {
    try {
      const out = text ? expandAlphanumericPattern(text) : [];
      if (!out.length && field === "name_pattern") errors[field] = ["This field is required."];
      return out;
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      errors[field] = [e.message];
      return undefined;
    }
  };
  const names = expand("name_pattern", namePattern.trim());
  const labels = expand("label_pattern", labelPattern.trim());
  if (names && labels?.length && names.length && names.length !== labels.length)
    errors.label_pattern = [
      `The provided name pattern will create ${names.length} components, however ${labels.length} labels will be generated. These counts must match.`,
    ];
  if (Object.keys(errors).length || !names) throw new ValidationError(errors);
  return names.map((name, i) => (labels?.length ? { name, label: labels[i]! } : { name }));
}
