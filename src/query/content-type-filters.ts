/**
 * Filters whose values are content types (`app.model`): `content_type`, `content_types`, `owner_content_type`,
 * `changed_object_type`, a generic FK's `<name>_type`, a location's `content_type`... Each reads its values
 * as the Nautobot 1.6.32 filter of that field does (issue 24; `ContentTypeFilterMode` in registry/meta.ts;
 * Nautobot `utilities/filters.py` `ContentTypeFilterMixin`, `ContentTypeMultipleChoiceFilter`), compared
 * value class by value class with the reference (scripts/filter-values.ts, content-type section).
 *
 * Deliberate deviation: `<name>__n` negates. Nautobot 1.6 generates it with `exclude=True`, but its
 * content-type filters ignore that and filter as the positive does.
 */
import { type RawBuilder, sql } from "kysely";
import { pyStrip } from "../net/netaddr.ts";
import type { ContentTypeFilterMode } from "../registry/meta.ts";
import type { Filter } from "./filters.ts";

type Cond = RawBuilder<boolean>;

export interface ContentTypeFilterSpec {
  mode: ContentTypeFilterMode;
  /** The field's allowed `app.model` values (`choice`, `model`, `pk` check against them). */
  allowed: () => readonly string[];
  /** Several values: all must match (a `cts` field, Nautobot's default `conjoined=True`) or any. */
  conjoined: boolean;
  /** The row has this (lower-case) content type. */
  match: (ct: string) => Cond;
  negate?: boolean;
}

const and = (c: Cond[]) => (c.length === 1 ? c[0]! : sql<boolean>`(${sql.join(c, sql` AND `)})`);
const or = (c: Cond[]) => (c.length === 1 ? c[0]! : sql<boolean>`(${sql.join(c, sql` OR `)})`);
const NONE = sql<boolean>`1 = 0`;

/** The condition of the values, or undefined when they are no filter; errors go to `error(param, …)`. */
function positive(
  spec: ContentTypeFilterSpec,
  values: string[],
  error: (message: string) => void,
): Cond | undefined {
  const allowed = new Set(spec.allowed());
  switch (spec.mode) {
    case "text": {
      // A CharFilter: the last value, stripped; blank is no filter; not `<app>.<model>`: nothing.
      const v = pyStrip(values[values.length - 1] ?? "");
      if (!v) return undefined;
      const parts = v.toLowerCase().split(".");
      return parts.length === 2 ? spec.match(parts.join(".")) : NONE;
    }
    case "choice": {
      // MultipleChoiceField: each value exactly one of the choices (blank included).
      const bad = values.find((v) => !allowed.has(v));
      if (bad !== undefined) {
        error(`Select a valid choice. ${bad} is not one of the available choices.`);
        return undefined;
      }
      const conds = values.map((v) => spec.match(v));
      return spec.conjoined ? and(conds) : or(conds);
    }
    case "model": {
      // ModelChoiceField: one value; blank is no filter.
      const v = values[values.length - 1] ?? "";
      if (v === "") return undefined;
      if (!allowed.has(v)) {
        error("Select a valid choice. That choice is not one of the available choices.");
        return undefined;
      }
      return spec.match(v);
    }
    case "pk": {
      // ModelMultipleChoiceField over integer ids: a non-integer is "not a valid value", an integer no
      // choice (this API has no integer content-type ids; it takes `app.model`).
      const bad = values.find((v) => !allowed.has(v));
      if (bad !== undefined) {
        error(
          /^\s*[+-]?\d+\s*$/.test(bad)
            ? `Select a valid choice. ${bad} is not one of the available choices.`
            : `“${bad}” is not a valid value.`,
        );
        return undefined;
      }
      return or(values.map((v) => spec.match(v)));
    }
  }
}

/** A content-type filter of one parameter (see the module comment). */
export function contentTypeFilter(param: string, spec: ContentTypeFilterSpec): Filter {
  return {
    async apply(values, env) {
      const c = positive(spec, values, (m) => env.error(param, m));
      return c && spec.negate ? sql<boolean>`NOT COALESCE((${c}), FALSE)` : c;
    },
  };
}
