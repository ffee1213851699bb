/**
 * The regular-expression matcher of value validation (custom-field `validation_regex`, task t5), handed to
 * the registry's rules (`RegexMatcher`, registry/meta.ts) because the registry imports no store code.
 *
 * Patterns are RE2 within the size bounds of the regex lookups (store/regex.ts: 2,000 characters, 10,000
 * estimated instructions, compiled-pattern cache within 48 MiB). Searches are linear-time; one whose worst
 * case (program size × value length) is small runs inline, a larger one (a 10,000-instruction program over
 * a 64 KiB value takes re2js tens of seconds) on a worker thread without holding the event loop
 * (store/regex-async.ts). The searches of one request share MATCH_BUDGET_MS of matching time;
 * a search that cannot finish within what is left is undecided (the caller refuses the value with 400).
 * Inline searches give the event loop a turn every YIELD_AFTER_MS.
 */

import type { RegexMatcher } from "../registry/meta.ts";
import { regexProblem, searchBoundedAsync } from "../store/regex.ts";
import type { Ctx } from "./context.ts";

/**
 * Milliseconds of `validation_regex` matching one request may spend (as JSON Schema's budget): a search that
 * needs the worker gets what is left; inline searches (cheap by construction) always run.
 */
export const MATCH_BUDGET_MS = 2_000;

/**
 * Milliseconds of inline searching after which the event loop is given a turn: a bulk write of 1,000
 * objects whose values each take ~15 ms inline would otherwise hold it for 15 s (promises that resolve at
 * once never let I/O in).
 */
const YIELD_AFTER_MS = 20;

/** Per request (service context): ms spent on searches, and ms of inline searching since the last yield. */
const spent = new WeakMap<Ctx, { total: number; sinceYield: number }>();

/**
 * The matcher for `ctx`'s request: `problem` is store/regex.ts `regexProblem`; `search` answers undefined
 * when the request's budget (MATCH_BUDGET_MS, shared by its searches) runs out or the worker fails.
 */
export function regexMatcherFor(ctx: Ctx): RegexMatcher {
  return {
    problem: regexProblem,
    async search(pattern, value) {
      const used = spent.get(ctx) ?? { total: 0, sinceYield: 0 };
      spent.set(ctx, used);
      const start = Date.now();
      let found: boolean | undefined;
      try {
        found = await searchBoundedAsync(
          pattern,
          0,
          value,
          start + Math.max(0, MATCH_BUDGET_MS - used.total),
        );
      } catch {
        // RegexDeadlineError (store/regex-async.ts), or the worker failed: undecided either way.
        found = undefined;
      }
      const took = Date.now() - start;
      used.total += took;
      used.sinceYield += took;
      if (used.sinceYield >= YIELD_AFTER_MS) {
        used.sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return found;
    },
  };
}
