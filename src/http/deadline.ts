/**
 * A deadline for a request to arrive whole (issue 12, "time out slow request bodies"). Node's own
 * `requestTimeout` is only checked every 30 s (`connectionsCheckingInterval`), so a client trickling a body
 * byte by byte could hold a request open far longer: here a timer starts when the request's headers are in
 * and closes the connection unless the body has been read (Fastify's `preHandler`) by then. The handler's own
 * work is not limited by it (the statement budget bounds database work).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";

const timers = new WeakMap<FastifyRequest, NodeJS.Timeout>();

/** Close connections whose request has not fully arrived within `ms` milliseconds. */
export function registerRequestDeadline(app: FastifyInstance, ms: number): void {
  const clear = async (req: FastifyRequest) => {
    const t = timers.get(req);
    if (t) clearTimeout(t);
    timers.delete(req);
  };
  app.addHook("onRequest", async (req) => {
    timers.set(
      req,
      setTimeout(() => {
        req.log.warn({ url: req.url }, "request body not received in time: connection closed");
        req.raw.socket?.destroy();
      }, ms),
    );
  });
  app.addHook("preHandler", clear);
  app.addHook("onResponse", clear);
  app.addHook("onRequestAbort", clear);
}
