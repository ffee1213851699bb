/**
 * Process lifetime of the long-running commands (issue 24): a server started through a wrapper that a
 * supervisor stops by signalling only the wrapper (`npx inventory serve`: npm does not pass SIGTERM on to
 * its child) would otherwise stay running, orphaned, holding its port.
 */

/** How often the parent process is checked (ms). */
export const PARENT_POLL_MS = 500;

/**
 * Stop this process cleanly (a SIGTERM to itself, so the command's own shutdown path runs) once the process
 * that started it has exited, seen as a change of `process.ppid` (the orphan is re-parented to init or a
 * subreaper). Nothing is watched when the parent is already init (pid 1: a container's entry point, or a
 * daemon started detached) or when `env.INVENTORY_EXIT_WITH_PARENT` is `false`/`0`/`no`/`off` (for a
 * server deliberately left running after its shell exits, e.g. under `nohup`).
 * @returns a function that stops watching.
 */
export function exitWithParent(env: NodeJS.ProcessEnv = process.env): () => void {
  const setting = (env.INVENTORY_EXIT_WITH_PARENT ?? "").trim().toLowerCase();
  const parent = process.ppid;
  if (["false", "0", "no", "off"].includes(setting) || parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
