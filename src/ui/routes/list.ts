/**
 * List pages of every model (`/<app>/<path>/`, issue 10, issue 25): Nautobot's default columns (declared in
 * `registry/presentation.ts`), the API's filters and `q` from the query string, a filter form (status and
 * role first) that shows every active filter of the URL as a removable chip, the user's own columns
 * ("Configure", routes/columns.ts), sortable columns showing
 * their direction, page size and pagination, bulk edit/delete and export controls by permission.
 * Reads go through the service layer with the user's permissions.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Model } from "../../registry/index.ts";
import { NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import { boundedFilters, listRows } from "../../service/read.ts";
import { represent } from "../../service/represent.ts";
import { userColumns } from "../column-choice.ts";
import { objectTitle, shownValue } from "../columns.ts";
import { type FilterControl, filterControls } from "../filters.ts";
import { esc, valueHtml } from "../format.ts";
import { listQuery, PAGING_PARAMS, sortable } from "../list-query.ts";
import { browsable } from "../menu.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf, uiUrl } from "../views.ts";
import { exportTemplatesOf } from "./export.ts";

type Obj = Record<string, unknown>;

/** An active filter of the URL as the form shows it: what it is, and the URL without it. */
export interface FilterChip {
  label: string;
  value: string;
  removeUrl: string;
}

/** The URL of a list with `params` (an ordered multimap), without an empty `?`. */
export function listUrl(model: Model, params: Iterable<[string, string]>, suffix = ""): string {
  const s = new URLSearchParams([...params]).toString();
  return `/${model.app}/${model.path}/${suffix}${s ? `?${s}` : ""}`;
}

const pairs = (m: Map<string, string[]>) =>
  [...m].flatMap(([k, vs]) => vs.map((v) => [k, v] as [string, string]));

/** One chip per filter value of the URL, labelled from the form's control when it has one. */
function chipsOf(
  model: Model,
  filters: Map<string, string[]>,
  all: Map<string, string[]>,
  controls: FilterControl[],
) {
  const chips: FilterChip[] = [];
  for (const [k, vs] of filters)
    for (const v of vs) {
      const control = controls.find((c) => c.param === k);
      const field = model.fields[k] ?? model.fields[k.replace(/_id$/, "")];
      chips.push({
        label: k === "q" ? "Search" : (control?.label ?? field?.label ?? titleOf(k.replace(/_/g, " "))),
        value: control?.options?.find((o) => o.value === v)?.label ?? v,
        removeUrl: listUrl(
          model,
          pairs(all).filter(([pk, pv]) => pk !== "offset" && !(pk === k && pv === v)),
        ),
      });
    }
  return chips;
}

export async function listRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const modelOf = (req: FastifyRequest): Model => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = kit.reg.byUrl(a, model);
    if (!m || !browsable(m)) throw new NotFoundError();
    return m;
  };

  app.get("/:app/:model/", async (req, reply) => {
    const model = modelOf(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, model, "view")) throw new PermissionDenied();
    const { all, filters, limit, offset, sort } = listQuery(req, model);
    let error: string | undefined;
    let result = { count: 0, rows: [] as Obj[] };
    try {
      result = await listRows(ctx, model, {
        params: boundedFilters(filters),
        limit,
        offset,
        ...(sort ? { ordering: [sort] } : {}),
      });
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      error = Object.entries(e.errors as Record<string, string[]>)
        .map(([k, v]) => `${k}: ${[v].flat().join(" ")}`)
        .join("; ");
    }
    // The user's chosen columns in their order (ui/column-choice.ts), else Nautobot's defaults.
    const cols = await userColumns(kit.store, kit.actor(req).id, model);
    // The columns only (issue 25): what a full representation adds besides them (paths, counts, tags,
    // other relations) is not loaded for a list.
    const objs = await represent(ctx, model, result.rows, "full", {
      nestIds: true,
      include: new Set(),
      excludeConfigContext: true,
      only: new Set(cols),
    });
    const link = (o: number, sortBy?: string) =>
      listUrl(model, [
        ...pairs(all).filter(([k]) => k !== "offset" && (sortBy === undefined || k !== "sort")),
        ...(sortBy ? [["sort", sortBy] as [string, string]] : []),
        ...(o > 0 ? [["offset", String(o)] as [string, string]] : []),
      ]);
    const header = (label: string, field: string | undefined) => {
      if (!field || !sortable(model, field)) return { label };
      const dir = sort === field ? "ascending" : sort === `-${field}` ? "descending" : undefined;
      return { label, sortUrl: link(0, sort === field ? `-${field}` : field), dir };
    };
    const rows = objs.map((o) => [
      `<a href="${esc(uiUrl(o.url))}">${esc(objectTitle(model, o))}</a>`,
      ...cols.map((c) => valueHtml(shownValue(kit.reg, model, c, o[c]), c)),
    ]);
    const writable = !model.readOnly && model.key !== "users.token";
    const controls = await filterControls(ctx, model, all);
    // Filters of the URL that no control of the form carries are kept by the form as hidden inputs.
    const hidden = [
      ...pairs(filters).filter(([k]) => k !== "q" && !controls.some((c) => c.param === k)),
      ...(sort ? [["sort", sort] as [string, string]] : []),
    ];
    const templates = await exportTemplatesOf(ctx, model);
    const exportQuery = pairs(all).filter(([k]) => !PAGING_PARAMS.has(k));
    return kit.page(req, reply, "list", {
      filters: controls,
      chips: chipsOf(model, filters, all, controls),
      hidden,
      clearUrl: listUrl(
        model,
        pairs(all).filter(([k]) => k === "limit" || k === "sort"),
      ),
      exportUrl: listUrl(model, exportQuery, "export/"),
      tableExportUrl: listUrl(model, [...exportQuery, ["export", "table"]], "export/"),
      configureUrl: listUrl(model, [["return_url", req.url]], "columns/"),
      exportTemplates: templates.map((t) => ({
        name: t.name,
        url: listUrl(model, [...exportQuery, ["template", t.id]], "export/"),
      })),
      addUrl: writable && mayDo(ctx.grants, model, "add") ? `/${model.app}/${model.path}/add/` : undefined,
      bulkUrl:
        writable && mayDo(ctx.grants, model, "delete") ? `/${model.app}/${model.path}/delete/` : undefined,
      bulkEditUrl:
        writable && mayDo(ctx.grants, model, "change") ? `/${model.app}/${model.path}/edit/` : undefined,
      returnUrl: req.url,
      ids: objs.map((o) => String(o.id)),
      title: titleOf(model.plural ?? `${model.verbose}s`),
      q: all.get("q")?.[0] ?? "",
      count: result.count,
      limit,
      error,
      columns: [
        header(titleOf(model.verbose), model.fields.name ? "name" : undefined),
        ...cols.map((c) => header(model.fields[c]?.label ?? titleOf(c.replace(/_/g, " ")), c)),
      ],
      rows,
      from: result.count ? offset + 1 : 0,
      to: offset + objs.length,
      prev: offset > 0 ? link(Math.max(offset - limit, 0)) : undefined,
      next: offset + limit < result.count ? link(offset + limit) : undefined,
    });
  });
}
