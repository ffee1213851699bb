/**
 * The web interface (issue 10), a Fastify plugin beside the REST API: session login with the API's users,
 * CSRF protection on every form, sessions in the database (service/sessions.ts) with HttpOnly, SameSite=Lax
 * and (behind TLS) Secure cookies, static CSS, and the pages of `routes/`. Every page needs a logged-in
 * user and reads through the service layer with that user's object permissions.
 */

import { fileURLToPath } from "node:url";
import cookie from "@fastify/cookie";
import csrf from "@fastify/csrf-protection";
import formbody from "@fastify/formbody";
import session from "@fastify/session";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Registry } from "../registry/index.ts";
import { type Actor, type Ctx, makeCtx, type ServiceSettings } from "../service/context.ts";
import { AppError } from "../service/errors.ts";
import { ctxAt } from "../service/history-read.ts";
import { DEFAULT_LOGIN_LIMITS, LoginLimiter } from "../service/login-limit.ts";
import { type Grants, loadGrants } from "../service/permissions.ts";
import { actorById, SESSION_MAX_AGE_MS, sessionSecret, sessionStore } from "../service/sessions.ts";
import type { Store } from "../store/db.ts";
import type { WorkerSettings } from "../webhooks/worker.ts";
import { linksAtPoint, type PagePoint, pointOfPage, READ_ONLY_PAGE } from "./as-of.ts";
import { takeFlash } from "./flash.ts";
import { type MenuSection, menuFor } from "./menu.ts";
import { actionRoutes } from "./routes/actions.ts";
import { allocateRoutes } from "./routes/allocate.ts";
import { assetRoutes } from "./routes/assets.ts";
import { authRoutes } from "./routes/auth.ts";
import { browseRoutes } from "./routes/browse.ts";
import { bulkEditRoutes } from "./routes/bulk-edit.ts";
import { columnRoutes } from "./routes/columns.ts";
import { componentRoutes } from "./routes/components.ts";
import { editRoutes } from "./routes/edit.ts";
import { exportRoutes } from "./routes/export.ts";
import { type GraphqlRunner, graphiqlRoutes } from "./routes/graphiql.ts";
import { historyPageRoutes } from "./routes/history.ts";
import { importRoutes } from "./routes/import.ts";
import { listRoutes } from "./routes/list.ts";
import { lookupRoutes } from "./routes/lookup.ts";
import { noteRoutes } from "./routes/notes.ts";
import { prefsRoutes, themeOf } from "./routes/prefs.ts";
import { profileRoutes } from "./routes/profile.ts";
import { traceRoutes } from "./routes/trace.ts";
import { renderPage } from "./views.ts";

declare module "fastify" {
  interface Session {
    userId?: string;
  }
}

/** What the UI's routes share. */
export interface UiKit {
  store: Store;
  reg: Registry;
  /** The limiter of every password check, shared with the API's HTTP Basic (service/login-limit.ts). */
  loginLimiter: LoginLimiter;
  /** The logged-in user of the request (set by the auth hook), else a redirect to the login page happened. */
  actor(req: FastifyRequest): Actor;
  /**
   * A service context for the request's user, with their object permissions; `absolute` gives objects'
   * `url` with the request's scheme and host, as the API does (exports), instead of relative ones.
   */
  ctxFor(req: FastifyRequest, opts?: { absolute?: boolean }): Promise<Ctx>;
  /** Render a page inside the layout (user, CSRF token and title filled in). */
  page(
    req: FastifyRequest,
    reply: FastifyReply,
    name: string,
    data: Record<string, unknown>,
    status?: number,
  ): FastifyReply;
}

const PUBLIC = new Set(["/login/", "/static/ui.css"]);

/** Register the web UI on `app` (its own encapsulated scope). */
export async function uiPlugin(
  app: FastifyInstance,
  opts: {
    store: Store;
    reg: Registry;
    settings: ServiceSettings;
    webhookSettings: WorkerSettings;
    /** Shared with the API's HTTP Basic (server.ts); a limiter of its own with the defaults otherwise. */
    loginLimiter?: LoginLimiter;
    /** Answers GraphiQL's queries (server.ts hands in the GraphQL layer); without it `POST /graphql/` is 404. */
    graphql?: GraphqlRunner;
  },
): Promise<void> {
  const { store, reg, settings } = opts;
  await app.register(async (ui) => {
    await ui.register(cookie);
    await ui.register(session, {
      secret: await sessionSecret(store),
      cookieName: "sessionid",
      saveUninitialized: false,
      store: sessionStore(store) as never,
      cookie: { httpOnly: true, sameSite: "lax", secure: "auto", maxAge: SESSION_MAX_AGE_MS, path: "/" },
    });
    await ui.register(formbody);
    await ui.register(csrf, { sessionPlugin: "@fastify/session" });
    await ui.register(fastifyStatic, {
      root: fileURLToPath(new URL("./static/", import.meta.url)),
      prefix: "/static/",
      decorateReply: false,
    });

    const actors = new WeakMap<FastifyRequest, Actor>();
    // One load of the user's grants per request, shared by the navigation menu and `ctxFor` (issue 25).
    const grantsOf = new WeakMap<FastifyRequest, Promise<Grants | undefined>>();
    const grantsFor = (req: FastifyRequest, actor: Actor) => {
      let g = grantsOf.get(req);
      if (!g) {
        g = actor.isSuperuser
          ? Promise.resolve(undefined)
          : loadGrants(makeCtx({ store, reg, settings }), actor);
        grantsOf.set(req, g);
      }
      return g;
    };
    const menus = new WeakMap<FastifyRequest, MenuSection[]>();
    /** The point of history a page shows (`?as_of_seq=` / `?as_of=`; ui/as-of.ts). */
    const asOfPoints = new WeakMap<FastifyRequest, PagePoint>();
    // Every form post carries the session's CSRF token (`_csrf`); a missing or wrong one is a 403.
    ui.addHook("preHandler", (req, reply, done) => {
      if (req.method === "POST") ui.csrfProtection(req, reply, done);
      else done();
    });
    ui.addHook("preHandler", async (req, reply) => {
      const path = req.url.split("?")[0]!;
      if (PUBLIC.has(path)) return;
      const actor = req.session.userId ? await actorById(store, req.session.userId) : undefined;
      if (!actor) {
        reply.redirect(`/login/?next=${encodeURIComponent(req.url)}`, 302);
        return reply;
      }
      actors.set(req, actor);
      menus.set(req, menuFor(reg, await grantsFor(req, actor)));
      const point = await pointOfPage(req, store, reg, settings);
      if (point) asOfPoints.set(req, point);
    });

    ui.setErrorHandler((err, req, reply) => {
      const status =
        err instanceof AppError ? err.status : ((err as { statusCode?: number }).statusCode ?? 500);
      if (status >= 500) req.log.error({ err }, "ui error");
      const csrfError = (err as { code?: string }).code?.startsWith("FST_CSRF");
      const message = csrfError
        ? "CSRF token missing or incorrect."
        : status === 403
          ? (err as Error).message || "You do not have permission to see this page."
          : status === 404
            ? "No such page."
            : status >= 500
              ? "Something went wrong."
              : (err as Error).message;
      return kit.page(
        req,
        reply,
        "message",
        { title: status === 404 ? "Not found" : `Error ${status}`, message },
        status,
      );
    });

    const kit: UiKit = {
      store,
      reg,
      loginLimiter: opts.loginLimiter ?? new LoginLimiter(DEFAULT_LOGIN_LIMITS),
      actor: (req) => {
        const a = actors.get(req);
        if (!a) throw new AppError(403, "Not logged in.");
        return a;
      },
      async ctxFor(req, opts = {}) {
        const actor = kit.actor(req);
        const grants = await grantsFor(req, actor);
        const point = asOfPoints.get(req);
        if (point !== undefined) return ctxAt(makeCtx({ store, reg, settings, actor, grants }), point.seq);
        const cached = req.method === "GET";
        const tokens = await store.freshTokens();
        return makeCtx({
          store,
          reg,
          settings,
          actor,
          grants,
          cached,
          token: cached ? tokens.data : undefined,
          definitionsToken: tokens.definitions,
          ...(opts.absolute ? { baseUrl: `${req.protocol}://${req.host}` } : {}),
        });
      },
      page(req, reply, name, data, status = 200) {
        const point = asOfPoints.get(req);
        const html0 = renderPage(name, {
          ...data,
          // At a point of history the page reads only: no write controls (ui/as-of.ts).
          ...(point ? { ...READ_ONLY_PAGE, asOf: point } : {}),
          user: actors.get(req),
          csrf: reply.generateCsrf(),
          menu: menus.get(req) ?? [],
          flash: actors.get(req) ? takeFlash(req) : [],
          theme: themeOf(req),
          here: req.url,
        });
        const html = point ? linksAtPoint(html0, point.seq) : html0;
        return reply
          .code(status)
          .header("Content-Type", "text/html; charset=utf-8")
          .header("Cache-Control", "no-store")
          .send(html);
      },
    };
    await ui.register(authRoutes, { kit });
    await ui.register(assetRoutes, { kit });
    await ui.register(editRoutes, { kit });
    await ui.register(bulkEditRoutes, { kit });
    await ui.register(listRoutes, { kit });
    await ui.register(exportRoutes, { kit });
    await ui.register(prefsRoutes, { kit });
    await ui.register(columnRoutes, { kit });
    await ui.register(actionRoutes, { kit, webhookSettings: opts.webhookSettings });
    await ui.register(lookupRoutes, { kit });
    await ui.register(traceRoutes, { kit });
    await ui.register(componentRoutes, { kit });
    await ui.register(allocateRoutes, { kit });
    await ui.register(importRoutes, { kit });
    // Issue 25 (helper U4): profile (tokens, password), GraphiQL, note edit/delete.
    await ui.register(profileRoutes, { kit });
    await ui.register(graphiqlRoutes, { kit, graphql: opts.graphql });
    await ui.register(noteRoutes, { kit });
    await ui.register(historyPageRoutes, { kit });
    await ui.register(browseRoutes, { kit });
  });
}
