/**
 * Export of a list page's objects (issue 25; Nautobot's "Export" menu of list views):
 * `GET /<app>/<path>/export/?<the list's filters>` streams every matching object as CSV (header: the API's
 * field names; cells as `service/export.ts` `csvCell` flattens them; with `&export=table`, Nautobot's
 * "Current view": `display` and the user's chosen list columns only), read in pages so memory stays
 * bounded whatever the count; `&template=<export template id>` renders that export template of the model
 * over the objects in the bounded Jinja renderer and serves it with the template's MIME type and file
 * extension. Needs `view` on the model, reads with the user's permissions.
 */
import { Readable } from "node:stream";
import { stringify } from "csv-stringify/sync";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError, NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import {
  csvCell,
  csvHeader,
  EXPORT_TEMPLATE_MAX_OBJECTS,
  exportPages,
  exportTemplatesFor,
  renderExportTemplate,
} from "../../service/export.ts";
import { mayDo } from "../../service/permissions.ts";
import { boundedFilters } from "../../service/read.ts";
import { userColumns } from "../column-choice.ts";
import { listQuery } from "../list-query.ts";
import { browsable } from "../menu.ts";
import type { UiKit } from "../plugin.ts";

type Obj = Record<string, unknown>;

/** The export templates offered on a model's list page: id and name, for users who may view them. */
export async function exportTemplatesOf(
  ctx: Ctx,
  model: Model,
): Promise<Array<{ id: string; name: string }>> {
  if (!mayDo(ctx.grants, ctx.reg.get("extras.exporttemplate"), "view")) return [];
  return (await exportTemplatesFor(ctx, model)).map((t) => ({ id: String(t.id), name: String(t.name) }));
}

/** A file name of safe characters only. */
const fileName = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 100) || "export";

export async function exportRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  app.get("/:app/:model/export/", async (req: FastifyRequest, reply) => {
    const { app: a, model: path } = req.params as { app: string; model: string };
    const model = kit.reg.byUrl(a, path);
    if (!model || !browsable(model)) throw new NotFoundError();
    const ctx = await kit.ctxFor(req, { absolute: true });
    if (!mayDo(ctx.grants, model, "view")) throw new PermissionDenied();
    const { filters, sort } = listQuery(req, model);
    const templateParam = filters.get("template")?.[0];
    filters.delete("template");
    // `export=table` (Nautobot's "Current view"): the list's title and the user's columns, in their order.
    const tableView = filters.get("export")?.[0] === "table";
    filters.delete("export");
    const viewColumns = tableView
      ? ["display", ...(await userColumns(kit.store, kit.actor(req).id, model))]
      : undefined;
    const pages = await (async () =>
      exportPages(ctx, model, boundedFilters(filters), sort ? [sort] : undefined))().catch((e: unknown) => {
      if (e instanceof ValidationError) throw new AppError(400, validationText(e));
      throw e;
    });
    if (templateParam !== undefined) {
      const id = normalizeUuid(templateParam);
      const template = (await exportTemplatesFor(ctx, model)).find((t) => t.id === id);
      if (!template)
        throw new AppError(404, `template: no export template ${templateParam.slice(0, 40)} for this list.`);
      const objs: Obj[] = [];
      for await (const page of pages) {
        objs.push(...page);
        if (objs.length > EXPORT_TEMPLATE_MAX_OBJECTS) break;
      }
      let out: string;
      try {
        out = await renderExportTemplate(template, objs);
      } catch (e) {
        if (e instanceof ValidationError) throw new AppError(400, validationText(e));
        throw new AppError(400, `template: ${(e as Error).message}`);
      }
      const ext = String(template.file_extension ?? "") || "txt";
      return reply
        .header("Content-Type", `${String(template.mime_type ?? "") || "text/plain"}; charset=utf-8`)
        .header("Content-Disposition", `attachment; filename="${fileName(`${template.name}.${ext}`)}"`)
        .header("Cache-Control", "no-store")
        .send(out);
    }
    async function* csv() {
      let header: string[] | undefined;
      for await (const page of pages) {
        if (!header) {
          header = viewColumns ?? csvHeader(model!, page[0]);
          yield stringify([header]);
        }
        yield stringify(page.map((o) => header!.map((k) => csvCell(o[k]))));
      }
      if (!header) yield stringify([viewColumns ?? csvHeader(model!)]);
    }
    return reply
      .header("Content-Type", "text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${fileName(`${model.app}_${model.path}.csv`)}"`)
      .header("Cache-Control", "no-store")
      .send(Readable.from(csv()));
  });
}

/** A validation error's fields and messages as one line ("status: Select a valid choice."). */
const validationText = (e: ValidationError) =>
  Array.isArray(e.errors)
    ? e.errors.map(String).join(" ")
    : Object.entries(e.errors)
        .map(([k, v]) => `${k}: ${[v].flat().join(" ")}`)
        .join("; ");
