/**
 * Issue 13, many processes: processes starting together migrate once. Three `inventory migrate` processes
 * run at the same moment against one fresh database (a SQLite file, or a fresh PostgreSQL schema); all
 * succeed and the built-in rows exist exactly once.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";
import { openStore } from "../../src/store/db.ts";
import { DEFAULT_STATUSES } from "../../src/store/default-statuses.ts";
import { ENGINE, freshDatabase } from "../helpers/server.ts";

function migrateProcess(url: string): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, ["src/main.ts", "migrate", "--database", url], { stdio: "pipe" });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => done({ code, out }));
  });
}

describe("concurrent migrations", () => {
  it("three processes migrating one fresh database at once: all succeed, seeds exist once", async () => {
    const { url, cleanup } = freshDatabase(ENGINE, "migrate");
    try {
      const runs = await Promise.all([migrateProcess(url), migrateProcess(url), migrateProcess(url)]);
      for (const r of runs) assert.equal(r.code, 0, r.out);
      const store = await openStore(url);
      try {
        const cts = await store.db.selectFrom("extras_contenttype").select("id").execute();
        assert.equal(cts.length, registry().models.size);
        const statuses = await store.db.selectFrom("extras_status").select("slug").execute();
        assert.equal(statuses.length, new Set(DEFAULT_STATUSES.map((s) => s.slug)).size);
      } finally {
        await store.close();
      }
    } finally {
      await cleanup();
    }
  });
});
