/**
 * `npm run compat` (also a step of `npm test` unless COMPAT=0): the real clients users run against Nautobot,
 * against a server on a fresh database of each engine (issue 9; the test helper's `startServer`). Builds `.venv-compat/` from
 * `compat/requirements.txt` (pynautobot 1.5.5, ansible-core 2.15, pytest) and installs the vendored Ansible
 * collection networktocode.nautobot 4.5.1 into it, then runs `pytest compat/` once per engine with
 * NAUTOBOT_URL and NAUTOBOT_TOKEN set. COMPAT_DB=sqlite|postgres picks one engine. Exits non-zero on failure.
 */

import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startServer } from "../test/helpers/server.ts";

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

const engines = process.env.COMPAT_DB ? [process.env.COMPAT_DB] : ["sqlite", "postgres"];
let failed = false;
for (const engine of engines) {
  process.stdout.write(`\n# compat (pynautobot 1.5.5, networktocode.nautobot 4.5.1) on ${engine}\n`);
  // The server runs in this process (the test helper's fresh database); pytest runs beside it.
  const s = await startServer({}, { engine: engine as "sqlite" | "postgres" });
  try {
    const pytest = spawn(join(venv, "bin", "pytest"), ["-q", "-p", "no:cacheprovider", "compat/"], {
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
    const code = await new Promise<number | null>((done) => pytest.on("close", done));
    if (code !== 0) failed = true;
  } finally {
    await s.close();
  }
}
process.exit(failed ? 1 : 0);
