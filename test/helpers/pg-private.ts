/**
 * Test helper: a private, throwaway PostgreSQL cluster (`initdb` into a temporary directory, `pg_ctl start`
 * on a loopback port) that a test may stop and start again, for database outages (issues 12 and 26),
 * without ever touching the shared PostgreSQL other test runs use. As root the cluster runs as the
 * `postgres` user (PostgreSQL refuses root). Durability is off (`fsync`, `synchronous_commit`): a fast
 * shutdown still writes every committed transaction, and nothing here survives the test.
 */
import { execFile } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PG_START_S, pgBin } from "./pg-replica.ts";

const run = promisify(execFile);

/** A running private cluster. */
export interface PrivateCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  url: string;
  port: number;
  /** Stop the server with `pg_ctl stop -m fast` (sessions are ended, committed work is kept). */
  stop(): Promise<void>;
  /** Start it again on the same port and wait until it accepts connections. */
  start(): Promise<void>;
  /** The last `lines` lines of the server's log (for failure messages). */
  log(lines?: number): string;
  /** Stop the server (immediately) if it runs and remove its directory. Never throws. */
  destroy(): Promise<void>;
}

/** Whether this machine has PostgreSQL server binaries (`initdb`, `pg_ctl`) for a private cluster. */
export function privateClusterAvailable(): boolean {
  return pgBin() !== undefined;
}

/**
 * Create and start a private cluster; its port is chosen at random between 20000 and 32000 (below Linux's
 * ephemeral range, so no client connection of a busy machine takes it between a stop and a start, issue 24),
 * trying other ports up to 5 times while one is taken.
 * @param label part of the temporary directory's name (`inventory-<label>-…`).
 * @throws Error with the end of the server's log when the cluster cannot be created or started, or when no
 * PostgreSQL server binaries are installed under /usr/lib/postgresql.
 */
export async function startPrivateCluster(label: string): Promise<PrivateCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(label, 20000 + Math.floor(Math.random() * 12000));
    } catch (e) {
      if (attempt >= 5 || !/Address already in use|could not bind|could not create listen/i.test(String(e)))
        throw e;
    }
  }
}

async function startOnce(label: string, port: number): Promise<PrivateCluster> {
  const bin = pgBin();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), `inventory-${label}-`));
  chmodSync(dir, 0o700);
  if (root) {
    const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
    const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const logFile = join(dir, "log");
  /**
   * Run a PostgreSQL binary (as `postgres` when root), failing after PG_START_S + 30 s: a hang, not a slow
   * step (issue 24: `pg_ctl start` waited its default 60 s in vain on a machine at load 8–14).
   * @throws Error with the command's output when it fails.
   */
  const pg = async (cmd: string, args: string[]): Promise<void> => {
    const [file, argv] = root
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    try {
      await run(file, argv, { timeout: (PG_START_S + 30) * 1000 });
    } catch (e) {
      const x = e as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${cmd} ${args.join(" ")}: ${x.stderr || x.stdout || x.message}`);
    }
  };
  const log = (lines = 20) => {
    try {
      return readFileSync(logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  };
  const ctl = (action: "start" | "stop", mode = "fast") =>
    pg("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", String(PG_START_S), "-m", mode, action]);
  try {
    await pg("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    appendFileSync(
      join(data, "postgresql.conf"),
      `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n`,
    );
    await ctl("start");
  } catch (e) {
    const tail = log(15);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}\n${tail}`);
  }
  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => ctl("stop"),
    async start() {
      try {
        await ctl("start");
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${log(15)}`);
      }
    },
    log,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await ctl("stop", "immediate").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
