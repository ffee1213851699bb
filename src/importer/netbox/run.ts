/**
 * `inventory import netbox FILE`: load a NetBox 3.x dump through the service layer (same validation
 * and change log as the API), model by model in dependency order, in transactions of 500 records.
 *
 * Idempotence: before creating a record, its natural key (per mapping) is looked up; an existing
 * object is reused and counted as "present", so a second run creates nothing. `--strict` runs the whole
 * import in one transaction and aborts on the first failing record, leaving the database unchanged.
 */
import cliProgress from "cli-progress";
import Table from "cli-table3";
import type { Registry } from "../../registry/index.ts";
import { changeLogUser } from "../../service/accounts.ts";
import { type Ctx, makeCtx } from "../../service/context.ts";
import { ValidationError } from "../../service/errors.ts";
import { findRecords } from "../../service/rows.ts";
import {
  createObject,
  inTransaction,
  restoreTimestamps,
  type Timestamps,
  updateObject,
} from "../../service/write.ts";
import type { Store } from "../../store/db.ts";
import { type Body, MAPPINGS, type Mapper, type Mapping, SELF_REFERENCES, skipReason } from "./map.ts";
import { type NetboxRecord, readDump } from "./read.ts";

/** Placeholder id for a reference whose NetBox record was not imported (fails validation as "not found"). */
const MISSING = "00000000-0000-4000-8000-000000000000";
const BATCH = 500;

/** Counters of one NetBox model. */
interface Stat {
  read: number;
  imported: number;
  present: number;
  skipped: number;
  failed: number;
  reasons: Set<string>;
  /** Partial imports: message → number of records. */
  notes: Map<string, number>;
}

/** Options of an import. */
export interface ImportArgs {
  store: Store;
  reg: Registry;
  file: string;
  strict: boolean;
  out: NodeJS.WritableStream;
  /**
   * Username the change log names for the imported changes (`inventory import netbox --user`); default the
   * first superuser, else "system" (service/accounts.ts `changeLogUser`). An unknown name is an Error.
   */
  user?: string;
}

/** Thrown in strict mode to roll everything back. */
class StrictAbort extends Error {
  override name = "StrictAbort";
}

/** A failed record, for the report. */
interface Failure {
  model: string;
  pk: unknown;
  message: string;
}

function errorText(e: unknown): string {
  if (e instanceof ValidationError) return JSON.stringify(e.errors);
  return (e as Error).message;
}

/**
 * Import a NetBox dump. Prints progress and a summary table to `out`.
 * @returns true when no record failed.
 * @throws Error when the file cannot be read, or (strict) on the first failure after rolling back.
 */
export async function importNetbox(args: ImportArgs): Promise<boolean> {
  const { store, reg, file, strict, out } = args;
  const dump = readDump(file);
  const tty = (out as NodeJS.WriteStream).isTTY === true;
  const ids = new Map<string, string>();
  const stats = new Map<string, Stat>();
  const failures: Failure[] = [];
  const stat = (model: string): Stat => {
    let s = stats.get(model);
    if (!s) {
      s = { read: 0, imported: 0, present: 0, skipped: 0, failed: 0, reasons: new Set(), notes: new Map() };
      stats.set(model, s);
    }
    return s;
  };
  for (const [model, records] of dump.byModel) stat(model).read = records.length;

  const cableEnds = new Map<string, { a: NetboxRecord[]; b: NetboxRecord[] }>();
  for (const t of dump.byModel.get("dcim.cabletermination") ?? []) {
    const key = String(t.fields.cable);
    const e = cableEnds.get(key) ?? { a: [], b: [] };
    (t.fields.cable_end === "B" ? e.b : e.a).push(t);
    cableEnds.set(key, e);
  }
  let locationTypeId = "";
  /** The NetBox model being mapped (notes are filed under it). */
  let current = "";
  /** References of the record being mapped whose NetBox record was not imported (for the failure text). */
  let missing: string[] = [];
  const lookup = (model: string, pk: unknown): string => {
    const id = ids.get(`${model}:${pk}`);
    if (id) return id;
    missing.push(`${model} pk ${String(pk)}`);
    return MISSING;
  };
  const mapper: Mapper = {
    ref: (model, pk) => (pk === null || pk === undefined || pk === "" ? null : lookup(model, pk)),
    refs: (model, pks) => (Array.isArray(pks) ? pks.map((pk) => lookup(model, pk)) : []),
    ct: (v) => {
      if (v === null || v === undefined) return null;
      // dumpdata writes content types as a pk, or as a natural key [app_label, model].
      if (Array.isArray(v)) return `${v[0]}.${v[1]}`;
      return dump.contentTypes.get(Number(v)) ?? null;
    },
    ourCt: (ct) => (ct && reg.models.has(ct) ? ct : null),
    locationType: () => locationTypeId,
    cableEnds: (pk) => cableEnds.get(String(pk)) ?? { a: [], b: [] },
    record: (model, pk) => dump.get(model, pk),
    note: (message) => {
      const notes = stat(current).notes;
      notes.set(message, (notes.get(message) ?? 0) + 1);
    },
  };

  const base = makeCtx({ store, reg, settings: { enforceGlobalUnique: false, changelog: true } });
  base.skipTemplates = true;
  base.changedBy = await changeLogUser(store, args.user);

  /** NetBox's own `created`/`last_updated` of the records created, put back once every pass is done. */
  const stamps: Timestamps[] = [];
  const run = async (outer: Ctx | undefined) => {
    const tx = async <T>(fn: (c: Ctx) => Promise<T>) => (outer ? fn(outer) : inTransaction(base, fn));
    // NetBox 3.x locations have no type: they all get one nestable type allowing every location content type.
    if ((dump.byModel.get("dcim.location") ?? []).length) {
      locationTypeId = await tx(async (c) => {
        const lt = reg.get("dcim.locationtype");
        const [found] = await findRecords(c, lt, { name: "Location" });
        if (found) return found.id as string;
        return createObject(c, lt, {
          name: "Location",
          slug: "location",
          nestable: true,
          content_types: reg.feature("locations"),
        });
      });
    }
    const phase = async (
      label: string,
      records: NetboxRecord[],
      work: (c: Ctx, r: NetboxRecord) => Promise<void>,
    ) => {
      if (!records.length) return;
      const bar = tty
        ? new cliProgress.SingleBar(
            { format: `${label.padEnd(34)} {bar} {value}/{total}`, stream: out as NodeJS.WriteStream },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      bar?.start(records.length, 0);
      for (let i = 0; i < records.length; i += BATCH) {
        const part = records.slice(i, i + BATCH);
        await tx(async (c) => {
          for (const r of part) await work(c, r);
        });
        bar?.update(Math.min(i + BATCH, records.length));
      }
      bar?.stop();
      if (!tty) out.write(`${label}: ${records.length} records\n`);
    };
    const fail = (model: string, pk: unknown, e: unknown) => {
      // Anything but a validation error (a database error) ends the import: the batch rolls back.
      if (!(e instanceof ValidationError))
        throw new Error(`${model} pk ${String(pk)}: ${(e as Error).message}`, { cause: e });
      stat(model).failed++;
      const why = missing.length ? ` (not imported: ${[...new Set(missing)].join(", ")})` : "";
      failures.push({ model, pk, message: errorText(e) + why });
      if (strict) throw new StrictAbort(`${model} pk ${String(pk)}: ${errorText(e)}${why}`);
    };

    for (const mapping of MAPPINGS) await importModel(mapping);

    async function importModel(mapping: Mapping): Promise<void> {
      const model = reg.get(mapping.model);
      const records = mapping.order
        ? mapping.order(dump.byModel.get(mapping.netbox) ?? [])
        : (dump.byModel.get(mapping.netbox) ?? []);
      await phase(mapping.netbox, records, async (c, r) => {
        current = mapping.netbox;
        missing = [];
        const body = mapping.body(r, mapper);
        if (typeof body === "string") {
          stat(mapping.netbox).skipped++;
          stat(mapping.netbox).reasons.add(body);
          return;
        }
        // The last field of a natural key identifies the object (name, cid, address...): a key whose last
        // field is unset (an unnamed device) is not used; with no usable key the record is created.
        const keys = (
          typeof mapping.natural[0] === "string" ? [mapping.natural] : mapping.natural
        ) as ReadonlyArray<readonly string[]>;
        let existing: Array<Record<string, unknown>> = [];
        for (const key of keys) {
          const last = key[key.length - 1];
          if (last === undefined || body[last] === null || body[last] === undefined || body[last] === "")
            continue;
          const where: Record<string, unknown> = {};
          for (const k of key) where[k] = body[k] ?? null;
          existing = await findRecords(c, model, where, 1);
          break;
        }
        if (existing.length) {
          ids.set(`${mapping.netbox}:${r.pk}`, existing[0]!.id as string);
          stat(mapping.netbox).present++;
          return;
        }
        try {
          const id = await createObject(c, model, body);
          ids.set(`${mapping.netbox}:${r.pk}`, id);
          if (model.changelog && (r.fields.created || r.fields.last_updated))
            stamps.push({
              model: model.key,
              id,
              created: r.fields.created,
              lastUpdated: r.fields.last_updated,
            });
          stat(mapping.netbox).imported++;
        } catch (e) {
          fail(mapping.netbox, r.pk, e);
        }
      });
    }

    // Second passes: references to records of the same or a later phase.
    const laters: Array<[string, string, (r: NetboxRecord, m: Mapper) => Body | undefined]> = [];
    for (const mp of MAPPINGS) if (mp.later) laters.push([mp.netbox, mp.model, mp.later]);
    for (const [nb, fn] of Object.entries(SELF_REFERENCES)) laters.push([nb, nb, fn]);
    for (const [nb, key, fn] of laters) {
      const model = reg.get(key);
      current = nb;
      const records = (dump.byModel.get(nb) ?? []).filter((r) => ids.has(`${nb}:${r.pk}`) && fn(r, mapper));
      await phase(`${nb} (references)`, records, async (c, r) => {
        const id = ids.get(`${nb}:${r.pk}`)!;
        missing = [];
        try {
          await updateObject(c, model, id, fn(r, mapper), true);
        } catch (e) {
          fail(nb, r.pk, e);
        }
      });
    }

    // Tags: one update per tagged object.
    const tagged = new Map<string, { model: string; id: string; tags: string[]; pks: unknown[] }>();
    for (const t of dump.byModel.get("extras.taggeditem") ?? []) {
      const nb = mapper.ct(t.fields.content_type);
      const our = mapper.ourCt(nb);
      const id = nb ? ids.get(`${nb}:${t.fields.object_id}`) : undefined;
      const tag = ids.get(`extras.tag:${t.fields.tag}`);
      const s = stat("extras.taggeditem");
      if (!our || !id || !tag || !reg.get(our).tags) {
        s.skipped++;
        s.reasons.add("tagged object or tag not imported, or its model has no tags");
        continue;
      }
      const e = tagged.get(`${our}:${id}`) ?? { model: our, id, tags: [], pks: [] };
      e.tags.push(tag);
      e.pks.push(t.pk);
      tagged.set(`${our}:${id}`, e);
    }
    const taggedList = [...tagged.values()];
    await phase(
      "extras.taggeditem",
      taggedList.map((_e, i) => ({ model: "x", pk: i, fields: {} })),
      async (c, r) => {
        const e = taggedList[Number(r.pk)]!;
        const s = stat("extras.taggeditem");
        missing = [];
        try {
          const current = (await findRecords(c, reg.get(e.model), { id: e.id }, 1))[0];
          const have = new Set(
            (
              await c.db
                .selectFrom("extras_taggeditem")
                .select("tag_id")
                .where("content_type", "=", e.model)
                .where("object_id", "=", e.id)
                .execute()
            ).map((x) => x.tag_id as string),
          );
          if (current && e.tags.every((t) => have.has(t))) {
            s.present += e.pks.length;
            return;
          }
          await updateObject(c, reg.get(e.model), e.id, { tags: [...new Set([...have, ...e.tags])] }, true);
          s.imported += e.pks.length;
        } catch (err) {
          fail("extras.taggeditem", e.pks[0], err);
        }
      },
    );
    // Last: NetBox's dates replace the import time on the records created (later passes stamped them).
    for (let i = 0; i < stamps.length; i += BATCH) {
      const part = stamps.slice(i, i + BATCH);
      await tx((c) => restoreTimestamps(c, part));
    }
  };

  const t0 = performance.now();
  if (strict) {
    try {
      await inTransaction(base, (c) => run(c));
    } catch (e) {
      if (e instanceof StrictAbort) {
        out.write(`import aborted (--strict), nothing written: ${e.message}\n`);
        return false;
      }
      throw e;
    }
  } else {
    await run(undefined);
  }
  const seconds = (performance.now() - t0) / 1000;

  // Models with no mapping are skipped with a reason.
  const mapped = new Set([...MAPPINGS.map((m) => m.netbox), "extras.taggeditem"]);
  for (const [model, s] of stats) {
    if (mapped.has(model)) continue;
    s.skipped = s.read;
    s.reasons.add(skipReason(model));
  }
  const table = new Table({
    head: ["NetBox model", "read", "imported", "present", "skipped", "failed"],
    style: { head: [], border: [] },
  });
  const sorted = [...stats].sort((a, b) => a[0].localeCompare(b[0]));
  let totals = [0, 0, 0, 0, 0];
  for (const [model, s] of sorted) {
    table.push([model, s.read, s.imported, s.present, s.skipped, s.failed]);
    totals = totals.map((v, i) => v + [s.read, s.imported, s.present, s.skipped, s.failed][i]!);
  }
  table.push(["total", ...totals]);
  out.write(`${table.toString()}\n`);
  const skippedModels = sorted.filter(([, s]) => s.skipped > 0);
  if (skippedModels.length) {
    out.write("skipped:\n");
    for (const [model, s] of skippedModels)
      out.write(`  ${model} (${s.skipped}): ${[...s.reasons].join("; ")}\n`);
  }
  const noted = sorted.filter(([, s]) => s.notes.size > 0);
  if (noted.length) {
    out.write("imported in part (a value with no equivalent was dropped):\n");
    for (const [model, s] of noted)
      for (const [message, n] of s.notes) out.write(`  ${model} (${n}): ${message}\n`);
  }
  if (failures.length) {
    out.write("failed:\n");
    for (const f of failures) out.write(`  ${f.model} pk ${String(f.pk)}: ${f.message}\n`);
  }
  out.write(
    `${dump.total} records read, ${totals[1]} imported, ${totals[2]} already present, ${totals[3]} skipped, ${totals[4]} failed in ${seconds.toFixed(2)} s\n`,
  );
  return failures.length === 0;
}
