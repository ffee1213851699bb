/**
 * One-time data upgrades run by `upgrade()` after the schema migration, each once per database under a
 * marker row in `inventory_meta` and the transaction lock (processes starting together run it once).
 */
import { randomUUID } from "node:crypto";
import { newDefinitionsToken } from "../store/db.ts";
import { storedTime } from "../store/values.ts";
import type { Ctx } from "./context.ts";
import { inTransaction } from "./write.ts";

/** Run `fn` once per database under `marker`. @returns what `fn` returned, or 0 when already done. */
async function once(ctx: Ctx, marker: string, fn: (t: Ctx) => Promise<number>): Promise<number> {
  const done = (t: Ctx) =>
    t.db.selectFrom("inventory_meta").select("key").where("key", "=", marker).executeTakeFirst();
  if (await done(ctx)) return 0;
  return inTransaction(ctx, async (t) => {
    await t.store.dialect.transactionLock(t.db, marker);
    if (await done(t)) return 0;
    const n = await fn(t);
    if (n) await newDefinitionsToken(t.db);
    await t.db
      .insertInto("inventory_meta")
      .values({ key: marker, value: String(n) })
      .execute();
    return n;
  });
}

/**
 * Inline custom-field `choices` lists of earlier releases become custom-field choice rows (weight 100 in
 * list order, as Nautobot's migration does), then the inline list is cleared (issue 9).
 * @returns how many choices were moved.
 */
export function ensureChoiceRows(ctx: Ctx): Promise<number> {
  return once(ctx, "custom_field_choices_v1", async (t) => {
    const fields = await t.db
      .selectFrom("extras_customfield")
      .select(["id", "choices"])
      .where("choices", "is not", null)
      .execute();
    let n = 0;
    const now = storedTime();
    for (const f of fields) {
      const list = JSON.parse(String(f.choices)) as unknown;
      if (!Array.isArray(list) || !list.length) continue;
      for (const [i, value] of list.entries()) {
        await t.db
          .insertInto("extras_customfieldchoice")
          .values({
            id: randomUUID(),
            field_id: f.id,
            value: String(value),
            weight: 100 + i,
            created: now.slice(0, 10),
            last_updated: now,
          })
          .execute();
        n++;
      }
      await t.db.updateTable("extras_customfield").set({ choices: "[]" }).where("id", "=", f.id).execute();
    }
    return n;
  });
}

/** Device types of earlier releases stored empty images as ''; Nautobot renders them as null (issue 9). */
export function ensureNullImages(ctx: Ctx): Promise<number> {
  return once(ctx, "device_type_images_v1", async (t) => {
    const r = await t.db
      .updateTable("dcim_devicetype")
      .set({ front_image: null, rear_image: null })
      .where((eb) => eb.or([eb("front_image", "=", ""), eb("rear_image", "=", "")]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows ?? 0);
  });
}

/**
 * Tags created by earlier releases have no content-type rows (their `content_types` were not stored); a tag
 * applies to the models of its content types (Nautobot 1.6 `Tag.objects.get_for_model`), so each such tag
 * gets every taggable model, as a tag created at API 1.2 does (issue 24).
 * @returns how many tags were given content types.
 */
export function ensureTagContentTypes(ctx: Ctx): Promise<number> {
  return once(ctx, "tag_content_types_v1", async (t) => {
    const bare = await t.db
      .selectFrom("extras_tag as g")
      .select("g.id")
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("extras_tag_content_types as c")
              .select("c.source_id")
              .whereRef("c.source_id", "=", "g.id"),
          ),
        ),
      )
      .execute();
    const taggable = t.reg.taggable();
    for (const { id } of bare) {
      await t.db
        .insertInto("extras_tag_content_types")
        .values(taggable.map((ct) => ({ source_id: id, content_type: ct })))
        .execute();
    }
    return bare.length;
  });
}
