#!/usr/bin/env node
// Entry point of the `inventory` command. The service needs Node >= 24 (node:sqlite, TypeScript type
// stripping); when started by an older system Node, re-run with the Node 24 pinned in devDependencies.
import { spawn } from "node:child_process";
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
  // Forward termination signals to the real process and leave with its exit code (or its signal), so a
  // service manager stopping the wrapper stops the server too (issue 12).
  // Same rule as src/cli/lifecycle.ts `watchesParent`: INVENTORY_EXIT_WITH_PARENT decides, else only when
  // started through npm (`npx inventory serve`); the server then watches this wrapper, its parent.
  const setting = (process.env.INVENTORY_EXIT_WITH_PARENT ?? "").trim();
  const watchParent =
    /^(true|1|yes|on)$/i.test(setting) || (!/^(false|0|no|off)$/i.test(setting) && !!process.env.npm_command);
  const child = spawn(pinned, [join(here, "inventory.js"), ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, INVENTORY_EXIT_WITH_PARENT: watchParent ? "true" : "false" },
  });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"]) process.on(sig, () => child.kill(sig));
  // A supervisor that signals only `npx` leaves this wrapper orphaned (issue 24): stop the server then too
  // (the server itself watches its own parent, this wrapper, the same way: src/cli/lifecycle.ts).
  const parent = process.ppid;
  if (parent > 1 && watchParent) {
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      child.kill("SIGTERM");
    }, 500);
    watch.unref();
  }
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
  child.on("error", (e) => {
    console.error(`inventory: cannot start Node 24: ${e.message}`);
    process.exit(2);
  });
} else {
  process.removeAllListeners("warning");
  process.on("warning", (w) => {
    if (w.name !== "ExperimentalWarning") console.error(w);
  });
  await import("../src/main.ts");
}
