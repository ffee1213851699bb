/**
 * Writes: create, update and delete of any registered model, inside the caller's transaction.
 *
 * Order per object (create/update): parse input (input.ts) → uniqueness (DRF validators) → model `validate`
 * → uniqueness of unique relations (Django `validate_unique`, uniqueness.ts `UniquePhase`) → row write →
 * tags/M2M → side-effect hook → change record. Deletes apply the registry's on-delete rules (PROTECT →
 * 409 listing the dependents, CASCADE, SET_NULL) across the whole cascade set before touching a row.
 * Change log rows (ObjectChange) are written set-wise when the transaction's changes are flushed
 * (`flushChanges`), so a request's rows and its change log commit or roll back together.
 */
import { createHash, randomUUID } from "node:crypto";
import { type CompiledQuery, sql } from "kysely";
import { ipKey, parseCidr } from "../net/ip.ts";
import { type Model, type ReverseRelation, VERSION_COLUMN } from "../registry/index.ts";
import type { ValidateArgs } from "../registry/meta.ts";
import { ADDRESS_SPACE_KEY, DEFINITIONS_KEY, newToken, TAGGED_PREFIX } from "../store/db.ts";
import { joinTable } from "../store/ddl.ts";
import { StalePlanError, StaleTokenError } from "../store/errors.ts";
import { storedTime } from "../store/values.ts";
import { pathsAfterDelete, pathsAfterWrite } from "./cable-paths.ts";
import { stampChanges } from "./change-feed.ts";
import {
  type Ctx,
  DEFINITION_MODELS,
  definitionsChanged,
  definitionsFor,
  knownDefinitionsToken,
  modelAt,
  SPACE_MODELS,
} from "./context.ts";
import { refusedDeletes } from "./delete-guards.ts";
import {
  AppError,
  ClaimAheadFailed,
  type ErrorBag,
  NotFoundError,
  PermissionDenied,
  ProtectedError,
  ValidationError,
} from "./errors.ts";
import { guardAccountDelete, guardAccountWrite } from "./escalation.ts";
import { hasVersions, linkOwnersOfDoomed, noteSideEffects, recordVersions } from "./history.ts";
import { type NoteSaves, runDeleteHook, runHook } from "./hooks.ts";
import { naturalKey, parseWrite } from "./input.ts";
import { nextVersion } from "./object-versions.ts";
import { enqueueDeliveries, type LoggedChange, outboxSignal, QUEUED_KEY } from "./outbox.ts";
import { hashPassword } from "./passwords.ts";
import { permits } from "./permissions.ts";
import { checkRequiredRelationships, parseRelationships, saveRelationships } from "./relationship-writes.ts";
import { detailUrl, nestedFor, represent } from "./represent.ts";
import {
  beginReadBack,
  changeList,
  chunks,
  endReadBack,
  findRecords,
  getRecord,
  type NotedChange,
  type Row,
  rowsById,
  rowsWhereIn,
  statusesFor,
  taggedModels,
  takeChangeList,
  toRecord,
  toRecords,
  unionAll,
} from "./rows.ts";
import { checkUnique, deferUniqueChecks, uniqueViolation } from "./uniqueness.ts";
import { runServiceValidator } from "./validators.ts";
import { regexMatcherFor } from "./value-regex.ts";

/** A change to log: pre-change snapshot captured for updates and deletes. */
interface PendingChange extends NotedChange {
  prechange?: Record<string, unknown>;
  related?: { type: string; id: string };
}

/**
 * Note a change for the change log. A change of a definition (context.ts DEFINITION_MODELS) also makes the
 * rest of the request read definitions afresh, and its commit rewrites the definitions token; a delete of a
 * SPACE_MODELS row rewrites the address-space token (flushChanges).
 */
function track(ctx: Ctx, change: PendingChange): void {
  changeList<PendingChange>(ctx).push(change);
  endReadBack(ctx);
  if (DEFINITION_MODELS.has(change.model.key)) definitionWritten(ctx);
  if (change.action === "delete" && SPACE_MODELS.has(change.model.key))
    rewriteAtCommit(ctx, ADDRESS_SPACE_KEY);
}

/** Memo of the `inventory_meta` token rows this transaction rewrites when its changes are flushed. */
const TOKENS_TO_REWRITE = "tokensToRewrite";

/** Rewrite the token row `key` when this transaction's changes are flushed (once, however often asked). */
function rewriteAtCommit(ctx: Ctx, key: string): void {
  const keys = (ctx.memo.get(TOKENS_TO_REWRITE) as Set<string> | undefined) ?? new Set<string>();
  keys.add(key);
  ctx.memo.set(TOKENS_TO_REWRITE, keys);
}

/** A definition changed: the rest of the request reads definitions afresh, and its commit rewrites their token. */
function definitionWritten(ctx: Ctx): void {
  definitionsChanged(ctx);
  rewriteAtCommit(ctx, DEFINITIONS_KEY);
}
/**
 * The rows of `ids` as the request's writes left them, in the order of `ids` (missing ids skipped), read to
 * render a write's response inside its transaction. This starts the read-back phase (rows.ts
 * `beginReadBack`): the change log's post-change snapshots (`flushChanges`) reuse what the response read.
 */
export async function readBack(ctx: Ctx, model: Model, ids: readonly string[]): Promise<Row[]> {
  beginReadBack(ctx);
  const byId = await rowsById(ctx, model, ids);
  return ids.map((i) => byId.get(i)).filter((r): r is Row => r !== undefined);
}

/** The change log's user of writes without an acting user nor `Ctx.changedBy` (issue 25). */
export const SYSTEM_USER = "system";

/** SHA-256 hex of a token key (tokens are stored hashed). */
export function hashTokenKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Record → column values for insert/update. */
async function toColumns(ctx: Ctx, model: Model, rec: Row): Promise<Row> {
  const out: Row = {};
  for (const [name, fd] of model.fieldList) {
    const v = rec[name];
    switch (fd.kind) {
      case "fk":
        out[`${name}_id`] = v ?? null;
        break;
      case "status": {
        const st = v ? (await statusesFor(ctx, model.key)).get(v) : undefined;
        out.status_id = st ? st.id : null;
        break;
      }
      case "gfk":
        out[`${name}_type`] = rec[`${name}_type`] ?? null;
        out[`${name}_id`] = rec[`${name}_id`] ?? null;
        break;
      case "json":
        out[name] = v === null || v === undefined ? null : JSON.stringify(v);
        break;
      case "ip": {
        if (v === null || v === undefined) {
          for (const s of ["", "_family", "_start", "_end", "_len", "_host"]) out[`${name}${s}`] = null;
          break;
        }
        const c = parseCidr(v);
        out[name] = v;
        out[`${name}_family`] = c.family;
        out[`${name}_start`] = ipKey(c.family, c.start);
        out[`${name}_end`] = ipKey(c.family, c.end);
        out[`${name}_len`] = c.prefixLength;
        out[`${name}_host`] = ipKey(c.family, c.hostInt);
        break;
      }
      case "str":
        out[name] = v ?? (fd.nullable ? null : "");
        if (fd.natural) out[`${name}_nat`] = naturalKey(v);
        break;
      case "m2m":
      case "cts":
      case "count":
      case "computed":
        break;
      default:
        out[name] = v === undefined ? null : v;
    }
  }
  if (model.customFields) out._custom_field_data = JSON.stringify(rec.custom_fields ?? {});
  return out;
}

/** Run the model's `validate` rule. */
async function runValidate(
  ctx: Ctx,
  model: Model,
  rec: Row,
  before: Row | undefined,
  errors: ErrorBag,
): Promise<void> {
  if (!model.validate || errors.has()) return;
  const args: ValidateArgs = {
    data: rec,
    before,
    get: (key, id) => getRecord(ctx, ctx.reg.get(key), id),
    find: (key, where, limit) => findRecords(ctx, ctx.reg.get(key), where, limit),
    count: async (key, where) => (await findRecords(ctx, ctx.reg.get(key), where, 100000)).length,
    error: (field, message) => errors.add(field, message),
    settings: {
      enforceGlobalUnique: ctx.settings.enforceGlobalUnique,
      webhookTargets: ctx.settings.webhookTargets ?? { allowPrivate: false, allowedNetworks: [] },
    },
    actor: ctx.actor
      ? { id: ctx.actor.id, username: ctx.actor.username, isSuperuser: ctx.actor.isSuperuser }
      : undefined,
    regex: regexMatcherFor(ctx),
  };
  await model.validate(args);
}

/** Run the model's service-level validator, if it names one. */
async function runServiceValidate(ctx: Ctx, model: Model, rec: Row, errors: ErrorBag): Promise<void> {
  if (!model.serviceValidate || errors.has()) return;
  await runServiceValidator(ctx, model.serviceValidate, model, rec, errors);
}

async function writeRelations(
  ctx: Ctx,
  model: Model,
  id: string,
  rec: Row,
  touched: Set<string> | undefined,
  tags: string[] | undefined,
  isCreate: boolean,
): Promise<void> {
  for (const [name, fd] of modelAt(ctx, model).fieldList) {
    if (fd.kind !== "m2m" && fd.kind !== "cts") continue;
    // A field off the wire at this API version still takes its value on create (`parseWrite`).
    if (fd.readOnly && !(isCreate && fd.versions)) continue;
    if (!isCreate && touched && !touched.has(name)) continue;
    const jt = joinTable(model, name);
    const col = fd.kind === "m2m" ? "target_id" : "content_type";
    const values = (rec[name] as string[] | undefined) ?? [];
    if (!isCreate) await ctx.db.deleteFrom(jt).where("source_id", "=", id).execute();
    for (const part of chunks(values, 500)) {
      if (part.length)
        await ctx.db
          .insertInto(jt)
          .values(part.map((v) => ({ source_id: id, [col]: v })))
          .execute();
    }
  }
  if (tags !== undefined) {
    ctx.memo.delete(`tagged:${model.key}`); // represent.ts memo: whether the model carries tags
    await ctx.db
      .deleteFrom("extras_taggeditem")
      .where("content_type", "=", model.key)
      .where("object_id", "=", id)
      .execute();
    if (tags.length) {
      if (!(await taggedModels(ctx))?.has(model.key)) {
        // The first tag on this model: every process must stop skipping its tag query (rows.ts taggedModels).
        await ctx.db
          .insertInto("inventory_meta")
          .values({ key: `${TAGGED_PREFIX}${model.key}`, value: "1" })
          .onConflict((oc) => oc.column("key").doNothing())
          .execute();
        definitionWritten(ctx);
      }
      await ctx.db
        .insertInto("extras_taggeditem")
        .values(tags.map((t) => ({ content_type: model.key, object_id: id, tag_id: t })))
        .execute();
    }
  }
}

/** Options of a create. */
export interface CreateOptions {
  /** Keep an `id` given in the body (importer); the API never does. */
  keepId?: boolean;
}

/**
 * Create one object from a write body. The row's INSERT is queued (`Dialect.queueWrite`): on PostgreSQL it
 * goes out with the transaction's next statement (a bulk's rows as one statement), so a database error of
 * the row (a unique index) is raised by a later statement of the same transaction. @returns the new id.
 * @throws ValidationError with DRF-shaped field errors.
 */
export async function createObject(
  ctx: Ctx,
  model: Model,
  body: unknown,
  opts: CreateOptions = {},
): Promise<string> {
  if (model.readOnly) throw new AppError(405, 'Method "POST" not allowed.');
  const parsed = await parseWrite(ctx, model, body, undefined, false);
  const { record, errors } = parsed;
  const relChanges = await parseRelationships(ctx, model, relationshipsIn(body), errors);
  if (!errors.has())
    await checkUnique(ctx, model, record, undefined, errors, undefined, parsed.generatedUnique, "serializer");
  if (!errors.has()) await runValidate(ctx, model, record, undefined, errors);
  if (!errors.has()) await checkUnique(ctx, model, record, undefined, errors, undefined, undefined, "model");
  await runServiceValidate(ctx, model, record, errors);
  errors.throwIfAny();
  await checkRequiredRelationships(ctx, model, relChanges, undefined, relationshipsIn(body) !== undefined);
  await guardAccountWrite(ctx, model, record, undefined, parsed.touched);
  const given = opts.keepId && body && typeof body === "object" ? (body as Row).id : undefined;
  const id = typeof given === "string" ? given : randomUUID();
  record.id = id;
  const cols = await toColumns(ctx, model, record);
  cols.id = id;
  if (model.changelog) {
    const now = storedTime();
    cols.created = now.slice(0, 10);
    cols.last_updated = now;
  }
  if (model.key === "users.token") {
    ctx.freshTokenKeys.set(id, String(record.key));
    cols.key = hashTokenKey(String(record.key));
    cols.key_suffix = String(record.key).slice(-6);
    cols.user_id = ctx.actor?.id ?? cols.user_id;
    cols.created = storedTime();
  }
  if (model.key === "users.user" && typeof record.password === "string")
    cols.password = await hashPassword(record.password);
  await ctx.store.dialect.queueWrite(ctx.db, { table: model.table, values: cols });
  await writeRelations(ctx, model, id, record, parsed.touched, parsed.tags, true);
  if (relChanges?.length) await saveRelationships(ctx, model, id, relChanges);
  await noteSaves(ctx, savedWith(model, record));
  if (model.afterWrite)
    await runHook(ctx, model.afterWrite, {
      action: "create",
      id,
      data: record,
      before: undefined,
      saves: savesOf(ctx),
    });
  await pathsAfterWrite(ctx, model, id, record);
  track(ctx, { model, id, action: "create" });
  // The saved object must fall inside the user's `add` constraints (Nautobot 1.6: 403 and rollback).
  if (ctx.grants && !(await permits(ctx, model, id, "add"))) throw new PermissionDenied();
  return id;
}

/**
 * Update one object (PUT: `partial` false; PATCH: true).
 * @throws NotFoundError, ValidationError
 */
export async function updateObject(
  ctx: Ctx,
  model: Model,
  id: string,
  body: unknown,
  partial: boolean,
  /** Pre-change snapshots taken set-wise by a bulk caller (`snapshots`); else taken here. */
  taken?: Map<string, Record<string, unknown>>,
  /** Stored rows and records read and locked set-wise by a bulk caller (`lockForUpdate`); used once each. */
  locked?: Map<string, Locked>,
): Promise<void> {
  if (model.readOnly) throw new AppError(405, `Method "${partial ? "PATCH" : "PUT"}" not allowed.`);
  // The stored row, read once: the record to validate against, and the values the UPDATE compares with.
  // Locked until commit on PostgreSQL, so concurrent PATCHes merging custom fields (or any field computed
  // from the stored row) apply one after the other and none is lost (issue 12).
  const pre = locked?.get(id);
  locked?.delete(id); // an id listed twice reads its row again, as the first update left it
  let stored = pre?.stored;
  if (!stored) {
    let read = ctx.db.selectFrom(model.table).selectAll().where("id", "=", id);
    if (ctx.store.dialect.rowLocks) read = read.forUpdate();
    stored = await read.executeTakeFirst();
  }
  if (!stored) throw new NotFoundError();
  const before = pre?.before ?? (await toRecord(ctx, model, stored));
  const prechange = taken ? taken.get(id) : (await snapshots(ctx, model, [id], [stored])).get(id);
  const parsed = await parseWrite(ctx, model, body, before, partial);
  const { record, errors } = parsed;
  const relChanges = await parseRelationships(ctx, model, relationshipsIn(body), errors);
  if (!errors.has())
    await checkUnique(ctx, model, record, id, errors, before, parsed.generatedUnique, "serializer");
  if (!errors.has()) await runValidate(ctx, model, record, before, errors);
  if (!errors.has()) await checkUnique(ctx, model, record, id, errors, before, undefined, "model");
  await runServiceValidate(ctx, model, record, errors);
  errors.throwIfAny();
  await checkRequiredRelationships(ctx, model, relChanges, id, relationshipsIn(body) !== undefined);
  await guardAccountWrite(
    ctx,
    model,
    record,
    { ...before, id, is_superuser: stored.is_superuser },
    parsed.touched,
  );
  const cols = await toColumns(ctx, model, record);
  if (model.changelog) cols.last_updated = storedTime();
  if (model.key === "users.token") {
    delete cols.key;
    delete cols.key_suffix;
    delete cols.user_id;
    delete cols.created;
  }
  if (model.key === "users.user") {
    if (parsed.touched.has("password") && typeof record.password === "string")
      cols.password = await hashPassword(record.password);
    else delete cols.password;
  }
  // Write only the columns whose value changes: every indexed column in SET costs an index update, and
  // tables such as interfaces carry many indexes (bulk PATCH of 1,000 rows on a large table).
  for (const k of Object.keys(cols))
    if (k !== "last_updated" && sameValue(stored[k], cols[k])) delete cols[k];
  if (SPACE_MODELS.get(model.key)?.some((c) => c in cols)) rewriteAtCommit(ctx, ADDRESS_SPACE_KEY);
  // Every update raises the object's version (object-versions.ts), tags or relations alone included; the
  // row is locked (read above), so the next version is the stored one plus one.
  cols[VERSION_COLUMN] = nextVersion(stored);
  // Queued: on PostgreSQL it goes out with the next statement (often the read-back of the response).
  await ctx.store.dialect.queueWrite(ctx.db, { table: model.table, id, values: cols });
  await writeRelations(ctx, model, id, record, parsed.touched, parsed.tags, false);
  if (relChanges?.length) await saveRelationships(ctx, model, id, relChanges);
  await noteSaves(ctx, savedWith(model, record));
  if (model.afterWrite)
    await runHook(ctx, model.afterWrite, { action: "update", id, data: record, before, saves: savesOf(ctx) });
  await pathsAfterWrite(ctx, model, id, record);
  track(ctx, { model, id, action: "update", ...(prechange ? { prechange } : {}) });
  if (ctx.grants && !(await permits(ctx, model, id, "change"))) throw new PermissionDenied();
}

/**
 * The objects Nautobot saves again when an object of `model` with field values `record` is saved
 * (`ModelDef.savesAlso`): target model key → ids.
 */
function savedWith(model: Model, record: Row): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const name of model.savesAlso ?? []) {
    const fd = model.fields[name];
    const id = record[name];
    if (fd?.kind === "fk" && typeof id === "string") out.set(fd.to, [...(out.get(fd.to) ?? []), id]);
  }
  return out;
}

/**
 * Change-log objects that a side effect saves (Nautobot signals calling `save()`: a cable's terminations, a
 * circuit termination's circuit) as updated: pre-change snapshots taken now, `last_updated` set, and the
 * objects these saves save in turn (`savesAlso`). Called before the side effect changes their rows; their
 * post-change data are read when the change log is flushed.
 */
async function noteSaves(ctx: Ctx, saved: Map<string, string[]>): Promise<void> {
  for (const [key, ids] of saved) {
    const m = ctx.reg.get(key);
    const list = [...new Set(ids)];
    const stored = await rowsById(ctx, m, list);
    const pre = await snapshots(ctx, m, list, [...stored.values()]);
    for (const id of stored.keys())
      track(ctx, { model: m, id, action: "update", ...(pre.has(id) ? { prechange: pre.get(id)! } : {}) });
    if (m.changelog && stored.size)
      for (const part of chunks([...stored.keys()]))
        await ctx.db
          .updateTable(m.table)
          .set({ last_updated: storedTime() })
          .where("id", "in", part)
          .execute();
    if (!m.savesAlso?.length) continue;
    const next = new Map<string, string[]>();
    for (const rec of (await toRecords(ctx, m, [...stored.values()])).values())
      for (const [k, v] of savedWith(m, rec)) next.set(k, [...(next.get(k) ?? []), ...v]);
    await noteSaves(ctx, next);
  }
}

/** The `saves` callback handed to side-effect hooks (hooks.ts `NoteSaves`). */
function savesOf(ctx: Ctx): NoteSaves {
  return (key, ids) => noteSaves(ctx, new Map([[key, [...ids]]]));
}

/** A stored row and its record, read by `lockForUpdate`. */
export interface Locked {
  stored: Row;
  before: Row;
}

/**
 * For a bulk update: the stored rows of `ids` and their records, read set-wise (one query per 500 ids, one
 * per many-to-many field) and locked until commit on PostgreSQL, instead of per object. Empty for models with
 * an after-write hook, which may change other rows of the same bulk (each object is then read when updated).
 */
export async function lockForUpdate(ctx: Ctx, model: Model, ids: string[]): Promise<Map<string, Locked>> {
  const out = new Map<string, Locked>();
  if (model.afterWrite || model.readOnly) return out;
  const rows: Row[] = [];
  for (const part of chunks([...new Set(ids)])) {
    let read = ctx.db.selectFrom(model.table).selectAll().where("id", "in", part).orderBy("id");
    if (ctx.store.dialect.rowLocks) read = read.forUpdate();
    rows.push(...(await read.execute()));
  }
  const records = await toRecords(ctx, model, rows);
  for (const r of rows) out.set(r.id as string, { stored: r, before: records.get(r.id as string)! });
  return out;
}

/** The `relationships` value of a write body, if the body is an object that has one. */
function relationshipsIn(body: unknown): unknown {
  return body && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>).relationships
    : undefined;
}

/** Stored column value equals the value about to be written (booleans as 0/1, numbers as text). */
function sameValue(a: unknown, b: unknown): boolean {
  const norm = (v: unknown) =>
    v === undefined || v === null ? null : v === true ? "1" : v === false ? "0" : String(v);
  return norm(a) === norm(b);
}

/**
 * Relative-URL full representations used as change-log snapshots, set-wise for `ids` (one query per
 * relation for the whole batch). Bulk updates take the pre-change snapshots this way and pass them to
 * `updateObject`.
 */
export async function snapshots(
  ctx: Ctx,
  model: Model,
  ids: string[],
  /** The stored rows of `ids` when the caller has them (`lockForUpdate`); else read here. */
  stored?: readonly Row[],
): Promise<Map<string, Record<string, unknown>>> {
  if (!ctx.settings.changelog || model.readOnly) return new Map();
  const sub: Ctx = { ...ctx, baseUrl: "", nestedCache: new Map() };
  const rows = stored ?? [...(await rowsById(ctx, model, ids)).values()];
  // No opt-in keys: Nautobot serializes change-log and webhook data without a request, which prunes
  // `computed_fields` and `relationships` (nautobot-webhooks.md §0.5).
  const objs = await represent(sub, model, rows, "full", { excludeConfigContext: true, include: new Set() });
  return new Map(objs.map((o) => [o.id as string, o]));
}

/**
 * The reverse relations of `model` (other than many-to-many) through which some row points at one of `ids`,
 * found with one statement (an EXISTS per relation, UNION ALL) instead of one read per relation; every
 * relation when there are too many ids for one statement.
 */
async function referringRelations(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
): Promise<Set<ReverseRelation>> {
  const rels = ctx.reg.reverseOf(model.key).filter((r) => r.def.kind !== "m2m");
  if (!rels.length || ids.length > 500) return new Set(rels);
  const probes = rels.map((rel, i) => {
    let q = ctx.db.selectFrom(rel.from.table).select(sql.lit(1).as("x")).where(`${rel.field}_id`, "in", ids);
    if (rel.def.kind === "gfk") q = q.where(`${rel.field}_type`, "=", model.key);
    return ctx.db.selectNoFrom(sql<number>`${sql.lit(i)}`.as("r")).where((eb: any) => eb.exists(q));
  });
  const found = await unionAll(probes).execute();
  return new Set(found.map((f: { r: unknown }) => rels[Number(f.r)]!));
}

/** Delete objects of a model (one or many) with on-delete rules. @throws ProtectedError (409) */
export async function deleteObjects(ctx: Ctx, model: Model, ids: string[]): Promise<void> {
  if (model.readOnly) throw new AppError(405, 'Method "DELETE" not allowed.');
  if (ctx.grants && model.app === "users")
    await guardAccountDelete(ctx, model, await rowsWhereIn(ctx, model, "id", ids));
  // The model's own refusal (Nautobot's `delete()` override) comes before the collector's PROTECT rules.
  const refused = await refusedDeletes(ctx, model, ids);
  if (refused.length)
    await throwProtected(
      ctx,
      refused.map((id) => [model, id] as const),
    );
  // Collect the cascade set: model key → ids.
  const doomed = new Map<string, Set<string>>();
  const queue: Array<[Model, string[]]> = [[model, ids]];
  const setNull: Array<{ model: Model; field: string; gfk: boolean; ids: string[]; targetKey: string }> = [];
  const protectedBy: Array<{ model: Model; row: Row; targetKey: string }> = [];
  while (queue.length) {
    const [m, list] = queue.shift()!;
    const set = doomed.get(m.key) ?? new Set<string>();
    const fresh = list.filter((i) => !set.has(i));
    if (!fresh.length) continue;
    for (const i of fresh) set.add(i);
    doomed.set(m.key, set);
    const referring = await referringRelations(ctx, m, fresh);
    for (const rel of ctx.reg.reverseOf(m.key)) {
      if (!referring.has(rel)) continue; // many-to-many rows go with the object (below)
      let rows: Row[];
      if (rel.def.kind === "gfk") {
        rows = [];
        for (const part of chunks(fresh)) {
          rows.push(
            ...(await ctx.db
              .selectFrom(rel.from.table)
              .selectAll()
              .where(`${rel.field}_type`, "=", m.key)
              .where(`${rel.field}_id`, "in", part)
              .execute()),
          );
        }
      } else {
        rows = await rowsWhereIn(ctx, rel.from, `${rel.field}_id`, fresh);
      }
      if (!rows.length) continue;
      const onDelete = rel.def.kind === "gfk" || rel.def.kind === "fk" ? rel.def.onDelete : "CASCADE";
      if (onDelete === "CASCADE") queue.push([rel.from, rows.map((r) => r.id)]);
      else if (onDelete === "SET_NULL")
        setNull.push({
          model: rel.from,
          field: rel.field,
          gfk: rel.def.kind === "gfk",
          ids: rows.map((r) => r.id),
          targetKey: m.key,
        });
      else for (const r of rows) protectedBy.push({ model: rel.from, row: r, targetKey: m.key });
    }
  }
  const blockers = protectedBy.filter((p) => !doomed.get(p.model.key)?.has(p.row.id));
  if (blockers.length)
    await throwProtected(
      ctx,
      blockers.map((b) => [b.model, b.row.id] as const),
    );
  // Side effects Nautobot's pre_delete signals have (a cable's terminations saved without it), then
  // snapshots before anything changes.
  for (const [key, set] of doomed) {
    const m = ctx.reg.get(key);
    if (m.beforeDelete) await runDeleteHook(ctx, m.beforeDelete, [...set], savesOf(ctx));
  }
  for (const [key, set] of doomed) {
    const m = ctx.reg.get(key);
    const snaps = await snapshots(ctx, m, [...set]);
    for (const id of set)
      track(ctx, {
        model: m,
        id,
        action: "delete",
        ...(snaps.get(id) ? { prechange: snaps.get(id)! } : {}),
      });
  }
  for (const s of setNull) {
    const ids2 = s.ids.filter((i) => !doomed.get(s.model.key)?.has(i));
    for (const part of chunks(ids2)) {
      if (!part.length) continue;
      const set: Row = s.gfk
        ? { [`${s.field}_type`]: null, [`${s.field}_id`]: null }
        : { [`${s.field}_id`]: null };
      if (s.model.changelog) set.last_updated = storedTime();
      await ctx.db.updateTable(s.model.table).set(set).where("id", "in", part).execute();
    }
    // Not change-logged (Django's SET_NULL sends no signal), but a new version of each row (issue 27).
    noteSideEffects(ctx, s.model, ids2);
  }
  // Link rows of other objects that go with the doomed ones: new versions of those objects (issue 27).
  await linkOwnersOfDoomed(ctx, doomed);
  // The deletes are queued (`Dialect.queueStatement`): on PostgreSQL they go out with the next statement.
  const later = (q: { compile(): CompiledQuery }) => ctx.store.dialect.queueStatement(ctx.db, q.compile());
  for (const [key, set] of doomed) {
    const m = ctx.reg.get(key);
    const list = [...set];
    for (const part of chunks(list)) {
      await later(ctx.db.deleteFrom(m.table).where("id", "in", part));
      if (m.tags)
        await later(
          ctx.db
            .deleteFrom("extras_taggeditem")
            .where("content_type", "=", key)
            .where("object_id", "in", part),
        );
      for (const [name, fd] of m.fieldList) {
        if (fd.kind === "m2m" || fd.kind === "cts")
          await later(ctx.db.deleteFrom(joinTable(m, name)).where("source_id", "in", part));
      }
      for (const rel of ctx.reg.reverseOf(key)) {
        if (rel.def.kind === "m2m")
          await later(ctx.db.deleteFrom(joinTable(rel.from, rel.field)).where("target_id", "in", part));
      }
      if (key === "extras.tag")
        await later(ctx.db.deleteFrom("extras_taggeditem").where("tag_id", "in", part));
    }
  }
  await pathsAfterDelete(ctx, doomed);
}

/**
 * Refuse a delete: 409 "Unable to delete object. N dependent objects were found: <display> (<id>), …"
 * (Nautobot 1.6 `ModelViewSetMixin.dispatch` on a `ProtectedError`), naming each object once.
 * @throws ProtectedError always
 */
async function throwProtected(ctx: Ctx, pairs: ReadonlyArray<readonly [Model, string]>): Promise<never> {
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const [m, id] of pairs) {
    if (seen.has(id)) continue;
    seen.add(id);
    const nested = (await nestedFor(ctx, m, [id])).get(id);
    parts.push(`${String(nested?.display ?? id)} (${id})`);
  }
  throw new ProtectedError(
    `Unable to delete object. ${parts.length} dependent objects were found: ${parts.join(", ")}`,
  );
}

/**
 * Write the ObjectChange rows of everything changed in this transaction (set-wise per model), one per
 * object: the last action wins and a create stays a create (issue 4: one logical change, one event).
 * Then queue the webhook deliveries of those changes (service/outbox.ts) in the same transaction.
 * Read-only models (object changes, deliveries, content types) are not change-logged.
 */
export async function flushChanges(ctx: Ctx): Promise<void> {
  const list = takeChangeList<PendingChange>(ctx);
  const tokens = ctx.memo.get(TOKENS_TO_REWRITE) as Set<string> | undefined;
  ctx.memo.delete(TOKENS_TO_REWRITE);
  for (const key of tokens ?? []) await newToken(ctx.db, key);
  if (!list.length || !ctx.settings.changelog) return;
  const oc = ctx.reg.get("extras.objectchange");
  const byModel = new Map<string, PendingChange[]>();
  for (const c of list) {
    // Models Nautobot does not change-log, and rows it writes without signals, get no row and no webhook.
    if (!c.model.changeLogged || c.logged === false) continue;
    byModel.set(c.model.key, [...(byModel.get(c.model.key) ?? []), c]);
  }
  const time = storedTime();
  const rows: Row[] = [];
  const logged: LoggedChange[] = [];
  for (const [key, changes] of byModel) {
    const m = ctx.reg.get(key);
    const live = changes.filter((c) => c.action !== "delete").map((c) => c.id);
    const post = await snapshots(ctx, m, live);
    // One change per object per request: the last action wins, creation stays a creation.
    const last = new Map<string, PendingChange>();
    for (const c of changes) {
      const prev = last.get(c.id);
      if (prev?.action === "create" && c.action === "update") continue;
      // Two updates of one object: the event's prechange is the state before the first.
      last.set(
        c.id,
        c.action === "update" && prev?.action === "update" ? { ...c, prechange: prev.prechange } : c,
      );
    }
    for (const c of last.values()) {
      const data = c.action === "delete" ? c.prechange : post.get(c.id);
      const ocId = randomUUID();
      logged.push({ objectChangeId: ocId, action: c.action, contentType: key, objectId: c.id });
      rows.push({
        id: ocId,
        time,
        user_id: ctx.actor?.id ?? ctx.changedBy?.id ?? null,
        user_name: ctx.actor?.username ?? ctx.changedBy?.username ?? SYSTEM_USER,
        request_id: ctx.requestId,
        action: c.action,
        changed_object_type: key,
        changed_object_id: c.id,
        related_object_type: null,
        related_object_id: null,
        object_repr: String((data as Row | undefined)?.display ?? c.id).slice(0, 200),
        object_data: JSON.stringify(data ?? null),
        prechange_data:
          c.action === "update" && c.prechange !== undefined ? JSON.stringify(c.prechange) : null,
        base_url: ctx.baseUrl || null,
      });
    }
  }
  await ctx.store.dialect.queueInserts(ctx.db, oc.table, rows);
  const queued = await enqueueDeliveries(ctx, logged, time);
  if (queued) ctx.memo.set(QUEUED_KEY, ((ctx.memo.get(QUEUED_KEY) as number) ?? 0) + queued);
  // Last: the change sequence is taken at commit (issue 26, service/change-feed.ts), then the versions are
  // copied under the transaction's commit number (issue 27, service/history.ts).
  const ids = rows.map((r) => String(r.id));
  const versions = hasVersions(list);
  const seq = await stampChanges(ctx, ids, versions);
  if (seq !== undefined && versions) await recordVersions(ctx, list, seq, time);
}

/**
 * Run `fn` in one database transaction with a fresh change list; the change log is flushed inside it.
 * Nested calls reuse the outer transaction. `fn` may run more than once (a bulk create's clash, definitions
 * that changed under a write that assumed them), so it keeps its state inside.
 *
 * With `ctx.assumedDefinitions`, the transaction uses the shared definitions memo of that token and checks
 * the token in its first statement (`Dialect.assertToken`); once committed, `ctx` keeps that memo. When the
 * check fails, or the transaction failed otherwise (a 4xx) and the token has moved on meanwhile, it runs
 * again with the fresh token, so no answer rests on definitions older than the request. A transaction that
 * met a stale prepared plan (`StalePlanError`, after a schema change) runs again, once.
 */
export async function inTransaction<T>(
  ctx: Ctx,
  fn: (tctx: Ctx) => Promise<T>,
  replanned = false,
): Promise<T> {
  if (ctx.db !== ctx.store.db) return fn(ctx);
  let queued = 0;
  // The token a request of this process read since this one arrived, if any, is assumed instead.
  const assumed =
    ctx.assumedDefinitions === undefined
      ? undefined
      : (knownDefinitionsToken(ctx.store) ?? ctx.assumedDefinitions);
  const defs = assumed === undefined ? ctx.defs : definitionsFor(ctx.store, assumed);
  try {
    const result = await ctx.store.db.transaction().execute(async (trx) => {
      const tctx: Ctx = { ...ctx, db: trx, memo: new Map(), nestedCache: new Map(), defs };
      if (assumed !== undefined) await ctx.store.dialect.assertToken(trx, DEFINITIONS_KEY, assumed);
      const out = await fn(tctx);
      await flushChanges(tctx);
      queued = (tctx.memo.get(QUEUED_KEY) as number | undefined) ?? 0;
      for (const [k, v] of tctx.freshTokenKeys) ctx.freshTokenKeys.set(k, v);
      return out;
    });
    if (assumed !== undefined) {
      ctx.defs = defs; // checked by the commit
      ctx.assumedDefinitions = undefined;
    }
    if (queued) outboxSignal.emit("queued", queued);
    return result;
  } catch (e) {
    // A bulk create's deferred checks found a clash: the transaction runs again, its items checked one by one.
    if (e instanceof CheckEachItem && !ctx.checkEachItem)
      return inTransaction({ ...ctx, checkEachItem: true }, fn, replanned);
    if (e instanceof StalePlanError && !replanned) return inTransaction(ctx, fn, true);
    if (e instanceof ClaimAheadFailed && !ctx.claimFirst)
      return inTransaction({ ...ctx, claimFirst: true }, fn, replanned);
    if (assumed !== undefined && (e instanceof StaleTokenError || e instanceof AppError)) {
      // The check may not have run (an error before the first statement): read the token now.
      const { definitions } = await ctx.store.freshTokens();
      if (e instanceof StaleTokenError || (definitions !== undefined && definitions !== assumed)) {
        ctx.assumedDefinitions = undefined;
        ctx.defs = definitionsFor(ctx.store, definitions);
        return inTransaction(ctx, fn, replanned);
      }
    }
    // A concurrent writer won the race past the service's check: the same 400 as the check gives.
    throw uniqueViolation(ctx.reg, e) ?? e;
  } finally {
    // Committed or not, cached reads of this process must not outlive the write.
    ctx.store.committed();
    ctx.nestedCache = new Map();
    ctx.memo = new Map();
  }
}

/**
 * Thrown when a bulk create's deferred uniqueness checks (`deferUniqueChecks`) found a clash or an item
 * failed: `inTransaction` rolls back and runs the transaction again with `checkEachItem`.
 */
class CheckEachItem extends Error {
  override name = "CheckEachItem";
}

/**
 * Bulk create: every item validated and written; errors reported positionally (DRF ListSerializer).
 * Items are first written with their unique fields checked together at the end (`deferUniqueChecks`); when
 * that finds a clash, or any item fails, the transaction runs again checking each item before writing the
 * next (`Ctx.checkEachItem`), so errors and generated slugs are exactly those of one-by-one creates (a later
 * item clashes with an earlier one, never the reverse).
 */
export async function createMany(ctx: Ctx, model: Model, items: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  const errs: unknown[] = [];
  let failed = false;
  const each = async () => {
    for (const item of items) {
      try {
        ids.push(await createObject(ctx, model, item));
        errs.push({});
      } catch (e) {
        if (e instanceof ValidationError) {
          failed = true;
          errs.push(e.errors);
        } else throw e;
      }
    }
  };
  if (ctx.checkEachItem || items.length < 2 || ctx.db === ctx.store.db) {
    await each();
    if (failed) throw new ValidationError(errs);
    return ids;
  }
  let unique: boolean;
  try {
    unique = await deferUniqueChecks(ctx, model, each);
  } catch (e) {
    if (uniqueViolation(ctx.reg, e)) throw new CheckEachItem();
    throw e;
  }
  if (failed || !unique) throw new CheckEachItem();
  return ids;
}

export { detailUrl, sql };

/** An object's creation date and last change as another system recorded them (ISO 8601 text). */
export interface Timestamps {
  model: string;
  id: string;
  created?: unknown;
  lastUpdated?: unknown;
}

/**
 * Set `created` (a date, as Nautobot stores it) and `last_updated` of imported objects to the values their
 * source system recorded (the NetBox importer, issue 13). Not a change: no change log entry, no webhook.
 * Unparsable values are left alone.
 */
export async function restoreTimestamps(ctx: Ctx, stamps: readonly Timestamps[]): Promise<void> {
  for (const s of stamps) {
    const model = ctx.reg.get(s.model);
    const set: Row = {};
    const created = typeof s.created === "string" ? Date.parse(s.created) : Number.NaN;
    const updated = typeof s.lastUpdated === "string" ? Date.parse(s.lastUpdated) : Number.NaN;
    if (Number.isFinite(created)) set.created = new Date(created).toISOString().slice(0, 10);
    if (Number.isFinite(updated)) set.last_updated = storedTime(new Date(updated));
    if (Object.keys(set).length)
      await ctx.db.updateTable(model.table).set(set).where("id", "=", s.id).execute();
  }
}
