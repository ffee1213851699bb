/**
 * Pages at a point of history (issue 27): `?as_of_seq=N` or `?as_of=<time>` on a versioned model's list or
 * detail page reads the state after change N through the service's as-of contexts, shows a banner, hides
 * every write control, and keeps the point on the page's links to other objects, so browsing stays there.
 */
import type { FastifyRequest } from "fastify";
import type { Registry } from "../registry/index.ts";
import { makeCtx, type ServiceSettings } from "../service/context.ts";
import { AppError } from "../service/errors.ts";
import { resolvePoint, versioned } from "../service/history.ts";
import { commitsBefore } from "../service/history-diff.ts";
import type { Store } from "../store/db.ts";

/** The point a page shows. */
export interface PagePoint {
  seq: number;
  time: string | null;
  /** The same page now. */
  liveUrl: string;
}

/** Page data that hides write controls (list and detail templates). */
export const READ_ONLY_PAGE = {
  editUrl: undefined,
  deleteUrl: undefined,
  addUrl: undefined,
  bulkEditUrl: undefined,
  bulkUrl: undefined,
  notesUrl: undefined,
  actions: [],
  tools: [],
  menus: [],
  links: [],
  // The change log is not history: it lists later changes too.
  changes: [],
  showChanges: false,
};

/** Apps whose pages are objects (links to them keep the point). */
const OBJECT_LINK = /(data-now )?href="(\/(?:circuits|dcim|extras|ipam|tenancy|virtualization)\/[^"#]*)"/g;

/** `html` with the point added to its links to object pages (not to edit, delete or history pages). */
export function linksAtPoint(html: string, seq: number): string {
  return html.replace(OBJECT_LINK, (all, now: string | undefined, url: string) => {
    if (now || /\/(edit|delete|history|add|import)\/|[?&](amp;)?as_of/.test(url)) return all;
    return `href="${url}${url.includes("?") ? "&amp;" : "?"}as_of_seq=${seq}"`;
  });
}

/**
 * The point a GET page asks for, undefined when none. @throws AppError 400 on a page that cannot show
 * history (not a versioned model's list or detail) or for a point history cannot answer.
 */
export async function pointOfPage(
  req: FastifyRequest,
  store: Store,
  reg: Registry,
  settings: ServiceSettings,
): Promise<PagePoint | undefined> {
  if (req.method !== "GET") return undefined;
  const q = new URL(req.url, "http://x").searchParams;
  const seq = q.get("as_of_seq") ?? undefined;
  const time = q.get("as_of") ?? undefined;
  if (seq === undefined && time === undefined) return undefined;
  const { app, model } = (req.params ?? {}) as { app?: string; model?: string };
  const m = app && model ? reg.byUrl(app, model) : undefined;
  if (!m || !versioned(m)) throw new AppError(400, "This page has no history to show.");
  const ctx = makeCtx({ store, reg, settings });
  const point = await resolvePoint(ctx, time, seq);
  const [commit] = await commitsBefore(ctx, point, 1);
  q.delete("as_of_seq");
  q.delete("as_of");
  const rest = q.toString();
  return {
    seq: point,
    time: commit?.seq === point ? commit.time : null,
    liveUrl: `${req.url.split("?")[0]}${rest ? `?${rest}` : ""}`,
  };
}
