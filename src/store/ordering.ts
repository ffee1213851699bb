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
    const name = (desc ? raw.slice(1) : raw).replace(/^\^/, "");
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

/** One ORDER BY term of a list query: a column of the listed table (`t`) or of a joined related table. */
export interface OrderTerm {
  /** `alias.column`. */
  ref: string;
  desc: boolean;
  /** The value may be NULL (a nullable column, or any column reached through a nullable FK). */
  nullable: boolean;
  /** NULLs sort first even ascending (Nautobot's `F("vrf__name").asc(nulls_first=True)` on prefixes). */
  nullsFirst: boolean;
}

/** A related table joined for ordering: `JOIN table AS alias ON alias.id = on`. */
export interface OrderJoin {
  table: string;
  alias: string;
  /** `parentAlias.fk_id`. */
  on: string;
  /** LEFT JOIN when the FK may be NULL, else an inner join. */
  left: boolean;
}

/**
 * The ORDER BY of a model's lists, as Django derives it from `Meta.ordering`: an FK entry orders by the
 * related model's own ordering (through a join, three levels deep at most), `-` reverses an entry, `^` puts
 * NULLs first, a name that is not a field is a raw column (`device_id`: by UUID, as Nautobot's inventory
 * items). The listed table's `id` ends the order, so offset paging is stable.
 */
export function orderPlan(
  model: Model,
  resolve: (key: string) => Model,
): { joins: OrderJoin[]; terms: OrderTerm[] } {
  const joins: OrderJoin[] = [];
  const terms: OrderTerm[] = [];
  const walk = (
    m: Model,
    alias: string,
    desc: boolean,
    nullable: boolean,
    nullsFirst: boolean,
    depth: number,
  ) => {
    for (const raw of m.ordering ?? []) {
      let name = raw;
      let d = desc;
      let nf = nullsFirst;
      if (name.startsWith("-")) {
        d = !d;
        name = name.slice(1);
      }
      if (name.startsWith("^")) {
        nf = true;
        name = name.slice(1);
      }
      const fd = m.fields[name];
      const term = (column: string, canBeNull: boolean) =>
        terms.push({ ref: `${alias}.${column}`, desc: d, nullable: nullable || canBeNull, nullsFirst: nf });
      if (!fd) {
        term(name, name !== "id");
        continue;
      }
      switch (fd.kind) {
        case "fk": {
          if (depth >= 3) {
            term(`${name}_id`, !fd.required);
            break;
          }
          const target = resolve(fd.to);
          const sub = `${alias}_${name}`;
          // Below a LEFT JOIN every join is LEFT too, or rows without the outer object would vanish.
          joins.push({
            table: target.table,
            alias: sub,
            on: `${alias}.${name}_id`,
            left: nullable || !fd.required,
          });
          walk(target, sub, d, nullable || !fd.required, nf, depth + 1);
          if (!terms.some((x) => x.ref === `${sub}.id`))
            terms.push({ ref: `${sub}.id`, desc: d, nullable: nullable || !fd.required, nullsFirst: nf });
          break;
        }
        case "ip":
          term(`${name}_family`, !!fd.nullable);
          term(fd.mode === "host" ? `${name}_host` : `${name}_start`, !!fd.nullable);
          term(`${name}_len`, !!fd.nullable);
          break;
        case "str":
          term(fd.natural ? `${name}_nat` : name, !!fd.nullable);
          break;
        default:
          term(name, !!fd.nullable);
      }
    }
  };
  walk(model, "t", false, false, false, 0);
  if (!terms.some((x) => x.ref === "t.id"))
    terms.push({ ref: "t.id", desc: false, nullable: false, nullsFirst: false });
  return { joins, terms };
}
