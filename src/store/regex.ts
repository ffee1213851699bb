/**
 * Regular expressions for the `__re`/`__nre`/`__ire`/`__nire` lookups (issue 12, "regex denial of
 * service"): RE2 semantics (re2js, linear-time matching, no backreferences or lookaround), so no pattern can
 * make a statement backtrack for hours. The filter compiler validates every pattern with `regexProblem`
 * (400 naming the parameter, on both engines); SQLite matches with `regexTest` (its `regexp` function);
 * PostgreSQL matches with its own engine under `statement_timeout`.
 */
import { RE2JS } from "re2js";

const cache = new Map<string, RE2JS>();
const MAX_CACHED = 256;

function compiled(pattern: string, caseInsensitive: boolean): RE2JS {
  const key = `${caseInsensitive ? "i" : "s"}:${pattern}`;
  let re = cache.get(key);
  if (!re) {
    re = RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(key, re);
  }
  return re;
}

/** Why `pattern` is not a usable regular expression (RE2 syntax), or undefined when it is. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compiled(pattern, false);
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^error parsing regexp: /, "");
  }
}

/** Whether `value` contains a match of `pattern` (search, not full match); false for an invalid pattern. */
export function regexTest(pattern: string, value: string, caseInsensitive: boolean): boolean {
  try {
    return compiled(pattern, caseInsensitive).matcher(value).find();
  } catch {
    return false;
  }
}
