/**
 * Cable paths (Nautobot 1.6 `dcim.CablePath`, `CablePath.from_origin`, `dcim/signals.py`): for every path
 * endpoint with a cable (interfaces, console/console-server/power ports, power outlets, power feeds, circuit
 * terminations) the traced path through patch panels (front port → rear port → trunk cable → rear port →
 * front port, with positions on multi-position rear ports) and across circuits (termination A ↔ Z) to the
 * far endpoint, stored when cables, ports or circuit terminations change and never computed on a read.
 *
 * Storage (store/ddl.ts): `dcim_cablepath` (origin, destination, `path` as a JSON list of `[type, id]`,
 * `is_active`, `is_split`; one row per origin) and `dcim_cablepath_node` (one row per node of a path, so
 * "the paths through this object" is an indexed lookup). Paths are not change-logged, as in Nautobot.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Cond } from "../query/filters.ts";
import type { Model } from "../registry/index.ts";
import { type Ctx, definitionsMemo } from "./context.ts";
import { ValidationError } from "./errors.ts";
import { noteSideEffects } from "./history.ts";
import { nestedFor, represent } from "./represent.ts";
import { chunks, memoEntry, type Row, rowsWhereIn, throughMemo } from "./rows.ts";
import { inTransaction } from "./write.ts";

/** A node of a path: content type and id. */
export interface NodeRef {
  type: string;
  id: string;
}

/** A stored path. */
export interface CablePath {
  id: string;
  origin: NodeRef;
  destination: NodeRef | null;
  /** Cables and pass-through nodes between origin and destination, in order (Nautobot `CablePath.path`). */
  path: NodeRef[];
  isActive: boolean;
  isSplit: boolean;
}

/** Model keys that are path endpoints (they render `connected_endpoint`), from the registry. */
export function isPathEndpoint(model: Model): boolean {
  return "connected_endpoint" in model.fields;
}

/** Model keys whose writes can change paths: cables, pass-through ports, circuit terminations. */
const PATH_NODE_TYPES = new Set([
  "dcim.cable",
  "dcim.frontport",
  "dcim.rearport",
  "circuits.circuittermination",
]);

async function one(ctx: Ctx, type: string, id: string): Promise<Row | undefined> {
  const m = ctx.reg.models.get(type);
  if (!m) return undefined;
  return ctx.db.selectFrom(m.table).selectAll().where("id", "=", id).executeTakeFirst();
}

async function connectedStatusId(ctx: Ctx): Promise<string | undefined> {
  const key = "status:connected";
  const memo = definitionsMemo(ctx);
  if (!memo.has(key)) {
    const st = await ctx.db
      .selectFrom("extras_status")
      .select("id")
      .where("slug", "=", "connected")
      .executeTakeFirst();
    memo.set(key, st?.id);
  }
  return memo.get(key) as string | undefined;
}

/**
 * Trace the path from `origin` (Nautobot `CablePath.from_origin`).
 * @returns null when the origin has no cable.
 * @throws ValidationError "a loop is detected in the path" (Nautobot's message) for a looped patching.
 */
export async function traceFrom(ctx: Ctx, origin: NodeRef): Promise<Omit<CablePath, "id"> | null> {
  let node = await one(ctx, origin.type, origin.id);
  if (!node?.cable_id) return null;
  let nodeType = origin.type;
  const connected = await connectedStatusId(ctx);
  const path: NodeRef[] = [];
  const positions: number[] = [];
  const visited = new Set<string>();
  let isActive = true;
  let isSplit = false;
  let destination: NodeRef | null = null;
  while (node?.cable_id) {
    if (visited.has(node.id))
      throw new ValidationError({ non_field_errors: ["a loop is detected in the path"] });
    visited.add(node.id);
    const cable = await one(ctx, "dcim.cable", node.cable_id);
    if (!cable) break;
    if (cable.status_id !== connected) isActive = false;
    path.push({ type: "dcim.cable", id: cable.id });
    const onA = cable.termination_a_type === nodeType && cable.termination_a_id === node.id;
    const peer: NodeRef = onA
      ? { type: cable.termination_b_type, id: cable.termination_b_id }
      : { type: cable.termination_a_type, id: cable.termination_a_id };
    if (peer.type === "dcim.frontport") {
      const fp = await one(ctx, peer.type, peer.id);
      path.push(peer);
      const rp = fp ? await one(ctx, "dcim.rearport", fp.rear_port_id) : undefined;
      if (!fp || !rp) break;
      if (Number(rp.positions) > 1) positions.push(Number(fp.rear_port_position));
      path.push({ type: "dcim.rearport", id: rp.id });
      node = rp;
      nodeType = "dcim.rearport";
    } else if (peer.type === "dcim.rearport") {
      const rp = await one(ctx, peer.type, peer.id);
      path.push(peer);
      if (!rp) break;
      let position: number;
      if (Number(rp.positions) === 1) position = 1;
      else if (positions.length) position = positions.pop()!;
      else {
        // No position to follow: the path splits here and stops at the rear port.
        isSplit = true;
        break;
      }
      const fp = await ctx.db
        .selectFrom("dcim_frontport")
        .selectAll()
        .where("rear_port_id", "=", rp.id)
        .where("rear_port_position", "=", position)
        .executeTakeFirst();
      if (!fp) break;
      path.push({ type: "dcim.frontport", id: fp.id });
      node = fp;
      nodeType = "dcim.frontport";
    } else if (peer.type === "circuits.circuittermination") {
      const ct = await one(ctx, peer.type, peer.id);
      const far = ct
        ? await ctx.db
            .selectFrom("circuits_circuittermination")
            .selectAll()
            .where("circuit_id", "=", ct.circuit_id)
            .where("term_side", "=", ct.term_side === "A" ? "Z" : "A")
            .executeTakeFirst()
        : undefined;
      if (!far) {
        destination = peer;
        break;
      }
      path.push(peer, { type: peer.type, id: far.id });
      node = far;
      nodeType = peer.type;
    } else {
      destination = peer;
      break;
    }
  }
  if (!destination) isActive = false;
  return { origin, destination, path, isActive, isSplit };
}

/** Store the path of `origin` (replacing its old one), or remove it when the origin has no cable. */
async function savePath(ctx: Ctx, origin: NodeRef): Promise<void> {
  await deletePaths(ctx, await pathIdsWhere(ctx, "origin_id", [origin.id]));
  // The origin's connected endpoint changes with its path: a new version of it (issue 27).
  const originModel = ctx.reg.models.get(origin.type);
  if (originModel) noteSideEffects(ctx, originModel, [origin.id]);
  const traced = await traceFrom(ctx, origin);
  ctx.memo.delete("cablepaths");
  if (!traced) return;
  const id = randomUUID();
  await ctx.db
    .insertInto("dcim_cablepath")
    .values({
      id,
      origin_type: origin.type,
      origin_id: origin.id,
      destination_type: traced.destination?.type ?? null,
      destination_id: traced.destination?.id ?? null,
      path: JSON.stringify(traced.path.map((n) => [n.type, n.id])),
      is_active: traced.isActive ? 1 : 0,
      is_split: traced.isSplit ? 1 : 0,
    })
    .execute();
  if (traced.path.length)
    await ctx.db
      .insertInto("dcim_cablepath_node")
      .values(traced.path.map((n, i) => ({ path_id: id, position: i, node_type: n.type, node_id: n.id })))
      .execute();
}

async function pathIdsWhere(
  ctx: Ctx,
  column: "origin_id" | "destination_id",
  ids: string[],
): Promise<string[]> {
  const out: string[] = [];
  for (const part of chunks(ids))
    for (const r of await ctx.db
      .selectFrom("dcim_cablepath")
      .select("id")
      .where(column, "in", part)
      .execute())
      out.push(r.id as string);
  return out;
}

async function deletePaths(ctx: Ctx, ids: string[]): Promise<void> {
  ctx.memo.delete("cablepaths");
  for (const part of chunks(ids)) {
    await ctx.db.deleteFrom("dcim_cablepath_node").where("path_id", "in", part).execute();
    await ctx.db.deleteFrom("dcim_cablepath").where("id", "in", part).execute();
  }
}

/** Origins of the paths that pass through or end at any of `ids` (Nautobot `path__contains` + destination). */
async function originsAround(ctx: Ctx, ids: string[]): Promise<NodeRef[]> {
  const pathIds = new Set<string>(await pathIdsWhere(ctx, "destination_id", ids));
  for (const part of chunks(ids))
    for (const r of await ctx.db
      .selectFrom("dcim_cablepath_node")
      .select("path_id")
      .where("node_id", "in", part)
      .execute())
      pathIds.add(r.path_id as string);
  const out: NodeRef[] = [];
  for (const part of chunks([...pathIds]))
    for (const r of await ctx.db
      .selectFrom("dcim_cablepath")
      .select(["origin_type", "origin_id"])
      .where("id", "in", part)
      .execute())
      out.push({ type: r.origin_type as string, id: r.origin_id as string });
  return out;
}

/** Retrace every path through or ending at `ids`, except those starting at `skip`. */
async function retraceAround(ctx: Ctx, ids: string[], skip: ReadonlySet<string> = new Set()): Promise<void> {
  for (const o of await originsAround(ctx, ids)) if (!skip.has(o.id)) await savePath(ctx, o);
}

/**
 * Paths after a create or update of `model` (called by the write service in the same transaction):
 * a cable traces from each endpoint it terminates and retraces paths through its pass-through ends and
 * through itself (status changes make paths inactive or active again); a front/rear port or a circuit
 * termination retraces the paths through or ending at it (and at the circuit's other termination).
 */
export async function pathsAfterWrite(ctx: Ctx, model: Model, id: string, data: Row): Promise<void> {
  if (!PATH_NODE_TYPES.has(model.key)) return;
  if (model.key === "dcim.cable") {
    const ends: NodeRef[] = [
      { type: data.termination_a_type, id: data.termination_a_id },
      { type: data.termination_b_type, id: data.termination_b_id },
    ].filter((e) => e.type && e.id);
    const traced = new Set<string>();
    for (const e of ends) {
      const m = ctx.reg.models.get(e.type);
      if (m && isPathEndpoint(m)) {
        await savePath(ctx, e);
        traced.add(e.id);
      }
    }
    await retraceAround(ctx, [id, ...ends.map((e) => e.id)], traced);
    return;
  }
  const ids = [id];
  if (model.key === "circuits.circuittermination" && data.circuit) {
    const all = await rowsWhereIn(ctx, model, "circuit_id", [data.circuit]);
    ids.push(...all.map((r) => r.id as string));
    // A termination with a cable is itself an origin.
    if (all.some((r) => r.id === id && r.cable_id)) await savePath(ctx, { type: model.key, id });
  }
  await retraceAround(ctx, ids, new Set(model.key === "circuits.circuittermination" ? [id] : []));
}

/**
 * Paths after a delete (Nautobot `nullify_connected_endpoints` and the origin's cascade): paths starting at a
 * deleted object go; paths through or ending at one are retraced from their origins (components' cables
 * are already gone or nulled when this runs).
 */
export async function pathsAfterDelete(
  ctx: Ctx,
  doomed: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<void> {
  const gone: string[] = [];
  const touched: string[] = [];
  for (const [key, set] of doomed) {
    const m = ctx.reg.models.get(key);
    if (!m || !(PATH_NODE_TYPES.has(key) || isPathEndpoint(m))) continue;
    if (isPathEndpoint(m)) gone.push(...set);
    touched.push(...set);
    if (key === "circuits.circuittermination") {
      // The other termination of the circuit now ends the path instead of continuing it.
      for (const part of chunks([...set])) {
        const rows = await ctx.db
          .selectFrom("circuits_circuittermination as a")
          .innerJoin("circuits_circuittermination as b", "b.circuit_id", "a.circuit_id")
          .select("b.id")
          .where("a.id", "in", part)
          .execute();
        touched.push(...rows.map((r) => r.id as string));
      }
    }
  }
  if (!touched.length) return;
  await deletePaths(ctx, await pathIdsWhere(ctx, "origin_id", gone));
  const skip = new Set(gone);
  await retraceAround(ctx, touched, skip);
}

/** Stored paths of origins (one query per 2000 ids), by origin id. */
export async function pathsOf(
  ctx: Ctx,
  originIds: readonly string[],
): Promise<Map<string, CablePath | null>> {
  // Memoised per context: a page renders three path fields from one query.
  let memo = ctx.memo.get("cablepaths") as Map<string, CablePath | null> | undefined;
  if (!memo) {
    memo = new Map();
    ctx.memo.set("cablepaths", memo);
  }
  const missing = [...new Set(originIds)].filter((id) => !memo.has(id));
  for (const part of chunks(missing)) {
    for (const id of part) memo.set(id, null);
    for (const r of await ctx.db
      .selectFrom("dcim_cablepath")
      .selectAll()
      .where("origin_id", "in", part)
      .execute())
      memo.set(r.origin_id as string, toPath(r));
  }
  return new Map(originIds.map((id) => [id, memo.get(id) ?? null]));
}

/** Stored paths that pass through a node (Nautobot `CablePath.objects.filter(path__contains=obj)`). */
export async function pathsThrough(ctx: Ctx, nodeId: string): Promise<CablePath[]> {
  const rows = await ctx.db
    .selectFrom("dcim_cablepath as p")
    .innerJoin("dcim_cablepath_node as n", "n.path_id", "p.id")
    .selectAll("p")
    .where("n.node_id", "=", nodeId)
    .orderBy("p.origin_type")
    .orderBy("p.origin_id")
    .execute();
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.id) && seen.add(r.id)).map(toPath);
}

function toPath(r: Row): CablePath {
  return {
    id: r.id,
    origin: { type: r.origin_type, id: r.origin_id },
    destination: r.destination_id ? { type: r.destination_type, id: r.destination_id } : null,
    path: (JSON.parse(r.path) as Array<[string, string]>).map(([type, id]) => ({ type, id })),
    isActive: !!Number(r.is_active),
    isSplit: !!Number(r.is_split),
  };
}

/**
 * Trace every endpoint that has a cable but no stored path (databases created before paths were stored,
 * or loaded by an older importer). @returns how many paths were written.
 */
export async function backfillPaths(ctx: Ctx): Promise<number> {
  let n = 0;
  for (const m of ctx.reg.models.values()) {
    if (!isPathEndpoint(m)) continue;
    const rows = await ctx.db
      .selectFrom(`${m.table} as t`)
      .leftJoin("dcim_cablepath as p", "p.origin_id", "t.id")
      .select("t.id")
      .where("t.cable_id", "is not", null)
      .where("p.id", "is", null)
      .execute();
    for (const r of rows) {
      await savePath(ctx, { type: m.key, id: r.id as string });
      n++;
    }
  }
  return n;
}

/**
 * Rows (alias `t`) whose stored path reaches an endpoint (Nautobot `ConsoleConnectionViewSet` /
 * `PowerConnectionViewSet`: `_path__destination_id__isnull=False`); for interfaces only interface-to-interface
 * paths, each pair once (`InterfaceConnectionViewSet`: the lower id of the pair).
 */
export function connectedOnly(model: Model): Cond {
  if (model.key === "dcim.interface")
    return sql<boolean>`t.id IN (SELECT origin_id FROM dcim_cablepath WHERE destination_type = ${"dcim.interface"} AND origin_id < destination_id)`;
  return sql<boolean>`t.id IN (SELECT origin_id FROM dcim_cablepath WHERE destination_id IS NOT NULL)`;
}

type Obj = Record<string, unknown>;

/**
 * Cables as Nautobot's `TracedCableSerializer` renders them (its keys and order; `length_unit` as stored: ""
 * when unset), by id. Memoised in `ctx.memo` per base URL, which read requests share while the data token is
 * unchanged (service/context.ts `makeCtx`), like nested objects: a repeated trace reads no cable row. The
 * objects are shared and never mutated.
 */
async function tracedCablesFor(ctx: Ctx, cable: Model, ids: readonly string[]): Promise<Map<string, Obj>> {
  const memo = memoEntry(ctx, `tracedCables|${ctx.baseUrl}`, () => new Map<string, Obj>());
  return throughMemo(memo, ids, async (missing) => {
    const rows = await rowsWhereIn(ctx, cable, "id", missing);
    const unit = new Map(rows.map((r) => [r.id as string, r.length_unit ?? ""]));
    const keys = ["display", "id", "url", "type", "status", "label", "color", "length"];
    return (await represent(ctx, cable, rows, "full")).map((o): [string, Obj] => {
      const traced: Obj = Object.fromEntries(keys.map((k) => [k, o[k]]));
      traced.length_unit = unit.get(o.id as string) ?? "";
      traced.created = o.created;
      traced.last_updated = o.last_updated;
      return [o.id as string, traced];
    });
  });
}

/**
 * Nested representations of mixed-type nodes, set-wise (one query per type), aligned with `refs`; cables as
 * Nautobot's `TracedCableSerializer` when `tracedCables` (trace), else nested (paths).
 */
async function renderNodes(
  ctx: Ctx,
  refs: Array<NodeRef | null>,
  tracedCables: boolean,
): Promise<Array<Obj | null>> {
  const byType = new Map<string, string[]>();
  for (const r of refs) if (r) byType.set(r.type, [...(byType.get(r.type) ?? []), r.id]);
  const objs = new Map<string, Obj>();
  for (const [type, ids] of byType) {
    const m = ctx.reg.models.get(type);
    if (!m) continue;
    if (type === "dcim.cable" && tracedCables) {
      for (const [id, o] of await tracedCablesFor(ctx, m, ids)) objs.set(`${type}:${id}`, o);
    } else for (const [id, o] of await nestedFor(ctx, m, ids)) objs.set(`${type}:${id}`, o);
  }
  return refs.map((r) => (r ? (objs.get(`${r.type}:${r.id}`) ?? null) : null));
}

/**
 * The trace of a path endpoint as Nautobot's `…/trace/` answers it: a list of `[near, cable, far]` segments
 * (nested objects; cables as `TracedCableSerializer`), padded like Nautobot 1.6 `PathEndpoint.trace()` (the
 * last segment of a path that stops at a port is `[port, null, null]`). `[]` without a path.
 */
export async function traceSegments(ctx: Ctx, model: Model, id: string): Promise<unknown[]> {
  const p = (await pathsOf(ctx, [id])).get(id);
  if (!p) return [];
  const nodes: Array<NodeRef | null> = [{ type: model.key, id }, ...p.path];
  while ((nodes.length + 1) % 3) nodes.push(null);
  nodes.push(p.destination);
  const objs = await renderNodes(ctx, nodes, true);
  const out: unknown[] = [];
  for (let i = 0; i < objs.length; i += 3) {
    if (!objs[i]) break;
    out.push([objs[i], objs[i + 1] ?? null, objs[i + 2] ?? null]);
  }
  return out;
}

/** Nautobot `CablePathSerializer` of the paths through a pass-through port (`…/paths/`). */
export async function pathsThroughRendered(ctx: Ctx, nodeId: string): Promise<Obj[]> {
  const paths = await pathsThrough(ctx, nodeId);
  const refs: Array<NodeRef | null> = [];
  for (const p of paths) refs.push(p.origin, p.destination, ...p.path);
  const objs = await renderNodes(ctx, refs, false);
  let at = 0;
  return paths.map((p) => {
    const origin = objs[at++];
    const destination = objs[at++];
    const path = objs.slice(at, at + p.path.length);
    at += p.path.length;
    return {
      id: p.id,
      origin_type: p.origin.type,
      origin,
      destination_type: p.destination?.type ?? null,
      destination: destination ?? null,
      path,
      is_active: p.isActive,
      is_split: p.isSplit,
    };
  });
}

/**
 * Once per database: trace the paths of cables that existed before paths were stored (marker
 * `cable_paths_v1` in `inventory_meta`), under the transaction lock so processes starting together do it once.
 * @returns how many paths were written.
 */
export async function ensurePaths(ctx: Ctx): Promise<number> {
  const marker = "cable_paths_v1";
  const done = await ctx.db
    .selectFrom("inventory_meta")
    .select("key")
    .where("key", "=", marker)
    .executeTakeFirst();
  if (done) return 0;
  return inTransaction(ctx, async (t) => {
    await t.store.dialect.transactionLock(t.db, marker);
    const again = await t.db
      .selectFrom("inventory_meta")
      .select("key")
      .where("key", "=", marker)
      .executeTakeFirst();
    if (again) return 0;
    const n = await backfillPaths(t);
    await t.db
      .insertInto("inventory_meta")
      .values({ key: marker, value: String(n) })
      .execute();
    return n;
  });
}
