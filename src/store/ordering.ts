/**
 * Row ordering derived from a model's declared `ordering` (Nautobot Meta.ordering), with `id` appended
 * so that offset paging is stable. Used by reads and by the DDL (one index per ordering).
 */
import type { Model } from "../registry/index.ts";

/** Ordering columns of a model: `[column, descending]`. */
export function orderColumns(model: Model): Array<[string, boolean]> {
  const out: Array<[string, boolean]> = [];
  for (const raw of model.ordering ?? []) {
    const desc = raw.startsWith("-");
    const name = desc ? raw.slice(1) : raw;
    const fd = model.fields[name];
    if (!fd) {
      out.push([name, desc]);
      continue;
    }
    switch (fd.kind) {
      case "fk":
        out.push([`${name}_id`, desc]);
        break;
      case "ip":
        // Networks order by first address then length; addresses by host then length (Nautobot Meta.ordering).
        out.push(
          [`${name}_family`, desc],
          [fd.mode === "host" ? `${name}_host` : `${name}_start`, desc],
          [`${name}_len`, desc],
        );
        break;
      case "str":
        out.push([fd.natural ? `${name}_nat` : name, desc]);
        break;
      default:
        out.push([name, desc]);
    }
  }
  if (!out.some(([c]) => c === "id")) out.push(["id", false]);
  return out;
}
