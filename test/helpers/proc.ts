/**
 * Test helper: the processes of a process tree or group, read from /proc (Linux), and whether a TCP port on
 * 127.0.0.1 still accepts connections.
 */
import { readdirSync, readFileSync } from "node:fs";
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
