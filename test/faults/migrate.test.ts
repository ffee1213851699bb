/**
 * Issue 13, many processes: processes starting together migrate once. Three `inventory migrate` processes
 * run at the same moment against one fresh database (a SQLite file, or a fresh PostgreSQL schema); all
 * succeed and the built-in rows exist exactly once. On PostgreSQL, a process opening a schema that another
 * session is creating at that moment opens it once that commits (it used to hang forever: the losing
 * `CREATE SCHEMA IF NOT EXISTS` kept its pool client checked out, and closing the pool waited for it).
 * On PostgreSQL a migration waits for locks past the statement budget (issue 24: it was cancelled after
 * INVENTORY_STATEMENT_TIMEOUT while another test server held a lock), and migrations of two schemas of one
 * database do not wait for each other.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { registry } from "../../src/registry/index.ts";
import { openStore, type Store } from "../../src/store/db.ts";
import { DEFAULT_STATUSES } from "../../src/store/default-statuses.ts";
import { migrate } from "../../src/store/migrate.ts";
import { ENGINE, freshDatabase } from "../helpers/server.ts";
import { HANG_MS, waitUntil } from "../helpers/wait.ts";

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

describe("PostgreSQL: a migration and other sessions' locks", { skip: ENGINE !== "postgres" }, () => {
  const PG = process.env.TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

  /** A store on `url` whose statements get `seconds` of budget (INVENTORY_STATEMENT_TIMEOUT). */
  async function storeWithBudget(url: string, seconds: string): Promise<Store> {
    const before = process.env.INVENTORY_STATEMENT_TIMEOUT;
    process.env.INVENTORY_STATEMENT_TIMEOUT = seconds;
    try {
      return await openStore(url);
    } finally {
      if (before === undefined) delete process.env.INVENTORY_STATEMENT_TIMEOUT;
      else process.env.INVENTORY_STATEMENT_TIMEOUT = before;
    }
  }

  /**
   * A migrated fresh schema whose `inventory_meta` another session holds (ACCESS EXCLUSIVE, until
   * `release`), so a migration of it blocks at its seeds; `blocked()` says whether a session waits for it.
   */
  async function lockedSchema() {
    const db = freshDatabase(ENGINE, "migrate-lock");
    const schema = new URL(db.url).searchParams.get("schema")!;
    const first = await openStore(db.url);
    await migrate(first, registry());
    await first.close();
    const other = new pg.Client(PG);
    await other.connect();
    await other.query("BEGIN");
    await other.query(`LOCK TABLE "${schema}".inventory_meta IN ACCESS EXCLUSIVE MODE`);
    const blocked = async () =>
      (
        await other.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"${schema}".inventory_meta'::regclass`,
        )
      ).rows[0].n > 0;
    return {
      ...db,
      blocked,
      release: async () => {
        await other.query("COMMIT").catch(() => {});
        await other.end();
      },
    };
  }

  it("waits for a lock longer than the statement budget, which its pool keeps for other statements", {
    timeout: 600_000,
  }, async () => {
    const locked = await lockedSchema();
    const store = await storeWithBudget(locked.url, "0.3");
    try {
      let settled = false;
      const running = migrate(store, registry()).finally(() => {
        settled = true;
      });
      running.catch(() => {});
      await waitUntil(locked.blocked);
      // Three budgets long: before, the migration was cancelled (57014) after one.
      await new Promise((r) => setTimeout(r, 900));
      assert.equal(settled, false, "the migration still waits");
      await locked.release();
      assert.deepEqual(await running, { tablesCreated: 0, columnsAdded: 0 });
      const r = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(store.db);
      assert.equal(r.rows[0]?.statement_timeout, "300ms");
    } finally {
      await locked.release().catch(() => {});
      await store.close();
      await locked.cleanup();
    }
  });

  it("a migration of another schema does not wait for one that is blocked", {
    timeout: 600_000,
  }, async () => {
    const locked = await lockedSchema();
    const fresh = freshDatabase(ENGINE, "migrate-other");
    const a = await openStore(locked.url);
    const b = await openStore(fresh.url);
    try {
      const waiting = migrate(a, registry());
      waiting.catch(() => {});
      await waitUntil(locked.blocked);
      // Before, every schema's migration took one advisory lock: this one waited for the blocked one.
      let hang: NodeJS.Timeout | undefined;
      const other = await Promise.race([
        migrate(b, registry()),
        new Promise<"hang">((r) => {
          hang = setTimeout(() => r("hang"), HANG_MS);
        }),
      ]);
      clearTimeout(hang);
      assert.notEqual(other, "hang", "the other schema's migration waited for the blocked one");
      assert.ok(other !== "hang" && other.tablesCreated > 0);
      await locked.release();
      await waiting;
    } finally {
      await locked.release().catch(() => {});
      await a.close();
      await b.close();
      await locked.cleanup();
      await fresh.cleanup();
    }
  });
});
