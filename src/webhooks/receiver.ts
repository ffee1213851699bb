/**
 * `inventory webhook-receiver`: a troubleshooting listener (seed, Events "Local testing receiver";
 * Nautobot's `webhook_receiver`, nautobot-webhooks.md §6). Prints each request's method, path, headers and
 * body (pretty-printed when JSON), answers 200, and does nothing else.
 */
import { createServer, type Server } from "node:http";
import type { Writable } from "node:stream";

/** Options of the receiver. */
export interface ReceiverOptions {
  /** TCP port; default 9000. */
  port: number;
  /** Listen address; default `localhost` as Nautobot. */
  host?: string;
  /** Print request headers (default true; `--no-headers` turns them off). */
  headers: boolean;
  out: Writable;
}

/** Start the receiver. @returns the listening server. */
export async function startReceiver(opts: ReceiverOptions): Promise<Server> {
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      n++;
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("Webhook received!\n");
      const lines: string[] = [
        `[${n}] ${new Date().toUTCString()} ${req.socket.remoteAddress ?? "-"} "${req.method} ${req.url} HTTP/${req.httpVersion}" 200 -`,
      ];
      if (opts.headers) {
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        lines.push("");
      }
      const text = Buffer.concat(chunks).toString("utf8");
      if (!text) lines.push("(No body)");
      else {
        try {
          lines.push(JSON.stringify(JSON.parse(text), null, 4));
        } catch {
          lines.push(text);
        }
      }
      lines.push("------------");
      opts.out.write(`${lines.join("\n")}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "localhost", () => resolve());
  });
  opts.out.write(`Listening on port http://${opts.host ?? "localhost"}:${opts.port}. Stop with CONTROL-C.\n`);
  return server;
}
