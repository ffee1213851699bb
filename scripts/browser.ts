/**
 * The browser suite (issue 10): makes sure Debian's Chromium is installed (`apt-get install chromium` when
 * `/usr/bin/chromium` is missing; never a downloaded browser), then runs `test/browser/` with playwright-core
 * on SQLite. BROWSER=0 in the test command skips it. Exits non-zero on failure.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  process.stdout.write(`# ${CHROMIUM} missing: apt-get install chromium\n`);
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const apt = (...args: string[]) =>
    spawnSync(sudo.length ? "sudo" : "apt-get", [...(sudo.length ? ["apt-get"] : []), ...args], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  let r = apt("install", "-y", "-q", "chromium");
  // A new machine may have no package lists yet: read them once, then try again.
  if (r.status !== 0) {
    apt("update", "-q");
    r = apt("install", "-y", "-q", "chromium");
  }
  if (r.status !== 0 || !existsSync(CHROMIUM)) {
    process.stdout.write("# could not install Chromium\n");
    process.exit(1);
  }
}
const tests = readdirSync("test/browser")
  .filter((n) => n.endsWith(".test.ts"))
  .map((n) => join("test/browser", n));
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=1", "--test-reporter=spec", ...tests], {
  stdio: "inherit",
  env: { ...process.env, TEST_DB: process.env.TEST_DB ?? "sqlite" },
});
process.exit(r.status ?? 1);
