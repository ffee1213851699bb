/**
 * `npm run hostile [-- --database URL] [--per-param N] [--seed S]`: a hostile-input run against a real
 * server (issue 12). Starts `inventory serve` on a fresh database (SQLite by default; a PostgreSQL URL gets a
 * fresh schema), then sends, bounded in count and time, over loopback:
 * - every list operation of `/api/swagger.json` with each documented query parameter set to hostile values
 *   (NUL bytes, backtracking regexes, invalid regexes, huge and negative numbers, long strings, LIKE
 *   wildcards, SQL fragments, odd Unicode) — `--per-param` values per parameter (default 3, chosen by seed);
 * - `limit`/`offset` junk on every list;
 * - a POST per writable field of every model with the field set to each hostile body value (wrong types,
 *   `""`, NUL, 2^63, deep nesting, `constructor`/`__proto__` keys, 10k-character strings);
 * - detail URLs with junk ids.
 * Prints requests tried, status classes, 5xx and timeouts (10 s) grouped by operation and parameter, and
 * exits 1 when any 5xx or timeout was seen.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { registry } from "../src/registry/index.ts";
import { createToken, ensureSuperuser } from "../src/service/accounts.ts";
import { openStore } from "../src/store/db.ts";
import { migrate } from "../src/store/migrate.ts";
import { waitForOutput } from "../test/helpers/process.ts";

const { values: opts } = parseArgs({
  options: {
    database: { type: "string" },
    "per-param": { type: "string", default: "3" },
    seed: { type: "string", default: "1" },
    concurrency: { type: "string", default: "8" },
  },
});
const perParam = Number(opts["per-param"]);
let seed = Number(opts.seed) || 1;
/** Deterministic PRNG (mulberry32) so runs are repeatable. */
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(list: readonly T[], n: number): T[] => {
  const copy = [...list];
  const out: T[] = [];
  while (out.length < n && copy.length) out.push(copy.splice(Math.floor(rand() * copy.length), 1)[0]!);
  return out;
};

const QUERY_VALUES = [
  "\u0000",
  "a\u0000b",
  "^(.*.*)*!$",
  "(a+)+$",
  "(",
  "[z-a]",
  "\\",
  "%",
  "_%_",
  "' OR 1=1 --",
  '"; DROP TABLE dcim_site; --',
  "9223372036854775808",
  "-9223372036854775809",
  "1e309",
  "-1",
  "NaN",
  "0x10",
  "x".repeat(10_000),
  "\ud800",
  "İı",
  "00000000-0000-0000-0000-000000000000",
  "999.999.999.999/99",
  "::ffff:1.2.3.4/200",
  "true",
  "",
  " ",
];
/** JSON text of `n` nested arrays (JSON.stringify itself overflows the stack at this depth). */
const deep = (n: number): string => `${"[".repeat(n)}1${"]".repeat(n)}`;
const BODY_VALUES: unknown[] = [
  "",
  "\u0000",
  "a\u0000b",
  2 ** 63,
  -(2 ** 63),
  1.5,
  -1,
  true,
  [],
  {},
  { constructor: 1 },
  { __proto__: { x: 1 } },
  { toString: "x" },
  "constructor",
  "__proto__",
  "x".repeat(10_000),
  null,
  ["\u0000"],
  [{ constructor: "x" }],
  "00000000-0000-0000-0000-000000000000",
];

const file = join(tmpdir(), `inventory-hostile-${Date.now()}.sqlite3`);
let url = `sqlite:${file}`;
let cleanup = async () => {
  for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
};
if (opts.database?.startsWith("postgres")) {
  const schema = `hostile_${randomBytes(4).toString("hex")}`;
  url = `${opts.database}${opts.database.includes("?") ? "&" : "?"}schema=${schema}`;
  cleanup = async () => {
    const admin = await openStore(opts.database!);
    await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(admin.db);
    await sql.raw(`DROP SCHEMA IF EXISTS "${schema}_asof" CASCADE`).execute(admin.db);
    await admin.close();
  };
}
const store = await openStore(url);
const reg = registry();
await migrate(store, reg);
const { id } = await ensureSuperuser(store, "hostile", "hostile-password");
const token = await createToken(store, id);
await store.close();

const port = 19100 + Math.floor(Math.random() * 300);
const server = spawn(
  process.execPath,
  ["bin/inventory.js", "serve", "--port", String(port), "--database", url, "--no-worker"],
  { env: { ...process.env, INVENTORY_LOG_LEVEL: "error" }, stdio: ["ignore", "pipe", "inherit"] },
);
await waitForOutput(server, "listening");
const base = `http://127.0.0.1:${port}`;
const headers = { Authorization: `Token ${token}`, "Content-Type": "application/json" };

type Job = { label: string; method: string; path: string; body?: string };
const jobs: Job[] = [];
const doc = (await (await fetch(`${base}/api/swagger.json`, { headers })).json()) as any;
const prefix = new URL(doc.servers[0].url).pathname;
for (const [rel, ops] of Object.entries<any>(doc.paths)) {
  const path = `${prefix}${rel}`;
  if (path.includes("{")) {
    if (path.endsWith("/{id}/") && ops.get)
      for (const junk of ["not-a-uuid", "%00", "1".repeat(400), "00000000-0000-0000-0000-00000000000g"])
        jobs.push({ label: `GET ${path} id`, method: "GET", path: path.replace("{id}", junk) });
    continue;
  }
  const list = ops.get;
  if (!list) continue;
  for (const q of ["limit=-1", "limit=1e3", "limit=99999999999999999999", "offset=9223372036854775808"])
    jobs.push({ label: `GET ${path} ${q.split("=")[0]}`, method: "GET", path: `${path}?${q}` });
  for (const p of list.parameters ?? []) {
    const name = p.name ?? p.$ref?.split("/").pop();
    if (!name || name === "limit" || name === "offset" || name === "format") continue;
    for (const v of pick(QUERY_VALUES, perParam))
      jobs.push({
        label: `GET ${path} ${name}`,
        method: "GET",
        path: `${path}?${new URLSearchParams([[name, v]]).toString()}`,
      });
    if (/__n?i?re$/.test(name))
      jobs.push({
        label: `GET ${path} ${name} redos`,
        method: "GET",
        path: `${path}?${name}=%5E(.*.*)*!%24`,
      });
  }
  const post = ops.post?.requestBody?.content?.["application/json"]?.schema;
  const ref = post?.$ref ?? post?.oneOf?.[0]?.$ref;
  const schema = ref ? doc.components.schemas[ref.split("/").pop()] : undefined;
  for (const field of Object.keys(schema?.properties ?? {})) {
    for (const v of BODY_VALUES)
      jobs.push({
        label: `POST ${path} ${field}`,
        method: "POST",
        path,
        body: JSON.stringify({ [field]: v }),
      });
    jobs.push({
      label: `POST ${path} ${field} deep`,
      method: "POST",
      path,
      body: `{${JSON.stringify(field)}: ${deep(5000)}}`,
    });
  }
  if (ops.patch || ops.put)
    jobs.push({
      label: `PATCH ${path} bulk`,
      method: "PATCH",
      path,
      body: JSON.stringify([{ id: "00000000-0000-0000-0000-000000000000", constructor: 1 }]),
    });
}

const counts = new Map<string, number>();
const bad = new Map<string, string[]>();
let done = 0;
let timeouts = 0;
const started = Date.now();
const run = async (job: Job) => {
  let cls: string;
  try {
    const r = await fetch(`${base}${job.path}`, {
      method: job.method,
      headers,
      ...(job.body !== undefined ? { body: job.body } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    await r.arrayBuffer();
    cls = String(r.status);
    if (r.status >= 500)
      bad.set(job.label, [...(bad.get(job.label) ?? []), `${r.status} ${job.path.slice(0, 120)}`]);
  } catch (e) {
    cls = "timeout/error";
    timeouts++;
    bad.set(job.label, [...(bad.get(job.label) ?? []), `${(e as Error).name} ${job.path.slice(0, 120)}`]);
  }
  counts.set(cls, (counts.get(cls) ?? 0) + 1);
  done++;
};
const queue = [...jobs];
await Promise.all(
  Array.from({ length: Number(opts.concurrency) }, async () => {
    // A server that stops answering ends the run (20 timeouts) instead of waiting 10 s per request.
    for (let j = queue.shift(); j && timeouts < 20; j = queue.shift()) await run(j);
  }),
);
const health = await fetch(`${base}/health`)
  .then((r) => r.status)
  .catch(() => 0);
server.kill("SIGTERM");
// A server stuck in a synchronous statement ignores SIGTERM: do not leave it behind.
setTimeout(() => server.kill("SIGKILL"), 3000).unref();
await new Promise((r) => server.once("exit", r));
await cleanup();
const engine = url.startsWith("sqlite") ? "sqlite" : "postgres";
process.stdout.write(
  `hostile run on ${engine}: ${done} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
    `${[...counts].map(([k, v]) => `${k}: ${v}`).join(", ")}; /health after: ${health}\n`,
);
for (const [label, list] of [...bad].slice(0, 60))
  process.stdout.write(`  ${label}: ${list.length} × e.g. ${list[0]}\n`);
process.exit(bad.size || health !== 200 ? 1 : 0);
