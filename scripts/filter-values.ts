/**
 * `node scripts/filter-values.ts [out.tsv]` (not part of the test run): invalid filter values sent side by
 * side to a reference Nautobot 1.6.32 (NAUTOBOT_URL, default http://127.0.0.1:8001; NAUTOBOT_TOKEN) and to
 * this server on a fresh SQLite database (issue 24, "invalid filter values answer as Nautobot").
 *
 * Every filter parameter of every model's list endpoint is put in a class (lookup kind and suffix of a
 * field filter, or kind and function of a declared filter); for each class a few models (those with rows
 * on the reference first, FILTER_VALUES_PER_CLASS, default 2) get each invalid value of `VALUES`. The
 * reference's answer is classified as `400 <body>`, `500 <exception>`, `200 none` (0 rows of a non-empty
 * table), `200 all` (the filter ignored) or `200 ?` (empty table); ours as `400 <body>` / `500` or, for a
 * 200, by the compiled condition (`all` when no condition, `none` when nothing can match, else `some`).
 * Prints one line per (class, value) whose answers differ, then a summary table.
 *
 * `node scripts/filter-values.ts --cases`: builds the fixture of test/api/filter-values-cases.ts on the
 * reference (found again on later runs) and prints each case whose status or count there differs from the
 * table (partial networks, content types; the table the test asserts on this server).
 */
import { compileFilters, filterSetFor } from "../src/query/filters.ts";
import { LOOKUPS } from "../src/query/lookups.ts";
import type { Model } from "../src/registry/index.ts";
import { registry } from "../src/registry/index.ts";
import { type Api, buildFixture, CASES } from "../test/api/filter-values-cases.ts";
import { startServer } from "../test/helpers/server.ts";

const REF = process.env.NAUTOBOT_URL ?? "http://127.0.0.1:8001";
const REF_TOKEN = process.env.NAUTOBOT_TOKEN ?? "0123456789abcdef0123456789abcdef01234567";

if (process.argv.includes("--cases")) {
  const refApi: Api = async (path, init = {}) => {
    const r = await fetch(`${REF}${path}`, {
      method: init.method ?? "GET",
      headers: {
        Authorization: `Token ${REF_TOKEN}`,
        Accept: "application/json",
        "Content-Type": "application/json",
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await r.text();
    try {
      return { status: r.status, body: JSON.parse(text) };
    } catch {
      return { status: r.status, body: text.slice(0, 80) };
    }
  };
  await buildFixture(refApi);
  let diffs = 0;
  for (const [q, status, ours, theirs] of CASES) {
    const count = theirs ?? ours;
    const r = await refApi(q);
    const n = r.status === 200 ? r.body.count : undefined;
    const same =
      (r.status === status || (r.status === 500 && status === 400)) && (count === undefined || n === count);
    if (!same) {
      diffs++;
      process.stdout.write(
        `DIFF ${q}\n  nautobot: ${r.status} ${n ?? JSON.stringify(r.body).slice(0, 200)}\n  table:    ${status} ${count ?? ""}\n`,
      );
    }
  }
  process.stdout.write(`${CASES.length} cases, ${diffs} differ\n`);
  process.exit(diffs ? 1 : 0);
}
const PER_CLASS = Number(process.env.FILTER_VALUES_PER_CLASS ?? 2);
/** The invalid values tried on every filter. */
const VALUES = ["banana", "maybe", "-1", "1.5", "", "00000000-0000-4000-8000-000000000000", "10.0.0.0/33"];

const reg = registry();

/** The class of one filter parameter of a model. */
function classOf(model: Model, param: string): string {
  const decl = model.filters?.[param];
  if (decl) return `decl:${decl.kind}:${String(decl.fn ?? decl.op ?? decl.path ?? "")}`.replace(/\..*$/, "");
  const at = param.lastIndexOf("__");
  const suffix = at > 0 && LOOKUPS[param.slice(at + 2)] ? param.slice(at + 2) : "";
  const base = suffix ? param.slice(0, at) : param;
  const fd = model.fields[base];
  if (base === "id") return `id:${suffix}`;
  if (base === "created" || base === "last_updated") return `${base}:${suffix}`;
  if (fd) return `field:${fd.kind}${fd.kind === "int" && (fd.max ?? 0) > 2 ** 31 ? "-big" : ""}:${suffix}`;
  if (base.endsWith("_id") && model.fields[base.slice(0, -3)]?.kind === "fk") return `fk_id:${suffix}`;
  if (base.endsWith("_id") && model.fields[base.slice(0, -3)]?.kind === "m2m") return `m2m_id:${suffix}`;
  if (base.endsWith("_id") && model.fields[base.slice(0, -3)]?.kind === "gfk") return `gfk_id:${suffix}`;
  if (base.endsWith("_type")) return `gfk_type:${suffix}`;
  if (base.startsWith("has_")) return "has";
  if (base === "tag" || base === "q") return `${base}:${suffix}`;
  return `reverse:${suffix}`;
}

async function ref(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${REF}${path}`, { headers: { Authorization: `Token ${REF_TOKEN}` } });
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) };
  } catch {
    return { status: r.status, body: text.slice(0, 80) };
  }
}

const s = await startServer();
const dialect = s.store.dialect;
const totals = new Map<string, number>();
const classes = new Map<string, { model: Model; param: string }[]>();
for (const model of reg.models.values()) {
  const path = `/api/${model.app}/${model.path}/`;
  const r = await ref(`${path}?limit=1`);
  if (r.status !== 200) continue;
  totals.set(model.key, r.body.count);
  for (const param of filterSetFor(reg, model).keys()) {
    const c = classOf(model, param);
    classes.set(c, [...(classes.get(c) ?? []), { model, param }]);
  }
}

const table = new Map<string, Map<string, string>>();
const out: string[] = [];
for (const [cls, members] of [...classes].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const picked = [...members]
    .sort((a, b) => (totals.get(b.model.key) ?? 0) - (totals.get(a.model.key) ?? 0))
    .slice(0, PER_CLASS);
  for (const { model, param } of picked) {
    const path = `/api/${model.app}/${model.path}/`;
    for (const v of VALUES) {
      const q = `${path}?${new URLSearchParams({ [param]: v })}`;
      const r = await ref(q);
      const total = totals.get(model.key) ?? 0;
      const theirs =
        r.status === 200
          ? total === 0
            ? "200 ?"
            : r.body.count === 0
              ? "200 none"
              : r.body.count === total
                ? "200 all"
                : "200 some"
          : r.status === 500
            ? `500 ${r.body.exception}`
            : `${r.status} ${JSON.stringify(r.body)}`;
      const o = await s.api(q);
      let ours = `${o.status} ${JSON.stringify(o.body)}`;
      if (o.status === 200) {
        const { cond } = await compileFilters(
          { db: s.store.db, dialect, reg, model },
          new Map([[param, [v]]]),
        );
        const text = cond ? cond.compile(s.store.db).sql : "";
        ours = !cond ? "200 all" : /^\(?1 = 0\)?$/.test(text) ? "200 none" : "200 some";
      }
      const same =
        theirs === ours ||
        (theirs === "200 ?" && ours.startsWith("200")) ||
        (theirs.startsWith("500") && ours.startsWith("400"));
      const row = table.get(cls) ?? new Map<string, string>();
      row.set(v, `${theirs.slice(0, 3)}${theirs.startsWith("200") ? theirs.slice(3) : ""}`);
      table.set(cls, row);
      if (!same) out.push(`DIFF ${cls} ${q}\n  nautobot: ${theirs}\n  ours:     ${ours}`);
    }
  }
}
await s.close();
process.stdout.write(`${out.join("\n")}\n\n| class | ${VALUES.map((v) => `\`${v}\``).join(" | ")} |\n`);
process.stdout.write(`|---|${VALUES.map(() => "---").join("|")}|\n`);
for (const [cls, row] of table)
  process.stdout.write(`| ${cls} | ${VALUES.map((v) => row.get(v) ?? "").join(" | ")} |\n`);
