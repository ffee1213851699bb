/**
 * `node bench/plans.ts DATABASE_URL`: print the SQL and the engine's query plan for the list queries
 * behind `ip-addresses?parent=<prefix>` and `interfaces?device_id=<id>` (count and page).
 */
import { sql } from "kysely";
import { compileFilters } from "../src/query/filters.ts";
import { registry } from "../src/registry/index.ts";
import { openStore } from "../src/store/db.ts";
import { orderColumns } from "../src/store/ordering.ts";

const url = process.argv[2] ?? "sqlite:./inventory.sqlite3";
const store = await openStore(url);
const reg = registry();
const dev = await store.db.selectFrom("dcim_interface").select("device_id").limit(1).executeTakeFirst();
const pfx = await store.db
  .selectFrom("ipam_prefix")
  .select("prefix")
  .where("prefix_len", "=", 16)
  .limit(1)
  .executeTakeFirst();
const cases: Array<[string, string, Map<string, string[]>]> = [
  ["ipam.ipaddress", "parent", new Map([["parent", [String(pfx?.prefix ?? "10.0.0.0/16")]]])],
  ["dcim.interface", "device_id", new Map([["device_id", [String(dev?.device_id)]]])],
];
for (const [key, label, params] of cases) {
  const model = reg.get(key);
  const { cond } = await compileFilters({ db: store.db, dialect: store.dialect, reg, model }, params);
  let page = store.db.selectFrom(`${model.table} as t`).selectAll("t").where(cond!);
  for (const [c, desc] of orderColumns(model)) page = page.orderBy(`t.${c}`, desc ? "desc" : "asc");
  page = page.limit(50);
  const count = store.db.selectFrom(`${model.table} as t`).select(sql<number>`count(*)`.as("n")).where(cond!);
  for (const [what, q] of [
    ["count", count],
    ["page", page],
  ] as const) {
    const c = q.compile();
    process.stdout.write(`\n## ${key} ${label} (${what})\n${c.sql}\n`);
    const explain = store.dialect.engine === "sqlite" ? `EXPLAIN QUERY PLAN ${c.sql}` : `EXPLAIN ${c.sql}`;
    const r = await store.db.executeQuery({ ...c, sql: explain, query: c.query } as any);
    for (const row of r.rows as any[]) process.stdout.write(`  ${row.detail ?? row["QUERY PLAN"]}\n`);
  }
}
await store.close();
