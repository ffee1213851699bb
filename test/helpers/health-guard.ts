/**
 * Test helper (issue 23): the hostile suite's latency guard. While a hostile test runs, `/health` (the
 * liveness probe: no login, no database; http/app.ts) of its server is polled about every 100 ms; a poll
 * slower than the threshold means one request held the event loop, which no request may do, whatever it
 * asks for. `startServer` (server.ts) starts a guard for every server of a test file under `test/hostile/`
 * and fails that server's `close()` when a poll was too slow.
 *
 * A poll's latency is its round trip, or, when the server runs in this process, how late the poller's own
 * timer fired (the event loop they share was held that long).
 *
 * The threshold is adaptive because this machine is shared with other test runs: 200 ms, or FACTOR times
 * the median of BASELINE_CALLS calls measured at start when that is more (the same call on a machine busy
 * elsewhere is slower for reasons that are not the server's). And a slow poll counts against the server
 * only when this process's main thread (the event loop's) also used the CPU for at least the threshold
 * (CPU_SHARE) meanwhile: a loop held by our own work burns CPU, while a thread that merely waits for a core
 * (2 cores shared with other test files, PostgreSQL and whatever else runs) does not. Other threads' CPU
 * (the regex worker thread, libuv's password hashing, the garbage collector's helpers) is not counted: it
 * holds no loop, and counting it would turn waits for a core into failures. Slow polls of the second kind are
 * reported as `waits`, not failures (issue 24: tests hold on a busy machine).
 *
 * Servers started by one test file run in its process and share one event loop: a loop held by a request to
 * one is seen by every guard alive then. So guards alive at once must judge alike: a guard with another
 * floor than one already running is refused (startHealthGuard), rather than one server failing for a load
 * the other's floor allows.
 */
import http from "node:http";

/** The threshold on an idle machine (ms): issue 23's "`/health` stays under 200 ms". */
export const HEALTH_FLOOR_MS = 200;
/** Threshold = max(HEALTH_FLOOR_MS, FACTOR × the baseline median). */
export const HEALTH_FACTOR = 20;
const BASELINE_CALLS = 7;
/**
 * Share of the threshold the process must have spent on the CPU during a slow poll for it to count: a loop
 * held past the threshold by our own (CPU-bound) work burns at least the threshold's worth.
 */
export const CPU_SHARE = 1;
const EVERY_MS = 100;
/** The floors (ms) of the guards running in this process, one entry per guard. */
const running: number[] = [];

/** What a guard saw: polls made, the slowest (ms), the threshold (ms) and the baseline median (ms). */
export interface HealthReport {
  polls: number;
  worstMs: number;
  thresholdMs: number;
  baselineMs: number;
  /**
   * Polls over the threshold while the process was busy (a held event loop): when each started (ms after the
   * guard's start), how long it took and the CPU time of the process's main thread meanwhile (ms).
   */
  slow: { atMs: number; ms: number; cpuMs: number }[];
  /** Polls over the threshold while the process mostly waited for a core (not counted against the server). */
  waits: { atMs: number; ms: number; cpuMs: number }[];
}

/** A running guard. */
export interface HealthGuard {
  /** What was seen so far (updated as polls come in; the threshold is set from the start). */
  report: HealthReport;
  /** Stop polling (waiting for a poll in flight, counted up to now) and return what was seen. */
  stop(): Promise<HealthReport>;
}

/**
 * Whether servers started by this test file are guarded: INVENTORY_TEST_HEALTH_GUARD `1`/`0` when set,
 * else whether the file being run (process.argv[1], as `node --test` runs each file in its own process)
 * is under test/hostile/.
 */
export function healthGuardWanted(env: NodeJS.ProcessEnv = process.env, argv = process.argv): boolean {
  const setting = env.INVENTORY_TEST_HEALTH_GUARD;
  if (setting === "1" || setting === "0") return setting === "1";
  return /[\\/]test[\\/]hostile[\\/]/.test(argv[1] ?? "");
}

/**
 * One GET of `url`, on a connection of its own (never queued behind the test's own requests); its
 * duration in ms, whatever the answer (a failure counts too: the probe must not fail either). `abort`
 * ends it early, still counted up to then.
 */
function timedGet(url: string, signal: AbortSignal): Promise<number> {
  const start = performance.now();
  return new Promise<number>((resolve) => {
    const done = () => resolve(performance.now() - start);
    const req = http.get(url, { agent: false, signal }, (res) => {
      res.resume();
      res.on("end", done);
      res.on("error", done);
    });
    req.on("error", done);
  });
}

/**
 * Whether a guard with `floorMs` may start now: no guard with another floor runs in this process (see the
 * module's comment).
 * @throws Error naming both floors when one does.
 */
export function assertGuardMayStart(floorMs = HEALTH_FLOOR_MS): void {
  const other = running.find((f) => f !== floorMs);
  if (other !== undefined)
    throw new Error(
      `a guarded server with a ${other} ms floor still runs in this process: close it before starting one ` +
        `with a ${floorMs} ms floor (servers of one process share one event loop, so their guards must judge alike)`,
    );
}

/**
 * Start polling `${baseUrl}/health`: first the baseline, then every ~100 ms until `stop()`.
 * @throws Error when a guard with another floor runs in this process (assertGuardMayStart).
 */
export async function startHealthGuard(baseUrl: string, floorMs = HEALTH_FLOOR_MS): Promise<HealthGuard> {
  assertGuardMayStart(floorMs);
  running.push(floorMs);
  const url = `${baseUrl}/health`;
  const started = performance.now();
  const abort = new AbortController();
  const baseline: number[] = [];
  for (let i = 0; i < BASELINE_CALLS; i++) baseline.push(await timedGet(url, abort.signal));
  baseline.sort((a, b) => a - b);
  const baselineMs = baseline[Math.floor(baseline.length / 2)]!;
  const report: HealthReport = {
    polls: 0,
    worstMs: 0,
    thresholdMs: Math.max(floorMs, HEALTH_FACTOR * baselineMs),
    baselineMs,
    slow: [],
    waits: [],
  };
  let stopping = false;
  let wake: (() => void) | undefined;
  const cpuNow = () => {
    const u = process.threadCpuUsage();
    return (u.user + u.system) / 1000;
  };
  const record = (at: number, ms: number, cpuAt: number) => {
    report.worstMs = Math.max(report.worstMs, ms);
    if (ms <= report.thresholdMs) return;
    const cpuMs = cpuNow() - cpuAt;
    const entry = { atMs: Math.round(at - started), ms: Math.round(ms), cpuMs: Math.round(cpuMs) };
    (cpuMs >= CPU_SHARE * report.thresholdMs ? report.slow : report.waits).push(entry);
  };
  const loop = (async () => {
    while (!stopping) {
      const at = performance.now();
      const cpuAt = cpuNow();
      record(at, await timedGet(url, abort.signal), cpuAt);
      report.polls++;
      if (stopping) break;
      // A server in this process (startServer's) shares its event loop with the poller: while the loop is
      // held, no poll is in flight to be slowed, but this timer fires late by as long as a /health request
      // arriving then would have waited. That lateness counts as such a request.
      const due = performance.now() + EVERY_MS;
      const cpuDue = cpuNow();
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, EVERY_MS).unref();
      });
      if (!stopping) record(due, performance.now() - due, cpuDue);
    }
  })();
  return {
    report,
    async stop() {
      const at = running.indexOf(floorMs);
      if (!stopping && at >= 0) running.splice(at, 1);
      stopping = true;
      wake?.();
      abort.abort();
      await loop;
      report.worstMs = Math.round(report.worstMs);
      report.baselineMs = Math.round(report.baselineMs * 10) / 10;
      report.thresholdMs = Math.round(report.thresholdMs);
      return report;
    },
  };
}

/**
 * @throws AssertionError-like Error naming the slow polls when any poll of `report` exceeded the threshold.
 */
export function assertHealthy(report: HealthReport, what = "server"): void {
  if (report.slow.length === 0) return;
  throw new Error(
    `${what}: /health took longer than ${report.thresholdMs} ms (baseline median ${report.baselineMs} ms × ` +
      `${HEALTH_FACTOR}, at least ${HEALTH_FLOOR_MS}) in ${report.slow.length} of ${report.polls} polls; ` +
      `worst ${report.worstMs} ms; slow polls (ms after start: duration, main-thread CPU meanwhile): ` +
      report.slow
        .slice(0, 10)
        .map((s) => `${s.atMs}: ${s.ms} (${s.cpuMs} CPU)`)
        .join(", "),
  );
}
