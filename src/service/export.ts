/**
 * Exports of filtered lists (issue 25; Nautobot's "Export" button of list views): CSV rows flattened from
 * the API's representation, and export templates (`extras.exporttemplate`, Jinja) rendered over the
 * objects in the bounded renderer (`template/bounded.ts`: own process, deadline, output and heap budget).
 */
import type { Model } from "../registry/index.ts";
import { renderBounded, renderBudgetFromEnv } from "../template/bounded.ts";
import type { Ctx } from "./context.ts";
import { ValidationError } from "./errors.ts";
import { listRows } from "./read.ts";
import { represent } from "./represent.ts";

type Obj = Record<string, unknown>;

/** Most objects one export template renders over (their representations travel to the renderer process). */
export const EXPORT_TEMPLATE_MAX_OBJECTS = 10_000;

/** Rows read per page while exporting. */
export const EXPORT_PAGE_ROWS = 500;

/** Representation keys never exported (rendered per object, large, and not a field of the object). */
const NOT_EXPORTED = new Set(["config_context"]);

/**
 * One CSV cell of a representation value: `null` → empty; a choice or status → its value; a related
 * object → its display; a list → its cells joined by commas; any other object → compact JSON.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(csvCell).join(",");
  if (typeof v === "object") {
    const o = v as Obj;
    if ("value" in o && "label" in o && Object.keys(o).length === 2) return csvCell(o.value);
    if ("display" in o) return String(o.display);
    return JSON.stringify(o);
  }
  return String(v);
}

/** The CSV header of a model's export: the API field names of its representation (`obj`'s keys if given). */
export function csvHeader(model: Model, obj?: Obj): string[] {
  const keys = obj
    ? Object.keys(obj)
    : [
        "id",
        "url",
        "display",
        ...model.fieldList.filter(([, d]) => !d.hidden && !d.writeOnly).map(([n]) => n),
      ];
  return keys.filter((k) => !NOT_EXPORTED.has(k));
}

/**
 * Pages of full representations (as the API lists them, without config contexts) of the objects of
 * `model` matching `params`, in `ordering` or the model's order, `EXPORT_PAGE_ROWS` at a time. The first
 * page is read before this returns, so a bad filter throws (ValidationError) before anything is sent.
 */
export async function exportPages(
  ctx: Ctx,
  model: Model,
  params: ReadonlyMap<string, string[]>,
  ordering?: readonly string[],
): Promise<AsyncGenerator<Obj[]>> {
  const page = async (offset: number) => {
    const { rows } = await listRows(ctx, model, {
      params,
      limit: EXPORT_PAGE_ROWS,
      offset,
      skipCount: true,
      ...(ordering ? { ordering } : {}),
    });
    return {
      rows,
      objs: await represent(ctx, model, rows, "full", { include: new Set(), excludeConfigContext: true }),
    };
  };
  const first = await page(0);
  return (async function* () {
    let current = first;
    let offset = 0;
    for (;;) {
      if (current.objs.length) yield current.objs;
      if (current.rows.length < EXPORT_PAGE_ROWS) return;
      offset += EXPORT_PAGE_ROWS;
      current = await page(offset);
    }
  })();
}

/**
 * Render export template `template` (an `extras.exporttemplate` row) over `objs` (`queryset` in the
 * template, a list of API representations, as Nautobot passes its queryset).
 * @throws ValidationError (400) over `EXPORT_TEMPLATE_MAX_OBJECTS` objects; TemplateError from the
 *   renderer (syntax, deadline, output or heap budget).
 */
export async function renderExportTemplate(template: Obj, objs: Obj[]): Promise<string> {
  if (objs.length > EXPORT_TEMPLATE_MAX_OBJECTS)
    throw new ValidationError({
      template: [
        `An export template renders at most ${EXPORT_TEMPLATE_MAX_OBJECTS} objects; this filter selects more. Narrow the filter.`,
      ],
    });
  return renderBounded(String(template.template_code ?? ""), { queryset: objs }, renderBudgetFromEnv());
}

/** The export templates of `model` the user may view, by name. */
export async function exportTemplatesFor(ctx: Ctx, model: Model): Promise<Obj[]> {
  const et = ctx.reg.get("extras.exporttemplate");
  // The filter takes only the types export templates may be for (a 400 for any other, as Nautobot's).
  if (
    !ctx.reg
      .resolveAllowed((et.fields.content_type as { allowed: string[] | string }).allowed)
      .includes(model.key)
  )
    return [];
  const { rows } = await listRows(ctx, et, {
    params: new Map([["content_type", [model.key]]]),
    limit: 100,
    offset: 0,
  });
  return rows.filter((r) => r.content_type === model.key);
}
