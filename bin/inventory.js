#!/usr/bin/env node
// Entry point of the `inventory` command. The service needs Node >= 24 (node:sqlite, TypeScript type
// stripping); when started by an older system Node, re-run with the Node 24 pinned in devDependencies.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  const pinned = join(here, "..", "node_modules", "node", "bin", "node");
  if (!existsSync(pinned)) {
    console.error("inventory: Node >= 24 is required; run `npm install` to get the pinned Node 24.");
    process.exit(2);
  }
  const r = spawnSync(pinned, [join(here, "inventory.js"), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") console.error(w);
});
await import("../src/main.ts");
