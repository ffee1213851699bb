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
import { chunks, columnOf, type Row, unionAll } from "./rows.ts";

function verboseField(name: string): string {
  return name.replace(/_/g, " ");
}

/**
 * The unique-field values of a bulk create whose checks are deferred (`deferUniqueChecks`): model key and,
 * per field, the values its items claimed.
 */
interface DeferredChecks {
  model: string;
  byField: Map<string, unknown[]>;
}
const DEFERRED_KEY = "deferredUniqueChecks";

/**
 * The deferred checks of `model` in this transaction, when a bulk create defers them: its items' unique
 * fields are then checked all at once after their rows are written (`deferUniqueChecks`), and a slug
 * generated from its source field is taken as generated, not looked up (service/input.ts).
 */
export function deferredChecks(ctx: Ctx, model: Model): DeferredChecks | undefined {
  const d = ctx.memo.get(DEFERRED_KEY) as DeferredChecks | undefined;
  return d?.model === model.key ? d : undefined;
}

/**
 * Run `fn` (the items of a bulk create of `model`) with its unique-field checks deferred, then check them
 * all at once: after the rows are written, a value of a unique field that now occurs more than once means
 * an item clashed with a stored row or with another item. Together-uniqueness rules are still checked item
 * by item. One statement per 2,000 values instead of one per item (a bulk of 1,000 tenants, whose name and
 * slug are unique, on PostgreSQL: 1,000 round trips to 1).
 * @returns whether every deferred value is unique; on false the caller runs the items again one by one
 *   (service/write.ts `CheckEachItem`), which gives the exact positional errors and generated slugs.
 */
export async function deferUniqueChecks(ctx: Ctx, model: Model, fn: () => Promise<void>): Promise<boolean> {
  const deferred: DeferredChecks = { model: model.key, byField: new Map() };
  ctx.memo.set(DEFERRED_KEY, deferred);
  try {
    await fn();
  } finally {
    ctx.memo.delete(DEFERRED_KEY);
  }
  const queries: SelectQueryBuilder<any, any, any>[] = [];
  for (const [name, values] of deferred.byField) {
    const distinct = [...new Set(values)];
    // One value given twice within the bulk: the items clash with each other.
    if (distinct.length !== values.length) return false;
    const col = columnOf(model, name);
    for (const part of chunks(distinct, 500)) {
      queries.push(
        ctx.db
          .selectFrom(model.table)
          .select(sql<number>`1`.as("x"))
          .where(col, "in", part)
          .groupBy(col)
          .having(sql`count(*)`, ">", 1),
      );
    }
  }
  // Up to four parts (2,000 values) per statement.
  for (const group of chunks(queries, 4)) {
    if ((await unionAll(group).execute()).length) return false;
  }
  return true;
}

/** The message of a violation of field `name`'s `unique` (DRF UniqueValidator's, or the model's own). */
function uniqueMessage(model: Model, name: string): string {
  return (
    model.fields[name]?.uniqueMessage ?? `${model.verbose} with this ${verboseField(name)} already exists.`
  );
}

/**
 * Which uniqueness rules a `checkUnique` call checks. `serializer`: DRF's validators, run before the model's
 * `clean()` (`validate`): unique scalar fields and together-rules. `model`: Django's `validate_unique` of
 * unique relations (a OneToOneField such as `primary_ip4`, `installed_device`), which Nautobot's serializers
 * declare as nested fields without a UniqueValidator, so they are checked only after `clean()` and only
 * when `clean()` found no error (Django excludes fields with errors). Default: both.
 */
export type UniquePhase = "serializer" | "model";

/** Whether field `fd` is checked in `phase` (see `UniquePhase`). */
function inPhase(fd: { kind: string }, phase: UniquePhase | undefined): boolean {
  return phase === undefined || (phase === "model") === (fd.kind === "fk");
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
  phase?: UniquePhase,
): Promise<void> {
  const kept = (fields: readonly string[]) =>
    before !== undefined && fields.every((f) => sameScalar(rec[f], before[f]));
  // Every rule to check becomes one SELECT; they go to the database as one statement (UNION ALL).
  const checks: Array<{ q: SelectQueryBuilder<any, any, any>; key: string; message: string }> = [];
  const deferred = selfId === undefined ? deferredChecks(ctx, model) : undefined;
  const probe = (i: number) => ctx.db.selectFrom(model.table).select(sql<number>`${sql.lit(i)}`.as("r"));
  for (const [name, fd] of model.fieldList) {
    if (!("unique" in fd) || !fd.unique || !inPhase(fd, phase)) continue;
    if (kept([name]) || generated?.has(name)) continue;
    const v = rec[name];
    if (v === null || v === undefined || v === "") continue;
    if (deferred) {
      const list = deferred.byField.get(name) ?? [];
      list.push(v);
      deferred.byField.set(name, list);
      continue;
    }
    let q = probe(checks.length).where(columnOf(model, name), "=", v);
    if (selfId) q = q.where("id", "!=", selfId);
    checks.push({
      q,
      key: name,
      message: uniqueMessage(model, name),
    });
  }
  for (const u of phase === "model" ? [] : (model.uniqueTogether ?? [])) {
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
  const all = await unionAll(checks.map((c) => c.q)).execute();
  const hit = new Set(all.map((r: { r: unknown }) => Number(r.r)));
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
      const err: [string, string] = [name, uniqueMessage(m, name)];
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
