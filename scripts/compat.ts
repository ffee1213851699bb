/**
 * `npm run compat` (also a step of `npm test` unless COMPAT=0): the real clients users run against Nautobot,
 * against a freshly started `inventory serve` on each engine (issue 9). Builds `.venv-compat/` from
 * `compat/requirements.txt` (pynautobot 1.5.5, ansible-core 2.15, pytest) and installs the vendored Ansible
 * collection networktocode.nautobot 4.5.1 into it, then runs `pytest compat/` once per engine with
 * NAUTOBOT_URL and NAUTOBOT_TOKEN set. COMPAT_DB=sqlite|postgres picks one engine. Exits non-zero on failure.
 */

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sql } from "kysely";
import { registry } from "../src/registry/index.ts";
import { createToken, ensureSuperuser } from "../src/service/accounts.ts";
import { openStore } from "../src/store/db.ts";
import { migrate } from "../src/store/migrate.ts";
import { waitForOutput } from "../test/helpers/process.ts";

const venv = resolve(".venv-compat");
const collections = join(venv, "collections");
const requirements = readFileSync("compat/requirements.txt", "utf8");
const collection = "compat/vendor/networktocode-nautobot-4.5.1.tar.gz";
const stamp = createHash("sha256").update(requirements).update(readFileSync(collection)).digest("hex");
const stampFile = join(venv, ".stamp");
if (!existsSync(stampFile) || readFileSync(stampFile, "utf8") !== stamp) {
  process.stdout.write(
    `# building ${venv} (pynautobot, ansible-core, the networktocode.nautobot collection)\n`,
  );
  rmSync(venv, { recursive: true, force: true });
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(join(venv, "bin", "pip"), ["install", "-q", "-r", "compat/requirements.txt"], {
    stdio: "inherit",
  });
  execFileSync(
    join(venv, "bin", "ansible-galaxy"),
    ["collection", "install", "-p", collections, collection],
    {
      stdio: "inherit",
    },
  );
  writeFileSync(stampFile, stamp);
}

/** Start `inventory serve` on a fresh database of `engine`; returns its URL, token and a stop function. */
async function serve(engine: string): Promise<{ url: string; token: string; stop: () => Promise<void> }> {
  let url: string;
  let cleanup: () => Promise<void>;
  if (engine === "postgres") {
    const base = process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const schema = `compat_${Date.now()}`;
    url = `${base}${base.includes("?") ? "&" : "?"}schema=${schema}`;
    cleanup = async () => {
      const admin = await openStore(base);
      await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(admin.db);
      await admin.close();
    };
  } else {
    const file = join(tmpdir(), `inventory-compat-${Date.now()}.sqlite3`);
    url = `sqlite:${file}`;
    cleanup = async () => {
      for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
    };
  }
  const store = await openStore(url);
  await migrate(store, registry());
  const { id } = await ensureSuperuser(store, "admin", "admin-password");
  const token = await createToken(store, id);
  await store.close();
  const port = 19100 + Math.floor(Math.random() * 300);
  const server = spawn(
    process.execPath,
    ["bin/inventory.js", "serve", "--port", String(port), "--database", url, "--no-worker"],
    {
      env: { ...process.env, INVENTORY_LOG_LEVEL: process.env.COMPAT_LOG ?? "error" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  await waitForOutput(server, "listening");
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    stop: async () => {
      server.kill("SIGTERM");
      await new Promise((r) => server.once("exit", r));
      await cleanup();
    },
  };
}

const engines = process.env.COMPAT_DB ? [process.env.COMPAT_DB] : ["sqlite", "postgres"];
let failed = false;
for (const engine of engines) {
  process.stdout.write(`\n# compat (pynautobot 1.5.5, networktocode.nautobot 4.5.1) on ${engine}\n`);
  const s = await serve(engine);
  try {
    const r = spawnSync(join(venv, "bin", "pytest"), ["-q", "-p", "no:cacheprovider", "compat/"], {
      stdio: "inherit",
      env: {
        ...process.env,
        PATH: `${join(venv, "bin")}:${process.env.PATH}`,
        NAUTOBOT_URL: s.url,
        NAUTOBOT_TOKEN: s.token,
        ANSIBLE_COLLECTIONS_PATH: collections,
        ANSIBLE_LOCAL_TEMP: join(tmpdir(), "compat-ansible-tmp"),
        ANSIBLE_HOME: join(tmpdir(), "compat-ansible-home"),
        PYTHONDONTWRITEBYTECODE: "1",
      },
    });
    if (r.status !== 0) failed = true;
  } finally {
    await s.stop();
  }
}
process.exit(failed ? 1 : 0);
