/**
 * Loaders of computed read-only fields (`f.computed(loader)`), each set-wise over a page of rows.
 * A loader returns one value per row, in row order.
 */

import { type Model, versionBefore } from "../registry/index.ts";
import type { ComputedField } from "../registry/meta.ts";
import { orderColumns } from "../store/ordering.ts";
import { type CablePath, pathsOf } from "./cable-paths.ts";
import { type Ctx, definitionsMemo } from "./context.ts";
import { AppError } from "./errors.ts";
import { type Mode, nestedFor } from "./represent.ts";
import { chunks, type Row, rowsById, rowsWhereIn, selfReferences } from "./rows.ts";

type Loader = (
  ctx: Ctx,
  model: Model,
  rows: readonly Row[],
  field: ComputedField & { path?: string },
  mode: Mode,
) => Promise<unknown[]>;

async function treeDepth(ctx: Ctx, model: Model, rows: readonly Row[]): Promise<unknown[]> {
  const parentCol = `${model.tree ?? "parent"}_id`;
  const nodes = await ctx.db.selectFrom(model.table).select(["id", parentCol]).execute();
  const parent = new Map(nodes.map((r) => [r.id as string, (r[parentCol] as string | null) ?? null]));
  return rows.map((r) => {
    let d = 0;
    let p = parent.get(r.id) ?? null;
    while (p && d < 100) {
      d++;
      p = parent.get(p) ?? null;
    }
    return d;
  });
}

/** Cable ends of component rows: for each row, the cable row and which side the row is on. */
export async function cablePeers(
  ctx: Ctx,
  model: Model,
  rows: readonly Row[],
): Promise<Array<{ type: string; id: string; cable: Row } | null>> {
  const cables = await rowsById(
    ctx,
    ctx.reg.get("dcim.cable"),
    rows.map((r) => r.cable_id),
  );
  return rows.map((r) => {
    const c = r.cable_id ? cables.get(r.cable_id) : undefined;
    if (!c) return null;
    if (c.termination_a_type === model.key && c.termination_a_id === r.id) {
      return { type: c.termination_b_type, id: c.termination_b_id, cable: c };
    }
    return { type: c.termination_a_type, id: c.termination_a_id, cable: c };
  });
}

async function renderRefs(ctx: Ctx, refs: Array<{ type: string; id: string } | null>): Promise<unknown[]> {
  const byType = new Map<string, string[]>();
  for (const p of refs) if (p) byType.set(p.type, [...(byType.get(p.type) ?? []), p.id]);
  const objs = new Map<string, unknown>();
  for (const [t, ids] of byType) {
    const m = ctx.reg.models.get(t);
    if (!m) continue;
    for (const [id, o] of await nestedFor(ctx, m, ids)) objs.set(`${t}:${id}`, o);
  }
  return refs.map((p) => (p ? (objs.get(`${p.type}:${p.id}`) ?? null) : null));
}

/** Stored paths of rows that are path endpoints (one query per page), aligned with `rows`. */
export async function rowPaths(ctx: Ctx, rows: readonly Row[]): Promise<Array<CablePath | null>> {
  const paths = await pathsOf(
    ctx,
    rows.map((r) => r.id as string),
  );
  return rows.map((r) => paths.get(r.id) ?? null);
}

/** Deep merge of config context data (later wins; objects merged recursively). */
function deepMerge(into: Record<string, unknown>, from: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(from)) {
    const cur = into[k];
    if (
      v &&
      typeof v === "object" &&
      !Array.isArray(v) &&
      cur &&
      typeof cur === "object" &&
      !Array.isArray(cur)
    ) {
      into[k] = deepMerge({ ...(cur as Record<string, unknown>) }, v as Record<string, unknown>);
    } else {
      into[k] = v;
    }
  }
  return into;
}

async function ancestors(
  ctx: Ctx,
  modelKey: string,
  ids: Iterable<string | null>,
): Promise<Map<string, Set<string>>> {
  const m = ctx.reg.get(modelKey);
  const nodes = await ctx.db
    .selectFrom(m.table)
    .select(["id", `${m.tree}_id as p`])
    .execute();
  const parent = new Map(nodes.map((r) => [r.id as string, (r.p as string | null) ?? null]));
  const out = new Map<string, Set<string>>();
  for (const id of ids) {
    if (!id || out.has(id)) continue;
    const set = new Set<string>();
    let p: string | null = id;
    let guard = 0;
    while (p && guard++ < 100) {
      set.add(p);
      p = parent.get(p) ?? null;
    }
    out.set(id, set);
  }
  return out;
}

/** Rendered config context (Nautobot ConfigContextModel.get_config_context), set-wise. */
async function configContext(ctx: Ctx, model: Model, rows: readonly Row[]): Promise<unknown[]> {
  const local = (r: Row) => (r.local_context_data ? JSON.parse(r.local_context_data) : null);
  const crit = [
    "regions",
    "sites",
    "locations",
    "roles",
    "device_types",
    "platforms",
    "cluster_groups",
    "clusters",
    "tenant_groups",
    "tenants",
    "device_redundancy_groups",
    "tags",
  ];
  const memo = definitionsMemo(ctx);
  let loaded = memo.get("configContexts") as
    | { contexts: Row[]; assign: Map<string, Map<string, Set<string>>> }
    | undefined;
  if (!loaded) {
    const found = await ctx.db
      .selectFrom("extras_configcontext")
      .selectAll()
      .where("is_active", "=", true)
      .orderBy("weight")
      .orderBy("name")
      .execute();
    const ccModel = ctx.reg.get("extras.configcontext");
    const links = new Map<string, Map<string, Set<string>>>();
    for (const c of found.length ? crit : []) {
      const m = new Map<string, Set<string>>();
      for (const l of await ctx.db.selectFrom(`${ccModel.table}_${c}`).selectAll().execute()) {
        m.set(l.source_id, (m.get(l.source_id) ?? new Set()).add(l.target_id));
      }
      links.set(c, m);
    }
    loaded = { contexts: found, assign: links };
    memo.set("configContexts", loaded);
  }
  const { contexts, assign } = loaded;
  if (!contexts.length) return rows.map((r) => local(r) ?? {});
  const isDevice = model.key === "dcim.device";
  const clusters = await rowsById(
    ctx,
    ctx.reg.get("virtualization.cluster"),
    rows.map((r) => r.cluster_id),
  );
  const siteIds = rows.map((r) => (isDevice ? r.site_id : clusters.get(r.cluster_id)?.site_id) ?? null);
  const sites = await rowsById(ctx, ctx.reg.get("dcim.site"), siteIds);
  const regionAnc = await ancestors(
    ctx,
    "dcim.region",
    [...sites.values()].map((s) => s.region_id),
  );
  const locIds = rows.map(
    (r) => (isDevice ? r.location_id : clusters.get(r.cluster_id)?.location_id) ?? null,
  );
  const locAnc = await ancestors(ctx, "dcim.location", locIds);
  const tenants = await rowsById(
    ctx,
    ctx.reg.get("tenancy.tenant"),
    rows.map((r) => r.tenant_id),
  );
  const tgAnc = await ancestors(
    ctx,
    "tenancy.tenantgroup",
    [...tenants.values()].map((t) => t.group_id),
  );
  const tagLinks = await rowsWhereIn(
    ctx,
    { table: "extras_taggeditem" } as Model,
    "object_id",
    rows.map((r) => r.id),
  );
  const tagsByObj = new Map<string, Set<string>>();
  for (const l of tagLinks)
    if (l.content_type === model.key)
      tagsByObj.set(l.object_id, (tagsByObj.get(l.object_id) ?? new Set()).add(l.tag_id));
  return rows.map((r, i) => {
    const cluster = clusters.get(r.cluster_id);
    const site = siteIds[i] ? sites.get(siteIds[i]!) : undefined;
    const tenant = tenants.get(r.tenant_id);
    const attrs: Record<string, Set<string>> = {
      regions: regionAnc.get(site?.region_id) ?? new Set(),
      sites: new Set(siteIds[i] ? [siteIds[i]!] : []),
      locations: locAnc.get(locIds[i] ?? "") ?? new Set(),
      roles: new Set([isDevice ? r.device_role_id : r.role_id].filter(Boolean)),
      device_types: new Set(isDevice && r.device_type_id ? [r.device_type_id] : []),
      platforms: new Set(r.platform_id ? [r.platform_id] : []),
      cluster_groups: new Set(cluster?.group_id ? [cluster.group_id] : []),
      clusters: new Set(r.cluster_id ? [r.cluster_id] : []),
      tenant_groups: tgAnc.get(tenant?.group_id) ?? new Set(),
      tenants: new Set(r.tenant_id ? [r.tenant_id] : []),
      device_redundancy_groups: new Set(
        isDevice && r.device_redundancy_group_id ? [r.device_redundancy_group_id] : [],
      ),
      tags: tagsByObj.get(r.id) ?? new Set(),
    };
    let data: Record<string, unknown> = {};
    for (const c of contexts) {
      const ok = crit.every((k) => {
        const want = assign.get(k)?.get(c.id);
        if (!want || want.size === 0) return true;
        for (const v of attrs[k] ?? []) if (want.has(v)) return true;
        return false;
      });
      if (ok) data = deepMerge(data, JSON.parse(c.data));
    }
    const l = local(r);
    return l ? deepMerge(data, l) : data;
  });
}

/** Count rows per key with one grouped query: `SELECT key, count(*) ... WHERE key IN (...)`. */
async function groupCount(
  ctx: Ctx,
  query: (ids: string[]) => Promise<Array<{ k: string; n: number | string }>>,
  rows: readonly Row[],
): Promise<unknown[]> {
  const counts = new Map<string, number>();
  for (const part of chunks(rows.map((r) => r.id as string)))
    for (const r of await query(part)) counts.set(r.k, Number(r.n));
  void ctx;
  return rows.map((r) => counts.get(r.id) ?? 0);
}

/**
 * Rows of another model pointing at each row through an FK, rendered nested, in that model's ordering
 * (`f.computed("reverse_nested", { of: { model, via } })`): one query for the page.
 */
async function reverseNested(
  ctx: Ctx,
  _model: Model,
  rows: readonly Row[],
  field: ComputedField,
): Promise<unknown[]> {
  if (!field.of) return rows.map(() => []);
  const child = ctx.reg.get(field.of.model);
  const col = `${field.of.via}_id`;
  const links: Row[] = [];
  for (const part of chunks(rows.map((r) => r.id as string))) {
    let q = ctx.db.selectFrom(child.table).selectAll().where(col, "in", part);
    for (const [c, desc] of orderColumns(child)) q = q.orderBy(c, desc ? "desc" : "asc");
    links.push(...(await q.execute()));
  }
  const nested = await nestedFor(
    ctx,
    child,
    links.map((l) => l.id),
  );
  return rows.map((r) => links.filter((l) => l[col] === r.id).map((l) => nested.get(l.id as string) ?? null));
}

const LOADERS: Record<string, Loader> = {
  reverse_nested: reverseNested,
  site_circuit_count: (ctx, _m, rows) =>
    groupCount(
      ctx,
      (ids) =>
        ctx.db
          .selectFrom("circuits_circuittermination")
          .select(["site_id as k", (eb: any) => eb.fn.count("circuit_id").distinct().as("n")])
          .where("site_id", "in", ids)
          .groupBy("site_id")
          .execute() as unknown as Promise<Array<{ k: string; n: number }>>,
      rows,
    ),
  site_vm_count: (ctx, _m, rows) =>
    groupCount(
      ctx,
      (ids) =>
        ctx.db
          .selectFrom("virtualization_virtualmachine as v")
          .innerJoin("virtualization_cluster as c", "c.id", "v.cluster_id")
          .select(["c.site_id as k", (eb: any) => eb.fn.countAll().as("n")])
          .where("c.site_id", "in", ids)
          .groupBy("c.site_id")
          .execute() as unknown as Promise<Array<{ k: string; n: number }>>,
      rows,
    ),
  tree_depth: (ctx, model, rows) => treeDepth(ctx, model, rows),
  family: async (_ctx, model, rows, _f, mode) => {
    const ipField = model.fieldList.find(([, d]) => d.kind === "ip")?.[0] ?? "prefix";
    return rows.map((r) => {
      const fam = Number(r[`${ipField}_family`]);
      return mode === "full" ? { value: fam, label: `IPv${fam}` } : fam;
    });
  },
  primary_ip: async (ctx, _model, rows) => {
    const ipModel = ctx.reg.get("ipam.ipaddress");
    const refs = rows.map((r) => r.primary_ip6_id ?? r.primary_ip4_id ?? null);
    const objs = await nestedFor(ctx, ipModel, refs);
    return refs.map((id) => (id ? (objs.get(id) ?? null) : null));
  },
  config_context: (ctx, model, rows) => configContext(ctx, model, rows),
  parent_device: async (ctx, _model, rows) => {
    const bayModel = ctx.reg.get("dcim.devicebay");
    let installed = ctx.memo.get("installedBays") as Map<string, Row> | undefined;
    if (!installed) {
      const all = await ctx.db
        .selectFrom(bayModel.table)
        .selectAll()
        .where("installed_device_id", "is not", null)
        .execute();
      installed = new Map(all.map((b) => [b.installed_device_id as string, b]));
      ctx.memo.set("installedBays", installed);
    }
    const byChild = installed;
    const bays = rows.map((r) => byChild.get(r.id)).filter((b): b is Row => !!b);
    const devices = await nestedFor(
      ctx,
      ctx.reg.get("dcim.device"),
      bays.map((b) => b.device_id),
    );
    const bayObjs = await nestedFor(
      ctx,
      bayModel,
      bays.map((b) => b.id),
    );
    return rows.map((r) => {
      const b = byChild.get(r.id);
      if (!b) return null;
      const d = devices.get(b.device_id);
      return d ? { ...d, device_bay: bayObjs.get(b.id) ?? null } : null;
    });
  },
  cable_peer: async (ctx, model, rows) => renderRefs(ctx, await cablePeers(ctx, model, rows)),
  cable_peer_type: async (ctx, model, rows) =>
    (await cablePeers(ctx, model, rows)).map((p) => p?.type ?? null),
  // Nautobot PathEndpoint: the destination of the stored path; reachable = the path is active.
  connected_endpoint: async (ctx, _model, rows) =>
    renderRefs(
      ctx,
      (await rowPaths(ctx, rows)).map((p) => p?.destination ?? null),
    ),
  connected_endpoint_type: async (ctx, _model, rows) =>
    (await rowPaths(ctx, rows)).map((p) => p?.destination?.type ?? null),
  connected_endpoint_reachable: async (ctx, _model, rows) =>
    (await rowPaths(ctx, rows)).map((p) => (p ? p.isActive : null)),
  nat_outside: async (ctx, model, rows) => {
    const outs = await rowsWhereIn(
      ctx,
      model,
      "nat_inside_id",
      rows.map((r) => r.id),
      () => selfReferences(ctx, model, rows, "nat_inside_id"),
    );
    const objs = await nestedFor(
      ctx,
      model,
      outs.map((o) => o.id),
    );
    const byInside = new Map<string, string[]>();
    for (const o of outs) byInside.set(o.nat_inside_id, [...(byInside.get(o.nat_inside_id) ?? []), o.id]);
    // API 1.3+: a list (Nautobot 1.6 `IPAddressSerializer`); API 1.2 (`IPAddressSerializerLegacy`): one object
    // or null, and an address with more than one NAT outside cannot be shown that way (412, Nautobot 1.6
    // `IPAddressViewSet.NATOutsideIncompatibleLegacyBehavior`).
    const asList = !versionBefore(ctx.reg.apiVersion, "1.3");
    return rows.map((r) => {
      const ids = byInside.get(r.id) ?? [];
      if (asList) return ids.map((id) => objs.get(id)).filter((o) => o !== undefined);
      if (ids.length > 1)
        throw new AppError(
          412,
          "This object does not conform to pre-1.3 behavior. Please correct data or use API version 1.3",
        );
      return ids[0] ? (objs.get(ids[0]) ?? null) : null;
    });
  },
  network_driver_mappings: async (_ctx, _model, rows) =>
    rows.map((r) => {
      const d = r.network_driver || "";
      if (!d) return {};
      return {
        ansible: null,
        hier_config: null,
        napalm: null,
        netmiko: d,
        ntc_templates: d,
        pyats: null,
        pyntc: null,
        scrapli: null,
      };
    }),
  tagged_items: async (ctx, _model, rows) => {
    const counts = new Map<string, number>();
    for (const part of chunks(rows.map((r) => r.id))) {
      const res = await ctx.db
        .selectFrom("extras_taggeditem")
        .select(["tag_id", (eb: any) => eb.fn.countAll().as("n")])
        .where("tag_id", "in", part)
        .groupBy("tag_id")
        .execute();
      for (const r of res) counts.set(r.tag_id as string, Number(r.n));
    }
    return rows.map((r) => counts.get(r.id) ?? 0);
  },
  user_count: async (ctx, _model, rows) => {
    const counts = new Map<string, number>();
    for (const part of chunks(rows.map((r) => r.id))) {
      const res = await ctx.db
        .selectFrom("users_user_groups")
        .select(["target_id", (eb: any) => eb.fn.countAll().as("n")])
        .where("target_id", "in", part)
        .groupBy("target_id")
        .execute();
      for (const r of res) counts.set(r.target_id as string, Number(r.n));
    }
    return rows.map((r) => counts.get(r.id) ?? 0);
  },
  via: async (ctx, model, rows, field) => {
    const hops = (field.path ?? "").split(".");
    let cur: Model = model;
    let values: Array<string | null> = rows.map((r) => r.id);
    let curRows = new Map(rows.map((r) => [r.id as string, r]));
    for (const hop of hops) {
      const fd = cur.fields[hop];
      if (fd?.kind !== "fk") return rows.map(() => null);
      values = values.map((id) => (id ? (curRows.get(id)?.[`${hop}_id`] ?? null) : null));
      cur = ctx.reg.get(fd.to);
      curRows = await rowsById(ctx, cur, values);
    }
    const objs = await nestedFor(ctx, cur, values);
    return values.map((id) => (id ? (objs.get(id) ?? null) : null));
  },
  changed_object: async (ctx, _model, rows) => {
    const refs = rows.map((r) => ({
      type: r.changed_object_type as string,
      id: r.changed_object_id as string,
    }));
    const objs = await renderRefs(ctx, refs);
    return objs;
  },
};

/** Compute the values of a computed field for rows. Unknown loaders render null. */
export async function loadComputed(
  ctx: Ctx,
  model: Model,
  rows: readonly Row[],
  _name: string,
  field: ComputedField,
  mode: Mode,
): Promise<unknown[]> {
  const loader = LOADERS[field.loader];
  if (!loader) return rows.map(() => null);
  return loader(ctx, model, rows, field, mode);
}
