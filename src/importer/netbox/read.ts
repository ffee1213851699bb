/**
 * Reading a NetBox `dumpdata` file: a JSON list of `{model, pk, fields}` records (NetBox 3.x).
 */
import { readFileSync } from "node:fs";

/** One dumpdata record. */
export interface NetboxRecord {
  model: string;
  pk: number | string;
  fields: Record<string, any>;
}

/** A dump indexed by model, with content-type lookups. */
export interface NetboxDump {
  byModel: Map<string, NetboxRecord[]>;
  /** NetBox content-type pk → `app.model`. */
  contentTypes: Map<number, string>;
  /** Number of records in the file. */
  total: number;
  /** One record by model and pk (pks compared as text). */
  get(model: string, pk: unknown): NetboxRecord | undefined;
}

/**
 * Read and index a dump file (`python manage.py dumpdata` output of NetBox 3.x: a JSON list of
 * `{model: "app.model", pk, fields: {...}}`; foreign keys are pks, content types a pk or `[app, model]`).
 * @throws Error with a one-line message when the file is missing or is not a dumpdata list.
 */
export function readDump(file: string): NetboxDump {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new Error(`cannot read NetBox dump ${file}: ${(e as Error).message}`);
  }
  if (!Array.isArray(data)) throw new Error(`${file} is not a NetBox dumpdata file (expected a JSON list)`);
  const byModel = new Map<string, NetboxRecord[]>();
  const contentTypes = new Map<number, string>();
  for (const r of data as NetboxRecord[]) {
    if (!r || typeof r !== "object" || typeof r.model !== "string" || !r.fields) {
      throw new Error(`${file} is not a NetBox dumpdata file (a record lacks model/fields)`);
    }
    const list = byModel.get(r.model);
    if (list) list.push(r);
    else byModel.set(r.model, [r]);
    if (r.model === "contenttypes.contenttype")
      contentTypes.set(Number(r.pk), `${r.fields.app_label}.${r.fields.model}`);
  }
  const index = new Map<string, NetboxRecord>();
  for (const list of byModel.values()) for (const r of list) index.set(`${r.model}:${String(r.pk)}`, r);
  return {
    byModel,
    contentTypes,
    total: data.length,
    get: (model, pk) => index.get(`${model}:${String(pk)}`),
  };
}
