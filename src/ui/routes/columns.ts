/**
 * The column chooser of list pages (issue 25; Nautobot's "Configure" table button): `GET
 * /<app>/<path>/columns/?return_url=<list URL>` shows the model's available columns with a checkbox and an
 * order number each; `POST` with `column` (repeated) and `order_<name>` saves the user's choice, with
 * `_reset` forgets it (Nautobot's defaults again); both return to `return_url` (same-origin paths only).
 * Every logged-in user who may view the model sets their own columns only (stored per user in
 * `ui_preference`, ui/column-choice.ts); the form is CSRF-checked like every UI form.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Model } from "../../registry/index.ts";
import { AppError, NotFoundError, PermissionDenied } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import {
  availableColumns,
  chosenColumns,
  columnLabel,
  resetColumns,
  saveColumns,
  userColumns,
} from "../column-choice.ts";
import { defaultColumns } from "../columns.ts";
import { flash } from "../flash.ts";
import { browsable } from "../menu.ts";
import type { UiKit } from "../plugin.ts";
import { titleOf } from "../views.ts";
import { localPath } from "./prefs.ts";

export async function columnRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  /** The model of the URL, when the user may view it (404 for unknown, 403 without `view`). */
  const modelOf = async (req: FastifyRequest): Promise<Model> => {
    const { app: a, model } = req.params as { app: string; model: string };
    const m = kit.reg.byUrl(a, model);
    if (!m || !browsable(m)) throw new NotFoundError();
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, m, "view")) throw new PermissionDenied();
    return m;
  };
  const listPath = (m: Model) => `/${m.app}/${m.path}/`;
  const back = (m: Model, v: unknown) => {
    const p = localPath(v, listPath(m));
    return p.startsWith(listPath(m)) ? p : listPath(m);
  };

  app.get("/:app/:model/columns/", async (req, reply) => {
    const model = await modelOf(req);
    const query = req.query as Record<string, unknown>;
    const mine = await userColumns(kit.store, kit.actor(req).id, model);
    const defaults = new Set(defaultColumns(model));
    const rest = availableColumns(model).filter((c) => !mine.includes(c));
    return kit.page(req, reply, "columns", {
      title: `Configure ${titleOf(model.plural ?? `${model.verbose}s`)} columns`,
      action: listPath(model).concat("columns/"),
      returnUrl: back(model, query.return_url),
      columns: [...mine, ...rest].map((name, i) => ({
        name,
        label: columnLabel(model, name),
        checked: mine.includes(name),
        order: i + 1,
        isDefault: defaults.has(name),
      })),
    });
  });

  app.post("/:app/:model/columns/", async (req, reply) => {
    const model = await modelOf(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const userId = kit.actor(req).id;
    const to = back(model, body.return_url);
    if (body._reset !== undefined) {
      await resetColumns(kit.store, userId, model);
      flash(req, "success", "Columns reset to the default");
      return reply.redirect(to, 302);
    }
    const cols = chosenColumns(model, body);
    if (!Array.isArray(cols)) throw new AppError(400, cols.error);
    await saveColumns(kit.store, userId, model, cols);
    flash(req, "success", "Saved columns");
    return reply.redirect(to, 302);
  });
}
