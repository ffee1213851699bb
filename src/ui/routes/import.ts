/**
 * Import from list pages for every model (issue 25; Nautobot 1.6 `BulkImportView`): CSV (the API's
 * writable field names as headers, references by natural key), JSON or YAML (a list of API bodies), pasted
 * into a text box or uploaded as a file (multipart, through @fastify/multipart, this scope only). A first
 * post shows a preview (how many records, the first rows as they will be sent); confirming creates them all
 * through the service layer's bulk create in one transaction, as the logged-in user (service/import.ts):
 * all or none, the failed rows listed with their row numbers and fields.
 */
import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Model } from "../../registry/index.ts";
import type { Ctx } from "../../service/context.ts";
import { NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import {
  ImportFailed,
  type ImportFormat,
  importObjects,
  importRecords,
  type RowErrors,
} from "../../service/import.ts";
import { mayDo } from "../../service/permissions.ts";
import { flash } from "../flash.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf } from "../views.ts";

type Obj = Record<string, unknown>;

/** Rows shown in the preview. */
const PREVIEW_ROWS = 10;
/** Failed rows listed after a refused import (the count says how many more). */
const SHOWN_ROWS = 50;
/** Largest uploaded file, bytes. */
const MAX_FILE = 5 * 1024 * 1024;

const FORMATS: ImportFormat[] = ["csv", "json", "yaml"];

/** The header line a CSV import of `model` may use: its writable fields, required ones first. */
function csvHeaders(model: Model): string[] {
  const fields = model.fieldList.filter(
    ([, fd]) => !fd.readOnly && !fd.hidden && !["computed", "count", "gfk"].includes(fd.kind),
  );
  return [...fields.filter(([, fd]) => fd.required), ...fields.filter(([, fd]) => !fd.required)].map(
    ([n]) => n,
  );
}

/** A preview cell: references and lists as short text. */
const cell = (v: unknown): string => (v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));

export async function importRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  await app.register(multipart, {
    attachFieldsToBody: "keyValues",
    limits: { fileSize: MAX_FILE, files: 1 },
  });
  const target = (req: FastifyRequest): Model => {
    const { app: a, model: path } = req.params as { app: string; model: string };
    const model = kit.reg.byUrl(a, path);
    if (!model || model.readOnly || model.key === "users.token") throw new NotFoundError();
    return model;
  };
  const draw = (req: FastifyRequest, reply: FastifyReply, model: Model, data: Obj, status = 200) =>
    kit.page(
      req,
      reply,
      "import",
      {
        title: `Import ${titleOf(model.plural ?? `${model.verbose}s`)}`,
        action: `/${model.app}/${model.path}/import/`,
        cancel: `/${model.app}/${model.path}/`,
        headers: csvHeaders(model).join(","),
        format: "csv",
        text: "",
        general: [],
        rows: [],
        more: 0,
        ...data,
      },
      status,
    );
  const start = async (req: FastifyRequest): Promise<{ model: Model; ctx: Ctx }> => {
    const model = target(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, model, "add")) throw new PermissionDenied();
    return { model, ctx };
  };

  app.get("/:app/:model/import/", async (req, reply) => {
    const { model } = await start(req);
    return draw(req, reply, model, {});
  });

  app.post("/:app/:model/import/", async (req, reply) => {
    const { model, ctx } = await start(req);
    const posted = (req.body ?? {}) as Obj;
    const format = FORMATS.find((f) => f === posted.format) ?? "csv";
    const upload = posted.file;
    const text =
      Buffer.isBuffer(upload) && upload.length ? upload.toString("utf8") : String(posted.data ?? "");
    const shown = { format, text };
    if (!text.trim())
      return draw(req, reply, model, { ...shown, general: ["Paste the data or choose a file."] }, 400);
    let records: Awaited<ReturnType<typeof importRecords>>;
    try {
      records = await importRecords(ctx, model, format, text);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const errs = e.errors as Record<string, string[]>;
      return draw(req, reply, model, { ...shown, general: Object.values(errs).flat() }, 400);
    }
    if (posted.confirm !== "yes") {
      const columns = [...new Set(records.slice(0, PREVIEW_ROWS).flatMap((r) => Object.keys(r.raw)))];
      // A CSV reference that matched nothing stays an attribute dict: marked, the create will name it.
      const shownCell = (r: (typeof records)[number], c: string) => {
        const v = r.body[c.split(".")[0]!];
        const unresolved = format === "csv" && v !== null && typeof v === "object" && !Array.isArray(v);
        return `${cell(r.raw[c])}${unresolved ? " (not found)" : ""}`;
      };
      return draw(req, reply, model, {
        ...shown,
        preview: {
          count: records.length,
          columns,
          rows: records
            .slice(0, PREVIEW_ROWS)
            .map((r) => [String(r.row), ...columns.map((c) => shownCell(r, c))]),
        },
      });
    }
    try {
      const ids = await importObjects(ctx, model, records);
      flash(
        req,
        "success",
        `Imported ${ids.length} ${ids.length === 1 ? model.verbose : (model.plural ?? `${model.verbose}s`)}.`,
      );
      return reply.redirect(`/${model.app}/${model.path}/`, 302);
    } catch (e) {
      if (!(e instanceof ImportFailed)) throw e;
      const what = format === "csv" ? "Row" : "Item";
      const rows = e.rows.slice(0, SHOWN_ROWS).map((r: RowErrors) => ({
        label: `${what} ${r.row}`,
        errors: Object.entries(r.errors).map(([k, v]) =>
          k === "__all__" || k === "non_field_errors" ? v.join(" ") : `${k}: ${v.join(" ")}`,
        ),
      }));
      return draw(
        req,
        reply,
        model,
        { ...shown, general: [e.message], rows, more: Math.max(0, e.rows.length - SHOWN_ROWS) },
        400,
      );
    }
  });
}
