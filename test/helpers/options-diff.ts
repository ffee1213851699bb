/**
 * Field-level comparison of two OPTIONS answers (DRF `SimpleMetadata` as Nautobot 1.6.32's
 * `BulkOperationMetadata` gives it): the view's name, description, renders and parses, then every field of
 * `actions.POST` (and whether `PUT` is the same map) down through `children` and `child`, attribute by
 * attribute (type, required, read_only, write_only, label, help_text, choices, min/max bounds, ...) and the
 * order of the keys. Used by scripts/options-diff.ts against a running Nautobot and by
 * test/api/options-fixture.test.ts against test/fixtures/nautobot-options.json.
 */
import { isDeepStrictEqual } from "node:util";

/**
 * One difference: where (`<app>/<endpoint> <path>`), what (`attr`), and both sides' values (long values cut
 * to 160 characters of JSON, except the `choices.values` lists: missing on our side, extra on our side).
 */
export interface OptionsDiff {
  /** `<app>/<endpoint>`, e.g. `dcim/devices`. */
  endpoint: string;
  /** Dotted path below the endpoint: `POST.device_type.children.manufacturer`, or `` for the view itself. */
  path: string;
  /** The attribute that differs: a metadata key, `keys` (order or set of keys), `present` or `choices…`. */
  attr: string;
  ref: unknown;
  ours: unknown;
}

type Meta = Record<string, any>;

/** A value as printed: its JSON cut to 160 characters. */
export const brief = (v: unknown): unknown => {
  const s = JSON.stringify(v);
  return s !== undefined && s.length > 160 ? `${s.slice(0, 157)}...` : v;
};

/** Compare two choice lists: values missing or extra, displays that differ, then the order. */
function diffChoices(ref: Meta[], ours: Meta[], push: (attr: string, r: unknown, o: unknown) => void): void {
  const rv = new Map(ref.map((c) => [String(c.value), c.display]));
  const ov = new Map(ours.map((c) => [String(c.value), c.display]));
  const missing = [...rv.keys()].filter((v) => !ov.has(v));
  const extra = [...ov.keys()].filter((v) => !rv.has(v));
  // Full lists (the allow-list reads them): values only the reference has, values only we have.
  if (missing.length || extra.length) push("choices.values", missing, extra);
  const displays = [...rv].filter(([v, d]) => ov.has(v) && ov.get(v) !== d);
  if (displays.length)
    push(
      "choices.display",
      brief(displays.map(([v, d]) => `${v}=${d}`)),
      brief(displays.map(([v]) => `${v}=${ov.get(v)}`)),
    );
  const types = ref.filter((c) =>
    ours.some((o) => String(o.value) === String(c.value) && o.value !== c.value),
  );
  if (types.length) push("choices.value_type", brief(types.map((c) => c.value)), "other JSON type");
  const common = (list: Meta[], other: Map<string, unknown>) =>
    list.map((c) => String(c.value)).filter((v) => other.has(v));
  if (!isDeepStrictEqual(common(ref, ov), common(ours, rv)))
    push("choices.order", brief(common(ref, ov)), brief(common(ours, rv)));
}

/** Compare one field's metadata, recursing into `children` and `child`. */
function diffField(
  ref: Meta,
  ours: Meta,
  path: string,
  out: (p: string, a: string, r: unknown, o: unknown) => void,
) {
  const push = (attr: string, r: unknown, o: unknown) => out(path, attr, r, o);
  const rk = Object.keys(ref);
  const ok = Object.keys(ours);
  for (const k of new Set([...rk, ...ok])) {
    if (k === "children") {
      if (ref.children && ours.children) diffFields(ref.children, ours.children, `${path}.children`, out);
      else
        push(
          "children",
          brief(ref.children && Object.keys(ref.children)),
          brief(ours.children && Object.keys(ours.children)),
        );
    } else if (k === "child") {
      if (ref.child && ours.child) diffField(ref.child, ours.child, `${path}.child`, out);
      else push("child", brief(ref.child), brief(ours.child));
    } else if (k === "choices" && Array.isArray(ref.choices) && Array.isArray(ours.choices)) {
      diffChoices(ref.choices, ours.choices, push);
    } else if (!isDeepStrictEqual(ref[k], ours[k])) {
      push(k, brief(ref[k]), brief(ours[k]));
    }
  }
  // The order of a field's own metadata keys (DRF: type, required, read_only, label, help_text, ...).
  const common = rk.filter((k) => k in ours);
  if (
    !isDeepStrictEqual(
      common,
      ok.filter((k) => k in ref),
    )
  )
    push(
      "attr_order",
      common,
      ok.filter((k) => k in ref),
    );
}

/** Compare two field maps (an action's fields or a nested serializer's `children`): keys, order, each field. */
function diffFields(
  ref: Meta,
  ours: Meta,
  path: string,
  out: (p: string, a: string, r: unknown, o: unknown) => void,
) {
  const rk = Object.keys(ref);
  const ok = Object.keys(ours);
  for (const k of rk) if (!(k in ours)) out(`${path}.${k}`, "present", true, false);
  for (const k of ok) if (!(k in ref)) out(`${path}.${k}`, "present", false, true);
  const common = rk.filter((k) => k in ours);
  if (
    !isDeepStrictEqual(
      common,
      ok.filter((k) => k in ref),
    )
  )
    out(path, "keys.order", brief(common), brief(ok.filter((k) => k in ref)));
  for (const k of common) diffField(ref[k], ours[k], `${path}.${k}`, out);
}

/**
 * Every difference between the reference's OPTIONS answer for one list endpoint and ours. `PUT` is compared
 * only for its presence and for being the same field map as `POST`, as both serve the same serializer.
 */
export function diffOptions(endpoint: string, ref: Meta, ours: Meta): OptionsDiff[] {
  const diffs: OptionsDiff[] = [];
  const out = (path: string, attr: string, r: unknown, o: unknown) =>
    diffs.push({ endpoint, path: path.replace(/^\./, ""), attr, ref: r, ours: o });
  for (const k of ["name", "description", "renders", "parses"])
    if (!isDeepStrictEqual(ref[k], ours[k])) out("", k, ref[k], ours[k]);
  const ra = ref.actions ?? {};
  const oa = ours.actions ?? {};
  // The methods as a set: Nautobot builds `actions` by iterating `{"PUT", "POST"} & set(allowed_methods)`,
  // a Python set of strings whose order changes with each process's hash seed.
  if (!isDeepStrictEqual(Object.keys(ra).sort(), Object.keys(oa).sort()))
    out("", "actions", Object.keys(ra), Object.keys(oa));
  if (ra.POST && oa.POST) diffFields(ra.POST, oa.POST, "POST", out);
  if (ra.PUT && oa.PUT) {
    const refSame = isDeepStrictEqual(ra.PUT, ra.POST);
    const oursSame = isDeepStrictEqual(oa.PUT, oa.POST);
    if (refSame !== oursSame) out("PUT", "same_as_POST", refSame, oursSame);
  }
  return diffs;
}

/**
 * The class of a difference, for counting: the path with the endpoint and field names generalised to the
 * shape (`POST.*.children.*`) and the attribute, e.g. `POST.*.children.* present ours-only`.
 */
export function diffClass(d: OptionsDiff): string {
  const keep = new Set(["POST", "PUT", "children", "child"]);
  const shape = d.path
    .split(".")
    .map((p) => (keep.has(p) || !p ? p : "*"))
    .join(".");
  const side = d.attr === "present" ? (d.ref ? " ref-only" : " ours-only") : "";
  return `${shape} ${d.attr}${side}`;
}

/** The reference's answer in the fixture: PUT left out when it equals POST (`put: "same"`). */
export function compactAnswer(body: Meta): Meta {
  const { actions, ...rest } = body;
  if (!actions) return rest;
  const out: Meta = { ...rest, actions: { ...actions } };
  if (actions.PUT && isDeepStrictEqual(actions.PUT, actions.POST)) out.actions.PUT = "same";
  return out;
}

/** The reference's answer from the fixture, PUT restored. */
export function expandAnswer(body: Meta): Meta {
  if (body.actions?.PUT !== "same") return body;
  return { ...body, actions: { ...body.actions, PUT: body.actions.POST } };
}
