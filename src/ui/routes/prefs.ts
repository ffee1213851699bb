/**
 * Per-user display preferences of the web interface (issue 25): the colour theme. By default pages follow
 * the browser's `prefers-color-scheme`; "Dark" or "Light" chosen with the toggle in the header is
 * remembered in a `ui_theme` cookie (a year, HttpOnly, SameSite=Lax) and wins over the browser's choice.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../service/errors.ts";
import type { UiKit } from "../plugin.ts";

/** The themes a user can pick; "auto" follows `prefers-color-scheme`. */
export const THEMES = ["auto", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

const COOKIE = "ui_theme";

/** The request's chosen theme (`ui_theme` cookie), "auto" when none or an unknown one is set. */
export function themeOf(req: FastifyRequest): Theme {
  const v = (req.cookies as Record<string, string | undefined> | undefined)?.[COOKIE];
  return (THEMES as readonly string[]).includes(v ?? "") ? (v as Theme) : "auto";
}

/** A local path to return to: same-origin paths only (`/x`, never `//host` or a scheme). */
export function localPath(v: unknown, fallback = "/"): string {
  const s = typeof v === "string" ? v : "";
  return s.startsWith("/") && !s.startsWith("//") && !s.startsWith("/\\") ? s : fallback;
}

export async function prefsRoutes(app: FastifyInstance, _opts: { kit: UiKit }): Promise<void> {
  // POST /theme/ theme=auto|light|dark&next=<path>: remember the choice, back to the page (CSRF-checked).
  app.post("/theme/", async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const theme = String(body.theme ?? "");
    if (!(THEMES as readonly string[]).includes(theme))
      throw new AppError(400, `theme: "${theme.slice(0, 20)}" is not one of ${THEMES.join(", ")}.`);
    if (theme === "auto") reply.clearCookie(COOKIE, { path: "/" });
    else
      reply.setCookie(COOKIE, theme, {
        path: "/",
        httpOnly: true,
        sameSite: "lax",
        secure: "auto",
        maxAge: 365 * 24 * 3600,
      });
    return reply.redirect(localPath(body.next), 302);
  });
}
