/**
 * The filter form of list pages (issue 10): a few controls per model, derived from the registry (status,
 * choice fields, related objects with few enough rows to list), or declared where a model has better ones
 * (the change log: user, object type, action, time range). Each control is one of the API's filter
 * parameters, so the form's query string is exactly what the API would take.
 */
import type { Model } from "../registry/index.ts";
import type { Ctx } from "../service/context.ts";
import { hasMoreThan, listRows } from "../service/read.ts";
import { represent } from "../service/represent.ts";
import { statusesFor } from "../service/rows.ts";
import { contentTypeLabel } from "./columns.ts";
import { MAX_OPTIONS } from "./forms.ts";
import { titleOf } from "./views.ts";

/** One filter control. */
export interface FilterControl {
  param: string;
  label: string;
  kind: "select" | "date";
  options?: Array<{ value: string; label: string }>;
  value: string;
}

/** Declared filter forms: parameter names of the API's filters, in order. */
const DECLARED: Record<string, string[]> = {
  "extras.objectchange": ["user_id", "changed_object_type", "action", "time_after", "time_before"],
  "extras.webhookdelivery": ["webhook_id", "state", "event"],
};

/** Most generated controls per list. */
const MAX_CONTROLS = 6;

async function optionsOf(
  ctx: Ctx,
  key: string,
): Promise<Array<{ value: string; label: string }> | undefined> {
  const target = ctx.reg.get(key);
  if (await hasMoreThan(ctx, target, MAX_OPTIONS).catch(() => true)) return undefined;
  const { rows } = await listRows(ctx, target, { params: new Map(), limit: MAX_OPTIONS, offset: 0 });
  return (await represent(ctx, target, rows, { fields: [] })).map((o) => ({
    value: String(o.id),
    label: String(o.display),
  }));
}

/** The filter controls of a model's list page, filled from the request's parameters. */
export async function filterControls(
  ctx: Ctx,
  model: Model,
  given: Map<string, string[]>,
): Promise<FilterControl[]> {
  const out: FilterControl[] = [];
  const value = (p: string) => given.get(p)?.[0] ?? "";
  const declared = DECLARED[model.key];
  // Generated forms: status first, then roles (Nautobot's filter forms lead with them), then the rest.
  const rank = (n: string) => (n === "status" ? 0 : n === "role" || n.endsWith("_role") ? 1 : 2);
  const names = declared ?? model.fieldList.map(([n]) => n).sort((a, b) => rank(a) - rank(b));
  for (const name of names) {
    if (out.length >= (declared ? 10 : MAX_CONTROLS)) break;
    if (name === "time_after" || name === "time_before") {
      out.push({
        param: name,
        label: name === "time_after" ? "From" : "Until",
        kind: "date",
        value: value(name),
      });
      continue;
    }
    const field = name.endsWith("_id") && !model.fields[name] ? name.slice(0, -3) : name;
    const fd = model.fields[field];
    if (!fd || fd.hidden || fd.writeOnly) continue;
    const label = fd.label ?? titleOf(field.replace(/_/g, " "));
    if (fd.kind === "status") {
      const options = [...(await statusesFor(ctx, model.key)).values()].map((s) => ({
        value: String(s.slug),
        label: String(s.name),
      }));
      out.push({ param: "status", label, kind: "select", options, value: value("status") });
    } else if (fd.kind === "choice") {
      out.push({
        param: field,
        label,
        kind: "select",
        options: fd.choices.map(([v, l]) => ({ value: String(v), label: l })),
        value: value(field),
      });
    } else if (fd.kind === "ct") {
      const options = ctx.reg
        .resolveAllowed(fd.allowed)
        .map((k) => ({ value: k, label: contentTypeLabel(ctx.reg, k) }));
      out.push({ param: field, label, kind: "select", options, value: value(field) });
    } else if (fd.kind === "fk" && fd.filterKey !== false) {
      const param = fd.idFilter ?? `${field}_id`;
      const options = await optionsOf(ctx, fd.to);
      if (options) out.push({ param, label, kind: "select", options, value: value(param) });
    }
  }
  return out;
}

/** The request's filter parameters without blank values (an empty select means "any"). */
export function nonBlank(params: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, vs] of params) {
    const kept = vs.filter((v) => v !== "");
    if (kept.length) out.set(k, kept);
  }
  return out;
}
