/**
 * Side effects after a write, in the same transaction (Nautobot's signals and save() overrides),
 * named by a model's `afterWrite`.
 */
import { randomUUID } from "node:crypto";
import { storedTime } from "../store/values.ts";
import type { Ctx } from "./context.ts";
import { naturalKey } from "./input.ts";
import { changeList, chunks, type Row, statusesFor, UNTRACKED_KEY } from "./rows.ts";

/**
 * Note that a side effect is about to save objects of another model (Nautobot signals that call `save()`):
 * the writer snapshots them now and change-logs them as updated (service/write.ts `noteSaves`). Call it
 * before changing their rows.
 */
export type NoteSaves = (modelKey: string, ids: readonly string[]) => Promise<void>;

/** What a hook receives. */
export interface HookArgs {
  action: "create" | "update";
  id: string;
  data: Row;
  before: Row | undefined;
  saves: NoteSaves;
}

/** A component instantiated from a template: Nautobot `bulk_create`s them, so no change log row or webhook. */
function pendingPush(ctx: Ctx, modelKey: string, id: string): void {
  changeList(ctx).push({ model: ctx.reg.get(modelKey), id, action: "create", logged: false });
}

/**
 * Instantiate a new device's components from its device type's templates (Nautobot
 * `Device.save()` → `create_components`). Rear ports are created before front ports so the mapping
 * holds; power outlets are linked to the new power ports by template. Skipped when
 * `ctx.skipTemplates` is set (the NetBox importer loads real components instead).
 */
async function deviceComponents(ctx: Ctx, a: HookArgs): Promise<void> {
  if (a.action !== "create" || ctx.skipTemplates) return;
  const dt = a.data.device_type as string;
  const now = storedTime();
  const base = (r: Row) => ({
    id: randomUUID(),
    device_id: a.id,
    name: r.name,
    name_nat: naturalKey(r.name),
    label: r.label ?? "",
    description: r.description ?? "",
    _custom_field_data: "{}",
    created: now.slice(0, 10),
    last_updated: now,
  });
  const tpl = (table: string) =>
    ctx.db.selectFrom(table).selectAll().where("device_type_id", "=", dt).execute();
  const insert = async (key: string, rows: Row[]) => {
    if (!rows.length) return;
    const model = ctx.reg.get(key);
    for (let i = 0; i < rows.length; i += 200)
      await ctx.db
        .insertInto(model.table)
        .values(rows.slice(i, i + 200))
        .execute();
    for (const r of rows) pendingPush(ctx, key, r.id);
  };
  const active =
    (await statusesFor(ctx, "dcim.interface")).get("active") ??
    [...(await statusesFor(ctx, "dcim.interface")).values()][0];
  await insert(
    "dcim.interface",
    (await tpl("dcim_interfacetemplate")).map((t) => ({
      ...base(t),
      type: t.type,
      mgmt_only: t.mgmt_only,
      enabled: true,
      status_id: active?.id ?? null,
      mode: "",
    })),
  );
  await insert(
    "dcim.consoleport",
    (await tpl("dcim_consoleporttemplate")).map((t) => ({ ...base(t), type: t.type ?? "" })),
  );
  await insert(
    "dcim.consoleserverport",
    (await tpl("dcim_consoleserverporttemplate")).map((t) => ({ ...base(t), type: t.type ?? "" })),
  );
  const ppMap = new Map<string, string>();
  await insert(
    "dcim.powerport",
    (await tpl("dcim_powerporttemplate")).map((t) => {
      const r = {
        ...base(t),
        type: t.type ?? "",
        maximum_draw: t.maximum_draw ?? null,
        allocated_draw: t.allocated_draw ?? null,
      };
      ppMap.set(t.id, r.id);
      return r;
    }),
  );
  await insert(
    "dcim.poweroutlet",
    (await tpl("dcim_poweroutlettemplate")).map((t) => ({
      ...base(t),
      type: t.type ?? "",
      feed_leg: t.feed_leg ?? "",
      power_port_id: t.power_port_id ? (ppMap.get(t.power_port_id) ?? null) : null,
    })),
  );
  const rpMap = new Map<string, string>();
  await insert(
    "dcim.rearport",
    (await tpl("dcim_rearporttemplate")).map((t) => {
      const r = { ...base(t), type: t.type, positions: t.positions ?? 1 };
      rpMap.set(t.id, r.id);
      return r;
    }),
  );
  await insert(
    "dcim.frontport",
    (await tpl("dcim_frontporttemplate")).map((t) => ({
      ...base(t),
      type: t.type,
      rear_port_id: rpMap.get(t.rear_port_id) ?? null,
      rear_port_position: t.rear_port_position ?? 1,
    })),
  );
  await insert(
    "dcim.devicebay",
    (await tpl("dcim_devicebaytemplate")).map((t) => ({ ...base(t) })),
  );
}

/** Keep Circuit.termination_a / termination_z pointing at the circuit's A/Z terminations. */
async function circuitTermination(ctx: Ctx, a: HookArgs): Promise<void> {
  const side = a.data.term_side === "Z" ? "termination_z_id" : "termination_a_id";
  const other = side === "termination_a_id" ? "termination_z_id" : "termination_a_id";
  if (a.before && a.before.circuit !== a.data.circuit) {
    await ctx.db
      .updateTable("circuits_circuit")
      .set({ [side]: null })
      .where(side, "=", a.id)
      .execute();
  }
  await ctx.db
    .updateTable("circuits_circuit")
    .set({ [other]: null })
    .where(other, "=", a.id)
    .execute();
  await ctx.db
    .updateTable("circuits_circuit")
    .set({ [side]: a.id })
    .where("id", "=", a.data.circuit)
    .execute();
}

/**
 * Link both cable terminations to the cable (Nautobot `dcim/signals.py::update_connected_endpoints`: each
 * termination not yet pointing at the cable is saved, so it is change-logged as updated).
 */
async function cable(ctx: Ctx, a: HookArgs): Promise<void> {
  for (const end of ["termination_a", "termination_b"]) {
    const type = a.data[`${end}_type`] as string | null;
    const id = a.data[`${end}_id`] as string | null;
    if (!type || !id) continue;
    const m = ctx.reg.models.get(type);
    if (!m || !("cable" in m.fields)) continue;
    const row = await ctx.db.selectFrom(m.table).select("cable_id").where("id", "=", id).executeTakeFirst();
    if (!row || row.cable_id === a.id) continue;
    await a.saves(type, [id]);
    await ctx.db.updateTable(m.table).set({ cable_id: a.id }).where("id", "=", id).execute();
  }
}

/**
 * Before cables are deleted, their terminations are saved without them (Nautobot
 * `dcim/signals.py::nullify_connected_endpoints`), so each is change-logged as updated; the delete's
 * SET_NULL rule then clears their `cable`.
 */
async function cableDelete(ctx: Ctx, ids: readonly string[], saves: NoteSaves): Promise<void> {
  const byType = new Map<string, string[]>();
  for (const part of chunks([...ids])) {
    const rows = await ctx.db.selectFrom("dcim_cable").selectAll().where("id", "in", part).execute();
    for (const r of rows as Row[])
      for (const end of ["termination_a", "termination_b"]) {
        const type = r[`${end}_type`] as string | null;
        const id = r[`${end}_id`] as string | null;
        if (type && id && ctx.reg.models.get(type)?.fields.cable)
          byType.set(type, [...(byType.get(type) ?? []), id]);
      }
  }
  for (const [type, list] of byType) await saves(type, list);
}

/** Join the master device to its virtual chassis (position 1 when unset). */
async function vcMaster(ctx: Ctx, a: HookArgs): Promise<void> {
  const master = a.data.master as string | null;
  if (!master) return;
  const dev = await ctx.db
    .selectFrom("dcim_device")
    .select(["id", "virtual_chassis_id", "vc_position"])
    .where("id", "=", master)
    .executeTakeFirst();
  if (!dev) return;
  await ctx.db
    .updateTable("dcim_device")
    .set({ virtual_chassis_id: a.id, vc_position: dev.vc_position ?? 1 })
    .where("id", "=", master)
    .execute();
}

const HOOKS: Record<string, (ctx: Ctx, a: HookArgs) => Promise<void>> = {
  device_components: deviceComponents,
  circuit_termination: circuitTermination,
  cable,
  vc_master: vcMaster,
};

const DELETE_HOOKS: Record<string, (ctx: Ctx, ids: readonly string[], saves: NoteSaves) => Promise<void>> = {
  cable_delete: cableDelete,
};

/**
 * Run a model's `beforeDelete` hook over the ids about to be deleted, before any row changes. Unknown names
 * are a programming error.
 */
export async function runDeleteHook(
  ctx: Ctx,
  name: string,
  ids: readonly string[],
  saves: NoteSaves,
): Promise<void> {
  const h = DELETE_HOOKS[name];
  if (!h) throw new Error(`unknown beforeDelete hook ${name}`);
  await h(ctx, ids, saves);
}

/** Run a named hook. Unknown names are a programming error. */
export async function runHook(ctx: Ctx, name: string, args: HookArgs): Promise<void> {
  const h = HOOKS[name];
  if (!h) throw new Error(`unknown afterWrite hook ${name}`);
  // Hooks write rows of other models that the change list does not name (rows.ts `writtenHere`).
  ctx.memo.set(UNTRACKED_KEY, true);
  await h(ctx, args);
}
