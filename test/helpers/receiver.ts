/**
 * Test helper: a real HTTP webhook receiver on loopback that records every request and answers with a
 * programmable status (and optional delay).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HANG_MS } from "./wait.ts";

/** One received request. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
}

/** A running receiver. */
export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Decide the answer to the n-th request (1-based); default 200 at once. */
  respond: (n: number, r: Received) => { status: number; delayMs?: number };
  /**
   * Wait until `count` requests arrived.
   * @param timeoutMs how long to wait (ms) before failing; never less than HANG_MS (wait.ts): a deadline
   * detects a lost delivery, not a slow one.
   * @throws Error naming how many requests arrived when the deadline passes.
   */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Start a receiver on 127.0.0.1 (port 0 = any free port). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const requests: Received[] = [];
  /** Answers delayed by `respond` and not yet sent: dropped at close, so they keep no process alive. */
  const held = new Set<NodeJS.Timeout>();
  let server: Server;
  const self: Receiver = {
    url: "",
    port: 0,
    requests,
    respond: () => ({ status: 200 }),
    async waitFor(count, timeoutMs = HANG_MS) {
      const ms = Math.max(timeoutMs, HANG_MS);
      const end = Date.now() + ms;
      while (requests.length < count) {
        if (Date.now() > end)
          throw new Error(`receiver got ${requests.length} requests, expected ${count} within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of held) clearTimeout(t);
        held.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: any;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r: Received = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body,
        json,
        at: Date.now(),
      };
      requests.push(r);
      const { status, delayMs } = self.respond(requests.length, r);
      const answer = () => {
        res.writeHead(status, { "Content-Type": "text/plain" });
        res.end(status < 300 ? "ok" : "nope");
      };
      if (delayMs) {
        const t = setTimeout(() => {
          held.delete(t);
          answer();
        }, delayMs);
        held.add(t);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  self.port = (server.address() as AddressInfo).port;
  self.url = `http://127.0.0.1:${self.port}`;
  return self;
}
