/**
 * Webhook benchmark (issue 4): commit-to-delivery latency and deliveries/s with a local receiver, against
 * a running server with its in-process worker.
 *
 * - Latency: `changes` tenant creations, one request at a time; for each delivery, receive time minus the
 *   payload's `timestamp` (taken inside the write transaction just before commit). p50/p99 in ms.
 * - Throughput: one bulk create of `bulk` tenants (one commit); deliveries/s from that commit's timestamp
 *   to the last delivery's arrival.
 * Run with 1 and with 10 matching webhooks.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Figures of one run. */
export interface WebhookFigures {
  webhooks: number;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  deliveriesPerSec: number;
}

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Run the webhook benchmark with `hookCount` webhooks matching tenants. */
export async function webhookBench(
  base: string,
  headers: Record<string, string>,
  hookCount: number,
  opts: { changes: number; bulk: number },
): Promise<WebhookFigures> {
  let received = 0;
  const latencies: number[] = [];
  let firstCommit = Number.POSITIVE_INFINITY;
  let lastReceipt = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const now = Date.now();
      received++;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const committed = Date.parse(body.timestamp);
        latencies.push(now - committed);
        if (body.data?.name?.includes("-bulk-")) {
          firstCommit = Math.min(firstCommit, committed);
          lastReceipt = Math.max(lastReceipt, now);
        }
      } catch {
        // not JSON: not ours
      }
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  const api = async (path: string, method: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.status === 204 ? null : r.json();
  };
  const hookIds: string[] = [];
  const tenantIds: string[] = [];
  const tag = Math.random().toString(36).slice(2, 8);
  try {
    for (let i = 0; i < hookCount; i++) {
      const h: any = await api("/api/extras/webhooks/", "POST", {
        name: `bench-${tag}-${i}`,
        content_types: ["tenancy.tenant"],
        type_create: true,
        payload_url: `http://127.0.0.1:${port}/hook/${i}`,
        secret: "bench",
      });
      hookIds.push(h.id);
    }
    const waitFor = async (n: number) => {
      const end = Date.now() + 300_000;
      while (received < n) {
        if (Date.now() > end) throw new Error(`only ${received}/${n} deliveries arrived`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    for (let i = 0; i < opts.changes; i++) {
      const t: any = await api("/api/tenancy/tenants/", "POST", { name: `wb-${tag}-${i}` });
      tenantIds.push(t.id);
    }
    await waitFor(opts.changes * hookCount);
    const lat = [...latencies].sort((a, b) => a - b);
    const before = received;
    const created: any = await api(
      "/api/tenancy/tenants/",
      "POST",
      Array.from({ length: opts.bulk }, (_, i) => ({ name: `wb-${tag}-bulk-${i}` })),
    );
    for (const t of created) tenantIds.push(t.id);
    await waitFor(before + opts.bulk * hookCount);
    const seconds = (lastReceipt - firstCommit) / 1000;
    return {
      webhooks: hookCount,
      deliveries: opts.changes * hookCount + opts.bulk * hookCount,
      p50Ms: pct(lat, 50),
      p99Ms: pct(lat, 99),
      deliveriesPerSec: (opts.bulk * hookCount) / seconds,
    };
  } finally {
    for (const id of hookIds) await api(`/api/extras/webhooks/${id}/`, "DELETE").catch(() => {});
    for (let i = 0; i < tenantIds.length; i += 500)
      await api(
        "/api/tenancy/tenants/",
        "DELETE",
        tenantIds.slice(i, i + 500).map((id) => ({ id })),
      ).catch(() => {});
    server.close();
  }
}
