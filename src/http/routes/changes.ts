/**
 * The change feed, its stream and webhook replay (issue 26), extensions on paths where Nautobot has none:
 *
 * - `GET /api/extras/object-changes/feed/?after=N&limit=1000` — the changes after seq N, in seq order
 *   (service/change-feed.ts), `{"next": <url>, "last_seq": N, "results": [...]}`; filters `type`
 *   (repeatable or comma-separated content types), `action`, `request_id`. 410 with the oldest available
 *   seq when N was purged.
 * - `GET /api/extras/object-changes/stream/` — the same entries as `text/event-stream` (`id:` = seq, event
 *   `change`), from `Last-Event-ID` or `?after=`, with heartbeat comments; at most `changeFeed.maxStreams`
 *   per process (503 past it). A stream reads the next page only once its client took the previous one
 *   (at most `streamBufferBytes` waiting), and a client that takes nothing for `drainTimeoutMs` is
 *   disconnected: memory per client is bounded and the client resumes from its last id. New commits wake
 *   streams through PostgreSQL LISTEN (every process's commits) or, on SQLite, a poll of the highest seq.
 * - `POST /api/extras/webhooks/<id>/replay/` `{"after": N}` or `{"since": time}` (service/replay.ts).
 */
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ChangeFeedConfig } from "../../config.ts";
import { normalizeUuid } from "../../query/filters.ts";
import {
  CHANGES_CHANNEL,
  FEED_MAX_LIMIT,
  FeedGone,
  type FeedQuery,
  latestSeq,
  purgeChanges,
  readFeed,
} from "../../service/change-feed.ts";
import { makeCtx } from "../../service/context.ts";
import { AppError, NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import { parseReplayBody, replayWebhook } from "../../service/replay.ts";
import { inTransaction } from "../../service/write.ts";
import { storedTime } from "../../store/values.ts";
import { type HttpKit, queryParams } from "../kit.ts";

const ACTIONS = new Set(["create", "update", "delete"]);
/** Stands for the next position in a feed page's next URL until the database fills it in (once per process). */
const AFTER_TOKEN = `after${randomUUID().replace(/-/g, "")}`;

/** The feed query of a request. @throws ValidationError naming the parameter. */
function feedQuery(kit: HttpKit, req: FastifyRequest, lastEventId?: string): FeedQuery {
  const p = queryParams(req.url, req);
  const one = (k: string) => p.get(k)?.[p.get(k)!.length - 1];
  const nat = (name: string, v: string | undefined, d: number, max?: number) => {
    if (v === undefined || v === "") return d;
    if (!/^\d{1,15}$/.test(v)) throw new ValidationError({ [name]: ["A non-negative integer is required."] });
    const n = Number(v);
    if (max !== undefined && (n < 1 || n > max))
      throw new ValidationError({ [name]: [`Ensure this value is between 1 and ${max}.`] });
    return n;
  };
  const list = (k: string) =>
    (p.get(k) ?? [])
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter(Boolean);
  const types = list("type");
  for (const t of types) {
    const m = kit.reg.models.get(t);
    if (!m?.changeLogged)
      throw new ValidationError({ type: [`Unknown or not change-logged content type: ${t.slice(0, 100)}.`] });
  }
  const actions = list("action");
  for (const a of actions)
    if (!ACTIONS.has(a))
      throw new ValidationError({
        action: [`Select a valid choice. ${a.slice(0, 100)} is not one of create, update, delete.`],
      });
  const requestId = one("request_id");
  if (requestId !== undefined && requestId.length > 36)
    throw new ValidationError({ request_id: ["Ensure this value has at most 36 characters."] });
  const after =
    lastEventId !== undefined ? nat("Last-Event-ID", lastEventId, 0) : nat("after", one("after"), 0);
  return {
    after,
    limit: nat("limit", one("limit"), FEED_MAX_LIMIT, FEED_MAX_LIMIT),
    types,
    actions,
    ...(requestId !== undefined && requestId !== "" ? { requestId } : {}),
  };
}

/** The 410 answer of a purged position. */
function gone(reply: FastifyReply, e: FeedGone): FastifyReply {
  return reply
    .code(410)
    .type("application/json")
    .send(
      JSON.stringify({
        detail: `${e.message} Resynchronise from a full read, then follow the feed from oldest_seq - 1.`,
        oldest_seq: e.oldest,
        purged_through: e.purgedThrough,
      }),
    );
}

/** Wake-ups of this process's streams: PostgreSQL LISTEN, or a poll of the highest seq (SQLite). */
class Wakeups {
  private waiters = new Set<() => void>();
  private stopListen: (() => Promise<void>) | undefined;
  private poll: NodeJS.Timeout | undefined;
  private last = -1;
  private starting: Promise<void> | undefined;
  private readonly kit: HttpKit;
  private readonly cfg: ChangeFeedConfig;
  constructor(kit: HttpKit, cfg: ChangeFeedConfig) {
    this.kit = kit;
    this.cfg = cfg;
  }
  /** Resolves at the next wake-up or after `ms`. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
  wake(): void {
    for (const w of [...this.waiters]) w();
  }
  /** Start listening (once, at the first stream). */
  start(): Promise<void> {
    this.starting ??= (async () => {
      const store = this.kit.store;
      if (store.dialect.notifySql(CHANGES_CHANNEL)) {
        this.stopListen = await store.listen(CHANGES_CHANNEL, () => this.wake());
        return;
      }
      const ctx = makeCtx({ store, reg: this.kit.reg, settings: this.kit.settings });
      const tick = async () => {
        try {
          if (this.waiters.size) {
            const seq = await latestSeq(ctx);
            if (seq !== this.last) {
              this.last = seq;
              this.wake();
            }
          }
        } catch {
          // the database is unavailable: streams retry at their next wake-up
        }
        this.poll = setTimeout(tick, this.cfg.pollMs);
        this.poll.unref();
      };
      await tick();
    })();
    return this.starting;
  }
  async stop(): Promise<void> {
    if (this.poll) clearTimeout(this.poll);
    await this.stopListen?.();
    this.wake();
  }
}

/**
 * Free a page body's memory now that the socket is done with it (detaching its ArrayBuffer). A page is
 * ~1.5 MB outside the JS heap; left to the garbage collector, such bodies made V8 run a full mark-compact
 * every few dozen pages (external memory pressure), a third of the feed's CPU.
 */
function release(body: Uint8Array): void {
  const buf = body.buffer as ArrayBuffer;
  if (!buf.detached && buf.byteLength === body.byteLength) buf.transfer(0);
}

/** Feed, stream and replay routes. */
export async function changeRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  const cfg = kit.config.changeFeed;
  const oc = kit.reg.get("extras.objectchange");
  const wakeups = new Wakeups(kit, cfg);
  const streams = new Set<() => void>();
  let purgeTimer: NodeJS.Timeout | undefined;
  let closing = false;

  app.get("/api/extras/object-changes/feed/", async (req, reply) => {
    kit.need(req, oc, "view");
    const q = feedQuery(kit, req);
    try {
      const url = new URL(`${kit.baseUrl(req)}${req.url}`);
      url.searchParams.set("after", AFTER_TOKEN);
      const nextUrl = url.toString();
      const page = nextUrl.split(AFTER_TOKEN).length === 2 ? { nextUrl, afterToken: AFTER_TOKEN } : undefined;
      if (!page) throw new ValidationError({ after: ["Invalid URL."] });
      const { body } = await readFeed(kit.ctxFor(req), q, { page });
      if (typeof body !== "string") reply.raw.once("finish", () => release(body));
      return reply
        .type("application/json")
        .send(typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
    } catch (e) {
      if (e instanceof FeedGone) return gone(reply, e);
      throw e;
    }
  });

  app.get("/api/extras/object-changes/stream/", async (req, reply) => {
    kit.need(req, oc, "view");
    const lastId = req.headers["last-event-id"];
    const q = feedQuery(kit, req, typeof lastId === "string" && lastId !== "" ? lastId : undefined);
    if (streams.size >= cfg.maxStreams || closing)
      throw new AppError(503, "Too many change streams; try again later.", undefined, { "Retry-After": "5" });
    const ctx = kit.ctxFor(req);
    let first: Awaited<ReturnType<typeof readFeed>>;
    try {
      first = await readFeed(ctx, { ...q, limit: FEED_MAX_LIMIT }, "events");
    } catch (e) {
      if (e instanceof FeedGone) return gone(reply, e);
      throw e;
    }
    await wakeups.start();
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      Connection: "keep-alive",
    });
    let open = true;
    const end = () => {
      if (!open) return;
      open = false;
      streams.delete(end);
      res.destroy();
      wakeups.wake();
    };
    streams.add(end);
    res.on("close", end);
    res.on("error", end);
    res.write(`retry: 1000\n: position ${q.after}\n\n`);
    // Wait until the client took what is buffered; disconnect it when it takes nothing for drainTimeoutMs.
    const drained = async () => {
      while (open && res.writableLength > cfg.streamBufferBytes) {
        const ok = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), cfg.drainTimeoutMs);
          res.once("drain", () => {
            clearTimeout(t);
            resolve(true);
          });
          res.once("close", () => {
            clearTimeout(t);
            resolve(true);
          });
        });
        if (!ok) end();
      }
    };
    (async () => {
      let page = first;
      let pos = q.after;
      let idleSince = Date.now();
      while (open) {
        if (page.count) {
          const body = page.body;
          res.write(body, typeof body === "string" ? undefined : () => release(body));
          pos = page.next;
          idleSince = Date.now();
          await drained();
        }
        if (!open) break;
        if (page.count < FEED_MAX_LIMIT) {
          const left = cfg.heartbeatMs - (Date.now() - idleSince);
          if (left <= 0) {
            res.write(": heartbeat\n\n");
            idleSince = Date.now();
            await drained();
            continue;
          }
          await wakeups.wait(Math.min(left, 1000));
          if (!open) break;
        } else await new Promise((r) => setImmediate(r));
        try {
          page = await readFeed(ctx, { ...q, after: pos, limit: FEED_MAX_LIMIT }, "events");
        } catch (e) {
          if (e instanceof FeedGone) {
            res.write(
              `event: gone\ndata: ${JSON.stringify({ oldest_seq: e.oldest, purged_through: e.purgedThrough })}\n\n`,
            );
            end();
            break;
          }
          // The database is unavailable (an outage): keep the stream, try again at the next wake-up.
          page = { body: "", count: 0, next: pos };
          await wakeups.wait(500);
        }
      }
    })().catch(end);
  });

  app.post("/api/extras/webhooks/:id/replay/", async (req, reply) => {
    const hooks = kit.reg.get("extras.webhook");
    if (req.auth.actor && !mayDo(req.grants, hooks, "change")) throw new PermissionDenied();
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    const from = parseReplayBody(req.body);
    const ctx = kit.ctxFor(req);
    const r = await inTransaction(ctx, (t) => replayWebhook(t, id, from));
    return kit.send(req, reply, 200, r);
  });

  // Retention: each API process purges, in bounded batches, changes older than the configured days.
  if (cfg.retentionDays > 0) {
    const ctx = makeCtx({ store: kit.store, reg: kit.reg, settings: kit.settings });
    const run = async () => {
      const cutoff = storedTime(Date.now() - cfg.retentionDays * 86_400_000);
      try {
        for (let i = 0; i < 10 && !closing; i++) if (!(await purgeChanges(ctx, cutoff))) break;
      } catch (e) {
        app.log.warn({ err: e }, "change log retention: purge failed");
      }
      if (!closing) {
        purgeTimer = setTimeout(run, cfg.purgeIntervalMs);
        purgeTimer.unref();
      }
    };
    purgeTimer = setTimeout(run, Math.min(cfg.purgeIntervalMs, 1000));
    purgeTimer.unref();
  }

  // Streams end before the server waits for its connections to close.
  app.addHook("preClose", async () => {
    closing = true;
    for (const end of [...streams]) end();
  });
  app.addHook("onClose", async () => {
    closing = true;
    if (purgeTimer) clearTimeout(purgeTimer);
    for (const end of [...streams]) end();
    await wakeups.stop();
  });
}
