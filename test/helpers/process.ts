/** Test helper: wait until a child process prints `text` on stdout (or fail after `ms`, or if it exits). */
import type { ChildProcess } from "node:child_process";
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

export function waitForOutput(child: ChildProcess, text: string, ms = 20_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms`)), ms);
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
