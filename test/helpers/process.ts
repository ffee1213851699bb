/**
 * Test helper: child processes: a free port for one, waiting until one prints what shows it is ready, and
 * extra API processes on a test server's database.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (chosen by the OS), for a child process to listen on.
 * Fixed random ranges collided between test files running side by side.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The shortest time (ms) a child process is given to start (print its readiness line) before that counts as
 * a hang: 3 minutes. Starting Node, stripping the TypeScript and migrating took over 30 s on a 2-core
 * machine shared with other work (issue 24); on an idle one it takes about a second.
 */
export const PROCESS_START_MS = 180_000;

/**
 * Wait until `child` prints `text` on stdout (output is matched chunk by chunk, as the CLI prints each
 * readiness line in one write).
 * @param ms how long to wait before failing; never less than PROCESS_START_MS.
 * @throws Error when the deadline passes or the child exits first (with its exit code).
 */
export function waitForOutput(child: ChildProcess, text: string, ms = PROCESS_START_MS): Promise<void> {
  const wait = Math.max(ms, PROCESS_START_MS);
  return new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no "${text}" within ${wait} ms`)), wait);
    child.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`exited (${code}) before printing "${text}"`));
    });
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes(text)) {
        clearTimeout(t);
        resolve();
      }
    });
  });
}

/** Extra API processes serving one database (`startApiProcesses`): their ports, and a stop for all. */
export interface ApiProcesses {
  ports: number[];
  /** SIGTERM to each process still running, resolved when all have exited. */
  stop(): Promise<void>;
}

/**
 * Start `n` `inventory serve --no-worker` processes on `databaseUrl`, each on a free port, one after the
 * other, each waited for until it listens (PROCESS_START_MS, a hang bound). Logs warnings only.
 */
export async function startApiProcesses(databaseUrl: string, n: number): Promise<ApiProcesses> {
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : undefined)),
    );
  };
  try {
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const c = spawn(
        process.execPath,
        ["src/main.ts", "serve", "--port", String(port), "--no-worker", "--database", databaseUrl],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, INVENTORY_LOG_LEVEL: "warn" } },
      );
      c.stderr!.resume();
      children.push(c);
      await waitForOutput(c, "inventory listening");
      ports.push(port);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { ports, stop };
}
