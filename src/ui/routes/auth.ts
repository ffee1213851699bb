/** Log in and out (`/login/`, `/logout/`), with the API's users and passwords. */
import type { FastifyInstance } from "fastify";
import { AppError } from "../../service/errors.ts";
import { verifyLogin } from "../../service/sessions.ts";
import type { UiKit } from "../plugin.ts";

/** Stands for this server's origin when resolving `next`: any origin that is not a real host would do. */
const HERE = "http://inventory.invalid";

/**
 * Where to go after login: `next` when it is a path of this site, else `/` (issue 23: no open redirect).
 * The value is resolved as a browser resolves a `Location` (WHATWG URL against this origin), so
 * `//evil.example`, `/\evil.example`, `/<TAB>/evil.example` and `https://evil.example` all fall back to `/`;
 * a path whose decoded form holds a backslash or starts with `//` does too (a later decode must not turn it
 * into one of those). Returns the normalised path, query and fragment, never the raw text.
 */
export function safeNext(v: unknown): string {
  if (typeof v !== "string" || !v.startsWith("/")) return "/";
  let url: URL;
  try {
    url = new URL(v, `${HERE}/`);
  } catch {
    return "/";
  }
  if (url.origin !== HERE) return "/";
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    return "/";
  }
  if (decoded.includes("\\") || decoded.startsWith("//")) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}

export async function authRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  app.get("/login/", async (req, reply) => {
    const next = safeNext((req.query as { next?: string }).next);
    return kit.page(req, reply, "login", { title: "Log in", next });
  });

  app.post("/login/", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next);
    const username = typeof body.username === "string" ? body.username : "";
    const password = typeof body.password === "string" ? body.password : "";
    const again = (status: number, error: string) =>
      kit.page(req, reply, "login", { title: "Log in", next, username, error }, status);
    let actor: Awaited<ReturnType<typeof verifyLogin>>;
    try {
      // The limiter shared with the API's HTTP Basic: 429 for an address over its limit (issue 23).
      actor = await verifyLogin(kit.store, kit.loginLimiter, { ip: req.ip, username, password });
    } catch (e) {
      if (!(e instanceof AppError && e.status === 429)) throw e;
      if (e.headers) reply.headers(e.headers);
      return again(429, `Too many failed logins from your address. ${e.message}`);
    }
    if (!actor) return again(400, "Please enter a correct username and password.");
    await req.session.regenerate();
    req.session.userId = actor.id;
    await req.session.save();
    return reply.redirect(next, 302);
  });

  for (const method of ["GET", "POST"] as const)
    app.route({
      method,
      url: "/logout/",
      handler: async (req, reply) => {
        if (method === "POST") await req.session.destroy();
        return reply.redirect(method === "POST" ? "/login/" : "/", 302);
      },
    });
}
