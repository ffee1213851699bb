/**
 * The members table of a dynamic group's page (issue 25): the objects its filter and child groups select,
 * a page at a time with the same `limit`/`offset` (default 50, at most 1,000) and the same rows and order
 * as the API's `GET /api/extras/dynamic-groups/<id>/members/` (service/dynamic-groups.ts `groupMembers`,
 * under the user's view permission on the member model), in the member model's list columns.
 */
import type { Ctx } from "../service/context.ts";
import { groupMembers } from "../service/dynamic-groups.ts";
import { ValidationError } from "../service/errors.ts";
import { mayDo } from "../service/permissions.ts";
import { represent } from "../service/represent.ts";
import type { Row } from "../service/rows.ts";
import type { ChildTable } from "./children.ts";
import { defaultColumns } from "./columns.ts";
import { esc, valueHtml } from "./format.ts";
import { titleOf, uiUrl } from "./views.ts";

/** Rows per page of the members table unless `?limit=` says otherwise. */
export const MEMBERS_PER_PAGE = 50;

/** A members table: a child table plus its pager and, for an unusable stored filter, the reason. */
export interface MembersTable extends ChildTable {
  /** "Showing 1–50 of 120" and the links to the previous and next pages (relative URLs of this page). */
  pager?: { text: string; prev?: string; next?: string };
  /** Why the members cannot be listed (a stored filter naming something since deleted). */
  note?: string;
}

/**
 * The members table of dynamic group `group` (a raw `extras_dynamicgroup` row) for page `query` (the
 * detail page's query string: `limit`, `offset`); undefined when the user may not view the member model.
 */
export async function memberTable(
  ctx: Ctx,
  group: Row,
  query: Map<string, string[]>,
): Promise<MembersTable | undefined> {
  const member = ctx.reg.models.get(String(group.content_type));
  if (!member || !mayDo(ctx.grants, member, "view")) return undefined;
  const limit = Math.min(Math.max(Number(query.get("limit")?.[0]) || MEMBERS_PER_PAGE, 1), 1000);
  const offset = Math.max(Number(query.get("offset")?.[0]) || 0, 0);
  const title = titleOf(member.plural ?? `${member.verbose}s`);
  let page: { count: number; rows: Row[] };
  try {
    page = await groupMembers(ctx, group, { limit, offset });
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    const errs = e.errors as Record<string, unknown>;
    return {
      title: `Members: ${title}`,
      columns: [],
      rows: [],
      note: [errs.filter ?? e.message].flat().join(" "),
    };
  }
  const cols = defaultColumns(member);
  const objs = await represent(ctx, member, page.rows, "full", {
    nestIds: true,
    include: new Set(),
    excludeConfigContext: true,
  });
  const at = (o: number) => `?${new URLSearchParams({ limit: String(limit), offset: String(o) })}#members`;
  const last = Math.min(offset + page.rows.length, page.count);
  return {
    title: `Members: ${title} (${page.count})`,
    columns: [titleOf(member.verbose), ...cols.map((n) => titleOf(n.replace(/_/g, " ")))],
    rows: objs.map((o) => [
      `<a href="${esc(uiUrl(o.url))}">${esc(o.display)}</a>`,
      ...cols.map((n) => valueHtml(o[n], n)),
    ]),
    pager: {
      text: page.count ? `Showing ${offset + 1}–${last} of ${page.count}` : "No members",
      ...(offset > 0 ? { prev: at(Math.max(offset - limit, 0)) } : {}),
      ...(offset + limit < page.count ? { next: at(offset + limit) } : {}),
    },
  };
}
