/**
 * The user's profile (issue 25; Nautobot 1.6 `/user/profile/`): their API tokens (list, create — the key is
 * shown once, in the answer to the POST that created it, never stored in the session —, delete) and a
 * password change. Every logged-in user may manage their own account; the work is done by
 * service/profile.ts (token keys hashed, passwords checked through the shared login limiter and hashed).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { AppError, NotFoundError, ValidationError } from "../../service/errors.ts";
import { changeOwnPassword, createOwnToken, deleteOwnToken, ownTokens } from "../../service/profile.ts";
import { flash } from "../flash.ts";
import { splitErrors } from "../forms.ts";
import type { UiKit } from "../plugin.ts";

type Body = Record<string, unknown>;
const text = (v: unknown) => (typeof v === "string" ? v : "");
const when = (v: unknown) =>
  v
    ? String(v)
        .replace("T", " ")
        .replace(/\.\d+/, "")
        .replace(/(Z|\+00:00)$/, " UTC")
        .slice(0, 23)
    : "";

export async function profileRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  /** The profile page; `extra`: a fresh key, the password form's errors, the token form's errors. */
  const page = async (
    req: FastifyRequest,
    reply: FastifyReply,
    extra: {
      newKey?: string;
      passwordErrors?: Record<string, string[]>;
      passwordGeneral?: string[];
      tokenErrors?: string[];
    } = {},
    status = 200,
  ) => {
    const ctx = await kit.ctxFor(req);
    const tokens = (await ownTokens(ctx)).map((t) => ({
      id: String(t.id),
      suffix: String(t.key_suffix ?? ""),
      description: String(t.description ?? ""),
      writeEnabled: !!t.write_enabled,
      created: when(t.created),
      expires: when(t.expires),
    }));
    return kit.page(
      req,
      reply,
      "profile",
      { title: "Profile", account: kit.actor(req), tokens, passwordErrors: {}, ...extra },
      status,
    );
  };

  app.get("/user/profile/", async (req, reply) => page(req, reply));

  app.post("/user/tokens/", async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const expires = text(body.expires).trim();
    try {
      const { key } = await createOwnToken(await kit.ctxFor(req), {
        description: text(body.description).trim(),
        writeEnabled: body.write_enabled === "on" || body.write_enabled === "true",
        expires: expires || undefined,
      });
      flash(req, "success", "Created token");
      return page(req, reply, { newKey: key }, 201);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const { fields, general } = splitErrors(e);
      const msgs = [...general, ...Object.entries(fields).flatMap(([k, m]) => m.map((x) => `${k}: ${x}`))];
      return page(req, reply, { tokenErrors: msgs }, 400);
    }
  });

  app.post("/user/tokens/:id/delete/", async (req, reply) => {
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    await deleteOwnToken(await kit.ctxFor(req), id);
    flash(req, "success", "Deleted token");
    return reply.redirect("/user/profile/#tokens", 302);
  });

  app.post("/user/password/", async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    try {
      await changeOwnPassword(await kit.ctxFor(req), kit.loginLimiter, {
        ip: req.ip,
        current: text(body.old_password),
        password: text(body.new_password1),
        confirm: text(body.new_password2),
        keepSession: req.session.sessionId,
      });
    } catch (e) {
      if (e instanceof ValidationError) {
        const { fields, general } = splitErrors(e);
        return page(req, reply, { passwordErrors: fields, passwordGeneral: general }, 400);
      }
      if (e instanceof AppError && e.status === 429) {
        if (e.headers) reply.headers(e.headers);
        return page(req, reply, { passwordGeneral: [`Too many failed password checks. ${e.message}`] }, 429);
      }
      throw e;
    }
    flash(req, "success", "Your password has been changed.");
    return reply.redirect("/user/profile/", 302);
  });
}
