/**
 * Edit conflicts in the web interface (issue 26): the edit and bulk-edit forms carry the versions of the
 * objects they were drawn from (hidden inputs), the save names them to the service's version check
 * (service/object-versions.ts), and a save over someone else's change overwrites nothing and says what
 * changed meanwhile.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { changesSince } from "../service/object-versions.ts";

/** The hidden input of the edit form holding the version it was drawn from. */
export const VERSION_INPUT = "_version";
/** The hidden inputs of the bulk-edit form, one `<id>:<version>` per selected object. */
export const VERSIONS_INPUT = "_versions";

/** A posted version (a positive integer), or undefined when absent or malformed (no check then). */
export function postedVersion(v: unknown): number | undefined {
  const n = Number(Array.isArray(v) ? v[0] : v);
  return typeof v !== "undefined" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The posted `<id>:<version>` pairs of a bulk-edit form, by id. */
export function postedVersions(v: unknown): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v]) {
    const [id, ver] = String(item).split(":");
    const n = postedVersion(ver);
    if (id && n) out.set(id.toLowerCase(), n);
  }
  return out;
}

/**
 * The message shown when a save finds `display` of `model` changed since version `since`: who changed
 * which fields and when, that nothing was saved, and that the form now shows the current values.
 */
export async function conflictMessage(
  ctx: Ctx,
  model: Model,
  id: string,
  display: string,
  since: number,
): Promise<string> {
  const changes = await changesSince(ctx, model, id, since);
  const what = changes.length
    ? changes
        .map(
          (c) =>
            `${c.user || "someone"} ${c.action === "delete" ? "deleted it" : `changed ${c.fields.length ? c.fields.join(", ") : "it"}`} at ${c.time}`,
        )
        .join("; ")
    : "another change was saved";
  return `Conflict: ${model.verbose} ${display} was changed by someone else while you were editing it (${what}). Nothing was saved; the form now shows the current values: make your changes again and save.`;
}
