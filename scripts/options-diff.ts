/**
 * `node scripts/options-diff.ts [--save] [--fixture] [--all]` (not part of the test run): `OPTIONS` of every
 * list endpoint that both this server (on a fresh SQLite database, or TEST_DB) and a reference Nautobot
 * 1.6.32 (NAUTOBOT_URL, default http://127.0.0.1:8001; NAUTOBOT_TOKEN) serve, compared field by field
 * (test/helpers/options-diff.ts): prints each difference as `<endpoint> <path> <attr>: ref=… ours=…`, then
 * the count per class and in all.
 *
 * --save     write the reference's answers to test/fixtures/nautobot-options.json (what
 *            test/api/options-fixture.test.ts compares with; PUT stored as "same" when equal to POST)
 * --fixture  compare with that fixture instead of the running reference
 * --all      also print the differences the fixture test allows (test/helpers/options-allowed.ts)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { allowedDiff } from "../test/helpers/options-allowed.ts";
import {
  brief,
  compactAnswer,
  diffClass,
  diffOptions,
  expandAnswer,
  type OptionsDiff,
} from "../test/helpers/options-diff.ts";
import { startServer } from "../test/helpers/server.ts";

const REF = process.env.NAUTOBOT_URL ?? "http://127.0.0.1:8001";
const REF_TOKEN = process.env.NAUTOBOT_TOKEN ?? "0123456789abcdef0123456789abcdef01234567";
const FIXTURE = new URL("../test/fixtures/nautobot-options.json", import.meta.url);
const args = new Set(process.argv.slice(2));

async function ref(path: string, method = "GET"): Promise<any> {
  const r = await fetch(`${REF}${path}`, {
    method,
    headers: { Authorization: `Token ${REF_TOKEN}`, Accept: "application/json" },
  });
  if (r.status !== 200) throw new Error(`reference ${method} ${path}: ${r.status}`);
  return r.json();
}

/** `<app>/<endpoint>` of every list endpoint an API root lists (apps: every key whose value is `/api/<app>/`). */
async function endpoints(get: (path: string) => Promise<any>): Promise<string[]> {
  const out: string[] = [];
  const root = await get("/api/");
  for (const [app, url] of Object.entries(root)) {
    if (
      typeof url !== "string" ||
      !new RegExp(`/api/${app}/$`).test(url) ||
      ["plugins", "graphql", "status"].includes(app)
    )
      continue;
    const listing = await get(`/api/${app}/`);
    for (const name of Object.keys(listing)) out.push(`${app}/${name}`);
  }
  return out;
}

const s = await startServer();
try {
  const ours = async (path: string, method = "GET") => {
    const r = await s.api(path, { method });
    if (r.status !== 200) throw new Error(`ours ${method} ${path}: ${r.status}`);
    return r.body;
  };
  let refAnswers: Record<string, any>;
  if (args.has("--fixture")) {
    const fixture = JSON.parse(readFileSync(FIXTURE, "utf8"));
    refAnswers = Object.fromEntries(
      Object.entries(fixture.endpoints).map(([k, v]) => [k, expandAnswer(v as any)]),
    );
  } else {
    refAnswers = {};
    for (const e of await endpoints(ref)) refAnswers[e] = await ref(`/api/${e}/`, "OPTIONS");
    if (args.has("--save")) {
      const status = await ref("/api/status/");
      const endpoints = Object.fromEntries(Object.entries(refAnswers).map(([k, v]) => [k, compactAnswer(v)]));
      const body = {
        _source: `OPTIONS of every list endpoint of Nautobot ${status["nautobot-version"]} (superuser token, API 1.2), read by scripts/options-diff.ts --save on ${new Date().toISOString().slice(0, 10)}; PUT "same" = equal to POST`,
        endpoints,
      };
      writeFileSync(FIXTURE, `${JSON.stringify(body)}\n`);
      console.log(`saved ${Object.keys(endpoints).length} endpoints to ${FIXTURE.pathname}`);
    }
  }
  const mine = new Set(await endpoints(ours));
  const onlyRef = Object.keys(refAnswers).filter((e) => !mine.has(e));
  const onlyOurs = [...mine].filter((e) => !(e in refAnswers));
  const diffs: OptionsDiff[] = [];
  let compared = 0;
  for (const [e, body] of Object.entries(refAnswers)) {
    if (!mine.has(e)) continue;
    compared++;
    const r = await s.api(`/api/${e}/`, { method: "OPTIONS" });
    if (r.status === 200) diffs.push(...diffOptions(e, body, r.body));
    else diffs.push({ endpoint: e, path: "", attr: "status", ref: 200, ours: r.status });
  }
  let shown = diffs;
  if (!args.has("--all")) {
    shown = diffs.filter((d) => !allowedDiff(d));
  }
  for (const d of shown)
    console.log(
      `${d.endpoint} ${d.path} ${d.attr}: ref=${JSON.stringify(brief(d.ref))} ours=${JSON.stringify(brief(d.ours))}`,
    );
  const classes = new Map<string, number>();
  for (const d of shown) classes.set(diffClass(d), (classes.get(diffClass(d)) ?? 0) + 1);
  console.log("\nper class:");
  for (const [c, n] of [...classes].sort((a, b) => b[1] - a[1]))
    console.log(`${String(n).padStart(5)}  ${c}`);
  console.log(`\nendpoints compared: ${compared}; only on the reference: ${onlyRef.join(", ") || "none"}`);
  console.log(`only ours: ${onlyOurs.join(", ") || "none"}`);
  console.log(`differences: ${diffs.length} (${shown.length} shown, ${diffs.length - shown.length} allowed)`);
} finally {
  await s.close();
}
