/**
 * IP allocation: `GET`/`POST /api/ipam/prefixes/<id>/available-ips/` and `…/available-prefixes/` as Nautobot
 * 1.6 serves them (`PrefixViewSet.available_ips` / `available_prefixes`; nautobot-models.md §3.4): GET is a
 * bare list (`limit` for addresses, default PAGINATE_COUNT), POST creates one object or a list through the
 * service layer and answers 201, or 204 when there is no room. Nautobot 1.6 has no such action on VLAN
 * groups (its next-free-VID helper is not exposed), so neither do we.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import {
  allocateIps,
  allocatePrefixes,
  availableIps,
  availablePrefixes,
  InsufficientSpaceError,
} from "../../service/allocation.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError, NotFoundError } from "../../service/errors.ts";
import { getRow } from "../../service/read.ts";
import { nestedFor } from "../../service/represent.ts";
import type { Row } from "../../service/rows.ts";
import { inTransaction } from "../../service/write.ts";
import type { HttpKit } from "../kit.ts";
import { checkBulkSize } from "./models.ts";

/** The allocation actions of prefixes. */
export async function allocationRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  const prefixModel = kit.reg.get("ipam.prefix");
  const vrfModel = kit.reg.get("ipam.vrf");

  /** The parent prefix's id, and its reader as this user may see it (404 otherwise). */
  const parentReader = (req: FastifyRequest) => {
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    return { id, read: (ctx: Ctx): Promise<Row> => getRow(ctx, prefixModel, id) };
  };

  /** Replace VRF ids by nested VRFs (one query for the answer). */
  const withVrfs = async <T extends { vrf: string | null }>(ctx: Ctx, items: T[]) => {
    const vrfs = await nestedFor(
      ctx,
      vrfModel,
      items.map((i) => i.vrf),
    );
    return items.map((i) => ({ ...i, vrf: i.vrf ? (vrfs.get(i.vrf) ?? null) : null }));
  };

  /** OPTIONS answers DRF's view metadata; any other method is a 405. */
  const otherMethod = (req: FastifyRequest, reply: FastifyReply, name: string, description: string) => {
    reply.header("Allow", "GET, POST, HEAD, OPTIONS");
    if (req.method === "OPTIONS")
      return kit.send(req, reply, 200, {
        name,
        description,
        renders: ["application/json", "text/html"],
        parses: ["application/json"],
      });
    throw new AppError(405, `Method "${req.method}" not allowed.`);
  };

  /** An allocation that found no room: Nautobot's 204 (Node sends no body with a 204). */
  const created = async (
    req: FastifyRequest,
    reply: FastifyReply,
    run: (t: Ctx) => Promise<{ ids: string[]; many: boolean }>,
    modelKey: string,
  ) => {
    const ctx = kit.ctxFor(req);
    try {
      // Rendered inside the allocation's transaction (the change log's snapshots reuse what it reads).
      const { objs, many } = await inTransaction(ctx, async (t) => {
        const { ids, many } = await run(t);
        return { objs: await kit.renderIds(t, kit.reg.get(modelKey), ids), many };
      });
      return kit.send(req, reply, 201, many ? objs : objs[0]);
    } catch (e) {
      if (e instanceof InsufficientSpaceError) return reply.code(204).send();
      throw e;
    }
  };

  app.all("/api/ipam/prefixes/:id/available-ips/", async (req, reply) => {
    const ipModel = kit.reg.get("ipam.ipaddress");
    const { id, read } = parentReader(req);
    if (req.method === "GET" || req.method === "HEAD") {
      kit.need(req, ipModel, "view");
      kit.need(req, prefixModel, "view");
      const ctx = kit.ctxFor(req);
      const row = await read(ctx);
      return kit.send(req, reply, 200, await withVrfs(ctx, await availableIps(ctx, row, kit.pageLimit(req))));
    }
    if (req.method === "POST") {
      kit.need(req, ipModel, "add");
      kit.need(req, prefixModel, "view");
      if (Array.isArray(req.body)) checkBulkSize(req.body, kit.config.maxBulk);
      return created(req, reply, (t) => allocateIps(t, req.body, id, read), "ipam.ipaddress");
    }
    return otherMethod(
      req,
      reply,
      "IP Address",
      "The free addresses of a prefix (GET, `limit`), or create IP addresses at the next free ones (POST).",
    );
  });

  app.all("/api/ipam/prefixes/:id/available-prefixes/", async (req, reply) => {
    const { read } = parentReader(req);
    if (req.method === "GET" || req.method === "HEAD") {
      kit.need(req, prefixModel, "view");
      const ctx = kit.ctxFor(req);
      const row = await read(ctx);
      return kit.send(req, reply, 200, await withVrfs(ctx, await availablePrefixes(ctx, row)));
    }
    if (req.method === "POST") {
      kit.need(req, prefixModel, "add");
      if (Array.isArray(req.body)) checkBulkSize(req.body, kit.config.maxBulk);
      return created(req, reply, (t) => allocatePrefixes(t, req.body, read), "ipam.prefix");
    }
    return otherMethod(
      req,
      reply,
      "Prefix",
      "The free child prefixes of a prefix (GET), or create child prefixes of `prefix_length` (POST).",
    );
  });
}
