/**
 * Synthetic growth for the benchmark, built through the service layer (same validation and change log
 * as the API): sites with racks, VLANs and /16 prefixes, a device type with interface templates, devices
 * racked and numbered, one IP address per chosen interface. Names look like a real estate
 * (`ams01-leaf-0001`, `xe-0/0/12`).
 */
import type { Registry } from "../src/registry/index.ts";
import { type Ctx, makeCtx } from "../src/service/context.ts";
import { createObject, inTransaction, updateObject } from "../src/service/write.ts";
import type { Store } from "../src/store/db.ts";

/** Sizes of the synthetic estate. */
export interface GrowthSize {
  devices: number;
  interfacesPerDevice: number;
  ips: number;
}

const CITIES = ["ams", "fra", "lon", "par", "nyc", "sfo", "sin", "syd", "tyo", "gru", "jnb", "dxb"];

/** Grow the database to the given size. Reports progress through `log`. */
export async function grow(
  store: Store,
  reg: Registry,
  size: GrowthSize,
  log: (s: string) => void,
): Promise<{ prefix: string }> {
  const ctx: Ctx = makeCtx({ store, reg, settings: { enforceGlobalUnique: false, changelog: true } });
  ctx.actor = undefined;
  const m = (k: string) => reg.get(k);
  const devicesPerSite = 250;
  const siteCount = Math.ceil(size.devices / devicesPerSite);
  const setup = await inTransaction(ctx, async (t) => {
    const mfr = await createObject(t, m("dcim.manufacturer"), { name: "Benchmark Networks" });
    const dt = await createObject(t, m("dcim.devicetype"), {
      manufacturer: mfr,
      model: `BN-${size.interfacesPerDevice}X`,
      u_height: 1,
    });
    for (let i = 0; i < size.interfacesPerDevice; i++) {
      await createObject(t, m("dcim.interfacetemplate"), {
        device_type: dt,
        name: `xe-0/0/${i}`,
        type: "10gbase-x-sfpp",
      });
    }
    const role = await createObject(t, m("dcim.devicerole"), { name: "Benchmark Leaf", color: "2196f3" });
    const region = await createObject(t, m("dcim.region"), { name: "Benchmark" });
    const platform = await createObject(t, m("dcim.platform"), {
      name: "Benchmark OS",
      manufacturer: mfr,
      napalm_driver: "junos",
    });
    const tenant = await createObject(t, m("tenancy.tenant"), { name: "Benchmark Tenant" });
    return { dt, role, region, platform, tenant };
  });
  const sites: Array<{ id: string; name: string; racks: string[]; n: number }> = [];
  for (let s = 0; s < siteCount; s++) {
    const name = `${CITIES[s % CITIES.length]}${String(Math.floor(s / CITIES.length) + 1).padStart(2, "0")}`;
    const site = await inTransaction(ctx, async (t) => {
      const id = await createObject(t, m("dcim.site"), {
        name: `bench-${name}`,
        status: "active",
        region: setup.region,
      });
      const racks: string[] = [];
      for (let r = 0; r < Math.ceil(devicesPerSite / 40); r++) {
        racks.push(
          await createObject(t, m("dcim.rack"), {
            name: `${name}-r${String(r + 1).padStart(2, "0")}`,
            site: id,
            status: "active",
          }),
        );
      }
      const group = await createObject(t, m("ipam.vlangroup"), { name: `${name}-vlans`, site: id });
      for (let v = 0; v < 10; v++) {
        await createObject(t, m("ipam.vlan"), {
          vid: 100 + v,
          name: `${name}-v${100 + v}`,
          status: "active",
          site: id,
          group,
        });
      }
      await createObject(t, m("ipam.prefix"), {
        prefix: `10.${s % 256}.0.0/16`,
        status: "container",
        site: id,
      });
      return { id, name, racks, n: s };
    });
    sites.push(site);
  }
  log(`  ${sites.length} sites with racks, VLANs and prefixes`);
  let made = 0;
  const deviceIds: string[] = [];
  while (made < size.devices) {
    const batch = Math.min(200, size.devices - made);
    const ids = await inTransaction(ctx, async (t) => {
      const out: string[] = [];
      for (let i = 0; i < batch; i++) {
        const k = made + i;
        const site = sites[Math.floor(k / devicesPerSite)]!;
        const inSite = k % devicesPerSite;
        out.push(
          await createObject(t, m("dcim.device"), {
            name: `${site.name}-leaf-${String(inSite + 1).padStart(4, "0")}`,
            device_type: setup.dt,
            device_role: setup.role,
            platform: setup.platform,
            tenant: setup.tenant,
            site: site.id,
            rack: site.racks[Math.floor(inSite / 40)],
            position: (inSite % 40) + 1,
            face: "front",
            status: "active",
          }),
        );
      }
      return out;
    });
    deviceIds.push(...ids);
    made += batch;
    if (made % 2000 === 0 || made === size.devices) log(`  ${made} devices`);
  }
  // One IP per interface on the first N interfaces, in the site's /16.
  const perDevice = Math.max(1, Math.ceil(size.ips / deviceIds.length));
  let ips = 0;
  for (let d = 0; d < deviceIds.length && ips < size.ips; d += 100) {
    const chunk = deviceIds.slice(d, d + 100);
    await inTransaction(ctx, async (t) => {
      const ifaces = await t.db
        .selectFrom("dcim_interface")
        .select(["id", "device_id", "name_nat"])
        .where("device_id", "in", chunk)
        .orderBy("device_id")
        .orderBy("name_nat")
        .execute();
      const byDev = new Map<string, string[]>();
      for (const r of ifaces) byDev.set(r.device_id, [...(byDev.get(r.device_id) ?? []), r.id]);
      for (const [j, dev] of chunk.entries()) {
        const k = d + j;
        const site = sites[Math.floor(k / devicesPerSite)]!;
        const list = byDev.get(dev) ?? [];
        for (let i = 0; i < perDevice && i < list.length && ips < size.ips; i++) {
          const host = (k % devicesPerSite) * perDevice + i + 1;
          const ip = await createObject(t, m("ipam.ipaddress"), {
            address: `10.${site.n % 256}.${Math.floor(host / 256) % 256}.${host % 256}/16`,
            status: "active",
            assigned_object_type: "dcim.interface",
            assigned_object_id: list[i],
            dns_name: `${site.name}-${k}-${i}.bench.example`,
          });
          // The device's first address is its primary IPv4 (the GraphQL inventory scenario reads it).
          if (i === 0) await updateObject(t, m("dcim.device"), dev, { primary_ip4: ip }, true);
          ips++;
        }
      }
    });
    if (ips % 10000 < perDevice * 100) log(`  ${ips} IP addresses`);
  }
  return { prefix: `10.${sites[0]!.n % 256}.0.0/16` };
}
