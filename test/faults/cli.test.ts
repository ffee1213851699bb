/**
 * Issue 13, production install and processes, through the real command line: `--version`, a mistyped
 * SQLite path is an error (no new empty file), `backup --to` copies a database while a server writes to
 * it, and `serve --workers 2` answers on one port from two processes with writes from both kept and
 * counted together by `/metrics`.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openStore } from "../../src/store/db.ts";
import { freePort } from "../helpers/process.ts";

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, ["src/main.ts", ...args], { stdio: "pipe" });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => done({ code, out }));
  });
}

describe("command line for production", () => {
  const files: string[] = [];
  const tmp = (name: string) => {
    const f = join(tmpdir(), `inventory-cli-${randomUUID()}-${name}`);
    files.push(f, `${f}-wal`, `${f}-shm`);
    return f;
  };
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill("SIGKILL");
    for (const f of files) rmSync(f, { force: true });
  });

  it("prints its version, and refuses a SQLite path with no database outside migrate/serve", async () => {
    const v = await run(["--version"]);
    assert.equal(v.code, 0);
    assert.equal(v.out.trim(), JSON.parse(readFileSync("package.json", "utf8")).version);
    const missing = tmp("typo.sqlite3");
    const r = await run(["token", "create", "--username", "admin", "--database", `sqlite:${missing}`]);
    assert.equal(r.code, 2);
    assert.match(r.out, /no database at .*typo\.sqlite3/);
    assert.equal(existsSync(missing), false, "no empty database was created");
  });

  it("migrate says what it created on a new database, and 'up to date' on the next run (issue 24)", async () => {
    const db = tmp("fresh.sqlite3");
    const first = await run(["migrate", "--database", `sqlite:${db}`]);
    assert.equal(first.code, 0, first.out);
    assert.match(first.out, /: created \d{2,} tables; schema is up to date/);
    const second = await run(["migrate", "--database", `sqlite:${db}`]);
    assert.equal(second.code, 0, second.out);
    assert.match(second.out, /is up to date/);
    assert.doesNotMatch(second.out, /created/);
  });

  it("accepts the seed's spelling `webhook_receiver` as well as `webhook-receiver` (issue 24)", async () => {
    for (const name of ["webhook_receiver", "webhook-receiver"]) {
      const r = await run([name, "--help"]);
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /listen for webhook requests/);
    }
  });

  it("serves from two processes on one port; backup copies the live database", async () => {
    const db = tmp("live.sqlite3");
    assert.equal((await run(["migrate", "--database", `sqlite:${db}`])).code, 0);
    assert.equal(
      (
        await run([
          "createsuperuser",
          "--username",
          "admin",
          "--password",
          "pw-1",
          "--database",
          `sqlite:${db}`,
        ])
      ).code,
      0,
    );
    const token = (
      await run(["token", "create", "--username", "admin", "--database", `sqlite:${db}`])
    ).out.trim();
    const port = await freePort();
    const server = spawn(
      process.execPath,
      ["src/main.ts", "serve", "--workers", "2", "--port", String(port), "--database", `sqlite:${db}`],
      {
        stdio: "pipe",
      },
    );
    children.push(server);
    await new Promise<void>((ready, failed) => {
      let out = "";
      server.stdout!.on("data", (d) => {
        out += d;
        if (out.includes("2 API processes")) ready();
      });
      server.on("close", (code) => failed(new Error(`serve exited ${code}: ${out}`)));
    });
    const post = (i: number) =>
      fetch(`http://127.0.0.1:${port}/api/tenancy/tenants/`, {
        method: "POST",
        headers: { Authorization: `Token ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `tenant-${i}` }),
      });
    const statuses = await Promise.all(Array.from({ length: 40 }, (_v, i) => post(i).then((r) => r.status)));
    assert.deepEqual([...new Set(statuses)], [201]);
    // /metrics reached one of the two processes, and counts the writes of both (aggregated by the primary).
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(
      metrics,
      /inventory_http_requests_total\{route="\/api\/:app\/:model\/",method="POST",status="201"\} 40/,
    );
    const copy = tmp("copy.sqlite3");
    const b = await run(["backup", "--database", `sqlite:${db}`, "--to", copy]);
    assert.equal(b.code, 0, b.out);
    const store = await openStore(`sqlite:${copy}`);
    try {
      const rows = await store.db.selectFrom("tenancy_tenant").select("name").execute();
      assert.equal(rows.length, 40);
    } finally {
      await store.close();
    }
    server.kill("SIGTERM");
    const code = await new Promise((done) => server.on("close", done));
    assert.equal(code, 0);
  });
});
