/**
 * Issue 12: with a system Node older than 24, `inventory` re-executes itself with the pinned Node 24;
 * SIGTERM to the wrapper must stop the real server too (the port is freed) and the wrapper exits with the
 * server's code.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { freePort, waitForOutput } from "../helpers/process.ts";

const SYSTEM_NODE = "/usr/bin/node";
const systemMajor = existsSync(SYSTEM_NODE)
  ? Number(spawnSync(SYSTEM_NODE, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }).stdout)
  : 0;

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

describe("signals through the Node 24 re-exec wrapper", {
  skip: !(systemMajor > 0 && systemMajor < 24) && "needs a system Node older than 24 at /usr/bin/node",
}, () => {
  it("SIGTERM to the wrapper stops the server and frees the port; the exit code is the server's", async () => {
    const file = join(tmpdir(), `inventory-signal-${process.pid}.sqlite3`);
    const port = await freePort();
    const wrapper = spawn(
      SYSTEM_NODE,
      ["bin/inventory.js", "serve", "--port", String(port), "--database", `sqlite:${file}`, "--no-worker"],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, INVENTORY_LOG_LEVEL: "error" } },
    );
    try {
      await waitForOutput(wrapper, "listening");
      assert.equal(await portOpen(port), true);
      const exited = new Promise<[number | null, string | null]>((r) =>
        wrapper.once("exit", (code, signal) => r([code, signal])),
      );
      wrapper.kill("SIGTERM");
      const [code, signal] = await exited;
      assert.equal(signal, null);
      assert.equal(code, 0);
      let open = true;
      for (let i = 0; i < 50 && open; i++) {
        open = await portOpen(port);
        if (open) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(open, false, "the real server is gone with the wrapper");
    } finally {
      wrapper.kill("SIGKILL");
      for (const s of ["", "-wal", "-shm"]) rmSync(`${file}${s}`, { force: true });
    }
  });
});
