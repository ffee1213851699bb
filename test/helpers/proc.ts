/**
 * Test helper: the processes of a process tree or group and the TCP ports they hold, read from /proc
 * (Linux), and whether a TCP port on 127.0.0.1 still accepts connections.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect } from "node:net";

/** One process: its pid, parent pid and process group id. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
}

/** Every live process (zombies excluded), from /proc/<pid>/stat. */
export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so split after the last ')'.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (f[0] === "Z") continue;
      out.push({ pid: Number(name), ppid: Number(f[1]), pgid: Number(f[2]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pids of the direct children of `pid`. */
export function childPids(pid: number): number[] {
  return processes()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid);
}

/** The pids of the live processes of process group `pgid` (a child spawned with `detached: true`). */
export function groupPids(pgid: number): number[] {
  return processes()
    .filter((p) => p.pgid === pgid)
    .map((p) => p.pid);
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** `pid` and every process descending from it (a CLI that re-executes itself runs as its child). */
export function treePids(pid: number): number[] {
  const all = processes();
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const p of all) if (p.ppid === out[i]) out.push(p.pid);
  return out;
}

/**
 * The local TCP ports (IPv4 and IPv6) of the sockets that processes `pids` hold open, from /proc/<pid>/fd
 * and /proc/net/tcp{,6}: for a client connection, the port its server sees as the client's (e.g.
 * PostgreSQL's `pg_stat_activity.client_port`).
 */
export function tcpPortsOf(pids: number[]): Set<number> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m) inodes.add(m[1]!);
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // gone meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.add(Number.parseInt(f[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}
