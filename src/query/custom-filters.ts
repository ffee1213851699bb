/**
 * Filters too specific for the generic filter kinds (`{kind: "custom", fn}` in a model declaration).
 * Each entry builds a filter from its declaration; semantics are stated per entry.
 */
import type { FilterDef } from "../registry/meta.ts";
import type { Filter } from "./filters.ts";

export const CUSTOM_FILTERS: Record<string, (def: FilterDef) => Filter> = {};
