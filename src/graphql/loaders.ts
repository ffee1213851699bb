/**
 * Set-wise loading for one GraphQL request (issue 11): every relation of a query level is one batch (a
 * DataLoader per relation and argument set), so a level costs one SQL query per relation for all its
 * objects, never one per object. Every load honours the user's view permissions, as REST lists do, and
 * counts rows against the request's row budget.
 */
import DataLoader from "dataloader";
import { GraphQLError } from "graphql";
import type { Model } from "../registry/index.ts";
import type { ComputedField } from "../registry/meta.ts";
import type { CablePath } from "../service/cable-paths.ts";
import { cablePeers, loadComputed, rowPaths } from "../service/computed.ts";
import type { Ctx } from "../service/context.ts";
import { groupsContaining } from "../service/dynamic-groups.ts";
import { type ListParams, listRows, listRowsWhereIn } from "../service/read.ts";
import { m2mPairs, type Row, tagPairs } from "../service/rows.ts";

/** The model of each loaded row (unions resolve their member type from it). */
const rowModels = new WeakMap<Row, string>();

/** The model key of a row loaded by a `Loaders`. */
export function modelOf(row: Row): string | undefined {
  return rowModels.get(row);
}

/** A reference to an object: content type and id. */
export interface Ref {
  type: string;
  id: string;
}

/** The second ids of (key, value) pairs grouped under each of `keys`, in order. */
function grouped(keys: readonly string[], pairs: ReadonlyArray<readonly [string, string]>): string[][] {
  const by = new Map<string, string[]>();
  for (const [k, v] of pairs) {
    const list = by.get(k);
    if (list) list.push(v);
    else by.set(k, [v]);
  }
  return keys.map((k) => by.get(k) ?? []);
}

/** Per-request loaders. `maxRows` bounds the rows one request may load (error when exceeded). */
export class Loaders {
  private readonly maps = new Map<string, DataLoader<any, any>>();
  /** Rows loaded so far by this request. */
  rows = 0;

  readonly ctx: Ctx;
  readonly maxRows: number;

  constructor(ctx: Ctx, maxRows: number) {
    this.ctx = ctx;
    this.maxRows = maxRows;
  }

  private count(n: number, model?: Model, rows?: readonly Row[]): void {
    if (model && rows) for (const r of rows) rowModels.set(r, model.key);
    this.rows += n;
    if (this.rows > this.maxRows)
      throw new GraphQLError(
        `Query loads more than ${this.maxRows} objects; narrow it with filters or limit/offset.`,
        { extensions: { code: "TOO_MANY_ROWS" } },
      );
  }

  private loader<K, V>(key: string, batch: (keys: readonly K[]) => Promise<V[]>): DataLoader<K, V> {
    let l = this.maps.get(key);
    if (!l) {
      l = new DataLoader<K, V>(batch, { maxBatchSize: 10_000 });
      this.maps.set(key, l);
    }
    return l;
  }

  /** A page of a model's visible rows with REST filter parameters (top-level list fields). */
  async list(model: Model, p: ListParams): Promise<Row[]> {
    const { rows } = await listRows(this.ctx, model, { ...p, skipCount: true });
    this.count(rows.length, model, rows);
    return rows;
  }

  /** A visible object by id (null when absent or not permitted). */
  byId(model: Model): DataLoader<string, Row | null> {
    return this.loader(`id:${model.key}`, async (ids: readonly string[]) => {
      const rows = await listRowsWhereIn(this.ctx, model, "id", ids);
      this.count(rows.length, model, rows);
      const byId = new Map(rows.map((r) => [String(r.id), r]));
      return ids.map((id) => byId.get(id) ?? null);
    });
  }

  /** The visible objects of `ids`, in that order (absent and not permitted ones left out). */
  async many(model: Model, ids: readonly string[]): Promise<Row[]> {
    return (await this.byId(model).loadMany(ids)).filter((x): x is Row => !!x && !(x instanceof Error));
  }

  /**
   * Visible rows of `model` whose `column` holds a parent's id, filtered by `params` (a reverse relation
   * with the child's filters as arguments), grouped by parent in the model's order.
   */
  children(
    model: Model,
    column: string,
    params: ReadonlyMap<string, string[]>,
    argKey: string,
  ): DataLoader<string, Row[]> {
    return this.loader(`rev:${model.key}:${column}:${argKey}`, async (parents: readonly string[]) => {
      const rows = await listRowsWhereIn(this.ctx, model, column, parents, {
        params,
        limit: undefined,
        offset: 0,
      });
      this.count(rows.length, model, rows);
      const by = new Map<string, Row[]>();
      for (const r of rows) {
        const k = String(r[column]);
        const list = by.get(k);
        if (list) list.push(r);
        else by.set(k, [r]);
      }
      return parents.map((p) => by.get(p) ?? []);
    });
  }

  /**
   * The ids on the other side of a many-to-many (or content-types) field, per object: targets per source,
   * or with `from: "target"` sources per target (the reverse side: a VLAN's tagged interfaces).
   */
  links(model: Model, field: string, from: "source" | "target" = "source"): DataLoader<string, string[]> {
    return this.loader(`m2m:${model.key}:${field}:${from}`, async (ids: readonly string[]) =>
      grouped(ids, await m2mPairs(this.ctx, model, field, ids, from)),
    );
  }

  /** The far end of each row's cable (cable termination models). */
  cablePeer(model: Model): DataLoader<Row, Ref | null> {
    return this.loader(`peer:${model.key}`, async (rows: readonly Row[]) =>
      (await cablePeers(this.ctx, model, rows)).map((p) => (p ? { type: p.type, id: p.id } : null)),
    );
  }

  /** The destination of each row's cable path (path endpoints: Nautobot's `connected_endpoint`). */
  connected(model: Model): DataLoader<Row, Ref | null> {
    return this.loader(`dest:${model.key}`, async (rows: readonly Row[]) =>
      (await this.path(model).loadMany(rows)).map((p) => (p && !(p instanceof Error) ? p.destination : null)),
    );
  }

  /** The stored cable path starting at each row (path endpoints), or null. */
  path(model: Model): DataLoader<Row, CablePath | null> {
    return this.loader(`path:${model.key}`, async (rows: readonly Row[]) => rowPaths(this.ctx, rows));
  }

  /**
   * Whether the user may view each of `refs` (objects of any model; one query per model for all the refs
   * of a level, through `byId`); unknown models are not visible.
   */
  async visible(refs: readonly Ref[]): Promise<boolean[]> {
    return Promise.all(
      refs.map(async (r) => {
        const model = this.ctx.reg.models.get(r.type);
        return !!model && !!(await this.byId(model).load(r.id));
      }),
    );
  }

  /** The dynamic groups (rows) each object belongs to. */
  dynamicGroups(model: Model): DataLoader<string, Row[]> {
    const groupModel = this.ctx.reg.get("extras.dynamicgroup");
    return this.loader(`dg:${model.key}`, async (ids: readonly string[]) => {
      const by = await groupsContaining(this.ctx, model.key, ids);
      for (const list of by.values()) for (const g of list) rowModels.set(g, groupModel.key);
      return ids.map((id) => by.get(id) ?? []);
    });
  }

  /** Tag ids per object. */
  tags(model: Model): DataLoader<string, string[]> {
    return this.loader(`tags:${model.key}`, async (ids: readonly string[]) =>
      grouped(ids, await tagPairs(this.ctx, model, ids)),
    );
  }

  /** A computed value (config context, driver mappings) per row, computed for the whole level at once. */
  computed(model: Model, name: string, field: ComputedField): DataLoader<Row, unknown> {
    return this.loader(`cmp:${model.key}:${name}`, async (rows: readonly Row[]) =>
      loadComputed(this.ctx, model, rows, name, field, "full"),
    );
  }
}
