/**
 * Regular expressions for the `__re`/`__nre`/`__ire`/`__nire` lookups (issue 12, "regex denial of
 * service"): RE2 semantics (re2js, linear-time matching, no backreferences or lookaround), so no pattern can
 * make a statement backtrack for hours. The filter compiler validates every pattern with `regexProblem`
 * (400 naming the parameter, on both engines); SQLite matches with `regexTest` (its `regexp` function);
 * PostgreSQL matches with its own engine under `statement_timeout`.
 *
 * Bounded work (issue 23): a pattern longer than MAX_PATTERN_LENGTH characters or whose program would
 * exceed MAX_PROGRAM_SIZE instructions (estimated from repetition counts before anything is compiled, see
 * regex-size.ts) is refused, so compiling is a few milliseconds and a few megabytes at most; compiled
 * patterns are cached within MAX_CACHE_BYTES; a search whose worst case (program size × text length) is
 * above INLINE_COST runs on a worker thread under the caller's deadline (regex-offload.ts, or regex-async.ts
 * for callers that can await and so leave the event loop free: custom-field `validation_regex`, task t5).
 */
import { RE2JS } from "re2js";
import { searchAsync } from "./regex-async.ts";
import { RegexDeadlineError, searchOffThread } from "./regex-offload.ts";
import { estimateProgramSize } from "./regex-size.ts";

export { RegexDeadlineError };

/** Longest pattern accepted, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 2_000;
/** Largest estimated program accepted, in RE2 instructions (RE2's own limit is 1,398,101: ~250 MB here). */
export const MAX_PROGRAM_SIZE = 10_000;
/** Bytes the cache of compiled patterns may hold (by the estimate of `entryBytes`). */
const MAX_CACHE_BYTES = 48 * 1024 * 1024;
/** Program size × text length up to which a search runs inline (~15 ms in re2js's slowest engine). */
const INLINE_COST = 1_000_000;
/** re2js's lazy DFA may grow to 8 MiB per compiled pattern; one instruction is ~400 bytes compiled. */
const DFA_BYTES = 8 * 1024 * 1024;
const BYTES_PER_INSTRUCTION = 400;

const cache = new Map<string, { re: RE2JS; bytes: number }>();
let cacheBytes = 0;

function entryBytes(re: RE2JS, pattern: string): number {
  return re.programSize() * BYTES_PER_INSTRUCTION + DFA_BYTES + pattern.length * 2;
}

/** Why `pattern` is too large to compile (length or estimated program size), or undefined. */
export function sizeProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `the pattern is ${pattern.length} characters long (the maximum is ${MAX_PATTERN_LENGTH}).`;
  const size = estimateProgramSize(pattern);
  if (size > MAX_PROGRAM_SIZE)
    return `the pattern expands to about ${Number.isFinite(size) ? Math.round(size) : "too many"} instructions (the maximum is ${MAX_PROGRAM_SIZE}); use smaller repetition counts.`;
  return undefined;
}

/**
 * The compiled form of `pattern` (re2js `flags`), from the cache when there. Throws a message naming the
 * problem for a pattern too large (see sizeProblem) or not RE2 syntax.
 */
export function compileBounded(pattern: string, flags: number): RE2JS {
  const key = `${flags}:${pattern}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.re;
  }
  const problem = sizeProblem(pattern);
  if (problem) throw new Error(problem);
  const re = RE2JS.compile(pattern, flags);
  const bytes = entryBytes(re, pattern);
  while (cache.size && cacheBytes + bytes > MAX_CACHE_BYTES) {
    const [oldest, entry] = cache.entries().next().value as [string, { bytes: number }];
    cache.delete(oldest);
    cacheBytes -= entry.bytes;
  }
  cache.set(key, { re, bytes });
  cacheBytes += bytes;
  return re;
}

/** Why `pattern` is not a usable regular expression (too large, or not RE2 syntax), or undefined when it is. */
export function regexProblem(pattern: string): string | undefined {
  try {
    compileBounded(pattern, 0);
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^error parsing regexp: /, "");
  }
}

/**
 * Whether `value` contains a match of `pattern` (search, not full match); false for an unusable pattern.
 * `deadline` (epoch milliseconds, default none) bounds a long search: past it, RegexDeadlineError.
 */
export function regexTest(
  pattern: string,
  value: string,
  caseInsensitive: boolean,
  deadline = Number.POSITIVE_INFINITY,
): boolean {
  return searchBounded(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0, value, deadline);
}

/** `regexTest` with re2js flags; shared with JSON Schema `pattern` (service/json-schema.ts). */
export function searchBounded(pattern: string, flags: number, value: string, deadline: number): boolean {
  let re: RE2JS;
  try {
    re = compileBounded(pattern, flags);
  } catch {
    return false;
  }
  if (re.programSize() * value.length <= INLINE_COST) return re.test(value);
  return searchOffThread(pattern, flags, value, deadline);
}

/**
 * `searchBounded` for callers that can await (custom-field values): a search above INLINE_COST runs on a
 * worker thread while the event loop serves other requests (regex-async.ts). An unusable pattern is no
 * match. Rejects with RegexDeadlineError when `deadline` (epoch milliseconds) passes first.
 */
export async function searchBoundedAsync(
  pattern: string,
  flags: number,
  value: string,
  deadline: number,
): Promise<boolean> {
  let re: RE2JS;
  try {
    re = compileBounded(pattern, flags);
  } catch {
    return false;
  }
  if (re.programSize() * value.length <= INLINE_COST) return re.test(value);
  return searchAsync(pattern, flags, value, deadline);
}
