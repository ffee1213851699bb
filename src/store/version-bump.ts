/**
 * Object versions (issue 26, conditional requests): every UPDATE of a model row raises the row's version
 * (`VERSION_COLUMN`) by one in the same statement, whoever issues it (the write service, side effects such as
 * cable endpoints, primary IPs and circuit terminations, the webhook worker's delivery rows, upgrades), so
 * no code path can change a row and keep its version. A Kysely plugin on the store's query builder rewrites
 * `UPDATE <model table> SET …` to `SET …, "_version" = "_version" + 1`, unless the statement sets the version
 * itself (the write service's queued row writes carry the next version as a value: store/dialect.ts
 * `queueWrite` may send them through PostgreSQL's batched `UPDATE … FROM (VALUES …)`, which this plugin
 * never sees). Raw SQL (`sql\`…\``, `CompiledQuery.raw`) is not rewritten: it must set the version itself.
 */
import {
  ColumnNode,
  ColumnUpdateNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  type UnknownRow,
  type UpdateQueryNode,
} from "kysely";
import { type Registry, VERSION_COLUMN } from "../registry/index.ts";

/** The table an UPDATE names (`UPDATE t`, `UPDATE t AS x`), or undefined. */
function tableOf(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === "AliasNode") return tableOf((node as unknown as { node: OperationNode }).node);
  if (node.kind === "TableNode")
    return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return undefined;
}

/** The column a SET entry assigns. */
function columnOf(node: OperationNode): string | undefined {
  return node.kind === "ColumnNode" ? (node as ColumnNode).column.name : undefined;
}

/**
 * The plugin raising the version of every row an UPDATE of one of `tables` changes.
 * @param tables names of the tables that have the version column (every model table: `versionedTables`)
 */
export function versionBump(tables: ReadonlySet<string>): KyselyPlugin {
  const bump = ColumnUpdateNode.create(
    ColumnNode.create(VERSION_COLUMN),
    sql`${sql.ref(VERSION_COLUMN)} + 1`.toOperationNode(),
  );
  return {
    transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind !== "UpdateQueryNode") return node;
      const update = node as UpdateQueryNode;
      const table = tableOf(update.table);
      if (!table || !tables.has(table) || !update.updates?.length) return node;
      if (update.updates.some((u) => columnOf(u.column) === VERSION_COLUMN)) return node;
      return { ...update, updates: [...update.updates, bump] };
    },
    transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return Promise.resolve(result);
    },
  };
}

/** The tables of `reg`'s models: all carry the version column (registry `Registry` column derivation). */
export function versionedTables(reg: Registry): Set<string> {
  return new Set([...reg.models.values()].map((m) => m.table));
}
