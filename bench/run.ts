/**
 * `npm run bench [-- --database URL] [-- --devices N]`: seed a fresh database (NetBox demo import, then
 * synthetic growth through the service layer), start the server in a child process, and drive it over
 * loopback with autocannon. Prints requests/s, p50/p99 latency and rows/s per scenario, each as a ratio
 * to the framework floor (`GET /health`), and writes bench/results/<date>-<engine>.json.
 * `--only "available-ips,POST one IP"` runs only the request scenarios whose names contain one of the texts
 * (no bulk or webhook figures) and writes <date>-<engine>-partial.json (not kept in git).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import Table from "cli-table3";
import { sql } from "kysely";
import { registry } from "../src/registry/index.ts";
import { createToken, ensureSuperuser } from "../src/service/accounts.ts";
import { openStore } from "../src/store/db.ts";
import { migrate } from "../src/store/migrate.ts";
import { type ReplicaPair, startReplicaPair } from "../test/helpers/pg-replica.ts";
import { type FeedFigures, feedBench } from "./feed.ts";
import { type HistoryFigures, historyBench } from "./history.ts";
import { grow } from "./seed.ts";
import { type WebhookFigures, webhookBench } from "./webhooks.ts";

const { values: args } = parseArgs({
  options: {
    database: { type: "string" },
    devices: { type: "string", default: "10000" },
    interfaces: { type: "string", default: "20" },
    ips: { type: "string", default: "100000" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    "webhook-changes": { type: "string", default: "200" },
    "webhook-bulk": { type: "string", default: "500" },
    // Issue 26: changes read through the change feed, and writes timed to the change stream.
    "feed-changes": { type: "string", default: "50000" },
    "history-changes": { type: "string", default: "100000" },
    "feed-writes": { type: "string", default: "200" },
    "only-webhooks": { type: "boolean", default: false },
    // Only the request scenarios whose name contains one of these comma-separated texts (and the floor);
    // no bulk or webhook figures.
    only: { type: "string" },
    // Issue 13: re-run the REST read and write scenarios against `serve --workers N` for each N listed.
    processes: { type: "string", default: "1" },
    // Issue 13: serve with `--database-replica` on a throwaway primary and streaming replica (pg_basebackup).
    replica: { type: "boolean", default: false },
  },
});

const log = (s: string) => process.stdout.write(`${s}\n`);
const reg = registry();
let dbUrl = args.database;
let sqliteFile: string | undefined;
let replicaUrl: string | undefined;
let pair: ReplicaPair | undefined;
if (args.replica) {
  pair = startReplicaPair(46000 + Math.floor(Math.random() * 4000) * 2);
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  dbUrl = `${pair.primaryUrl}?schema=${schema}`;
  replicaUrl = `${pair.replicaUrl}?schema=${schema}`;
} else if (!dbUrl) {
  sqliteFile = join(tmpdir(), `inventory-bench-${Date.now()}.sqlite3`);
  dbUrl = `sqlite:${sqliteFile}`;
} else if (dbUrl.startsWith("postgres")) {
  // A fresh schema per run, replacing any schema the given URL names (it is dropped at the end).
  const url = new URL(dbUrl);
  url.searchParams.set("schema", `bench_${randomBytes(4).toString("hex")}`);
  dbUrl = url.toString();
}
const engine = dbUrl.startsWith("sqlite") ? "sqlite" : "postgres";
log(`# benchmark on ${engine} (${dbUrl})`);

const store = await openStore(dbUrl);
await migrate(store, reg);

// 1. NetBox demo import, timed.
let importSeconds: number | null = null;
try {
  const { importNetbox } = await import("../src/importer/netbox/run.ts");
  const { DEMO_FILE: file } = await import("../src/importer/demo.ts");
  const t0 = performance.now();
  const devnull = { write: () => true, isTTY: false } as unknown as NodeJS.WritableStream;
  await importNetbox({ store, reg, file, strict: false, out: devnull });
  importSeconds = (performance.now() - t0) / 1000;
  log(`demo import: ${importSeconds.toFixed(2)} s`);
} catch (e) {
  log(`demo import unavailable: ${(e as Error).message}`);
}

// 2. Synthetic growth.
const t1 = performance.now();
const { prefix } = await grow(
  store,
  reg,
  { devices: Number(args.devices), interfacesPerDevice: Number(args.interfaces), ips: Number(args.ips) },
  log,
);
log(`growth: ${((performance.now() - t1) / 1000).toFixed(1)} s`);
// PostgreSQL plans from table statistics, which autovacuum gathers some time after a bulk load; measured
// before it has, lists of interfaces and IPs were planned as if their tables were empty (2–4× slower).
// A production database has them, so the benchmark gathers them now. SQLite is left as it is: it keeps
// no statistics unless ANALYZE is run, and this is how it serves.
if (engine === "postgres") {
  const tables = await sql<{
    t: string;
  }>`SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()`.execute(store.db);
  for (const { t } of tables.rows) await sql`ANALYZE ${sql.table(t)}`.execute(store.db);
}

// 3. A token, and ids to ask for.
const benchUser = `bench-${randomBytes(4).toString("hex")}`;
const benchPassword = randomBytes(12).toString("hex");
const { id: userId } = await ensureSuperuser(store, benchUser, benchPassword);
const token = await createToken(store, userId, { description: "bench" });
const device = await store.db
  .selectFrom("dcim_device")
  .select("id")
  .where("name", "like", "%leaf-0001")
  .executeTakeFirstOrThrow();
const counts = await sql<{
  d: number;
  i: number;
  a: number;
}>`SELECT (SELECT count(*) FROM dcim_device) AS d, (SELECT count(*) FROM dcim_interface) AS i, (SELECT count(*) FROM ipam_ipaddress) AS a`.execute(
  store.db,
);
log(`seeded: ${JSON.stringify(counts.rows[0])}`);
const bulkInterfaces = (
  await store.db.selectFrom("dcim_interface").select("id").orderBy("id").limit(1000).execute()
).map((r) => r.id as string);
await store.close();

// 4. Server in a child process.
const port = 18000 + Math.floor(Math.random() * 1000);
/** Start `inventory serve` on `port` with extra flags, in a child process; resolves once it listens. */
async function startServe(at: number, extra: string[]): Promise<ChildProcess> {
  const server = spawn(
    process.execPath,
    ["bin/inventory.js", "serve", "--port", String(at), "--database", dbUrl!, ...extra],
    { env: { ...process.env, INVENTORY_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("listening")) resolve();
    });
    server.on("exit", (c) => reject(new Error(`server exited ${c}`)));
  });
  return server;
}
const child = await startServe(port, replicaUrl ? ["--database-replica", replicaUrl] : []);
const base = `http://127.0.0.1:${port}`;
const headers = {
  Authorization: `Token ${token}`,
  Accept: "application/json",
  "Content-Type": "application/json",
};

/** POST through the API (bench setup); throws on a non-2xx answer. */
const post = async (path: string, body: unknown): Promise<any> => {
  const r = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
};
// Issue 9 scenarios: a /16 to allocate from, and a patch-panel path to trace
// (interface → front port → rear port → trunk → rear port → front port → interface).
const allocParent = await post("/api/ipam/prefixes/", { prefix: "10.200.0.0/16", status: "active" });
const traceOrigin = await (async () => {
  const site = await post("/api/dcim/sites/", { name: "Bench paths", status: "active" });
  const man = await post("/api/dcim/manufacturers/", { name: "Bench paths maker" });
  const dt = await post("/api/dcim/device-types/", { model: "Bench paths type", manufacturer: man.id });
  const role = await post("/api/dcim/device-roles/", { name: "Bench paths role" });
  const dev = async (name: string) =>
    post("/api/dcim/devices/", {
      name,
      site: site.id,
      device_type: dt.id,
      device_role: role.id,
      status: "active",
    });
  const [a, b, p1, p2] = [await dev("bp-a"), await dev("bp-b"), await dev("bp-pp1"), await dev("bp-pp2")];
  const ia = await post("/api/dcim/interfaces/", { device: a.id, name: "e1", type: "1000base-t" });
  const ib = await post("/api/dcim/interfaces/", { device: b.id, name: "e1", type: "1000base-t" });
  const ports = async (d: { id: string }) => {
    const rear = await post("/api/dcim/rear-ports/", { device: d.id, name: "r1", type: "lc", positions: 1 });
    const front = await post("/api/dcim/front-ports/", {
      device: d.id,
      name: "f1",
      type: "lc",
      rear_port: rear.id,
    });
    return { rear, front };
  };
  const [x, y] = [await ports(p1), await ports(p2)];
  const cable = (at: string, aid: string, bt: string, bid: string) =>
    post("/api/dcim/cables/", {
      termination_a_type: at,
      termination_a_id: aid,
      termination_b_type: bt,
      termination_b_id: bid,
      status: "connected",
    });
  await cable("dcim.interface", ia.id, "dcim.frontport", x.front.id);
  await cable("dcim.rearport", x.rear.id, "dcim.rearport", y.rear.id);
  await cable("dcim.frontport", y.front.id, "dcim.interface", ib.id);
  return ia.id as string;
})();
// Issue 10 scenarios: a web session, and a device with 500 interfaces for its page.
const uiCookie = await (async () => {
  const page = await fetch(`${base}/login/`);
  let cookie = (page.headers.getSetCookie().find((c) => c.startsWith("sessionid=")) ?? "").split(";")[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const r = await fetch(`${base}/login/`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ _csrf: csrf, username: benchUser, password: benchPassword, next: "/" }),
    redirect: "manual",
  });
  cookie = (
    r.headers
      .getSetCookie()
      .filter((c) => c.startsWith("sessionid=") && !c.startsWith("sessionid=;"))
      .pop() ?? cookie
  ).split(";")[0]!;
  if (r.status !== 302) throw new Error(`UI login: ${r.status}`);
  return cookie;
})();
const bigDevice = await (async () => {
  const site = await post("/api/dcim/sites/", { name: "Bench UI", status: "active" });
  const man = await post("/api/dcim/manufacturers/", { name: "Bench UI maker" });
  const dt = await post("/api/dcim/device-types/", { model: "Bench UI chassis", manufacturer: man.id });
  const role = await post("/api/dcim/device-roles/", { name: "Bench UI role" });
  const d = await post("/api/dcim/devices/", {
    name: "bench-chassis",
    site: site.id,
    device_type: dt.id,
    device_role: role.id,
    status: "active",
  });
  await post(
    "/api/dcim/interfaces/",
    Array.from({ length: 500 }, (_, i) => ({
      device: d.id,
      name: `et-${Math.floor(i / 48)}/0/${i % 48}`,
      type: "10gbase-x-sfpp",
    })),
  );
  return d.id as string;
})();
// Issue 25: a 48-port switch for the device page and its tabs: half its interfaces cabled to a second
// switch, each cabled one with an IP address; front/rear ports, console and power ports, a note.
const tabDevice = await (async () => {
  const site = await post("/api/dcim/sites/", { name: "Bench tabs", status: "active" });
  const man = await post("/api/dcim/manufacturers/", { name: "Bench tabs maker" });
  const dt = await post("/api/dcim/device-types/", { model: "Bench tabs 48", manufacturer: man.id });
  const role = await post("/api/dcim/device-roles/", { name: "Bench tabs role" });
  const dev = (name: string) =>
    post("/api/dcim/devices/", {
      name,
      site: site.id,
      device_type: dt.id,
      device_role: role.id,
      status: "active",
    });
  const [a, b] = [await dev("bench-tabs-a"), await dev("bench-tabs-b")];
  const ports = (d: { id: string }) =>
    post(
      "/api/dcim/interfaces/",
      Array.from({ length: 48 }, (_, i) => ({ device: d.id, name: `ge-0/0/${i}`, type: "1000base-t" })),
    );
  const [ia, ib] = [await ports(a), await ports(b)];
  for (let i = 0; i < 24; i++) {
    await post("/api/dcim/cables/", {
      termination_a_type: "dcim.interface",
      termination_a_id: ia[i].id,
      termination_b_type: "dcim.interface",
      termination_b_id: ib[i].id,
      status: "connected",
    });
    await post("/api/ipam/ip-addresses/", {
      address: `10.248.${i}.1/31`,
      status: "active",
      assigned_object_type: "dcim.interface",
      assigned_object_id: ia[i].id,
    });
  }
  for (let i = 0; i < 4; i++) {
    const rear = await post("/api/dcim/rear-ports/", {
      device: a.id,
      name: `r${i}`,
      type: "lc",
      positions: 1,
    });
    await post("/api/dcim/front-ports/", { device: a.id, name: `f${i}`, type: "lc", rear_port: rear.id });
  }
  await post("/api/dcim/console-ports/", { device: a.id, name: "con0", type: "rj-45" });
  await post("/api/dcim/power-ports/", { device: a.id, name: "psu0", type: "iec-60320-c14" });
  await post("/api/dcim/power-ports/", { device: a.id, name: "psu1", type: "iec-60320-c14" });
  await post("/api/extras/notes/", {
    note: "Bench note",
    assigned_object_type: "dcim.device",
    assigned_object_id: a.id,
  });
  return a.id as string;
})();

interface Scenario {
  name: string;
  path: string;
  method?: "GET" | "POST";
  /** Extra headers (the web pages' session cookie). */
  headers?: Record<string, string>;
  /** Concurrent connections (default: 2 for 1,000-row pages, else --connections); 1 measures render time. */
  connections?: number;
  rows: number;
  body?: () => string;
}
let ipSeq = 0;
// Issue 26: the ETag of the 1,000-device page, for its revalidation (If-None-Match answered 304 unchanged).
const pageTag =
  (await fetch(`${base}/api/dcim/devices/?limit=1000`, { headers }).then(async (r) => {
    await r.arrayBuffer();
    return r.headers.get("etag");
  })) ?? "";
const scenarios: Scenario[] = [
  { name: "framework floor (GET /health)", path: "/health", rows: 0 },
  { name: "GET one device (full)", path: `/api/dcim/devices/${device.id}/`, rows: 1 },
  { name: "GET one device (brief)", path: `/api/dcim/devices/${device.id}/?brief=1`, rows: 1 },
  { name: "GET devices limit=50", path: "/api/dcim/devices/?limit=50", rows: 50 },
  { name: "GET devices limit=1000", path: "/api/dcim/devices/?limit=1000", rows: 1000 },
  {
    name: "GET devices limit=1000 revalidated (If-None-Match, 304)",
    path: "/api/dcim/devices/?limit=1000",
    headers: { ...headers, "If-None-Match": pageTag },
    rows: 1000,
  },
  {
    name: "GET interfaces device_id limit=1000",
    path: `/api/dcim/interfaces/?device_id=${device.id}&limit=1000`,
    rows: Number(args.interfaces),
  },
  { name: `GET ip-addresses parent=${prefix}`, path: `/api/ipam/ip-addresses/?parent=${prefix}`, rows: 50 },
  {
    name: "POST one IP address",
    path: "/api/ipam/ip-addresses/",
    method: "POST",
    rows: 1,
    body: () => {
      ipSeq++;
      return JSON.stringify({
        address: `172.${16 + Math.floor(ipSeq / 65536)}.${Math.floor(ipSeq / 256) % 256}.${ipSeq % 256}/12`,
        status: "active",
      });
    },
  },
  {
    name: "POST available-ips (one address)",
    path: `/api/ipam/prefixes/${allocParent.id}/available-ips/`,
    method: "POST",
    rows: 1,
    body: () => JSON.stringify({ status: "active" }),
  },
  {
    name: "GET trace (patch-panel path, 3 segments)",
    path: `/api/dcim/interfaces/${traceOrigin}/trace/`,
    rows: 3,
  },
  {
    // Issue 11: the inventory query of 1,000 devices with their related objects, one query per relation.
    name: "GraphQL 1,000 devices (site, rack, role, type, platform, tenant, primary IP)",
    path: "/api/graphql/",
    method: "POST",
    connections: 1,
    rows: 1000,
    body: () =>
      JSON.stringify({
        query:
          "{ devices(limit: 1000) { name site { name } rack { name } device_role { name } device_type { model } platform { name napalm_driver } tenant { name } primary_ip4 { address host } } }",
      }),
  },
  {
    name: "UI device list page (1,000 rows)",
    path: "/dcim/devices/?limit=1000",
    headers: { cookie: uiCookie, accept: "text/html" },
    connections: 1,
    rows: 1000,
  },
  {
    name: "UI device page (500 interfaces)",
    path: `/dcim/devices/${bigDevice}/`,
    headers: { cookie: uiCookie, accept: "text/html" },
    connections: 1,
    rows: 1,
  },
  // Issue 25: the device page of a 48-port switch and each of its tabs (one connection: one request's time).
  ...[
    "",
    "interfaces/",
    "front-ports/",
    "rear-ports/",
    "console-ports/",
    "power-ports/",
    "config-context/",
    "notes/",
    "changelog/",
  ].map(
    (tab): Scenario => ({
      name: `UI device page tab ${tab || "main"} (48 interfaces)`,
      path: `/dcim/devices/${tabDevice}/${tab}`,
      headers: { cookie: uiCookie, accept: "text/html" },
      connections: 1,
      rows: tab === "interfaces/" ? 48 : 1,
    }),
  ),
  // Issue 25: the trace page of the patch-panel path (drawn as SVG), against its API trace above.
  {
    name: "UI trace page (patch-panel path, 3 segments)",
    path: `/dcim/interfaces/${traceOrigin}/trace/`,
    headers: { cookie: uiCookie, accept: "text/html" },
    connections: 1,
    rows: 1,
  },
  {
    name: "UI interface list of that device (500 rows)",
    path: `/dcim/interfaces/?device_id=${bigDevice}&limit=500`,
    headers: { cookie: uiCookie, accept: "text/html" },
    connections: 1,
    rows: 500,
  },
  // Issue 25 performance: the HTML list of 1,000 interfaces against the API's page of the same rows (one
  // connection each, so p50 is one request's time), and the forms' typeahead lookups.
  {
    name: "API interfaces limit=1000 (1 connection)",
    path: "/api/dcim/interfaces/?limit=1000",
    connections: 1,
    rows: 1000,
  },
  {
    name: "UI interface list (1,000 rows)",
    path: "/dcim/interfaces/?limit=1000",
    headers: { cookie: uiCookie, accept: "text/html" },
    connections: 1,
    rows: 1000,
  },
  {
    name: "UI lookup device by name, many matches (q=leaf-01)",
    path: "/ui-api/lookup/?model=dcim.device&q=leaf-01",
    headers: { cookie: uiCookie, accept: "application/json" },
    connections: 1,
    rows: 50,
  },
  {
    name: "UI lookup device by name, one match (q=fra01-leaf-0123)",
    path: "/ui-api/lookup/?model=dcim.device&q=fra01-leaf-0123",
    headers: { cookie: uiCookie, accept: "application/json" },
    connections: 1,
    rows: 1,
  },
  {
    name: "UI lookup device by name, no match (q=zzz)",
    path: "/ui-api/lookup/?model=dcim.device&q=zzz",
    headers: { cookie: uiCookie, accept: "application/json" },
    connections: 1,
    rows: 0,
  },
  {
    name: "UI lookup interfaces of one device",
    path: `/ui-api/lookup/?model=dcim.interface&device_id=${device.id}`,
    headers: { cookie: uiCookie, accept: "application/json" },
    connections: 1,
    rows: Number(args.interfaces),
  },
  {
    name: "UI lookup interfaces of one device (q=xe-0/0/1)",
    path: `/ui-api/lookup/?model=dcim.interface&device_id=${device.id}&q=${encodeURIComponent("xe-0/0/1")}`,
    headers: { cookie: uiCookie, accept: "application/json" },
    connections: 1,
    rows: 11,
  },
];

// The SQL statements one GraphQL request runs (its X-SQL-Queries header), for the note.
for (const sc of scenarios.filter((x) => x.path === "/api/graphql/")) {
  const r = await fetch(`${base}${sc.path}`, { method: "POST", headers, body: sc.body!() });
  const body = (await r.json()) as { data?: { devices?: unknown[] } };
  log(
    `  ${sc.name}: ${body.data?.devices?.length ?? 0} devices in ${r.headers.get("x-sql-queries")} SQL queries`,
  );
}

/** CPU ticks (user + system) by process id: the server `pid` and every process named `postgres`. */
function cpuTicks(pid: number | undefined): Map<number, { ticks: number; database: boolean }> {
  const out = new Map<number, { ticks: number; database: boolean }>();
  let dirs: string[] = [];
  try {
    dirs = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return out; // no /proc
  }
  for (const d of dirs) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const database = stat.includes("(postgres)");
      if (!database && Number(d) !== pid) continue;
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(d), { ticks: Number(f[11]) + Number(f[12]), database }); // utime, stime
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/**
 * CPU time in ms used between two `cpuTicks` samples by the server and by PostgreSQL's processes (a process
 * that ended in between is not counted, one that started is counted whole; USER_HZ is 100 on Linux).
 */
function cpuBetween(
  before: ReturnType<typeof cpuTicks>,
  after: ReturnType<typeof cpuTicks>,
): { server: number; database: number } {
  let server = 0;
  let database = 0;
  for (const [pid, a] of after) {
    const d = a.ticks - (before.get(pid)?.ticks ?? 0);
    if (a.database) database += d;
    else server += d;
  }
  return { server: server * 10, database: database * 10 };
}

const results: Array<Record<string, unknown>> = [];
/**
 * Drive one scenario against `url` with autocannon; record and print its figures under `name`: requests/s,
 * latency, and the CPU time per request of the server process and of PostgreSQL (ms; steadier than
 * requests/s on a small shared machine, where autocannon competes for the same cores).
 */
async function drive(sc: Scenario, url: string, connections: number, name = sc.name): Promise<void> {
  const before = cpuTicks(child.pid);
  const r = await autocannon({
    url,
    method: sc.method ?? "GET",
    headers: sc.headers ?? headers,
    connections,
    duration: Number(args.duration),
    ...(sc.body
      ? {
          requests: [
            { method: sc.method ?? "GET", setupRequest: (req: any) => ({ ...req, body: sc.body!() }) },
          ],
        }
      : {}),
  } as any);
  const used = cpuBetween(before, cpuTicks(child.pid));
  const rps = r.requests.average;
  const served = Math.max(1, r.requests.total);
  // Per request, when this scenario ran against the bench's own server (not a `--workers N` one).
  const own = url.startsWith(base);
  const serverCpu = own ? used.server / served : null;
  const databaseCpu = engine === "postgres" ? used.database / served : null;
  results.push({
    scenario: name,
    rps,
    p50: r.latency.p50,
    p99: r.latency.p99,
    rowsPerSec: rps * sc.rows,
    non2xx: r.non2xx,
    errors: r.errors,
    serverCpuMs: serverCpu,
    databaseCpuMs: databaseCpu,
  });
  const cpu = [
    serverCpu === null ? "" : ` server ${serverCpu.toFixed(3)}`,
    databaseCpu === null ? "" : ` database ${databaseCpu.toFixed(3)}`,
  ].join("");
  log(
    `  ${name}: ${rps.toFixed(0)} req/s p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms${cpu ? `; CPU ms/request${cpu}` : ""}${r.non2xx ? ` (non-2xx ${r.non2xx})` : ""}`,
  );
}
const only = args.only?.split(",").map((x) => x.trim().toLowerCase());
const chosen = args["only-webhooks"]
  ? scenarios.slice(0, 1)
  : only
    ? scenarios.filter((x, i) => i === 0 || only.some((o) => x.name.toLowerCase().includes(o)))
    : scenarios;
for (const sc of chosen)
  await drive(sc, `${base}${sc.path}`, sc.connections ?? (sc.rows >= 1000 ? 2 : Number(args.connections)));

// 4b. The REST scenarios again with N API processes (`serve --workers N`), for each N > 1 of --processes.
const REST = new Set([
  "GET one device (full)",
  "GET devices limit=50",
  "GET interfaces device_id limit=1000",
  `GET ip-addresses parent=${prefix}`,
  "POST one IP address",
]);
for (const n of String(args.processes)
  .split(",")
  .map(Number)
  .filter((x) => x > 1)) {
  const pport = port + 100 + n;
  const multi = await startServe(pport, ["--workers", String(n), "--no-worker"]);
  for (const sc of scenarios.filter((x) => REST.has(x.name)))
    await drive(
      sc,
      `http://127.0.0.1:${pport}${sc.path}`,
      Math.max(Number(args.connections), 4 * n),
      `${sc.name} [${n} processes]`,
    );
  multi.kill("SIGTERM");
  await new Promise((r) => multi.once("exit", r));
}

// 5. Bulk writes: one request each, timed (issue 5): 1,000 IP addresses and 1,000 tenants created, 1,000
// interfaces patched.
const bulkResults: Array<{ scenario: string; seconds: number; rowsPerSec: number; status: number }> = [];
const timed = async (scenario: string, method: string, path: string, body: unknown, rows: number) => {
  const t0 = performance.now();
  const r = await fetch(`${base}${path}`, { method, headers, body: JSON.stringify(body) });
  await r.arrayBuffer();
  const seconds = (performance.now() - t0) / 1000;
  bulkResults.push({ scenario, seconds, rowsPerSec: rows / seconds, status: r.status });
  log(`  ${scenario}: ${seconds.toFixed(2)} s, ${(rows / seconds).toFixed(0)} rows/s (HTTP ${r.status})`);
};
if (!args["only-webhooks"] && (!only || only.some((o) => o.includes("bulk")))) {
  await timed(
    "bulk POST 1,000 IP addresses",
    "POST",
    "/api/ipam/ip-addresses/",
    Array.from({ length: 1000 }, (_, i) => ({
      address: `100.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}/10`,
      status: "active",
    })),
    1000,
  );
  // A model with uniqueness checks (name and slug): every item reads before it writes.
  await timed(
    "bulk POST 1,000 tenants (uniqueness checks)",
    "POST",
    "/api/tenancy/tenants/",
    Array.from({ length: 1000 }, (_, i) => ({ name: `bench tenant ${i}` })),
    1000,
  );
  await timed(
    `bulk PATCH ${bulkInterfaces.length} interfaces`,
    "PATCH",
    "/api/dcim/interfaces/",
    bulkInterfaces.map((id, i) => ({ id, description: `bulk ${i}` })),
    bulkInterfaces.length,
  );
  // Issue 26: the same with every item naming its version (`_version`, from each interface's ETag).
  const versions = new Map<string, number>();
  for (const id of bulkInterfaces) {
    const r = await fetch(`${base}/api/dcim/interfaces/${id}/?brief=1`, { headers });
    await r.arrayBuffer();
    versions.set(id, Number(/:(\d+)"$/.exec(r.headers.get("etag") ?? "")?.[1] ?? 1));
  }
  await timed(
    `bulk PATCH ${bulkInterfaces.length} interfaces with _version`,
    "PATCH",
    "/api/dcim/interfaces/",
    bulkInterfaces.map((id, i) => ({ id, _version: versions.get(id), description: `bulk v ${i}` })),
    bulkInterfaces.length,
  );
}

// 5b. History (issue 27): 100,000 recorded changes, then the 1,000-device page live and at a point, and the
// disk history takes.
let historyResult: HistoryFigures | null = null;
if (!args["only-webhooks"] && (!only || only.some((o) => o.includes("history")))) {
  historyResult = await historyBench(base, headers, dbUrl, bulkInterfaces, {
    changes: Number(args["history-changes"]),
    samples: 15,
  });
  const h = historyResult;
  log(
    `  history: ${h.changes} changes recorded in ${h.writeSeconds.toFixed(1)} s; devices limit=1000 live ${h.liveMs.toFixed(1)} ms, as_of_seq=${h.point} ${h.asOfMs.toFixed(1)} ms (${h.ratio.toFixed(2)}×); history on disk ${(h.bytesBefore / 1e6).toFixed(1)} → ${(h.bytesAfter / 1e6).toFixed(1)} MB, ${(h.bytesPer100k / 1e6).toFixed(1)} MB per 100,000 changes`,
  );
}

// 6. Webhooks: commit-to-delivery latency and deliveries/s with a local receiver.
const webhookResults: WebhookFigures[] = [];
for (const n of only ? [] : [1, 10]) {
  const w = await webhookBench(base, headers, n, {
    changes: Number(args["webhook-changes"]),
    bulk: Number(args["webhook-bulk"]),
  });
  webhookResults.push(w);
  log(
    `  webhooks ×${n}: commit→delivery p50 ${w.p50Ms} ms p99 ${w.p99Ms} ms; ${w.deliveriesPerSec.toFixed(0)} deliveries/s`,
  );
}
// 7. Change feed (issue 26): 50,000 changes read through the feed in pages of 1,000, and commit-to-stream
// latency with the stream on this server and the writes through a second process.
let feedResult: FeedFigures | null = null;
if (!args["only-webhooks"] && (!only || only.some((o) => o.includes("feed")))) {
  const wport = port + 200;
  const writer = await startServe(wport, ["--no-worker"]);
  feedResult = await feedBench(base, `http://127.0.0.1:${wport}`, headers, {
    want: Number(args["feed-changes"]),
    writes: Number(args["feed-writes"]),
    ...(child.pid === undefined ? {} : { serverPid: child.pid }),
  });
  writer.kill("SIGTERM");
  await new Promise((r) => writer.once("exit", r));
  log(
    `  change feed: ${feedResult.changesRead} changes read in ${feedResult.readSeconds.toFixed(2)} s, ${feedResult.changesPerSec.toFixed(0)} changes/s (warm walk ${feedResult.warmChangesPerSec.toFixed(0)}/s; server CPU per page cold ${feedResult.coldCpuMsPerPage?.toFixed(1)} ms, warm ${feedResult.warmCpuMsPerPage?.toFixed(1)} ms: ${feedResult.coldChangesPerCpuSec?.toFixed(0)} and ${feedResult.warmChangesPerCpuSec?.toFixed(0)} changes per CPU-second); commit→stream (2 processes) p50 ${feedResult.streamP50Ms} ms p99 ${feedResult.streamP99Ms} ms (${feedResult.streamEvents} events)`,
  );
}
child.kill("SIGTERM");

const floor = Number(results[0]!.rps) || 1;
const table = new Table({
  head: ["scenario", "req/s", "p50 ms", "p99 ms", "rows/s", "× floor", "CPU ms/req server", "database"],
});
const ms = (v: unknown) => (typeof v === "number" ? v.toFixed(3) : "");
for (const r of results) {
  table.push([
    String(r.scenario),
    Number(r.rps).toFixed(0),
    String(r.p50),
    String(r.p99),
    Number(r.rowsPerSec).toFixed(0),
    (Number(r.rps) / floor).toFixed(3),
    ms(r.serverCpuMs),
    ms(r.databaseCpuMs),
  ]);
}
table.push([
  "NetBox demo import (s)",
  importSeconds === null ? "n/a" : importSeconds.toFixed(2),
  "",
  "",
  "",
  "",
  "",
  "",
]);
log(table.toString());
const wtable = new Table({ head: ["webhooks matching", "commit→delivery p50 ms", "p99 ms", "deliveries/s"] });
for (const w of webhookResults)
  wtable.push([String(w.webhooks), String(w.p50Ms), String(w.p99Ms), w.deliveriesPerSec.toFixed(0)]);
log(wtable.toString());
if (feedResult) {
  const ftable = new Table({
    head: ["change feed", "changes/s (pages of 1,000)", "commit→stream p50 ms", "p99 ms"],
  });
  ftable.push([
    `${feedResult.changesRead} changes`,
    feedResult.changesPerSec.toFixed(0),
    String(feedResult.streamP50Ms),
    String(feedResult.streamP99Ms),
  ]);
  log(ftable.toString());
}
mkdirSync("bench/results", { recursive: true });
const out = join(
  "bench/results",
  `${new Date().toISOString().slice(0, 10)}-${engine}${replicaUrl ? "-replica" : ""}${only ? "-partial" : ""}.json`,
);
writeFileSync(
  out,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      engine,
      seeded: counts.rows[0],
      importSeconds,
      node: process.version,
      results,
      bulk: bulkResults,
      webhooks: webhookResults,
      feed: feedResult,
      history: historyResult,
    },
    null,
    2,
  ),
);
log(`written ${out}`);
if (sqliteFile) for (const s of ["", "-wal", "-shm"]) rmSync(`${sqliteFile}${s}`, { force: true });
if (pair) pair.stop();
else if (engine === "postgres") {
  const schema = new URL(dbUrl).searchParams.get("schema");
  const adminUrl = new URL(dbUrl);
  adminUrl.searchParams.delete("schema");
  const admin = await openStore(adminUrl.toString());
  await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(admin.db);
  await sql.raw(`DROP SCHEMA IF EXISTS "${schema}_asof" CASCADE`).execute(admin.db);
  await admin.close();
}
process.exit(0);
