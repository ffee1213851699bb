/**
 * Uniqueness (issue 12): the service's checks with DRF's messages (UniqueValidator,
 * UniqueTogetherValidator and the models' own wording), and the mapping of a database unique violation —
 * the unique indexes of store/ddl.ts catch what concurrent writers slip past the checks — back to exactly
 * the same 400.
 */
import { type SelectQueryBuilder, sql } from "kysely";
import type { Model, Registry } from "../registry/index.ts";
import type { UniqueTogether } from "../registry/meta.ts";
import { uniqueIndexFor } from "../store/ddl.ts";
import type { Ctx } from "./context.ts";
import { type ErrorBag, ValidationError } from "./errors.ts";
import { columnOf, type Row } from "./rows.ts";

function verboseField(name: string): string {
  return name.replace(/_/g, " ");
}

/** Uniqueness checks (DRF UniqueValidator / UniqueTogetherValidator messages). */
export async function checkUnique(
  ctx: Ctx,
  model: Model,
  rec: Row,
  selfId: string | undefined,
  errors: ErrorBag,
  /**
   * The stored record of an update: a rule whose fields all keep their stored values is not checked again
   * (the stored row already satisfies it, and the database's unique index guards the rest).
   */
  before?: Row,
  /** Unique fields whose value was generated and found free in this transaction (input.ts `generatedUnique`). */
  generated?: ReadonlySet<string>,
): Promise<void> {
  const kept = (fields: readonly string[]) =>
    before !== undefined && fields.every((f) => sameScalar(rec[f], before[f]));
  // Every rule to check becomes one SELECT; they go to the database as one statement (UNION ALL).
  const checks: Array<{ q: SelectQueryBuilder<any, any, any>; key: string; message: string }> = [];
  const probe = (i: number) => ctx.db.selectFrom(model.table).select(sql<number>`${sql.lit(i)}`.as("r"));
  for (const [name, fd] of model.fieldList) {
    if (!("unique" in fd) || !fd.unique) continue;
    if (kept([name]) || generated?.has(name)) continue;
    const v = rec[name];
    if (v === null || v === undefined || v === "") continue;
    let q = probe(checks.length).where(columnOf(model, name), "=", v);
    if (selfId) q = q.where("id", "!=", selfId);
    checks.push({
      q,
      key: name,
      message: `${model.verbose} with this ${verboseField(name)} already exists.`,
    });
  }
  for (const u of model.uniqueTogether ?? []) {
    if ((u.whereNull ?? []).some((f) => rec[f] !== null && rec[f] !== undefined)) continue;
    if (kept([...u.fields, ...(u.whereNull ?? [])])) continue;
    const values = u.fields.map((f) => rec[f]);
    const matchNull = new Set(u.skipNulls === false ? u.fields : (u.nullMatches ?? []));
    if (
      u.fields.some(
        (f, i) => !matchNull.has(f) && (values[i] === null || values[i] === undefined || values[i] === ""),
      )
    )
      continue;
    let q = probe(checks.length);
    u.fields.forEach((f, i) => {
      const v = values[i];
      q =
        v === null || v === undefined
          ? q.where(columnOf(model, f), "is", null)
          : q.where(columnOf(model, f), "=", v);
    });
    for (const f of u.whereNull ?? []) q = q.where(columnOf(model, f), "is", null);
    if (selfId) q = q.where("id", "!=", selfId);
    const [key, message] = togetherError(u);
    checks.push({ q, key, message });
  }
  if (!checks.length) return;
  let all = checks[0]!.q;
  for (const c of checks.slice(1)) all = all.unionAll(c.q);
  const hit = new Set((await all.execute()).map((r: { r: unknown }) => Number(r.r)));
  checks.forEach((c, i) => {
    if (hit.has(i)) errors.add(c.key, c.message);
  });
}

/** Two record values are the same scalar (null and undefined alike); lists and objects never are. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined) return b === null || b === undefined;
  return typeof a !== "object" && a === b;
}

/** Where and how a together-uniqueness violation is reported. */
function togetherError(u: UniqueTogether): [string, string] {
  return [
    u.errorKey ?? (u.message ? "__all__" : "non_field_errors"),
    u.message ?? `The fields ${u.fields.join(", ")} must make a unique set.`,
  ];
}

const violations = new WeakMap<Registry, Map<string, [string, string]>>();

/** Index name and `table.col, table.col` (SQLite's wording) → the field errors of that rule. */
function violationTable(reg: Registry): Map<string, [string, string]> {
  let t = violations.get(reg);
  if (t) return t;
  t = new Map();
  for (const m of reg.models.values()) {
    for (const [name, fd] of m.fieldList) {
      if (!("unique" in fd) || !fd.unique) continue;
      const err: [string, string] = [name, `${m.verbose} with this ${verboseField(name)} already exists.`];
      t.set(`ix_${m.table}_${name}`.slice(0, 60), err);
      t.set(`${m.table}.${name}`, err);
    }
    for (const u of m.uniqueTogether ?? []) {
      const ix = uniqueIndexFor(m, u);
      const err = togetherError(u);
      t.set(ix.name, err);
      const cols = u.fields.map((f) => `${m.table}.${m.fields[f]?.kind === "fk" ? `${f}_id` : f}`);
      t.set(cols.join(", "), err);
    }
  }
  violations.set(reg, t);
  return t;
}

/**
 * The 400 for a database unique violation, the same as the service's own check would give; undefined for
 * any other error. PostgreSQL names the index (`constraint`); SQLite names the index or its columns.
 */
export function uniqueViolation(reg: Registry, err: unknown): ValidationError | undefined {
  const e = err as { code?: string; constraint?: string; message?: string };
  const msg = String(e?.message ?? "");
  let key: string | undefined;
  if (e?.code === "23505") key = e.constraint;
  else {
    const m = /UNIQUE constraint failed: (?:index '([^']+)'|(.+))$/.exec(msg);
    key = m?.[1] ?? m?.[2]?.trim();
  }
  if (!key) return undefined;
  const hit = violationTable(reg).get(key);
  return hit ? new ValidationError({ [hit[0]]: [hit[1]] }) : undefined;
}
