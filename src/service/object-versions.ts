/**
 * Object versions and conditional writes (issue 26, "Conditional requests"): every model row carries a
 * version (`VERSION_COLUMN`, 1 when created, raised by one by every UPDATE of the row: store/version-bump.ts
 * and `nextVersion`). A client names the version it read, as an ETag (`If-Match` on one object) or as the
 * `_version` key of a bulk item, and the write is refused with 412 when the row has changed since: checked
 * inside the write's transaction on the row locked (`SELECT … FOR UPDATE` on PostgreSQL; SQLite's write
 * transactions are serialised), so of two writers naming the same version only one can succeed, in any
 * number of processes.
 */
import { createHash } from "node:crypto";
import { type Model, VERSION_COLUMN } from "../registry/index.ts";
import type { Ctx } from "./context.ts";
import { AppError, ValidationError } from "./errors.ts";
import { listRows } from "./read.ts";
import { chunks, type Row } from "./rows.ts";
import type { Locked } from "./write.ts";

/** The key of a bulk PUT/PATCH/DELETE item naming the version it was read at (not a Nautobot field). */
export const VERSION_KEY = VERSION_COLUMN;

/** A stored row's version (1 for a row without one: written before versions existed). */
export function versionOf(row: Row): number {
  const v = Number(row[VERSION_COLUMN]);
  return Number.isSafeInteger(v) && v > 0 ? v : 1;
}

/** The version an UPDATE of the stored row `row` writes: one more (the row is locked by the caller). */
export function nextVersion(row: Row): number {
  return versionOf(row) + 1;
}

/** The strong ETag of an object at a version: `"<id>:<version>"` (quoted, as HTTP writes it). */
export function etagOf(id: string, version: number): string {
  return `"${id}:${version}"`;
}

/**
 * The strong ETag of a list page: a hash of the variant (URL, format, API version: whatever changes the body
 * for the same rows), the total count and the ids and versions of the page's rows, in order. It changes when
 * any row on the page changes, when the set or order of the rows changes, or when the count does.
 */
export function pageEtag(variant: string, count: number, rows: readonly Row[]): string {
  const h = createHash("sha256").update(`${variant}\n${count}\n`);
  for (const r of rows) h.update(`${String(r.id)}:${versionOf(r)}\n`);
  return `"p-${h.digest("base64url").slice(0, 32)}"`;
}

/** 412 Precondition Failed: the object (or a bulk item) changed since the version the client named. */
export class PreconditionFailed extends AppError {
  override name = "PreconditionFailed";
}

/** A bulk item's expectation: its position in the body, its id and the version it names. */
export interface ItemVersion {
  index: number;
  id: string;
  version: number;
}

/**
 * The versions the items of a bulk body name under `VERSION_KEY` (items without it expect nothing).
 * @throws ValidationError (400, per item, DRF's list shape) for a value that is not a positive integer
 */
export function itemVersions(
  items: ReadonlyArray<{ id: string; raw: Record<string, unknown> }>,
): ItemVersion[] {
  const out: ItemVersion[] = [];
  let bad = false;
  const errs = items.map((item, index) => {
    if (!(VERSION_KEY in item.raw)) return {};
    const v = item.raw[VERSION_KEY];
    if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) {
      out.push({ index, id: item.id, version: v });
      return {};
    }
    bad = true;
    return { [VERSION_KEY]: ["A valid integer is required (the object's version, 1 or more)."] };
  });
  if (bad) throw new ValidationError(errs);
  return out;
}

/**
 * The current versions of `ids`, from rows the caller locked (`lockForUpdate`) or read here locked until
 * commit (PostgreSQL `FOR UPDATE`; SQLite's write transaction holds the database's write lock). Ids without
 * a row are absent.
 */
async function currentVersions(
  ctx: Ctx,
  model: Model,
  ids: readonly string[],
  locked?: ReadonlyMap<string, Locked>,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const l = locked?.get(id);
    if (l) out.set(id, versionOf(l.stored));
    else missing.push(id);
  }
  for (const part of chunks(missing.sort())) {
    let q = ctx.db
      .selectFrom(model.table)
      .select(["id", VERSION_COLUMN])
      .where("id", "in", part)
      .orderBy("id");
    if (ctx.store.dialect.rowLocks) q = q.forUpdate();
    for (const r of await q.execute()) out.set(String(r.id), versionOf(r));
  }
  return out;
}

/**
 * Check `If-Match` on a write of one object, in the write's transaction before anything changes.
 * @param tags `*` (any version) or the ETags the header lists (quoted, as sent); strong comparison: a weak
 *   tag (`W/"…"`) never matches (RFC 9110 §13.1.1)
 * @throws PreconditionFailed (412, body `{"detail", "etag"}`, header `ETag`: the current one) when no tag is
 *   the object's current ETag. A missing object passes: the write then answers 404 as without the header.
 */
export async function checkIfMatch(
  ctx: Ctx,
  model: Model,
  id: string,
  tags: "*" | readonly string[],
): Promise<void> {
  const current = (await currentVersions(ctx, model, [id])).get(id);
  if (current === undefined || tags === "*") return;
  const etag = etagOf(id, current);
  if (tags.includes(etag)) return;
  throw new PreconditionFailed(
    412,
    "",
    {
      detail: `Precondition failed: this ${model.verbose} has changed since the version named by If-Match (its ETag is now ${etag}). Nothing was changed.`,
      etag,
    },
    { ETag: etag },
  );
}

/**
 * Check the versions bulk items name (`itemVersions`), in the write's transaction before anything changes.
 * @throws PreconditionFailed (412) naming every stale item (`stale`: index in the body, id, the version it
 *   named, the current version and ETag); ids without a row are left to the caller's 400.
 */
export async function checkItemVersions(
  ctx: Ctx,
  model: Model,
  expected: readonly ItemVersion[],
  locked?: ReadonlyMap<string, Locked>,
): Promise<void> {
  if (!expected.length) return;
  const current = await currentVersions(
    ctx,
    model,
    expected.map((e) => e.id),
    locked,
  );
  const stale = expected
    .filter((e) => current.has(e.id) && current.get(e.id) !== e.version)
    .map((e) => ({
      index: e.index,
      id: e.id,
      [VERSION_KEY]: e.version,
      current: current.get(e.id)!,
      etag: etagOf(e.id, current.get(e.id)!),
    }));
  if (!stale.length) return;
  throw new PreconditionFailed(412, "", {
    detail: `Precondition failed: ${stale.length} of the ${expected.length} items naming a ${VERSION_KEY} ${stale.length === 1 ? "has" : "have"} changed since (${stale.map((s) => `item ${s.index}, id ${s.id}`).join("; ")}). Nothing was changed.`,
    stale,
  });
}

/** One change of an object made since a version: who, when, and the top-level fields it changed. */
export interface ChangeSince {
  user: string;
  time: string;
  action: string;
  fields: string[];
}

/** Keys that every change moves and that say nothing about what changed. */
const NOISE = new Set(["last_updated", "display", "url"]);

/** A change record's data column as an object (stored as JSON text, or already parsed). */
function dataOf(v: unknown): Record<string, unknown> {
  if (typeof v === "string") {
    try {
      const parsed = JSON.parse(v);
      return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
}

/**
 * What changed an object since version `since` (the web interface's conflict message): the object's latest
 * change records, one per version it moved (at most 10), newest first, each with its user, time and the
 * top-level fields whose value differs between its pre- and post-change data. Empty for models without a
 * change log.
 */
export async function changesSince(
  ctx: Ctx,
  model: Model,
  id: string,
  since: number,
): Promise<ChangeSince[]> {
  if (!model.changeLogged) return [];
  const current = (await currentVersions(ctx, model, [id])).get(id);
  if (current === undefined || current <= since) return [];
  const { rows } = await listRows(ctx, ctx.reg.get("extras.objectchange"), {
    params: new Map([["changed_object_id", [id]]]),
    limit: Math.min(10, current - since),
    offset: 0,
  });
  return rows.map((r) => {
    const pre = dataOf(r.prechange_data);
    const post = dataOf(r.object_data);
    const keys = new Set([...Object.keys(pre), ...Object.keys(post)]);
    const fields = [...keys].filter(
      (k) => !NOISE.has(k) && JSON.stringify(pre[k] ?? null) !== JSON.stringify(post[k] ?? null),
    );
    return {
      user: String(r.user_name ?? ""),
      time: String(r.time ?? ""),
      action: String(r.action ?? ""),
      fields,
    };
  });
}
