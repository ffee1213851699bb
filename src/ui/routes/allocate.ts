/**
 * IP allocation in the browser (issue 25): "Add next available IP" and "Add next available prefix" on a
 * prefix's page allocate through the same atomic allocator as the API's `available-ips` / `available-prefixes`
 * POST (service/allocation.ts: claimed addresses, never handed out twice), then open the new object's edit
 * form; "Make primary" on an IP address assigned to a device (or VM) interface sets that device's
 * `primary_ip4` or `primary_ip6` (by the address family) through the service layer, as Nautobot's IP
 * address form does with its "Make this the primary IP for the device/VM" box.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { normalizeUuid } from "../../query/filters.ts";
import type { Model } from "../../registry/index.ts";
import { allocateIps, allocatePrefixes, InsufficientSpaceError } from "../../service/allocation.ts";
import type { Ctx } from "../../service/context.ts";
import { AppError, NotFoundError, PermissionDenied, ValidationError } from "../../service/errors.ts";
import { mayDo } from "../../service/permissions.ts";
import { getRow } from "../../service/read.ts";
import { represent } from "../../service/represent.ts";
import type { Row } from "../../service/rows.ts";
import { inTransaction, updateObject } from "../../service/write.ts";
import { displayOf, flash } from "../flash.ts";
import { rowFor } from "../guard.ts";
import type { UiKit } from "../plugin.ts";

type Obj = Record<string, unknown>;

/** A button (a POST form, optionally with one number input) on a detail page's toolbar. */
export interface Tool {
  label: string;
  url: string;
  /** A number input sent with the button (the prefix length of "next available prefix"). */
  input?: { name: string; label: string; value: number; min: number; max: number };
}

/** The device (or VM) an IP address's interface belongs to, with the model, when the user may see it. */
async function ownerOf(ctx: Ctx, ip: Obj): Promise<{ model: Model; id: string } | undefined> {
  const type = typeof ip.assigned_object_type === "string" ? ip.assigned_object_type : "";
  const ifaceId = typeof ip.assigned_object_id === "string" ? ip.assigned_object_id : "";
  const iface = type && ctx.reg.models.get(type);
  if (!iface || !ifaceId || !mayDo(ctx.grants, iface, "view")) return undefined;
  const field = iface.fieldList.find(([, fd]) => fd.kind === "fk" && !!ctx.reg.get(fd.to).fields.primary_ip4);
  if (field?.[1].kind !== "fk") return undefined;
  const [obj] = await represent(ctx, iface, [await getRow(ctx, iface, ifaceId)], "nested");
  const owner = (obj as Obj | undefined)?.[field[0]] as Obj | undefined;
  return typeof owner?.id === "string" ? { model: ctx.reg.get(field[1].to), id: owner.id } : undefined;
}

/** The allocation buttons of a detail page: a prefix's "next available" pair, an address's "make primary". */
export async function allocationTools(ctx: Ctx, model: Model, row: Row): Promise<Tool[]> {
  const base = `/${model.app}/${model.path}/${row.id}`;
  if (model.key === "ipam.prefix") {
    const out: Tool[] = [];
    const len = Number(String(row.prefix).split("/")[1]);
    const bits = Number(row.prefix_family) === 6 ? 128 : 32;
    if (mayDo(ctx.grants, ctx.reg.get("ipam.ipaddress"), "add"))
      out.push({ label: "Add next available IP", url: `${base}/allocate-ip/` });
    if (mayDo(ctx.grants, model, "add") && len < bits)
      out.push({
        label: "Add next available prefix",
        url: `${base}/allocate-prefix/`,
        input: {
          name: "prefix_length",
          label: "Size",
          value: Math.min(bits, len + (bits === 32 ? 2 : 16)),
          min: len + 1,
          max: bits,
        },
      });
    return out;
  }
  if (model.key === "ipam.ipaddress" && row.assigned_object_id) {
    const [ip] = await represent(ctx, model, [row], "full", {
      include: new Set(),
      excludeConfigContext: true,
    });
    const owner = ip && (await ownerOf(ctx, ip));
    if (!owner || !mayDo(ctx.grants, owner.model, "change")) return [];
    return [{ label: "Make primary", url: `${base}/make-primary/` }];
  }
  return [];
}

export async function allocateRoutes(app: FastifyInstance, { kit }: { kit: UiKit }): Promise<void> {
  const prefixModel = kit.reg.get("ipam.prefix");
  const ipModel = kit.reg.get("ipam.ipaddress");
  const idOf = (req: FastifyRequest) => {
    const id = normalizeUuid((req.params as { id: string }).id);
    if (!id) throw new NotFoundError();
    return id;
  };
  const read = (id: string) => (t: Ctx) => getRow(t, prefixModel, id);
  /** Run an allocation; no room is a 409 page naming the prefix, a refused item a 400 with its messages. */
  const allocate = async (run: () => Promise<{ ids: string[] }>) => {
    try {
      return (await run()).ids[0]!;
    } catch (e) {
      if (e instanceof InsufficientSpaceError) throw new AppError(409, e.message);
      if (e instanceof ValidationError) {
        const errs = (Array.isArray(e.errors) ? e.errors[0] : e.errors) as Obj;
        throw new AppError(
          400,
          Object.entries(errs ?? {})
            .map(([k, v]) => `${k}: ${[v].flat(3).join(" ")}`)
            .join("; "),
        );
      }
      throw e;
    }
  };

  app.post("/ipam/prefixes/:id/allocate-ip/", async (req, reply) => {
    const id = idOf(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, ipModel, "add")) throw new PermissionDenied();
    await rowFor(ctx, prefixModel, id, "view");
    const created = await allocate(() => allocateIps(ctx, { status: "active" }, id, read(id)));
    flash(req, "success", `Created ${ipModel.verbose} ${await displayOf(ctx, ipModel, created)}`);
    return reply.redirect(`/${ipModel.app}/${ipModel.path}/${created}/edit/`, 302);
  });

  app.post("/ipam/prefixes/:id/allocate-prefix/", async (req, reply) => {
    const id = idOf(req);
    const ctx = await kit.ctxFor(req);
    if (!mayDo(ctx.grants, prefixModel, "add")) throw new PermissionDenied();
    await rowFor(ctx, prefixModel, id, "view");
    const raw = String((req.body as Obj | undefined)?.prefix_length ?? "").trim();
    const length = /^\d{1,3}$/.test(raw) ? Number(raw) : raw;
    const created = await allocate(() =>
      allocatePrefixes(ctx, { prefix_length: length, status: "active" }, read(id)),
    );
    flash(req, "success", `Created ${prefixModel.verbose} ${await displayOf(ctx, prefixModel, created)}`);
    return reply.redirect(`/${prefixModel.app}/${prefixModel.path}/${created}/edit/`, 302);
  });

  app.post("/ipam/ip-addresses/:id/make-primary/", async (req, reply) => {
    const id = idOf(req);
    const ctx = await kit.ctxFor(req);
    const row = await rowFor(ctx, ipModel, id, "view");
    const [ip] = await represent(ctx, ipModel, [row], "full", {
      include: new Set(),
      excludeConfigContext: true,
    });
    const owner = ip && (await ownerOf(ctx, ip));
    if (!owner)
      throw new AppError(
        400,
        "This IP address is not assigned to an interface of a device or virtual machine.",
      );
    await rowFor(ctx, owner.model, owner.id, "change");
    const field = String(ip.address).includes(":") ? "primary_ip6" : "primary_ip4";
    try {
      await inTransaction(ctx, (t) => updateObject(t, owner.model, owner.id, { [field]: id }, true));
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      const errs = (Array.isArray(e.errors) ? e.errors[0] : e.errors) as Obj;
      throw new AppError(
        400,
        Object.values(errs ?? {})
          .flat(3)
          .join(" "),
      );
    }
    flash(
      req,
      "success",
      `Set ${String(ip.address)} as primary IP of ${await displayOf(ctx, owner.model, owner.id)}`,
    );
    return reply.redirect(`/${owner.model.app}/${owner.model.path}/${owner.id}/`, 302);
  });
}
