/**
 * Cable-path endpoints as Nautobot 1.6 serves them (`dcim/api/views.py`: `PathEndpointMixin.trace`,
 * `PassThroughPortMixin.paths`, the three connection lists and `ConnectedDeviceViewSet`):
 * - `GET /api/<app>/<model>/<id>/trace/` on every path endpoint (interfaces, console and console-server
 *   ports, power ports and outlets, power feeds, circuit terminations);
 * - `GET /api/dcim/{front-ports,rear-ports}/<id>/paths/`;
 * - `GET /api/dcim/{interface,console,power}-connections/` (paginated; `site`, `device_id`, `device`, and
 *   `name` on console and power);
 * - `GET /api/dcim/connected-device/?peer_device=&peer_interface=`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import { VIEW_DESCRIPTION } from "../../registry/field-text.ts";
import type { Model } from "../../registry/index.ts";
import {
  connectedOnly,
  isPathEndpoint,
  pathsOf,
  pathsThroughRendered,
  traceSegments,
} from "../../service/cable-paths.ts";
import { AppError, NotFoundError } from "../../service/errors.ts";
import { boundedFilters, getRow, listRows } from "../../service/read.ts";
import { nestedFor, represent } from "../../service/represent.ts";
import { type HttpKit, intParam, queryParams } from "../kit.ts";
import { viewName, viewOptions } from "../options.ts";

const RO = "GET, HEAD, OPTIONS";

/** The connection lists: path, component model, accepted filters (Nautobot `*ConnectionFilterSet`). */
const CONNECTIONS: Array<{ path: string; model: string; filters: string[] }> = [
  { path: "interface-connections", model: "dcim.interface", filters: ["site", "device_id", "device"] },
  {
    path: "console-connections",
    model: "dcim.consoleport",
    filters: ["site", "device_id", "device", "name"],
  },
  { path: "power-connections", model: "dcim.powerport", filters: ["site", "device_id", "device", "name"] },
];

/** Trace, paths, connections and the connected-device locator. */
export async function cablePathRoutes(app: FastifyInstance, { kit }: { kit: HttpKit }): Promise<void> {
  /** GET/HEAD only; OPTIONS describes the view; anything else 405. */
  const readOnly = (req: FastifyRequest, reply: FastifyReply, name: string, description = ""): boolean => {
    reply.header("Allow", RO);
    if (req.method === "GET" || req.method === "HEAD") return true;
    if (req.method === "OPTIONS") {
      kit.send(req, reply, 200, viewOptions(name, description));
      return false;
    }
    throw new AppError(405, `Method "${req.method}" not allowed.`);
  };

  /** The object of a detail action as this user may see it. */
  const target = async (req: FastifyRequest, want: (m: Model) => boolean) => {
    const { app: a, model: path, id: rawId } = req.params as { app: string; model: string; id: string };
    const model = kit.reg.byUrl(a, path);
    if (!model || !want(model)) throw new NotFoundError();
    const id = normalizeUuid(rawId);
    if (!id) throw new NotFoundError();
    kit.need(req, model, "view");
    const { ctx } = await kit.rowFor(req, model, id);
    return { model, id, ctx };
  };

  app.all("/api/:app/:model/:id/trace/", async (req, reply) => {
    const { model, id, ctx } = await target(req, isPathEndpoint);
    if (!readOnly(req, reply, `${model.verbose} Trace`)) return reply;
    return kit.send(req, reply, 200, await traceSegments(ctx, model, id));
  });

  app.all("/api/:app/:model/:id/paths/", async (req, reply) => {
    const { model, id, ctx } = await target(
      req,
      (m) => m.key === "dcim.frontport" || m.key === "dcim.rearport",
    );
    if (!readOnly(req, reply, `${model.verbose} Paths`)) return reply;
    return kit.send(req, reply, 200, await pathsThroughRendered(ctx, id));
  });

  for (const c of CONNECTIONS) {
    app.all(`/api/dcim/${c.path}/`, async (req, reply) => {
      const model = kit.reg.get(c.model);
      kit.need(req, model, "view");
      // Nautobot 1.6 names these views after their model ("Interface", "Console Port").
      if (!readOnly(req, reply, viewName(model))) return reply;
      const ctx = kit.ctxFor(req);
      const all = queryParams(req.url, req);
      boundedFilters(new Map([...all].filter(([k]) => c.filters.includes(k))));
      const given = (k: string) => (c.filters.includes(k) ? (all.get(k) ?? []).filter((x) => x !== "") : []);
      const limit = kit.pageLimit(req);
      const offsetRaw = intParam(all.get("offset")?.[0]);
      const offset = offsetRaw !== undefined && offsetRaw > 0 ? offsetRaw : 0;
      // Nautobot's connection filters are plain char filters: an unknown site or device name selects
      // nothing (never a 400), so names are resolved to ids first.
      const ids = async (key: string, values: string[], by: string) => {
        const { rows: found } = await listRows(ctx, kit.reg.get(key), {
          params: new Map([[by, values]]),
          limit: undefined,
          offset: 0,
        });
        return found.map((r) => r.id as string);
      };
      const params = new Map<string, string[]>();
      const site = given("site").slice(0, 1);
      if (site.length) params.set("site_id", await ids("dcim.site", site, "slug"));
      const devices = [...given("device_id")];
      if (given("device").length) devices.push(...(await ids("dcim.device", given("device"), "name")));
      if (given("device_id").length || given("device").length) params.set("device_id", devices);
      if (given("name").length) params.set("name", given("name"));
      const empty = [...params.values()].some((v) => v.length === 0);
      const { count, rows } = empty
        ? { count: 0, rows: [] }
        : await listRows(ctx, model, { params, limit, offset, extra: connectedOnly(model) });
      let results: unknown[];
      if (c.model === "dcim.interface") {
        // Nautobot `InterfaceConnectionSerializer` (a ValidatedModelSerializer: id, display, the pair,
        // reachability, created, last_updated).
        const ids = rows.map((r) => r.id as string);
        const paths = await pathsOf(ctx, ids);
        const far = ids.map((i) => paths.get(i)?.destination?.id ?? null);
        const nested = await nestedFor(ctx, model, [...ids, ...far]);
        const full = await represent(ctx, model, rows, "full");
        results = full.map((o, n) => ({
          id: o.id,
          display: o.display,
          interface_a: nested.get(ids[n]!) ?? null,
          interface_b: far[n] ? (nested.get(far[n]!) ?? null) : null,
          connected_endpoint_reachable: paths.get(ids[n]!)?.isActive ?? null,
          created: o.created,
          last_updated: o.last_updated,
        }));
      } else results = await represent(ctx, model, rows, "full");
      const page = (at: number | undefined) => {
        const p = new URLSearchParams();
        for (const [k, vs] of all) if (k !== "limit" && k !== "offset") for (const v of vs) p.append(k, v);
        p.append("limit", String(limit));
        if (at !== undefined) p.append("offset", String(at));
        return `${ctx.baseUrl}/api/dcim/${c.path}/?${p.toString()}`;
      };
      return kit.send(req, reply, 200, {
        count,
        next: offset + limit < count ? page(offset + limit) : null,
        previous: offset > 0 ? page(offset - limit > 0 ? offset - limit : undefined) : null,
        results,
      });
    });
  }

  app.all("/api/dcim/connected-device/", async (req, reply) => {
    if (!readOnly(req, reply, "Connected Device Locator", VIEW_DESCRIPTION["dcim/connected-device"]))
      return reply;
    const q = queryParams(req.url, req);
    boundedFilters(new Map([...q].filter(([k]) => k === "peer_device" || k === "peer_interface")));
    const peerDevice = q.get("peer_device")?.[0];
    const peerInterface = q.get("peer_interface")?.[0];
    if (!peerDevice || !peerInterface)
      throw new AppError(400, 'Request must include "peer_device" and "peer_interface" filters.');
    const ifaceModel = kit.reg.get("dcim.interface");
    const deviceModel = kit.reg.get("dcim.device");
    kit.need(req, ifaceModel, "view");
    const ctx = kit.ctxFor(req);
    // By exact names (an unknown device is a 404, as Nautobot's get_object_or_404).
    const devices = await listRows(ctx, deviceModel, {
      params: new Map([["name", [peerDevice]]]),
      limit: undefined,
      offset: 0,
    });
    const { rows } = devices.rows.length
      ? await listRows(ctx, ifaceModel, {
          params: new Map([
            ["device_id", devices.rows.map((d) => d.id as string)],
            ["name", [peerInterface]],
          ]),
          limit: 1,
          offset: 0,
        })
      : { rows: [] };
    if (!rows.length) throw new NotFoundError();
    const dest = (await pathsOf(ctx, [rows[0]!.id as string])).get(rows[0]!.id as string)?.destination;
    if (dest?.type !== "dcim.interface") {
      // Nautobot answers `Response()`: 200 with an empty body.
      return reply.code(200).header("Content-Type", "application/json").send("");
    }
    const local = await getRow(ctx, ifaceModel, dest.id);
    const device = await getRow(ctx, deviceModel, local.device_id as string);
    // Nautobot answers with `DeviceSerializer` (no config context).
    const [obj] = await represent(ctx, deviceModel, [device], "full", { excludeConfigContext: true });
    return kit.send(req, reply, 200, obj);
  });
}
