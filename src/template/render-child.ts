/**
 * Child-process entry of the bounded template renderer (template/bounded.ts, issue 12). Started with a
 * small `--max-old-space-size`, so a template that exhausts memory kills only this process. Receives
 * `{id, source, context, maxBytes}` over IPC and answers `{id, out}` or `{id, error}`.
 */
import { renderTemplate } from "./jinja.ts";

process.on(
  "message",
  (msg: { id: number; source: string; context: Record<string, unknown>; maxBytes: number }) => {
    let reply: { id: number; out?: string; error?: string };
    try {
      const out = renderTemplate(msg.source, msg.context);
      reply =
        Buffer.byteLength(out, "utf8") > msg.maxBytes
          ? { id: msg.id, error: `template output exceeds ${msg.maxBytes} bytes` }
          : { id: msg.id, out };
    } catch (e) {
      reply = { id: msg.id, error: (e as Error).message };
    }
    process.send?.(reply);
  },
);
