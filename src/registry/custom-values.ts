/**
 * The values a custom field accepts (Nautobot 1.6 `CustomField.validate`), one rule for the two places that
 * check them: the `custom_fields` of an object (service/input.ts, wrapped as "Invalid value for custom field
 * '<name>': …" by `CustomFieldModel.clean`) and a custom field's own `default` (`CustomField.clean`,
 * models/extras.ts, wrapped as `Invalid default value "<value>": …`).
 *
 * Where Nautobot accepts a value of another JSON type by Python coercion (`int("12")` for an integer, `1` for
 * a boolean, the characters of a string for a multi-select) or fails with a 500 (`int({})`, `strptime(5)`),
 * the value is refused here with the message Nautobot gives for a value of the right type that is wrong, so
 * a stored value always has the field's type.
 *
 * `validation_regex` is matched with the bounded RE2 matcher the caller passes in (`RegexMatcher`, from
 * service/value-regex.ts; task t5): Nautobot uses Python `re`, whose backtracking a pattern such as
 * `^(a+)+$` turns exponential, and JavaScript's RegExp would hold the event loop the same way. A stored
 * pattern that RE2 cannot compile (saved before patterns were checked) matches nothing, so values are
 * refused with Nautobot's message until the field's pattern is fixed.
 */
import { type RegexMatcher, SIZE_LIMITS } from "./meta.ts";

/** What `customValueError` needs of a custom field (its choices' values in their order). */
export interface CustomFieldRule {
  type: string;
  validation_regex: string;
  validation_minimum: number | null;
  validation_maximum: number | null;
  choices: readonly string[];
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A `YYYY-MM-DD` text naming a real day (Python `datetime.strptime(value, "%Y-%m-%d")` refuses Feb 30). */
function isDate(v: unknown): boolean {
  const m = typeof v === "string" ? DATE.exec(v) : null;
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return y >= 1 && days !== undefined && d >= 1 && d <= days;
}

/**
 * Why `v` is not a value of the custom field `def` (Nautobot 1.6 `CustomField.validate`'s messages), or
 * undefined. Empty values (null, "") are for the caller's required-field rule. Values longer than
 * SIZE_LIMITS.customFieldValue characters (as JSON for non-strings) are refused before anything else.
 * `regex` matches `validation_regex` (a search, as Python `re.search`); a search that does not finish
 * within the request's matching budget is refused with a message saying so (no Nautobot equivalent).
 */
export async function customValueError(
  def: CustomFieldRule,
  v: unknown,
  regex: RegexMatcher,
): Promise<string | undefined> {
  if (v === null || v === undefined || v === "") return undefined;
  const size = typeof v === "string" ? v.length : (JSON.stringify(v)?.length ?? 0);
  if (size > SIZE_LIMITS.customFieldValue)
    return `Ensure this value has no more than ${SIZE_LIMITS.customFieldValue} characters.`;
  const choices = () => `Available choices are: ${def.choices.join(", ")}`;
  switch (def.type) {
    case "text":
    case "url":
    case "markdown":
      if (typeof v !== "string") return "Value must be a string";
      if (def.validation_regex) {
        const found = await regex.search(def.validation_regex, v);
        if (found === undefined)
          return `Matching the value against regex '${def.validation_regex}' took longer than the time allowed`;
        if (!found) return `Value must match regex '${def.validation_regex}'`;
      }
      return undefined;
    case "integer":
      if (typeof v !== "number" || !Number.isInteger(v)) return "Value must be an integer.";
      if (def.validation_minimum !== null && v < def.validation_minimum)
        return `Value must be at least ${def.validation_minimum}`;
      if (def.validation_maximum !== null && v > def.validation_maximum)
        return `Value must not exceed ${def.validation_maximum}`;
      return undefined;
    case "boolean":
      return typeof v === "boolean" ? undefined : "Value must be true or false.";
    case "date":
      return isDate(v) ? undefined : "Date values must be in the format YYYY-MM-DD.";
    case "select":
      return def.choices.includes(v as string) ? undefined : `Invalid choice (${pythonStr(v)}). ${choices()}`;
    case "multi-select":
      return Array.isArray(v) && v.every((x) => def.choices.includes(x))
        ? undefined
        : `Invalid choice(s) (${pythonStr(v)}). ${choices()}`;
    default:
      return undefined;
  }
}

/**
 * Python `str()` of a JSON value, as Nautobot's f-string messages show a client's value: a string as it is,
 * `True`/`False`/`None`, lists and dicts with their items' `repr` (`['a', 1]`, `{'k': None}`).
 */
export function pythonStr(v: unknown): string {
  return typeof v === "string" ? v : pythonRepr(v);
}

/** Python `repr()` of a JSON value (strings quoted as Python quotes them). */
function pythonRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return String(v).replace(/e([+-])(\d)$/, "e$10$2");
  if (typeof v === "string") return pythonStrRepr(v);
  if (Array.isArray(v)) return `[${v.map(pythonRepr).join(", ")}]`;
  if (typeof v === "object")
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pythonStrRepr(k)}: ${pythonRepr(x)}`)
      .join(", ")}}`;
  return String(v);
}

/** Python `repr()` of a text: single quotes unless it holds one and no double quote; escapes. */
function pythonStrRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += `\\${q}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${q}${out}${q}`;
}
