/**
 * Issue 13, many processes: processes starting together migrate once. Three `inventory migrate` processes
 * run at the same moment against one fresh database (a SQLite file, or a fresh PostgreSQL schema); all
 * succeed and the built-in rows exist exactly once. On PostgreSQL, a process opening a schema that another
 * session is creating at that moment opens it once that commits (it used to hang forever: the losing
 * `CREATE SCHEMA IF NOT EXISTS` kept its pool client checked out, and closing the pool waited for it).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import pg from "pg";
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
  it("three processes migrating one fresh database at once: all succeed, seeds exist once", {
    timeout: 600_000, // a hang, not a slow start (three Node processes at once at load 8–14, issue 24)
  }, async () => {
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

describe("PostgreSQL: opening a schema another session is creating", { skip: ENGINE !== "postgres" }, () => {
  it("waits for that session, then opens it (no error, no hang)", { timeout: 300_000 }, async () => {
    const { url, cleanup } = freshDatabase(ENGINE, "schema-race");
    const schema = new URL(url).searchParams.get("schema")!;
    const other = new pg.Client(process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test");
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      const opening = openStore(url);
      await new Promise((r) => setTimeout(r, 300));
      await other.query("COMMIT");
      const store = await opening;
      const r = await store.db.selectNoFrom((eb: any) => eb.val(1).as("one")).execute();
      assert.equal(Number((r[0] as { one: unknown }).one), 1);
      await store.close();
    } finally {
      await other.end();
      await cleanup();
    }
  });
});
