/**
 * Process lifetime of the long-running commands (issue 24): a server started through a wrapper that a
 * supervisor stops by signalling only the wrapper (`npx inventory serve`: npm does not pass SIGTERM on to
 * its child) would otherwise stay running, orphaned, holding its port.
 */

/** How often the parent process is checked (ms). */
export const PARENT_POLL_MS = 500;

/**
 * Whether to watch the parent process (`exitWithParent`): `INVENTORY_EXIT_WITH_PARENT` true/false decides;
 * unset, only a process started through npm (`npx inventory serve`, `npm start`: npm sets `npm_command`),
 * so a server deliberately left running after its shell exits (`nohup … &`) is not stopped with it.
 */
export function watchesParent(env: NodeJS.ProcessEnv = process.env): boolean {
  const setting = (env.INVENTORY_EXIT_WITH_PARENT ?? "").trim().toLowerCase();
  if (["false", "0", "no", "off"].includes(setting)) return false;
  if (["true", "1", "yes", "on"].includes(setting)) return true;
  return !!env.npm_command;
}

/**
 * Stop this process cleanly (a SIGTERM to itself, so the command's own shutdown path runs) once the process
 * that started it has exited, seen as a change of `process.ppid` (the orphan is re-parented to init or a
 * subreaper), when `watchesParent(env)`. Nothing is watched when the parent is already init (pid 1: a
 * container's entry point, or a daemon started detached).
 * @returns a function that stops watching.
 */
export function exitWithParent(env: NodeJS.ProcessEnv = process.env): () => void {
  const parent = process.ppid;
  if (!watchesParent(env) || parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
