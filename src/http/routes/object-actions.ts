/**
 * Detail actions of the extras attached to objects:
 * - `GET`/`POST /api/<app>/<model>/<id>/notes/` on every model with notes (Nautobot 1.6
 *   `NotesViewSetMixin.notes`): the object's notes, paginated; POST `{"note": "…"}` adds one by the acting
 *   user (201 with the note).
 * - `GET /api/extras/dynamic-groups/<id>/members/` (Nautobot 1.6 `DynamicGroupViewSet.members`): the
 *   objects the group's filter and child groups select, paginated, as the member model's full
 *   representation.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { hasNotes, type Model } from "../../registry/index.ts";
import { groupMembers } from "../../service/dynamic-groups.ts";
import { AppError, NotFoundError } from "../../service/errors.ts";
import { getRow, listRows } from "../../service/read.ts";
import { represent } from "../../service/represent.ts";
import { createObject, inTransaction } from "../../service/write.ts";
import { type HttpKit, includeParam } from "../kit.ts";

/** Notes and dynamic-group member actions. */
export async function objectActionRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  const noteModel = kit.reg.get("extras.note");

  const describe = (req: FastifyRequest, reply: FastifyReply, allow: string, name: string) => {
    reply.header("Allow", allow);
    if (req.method === "OPTIONS") {
      kit.send(req, reply, 200, {
        name,
        description: "",
        renders: ["application/json", "text/html"],
        parses: ["application/json"],
      });
      return true;
    }
    if (!allow.split(", ").includes(req.method))
      throw new AppError(405, `Method "${req.method}" not allowed.`);
    return false;
  };

  /** The object named by the URL, as this user may see it (404 otherwise). */
  const target = async (req: FastifyRequest, want: (m: Model) => boolean) => {
    const { app: a, model: path, id: rawId } = req.params as { app: string; model: string; id: string };
    const model = kit.reg.byUrl(a, path);
    const id = normalizeUuid(rawId);
    if (!model || !want(model) || !id) throw new NotFoundError();
    kit.need(req, model, "view");
    const ctx = kit.ctxFor(req);
    const row = await getRow(ctx, model, id);
    return { model, id, ctx, row };
  };

  app.all("/api/:app/:model/:id/notes/", async (req, reply) => {
    const { model, id, ctx } = await target(req, hasNotes);
    if (describe(req, reply, "GET, POST, HEAD, OPTIONS", "Notes")) return reply;
    if (req.method === "POST") {
      kit.need(req, noteModel, "add");
      const body = req.body && typeof req.body === "object" && !Array.isArray(req.body) ? req.body : {};
      const noteId = await inTransaction(ctx, (t) =>
        createObject(t, noteModel, { ...body, assigned_object_type: model.key, assigned_object_id: id }),
      );
      const [obj] = await kit.renderIds(ctx, noteModel, [noteId]);
      return kit.send(req, reply, 201, obj);
    }
    kit.need(req, noteModel, "view");
    const limit = kit.pageLimit(req);
    const offset = kit.pageOffset(req);
    const { count, rows } = await listRows(ctx, noteModel, {
      params: new Map([
        ["assigned_object_type", [model.key]],
        ["assigned_object_id", [id]],
      ]),
      limit,
      offset,
    });
    const results = await kit.visible(ctx, noteModel, await represent(ctx, noteModel, rows, "full"));
    return kit.send(req, reply, 200, kit.pageBody(req, ctx, { count, limit, offset, results }));
  });

  app.all("/api/extras/dynamic-groups/:id/members/", async (req, reply) => {
    const { row, ctx } = await target(
      Object.assign(req, { params: { ...(req.params as object), app: "extras", model: "dynamic-groups" } }),
      () => true,
    );
    if (describe(req, reply, "GET, HEAD, OPTIONS", "Members")) return reply;
    const member = kit.reg.models.get(String(row.content_type));
    if (!member) throw new NotFoundError();
    kit.need(req, member, "view");
    const limit = kit.pageLimit(req);
    const offset = kit.pageOffset(req);
    const { count, rows } = await groupMembers(ctx, row, { limit, offset });
    // Nautobot 1.6 `DynamicGroupViewSet.members`: the member model's plain serializer (a device's has no
    // `config_context`), with the opt-in keys only when asked for with `?include=`.
    const results = await kit.visible(
      ctx,
      member,
      await represent(ctx, member, rows, "full", { excludeConfigContext: true, include: includeParam(req) }),
    );
    return kit.send(req, reply, 200, kit.pageBody(req, ctx, { count, limit, offset, results }));
  });
}
