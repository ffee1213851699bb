/**
 * Flash messages (issue 25; Django's `messages` framework as Nautobot uses it): a write queues a short
 * message in the user's session ("Created device ams1-leaf1", "Deleted 3 devices") and the next page drawn
 * for that session shows it once. Messages live in the database-backed session (`service/sessions.ts`), so
 * they survive the redirect whichever process serves the next page.
 */
import type { FastifyRequest } from "fastify";
import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { getRow } from "../service/read.ts";
import { represent } from "../service/represent.ts";

/** One message: its level (Bootstrap's alert levels, as Nautobot) and its text (plain, escaped when drawn). */
export interface FlashMessage {
  level: "success" | "info" | "warning" | "danger";
  text: string;
}

declare module "fastify" {
  interface Session {
    flash?: FlashMessage[];
  }
}

/** Most messages queued at once; older ones are dropped first. */
const MAX_QUEUED = 5;

/** Queue `text` for the next page of this session. */
export function flash(req: FastifyRequest, level: FlashMessage["level"], text: string): void {
  req.session.flash = [...(req.session.flash ?? []), { level, text }].slice(-MAX_QUEUED);
}

/** The queued messages, removed from the session (each is shown once). */
export function takeFlash(req: FastifyRequest): FlashMessage[] {
  const queued = req.session?.flash ?? [];
  if (queued.length) req.session.flash = undefined;
  return queued;
}

/** An object's display for a message (its `display`, as the API gives it). */
export async function displayOf(ctx: Ctx, model: Model, id: string): Promise<string> {
  const [o] = await represent(ctx, model, [await getRow(ctx, model, id)], "nested");
  return String(o?.display ?? id);
}

/**
 * Where a bulk action returns: the posted `return_url` when it is the list page `list` itself with its
 * query string (filters, sort, page), else `list` (never another path or host).
 */
export function returnTo(posted: unknown, list: string): string {
  const s = typeof posted === "string" ? posted : "";
  return s === list || s.startsWith(`${list}?`) ? s : list;
}
