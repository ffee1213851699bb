/** Log in and out (`/login/`, `/logout/`), with the API's users and passwords. */
import type { FastifyInstance } from "fastify";
import { verifyLogin } from "../../service/sessions.ts";
import type { UiKit } from "../plugin.ts";

/** Only local paths are followed after login (no open redirect). */
const safeNext = (v: unknown) =>
  typeof v === "string" && v.startsWith("/") && !v.startsWith("//") ? v : "/";

export async function authRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  app.get("/login/", async (req, reply) => {
    const next = safeNext((req.query as { next?: string }).next);
    return kit.page(req, reply, "login", { title: "Log in", next });
  });

  app.post("/login/", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, string>;
    const next = safeNext(body.next);
    const actor = await verifyLogin(kit.store, String(body.username ?? ""), String(body.password ?? ""));
    if (!actor)
      return kit.page(
        req,
        reply,
        "login",
        {
          title: "Log in",
          next,
          username: body.username,
          error: "Please enter a correct username and password.",
        },
        400,
      );
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
