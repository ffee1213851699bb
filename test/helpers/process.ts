/** Test helper: wait until a child process prints `text` on stdout (or fail after `ms`, or if it exits). */
import type { ChildProcess } from "node:child_process";

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
