/**
 * Test helper: a throwaway PostgreSQL primary and a streaming replica of it (`initdb`, then `pg_basebackup
 * -R` into a second cluster on another port), on loopback, from the server binaries of the machine's
 * PostgreSQL. As root the clusters run as the `postgres` user (PostgreSQL refuses root).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * How long (s) `pg_ctl start` may wait for a cluster to accept connections, and (plus 30 s) any step may
 * take, before it counts as a hang: 5 minutes (pg_ctl's own default is 60 s).
 */
export const PG_START_S = 300;

/** A running primary/replica pair. */
export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  stop(): void;
}

/** The newest installed PostgreSQL's bin directory, or undefined. */
export function pgBin(): string | undefined {
  try {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    return versions[0] ? `/usr/lib/postgresql/${versions[0]}/bin` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Start a primary on `port` and its streaming replica on `port + 1`; without `port`, on ports chosen at
 * random between 20000 and 32000 (below Linux's ephemeral range, where the many client connections of a
 * busy machine took a chosen port first, issue 24), trying other ports up to 5 times while one is taken.
 * @throws Error with the end of the cluster's log when a cluster does not start.
 */
export function startReplicaPair(port?: number): ReplicaPair {
  if (port !== undefined) return startOnce(port);
  for (let attempt = 1; ; attempt++) {
    try {
      return startOnce(20000 + 2 * Math.floor(Math.random() * 6000));
    } catch (e) {
      if (attempt >= 5 || !/Address already in use|could not bind|could not create listen/i.test(String(e)))
        throw e;
    }
  }
}

function startOnce(port: number): ReplicaPair {
  const bin = pgBin();
  if (!bin) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql");
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "inventory-replica-"));
  chmodSync(dir, 0o700);
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  /**
   * Run a PostgreSQL binary, failing after PG_START_S (a hang, not a slow start: `pg_ctl start` waited
   * its default 60 s in vain on a machine at load 8–14, issue 24).
   */
  const run = (cmd: string, args: string[]) => {
    const full = root
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    const r = spawnSync(full[0] as string, full[1] as string[], {
      encoding: "utf8",
      timeout: (PG_START_S + 30) * 1000,
    });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.stdout}`);
  };
  const primary = join(dir, "primary");
  const replica = join(dir, "replica");
  const conf = (p: number) =>
    `\nport = ${p}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 60\nwal_level = replica\nmax_wal_senders = 4\nhot_standby = on\n`;
  run("initdb", ["-D", primary, "-A", "trust", "-U", "postgres", "--no-sync"]);
  appendFileSync(join(primary, "postgresql.conf"), conf(port));
  const stops: string[] = [];
  try {
    run("pg_ctl", ["-D", primary, "-l", join(dir, "primary.log"), "-w", "-t", String(PG_START_S), "start"]);
    stops.push(primary);
    run("pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      "postgres",
      "-D",
      replica,
      "-R",
      "-X",
      "stream",
    ]);
    appendFileSync(join(replica, "postgresql.conf"), conf(port + 1));
    run("pg_ctl", ["-D", replica, "-l", join(dir, "replica.log"), "-w", "-t", String(PG_START_S), "start"]);
    stops.push(replica);
  } catch (e) {
    for (const d of stops.reverse()) spawnSync(join(bin, "pg_ctl"), ["-D", d, "-m", "immediate", "stop"]);
    const logs = ["primary.log", "replica.log"]
      .map((f) => {
        try {
          return readFileSync(join(dir, f), "utf8").split("\n").slice(-15).join("\n");
        } catch {
          return "";
        }
      })
      .join("\n");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${port + 1}/postgres`,
    stop() {
      for (const d of [replica, primary]) {
        try {
          run("pg_ctl", ["-D", d, "-m", "immediate", "stop"]);
        } catch {
          // already stopped
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
