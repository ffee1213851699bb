/**
 * Issue 5: config contexts merged by weight into `config_context` on devices and VMs (Nautobot 1.6
 * ConfigContextModel.get_config_context), on detail and list, omitted with `exclude=config_context`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";

describe("config contexts", () => {
  let s: TestServer;
  const id: Record<string, string> = {};
  const mk = async (path: string, body: Record<string, unknown>, key: string) => {
    const r = await s.api(path, { method: "POST", body });
    assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.body)}`);
    id[key] = r.body.id;
  };
  before(async () => {
    s = await startServer();
    await mk("/api/dcim/sites/", { name: "CC Site", status: "active" }, "site");
    await mk("/api/dcim/manufacturers/", { name: "CC Mfr" }, "mfr");
    await mk("/api/dcim/device-types/", { manufacturer: id.mfr, model: "CC-1" }, "dt");
    await mk("/api/dcim/device-roles/", { name: "leaf" }, "leaf");
    await mk("/api/dcim/device-roles/", { name: "spine" }, "spine");
    await mk(
      "/api/dcim/devices/",
      { name: "leaf1", device_type: id.dt, device_role: id.leaf, site: id.site, status: "active" },
      "d1",
    );
    await mk(
      "/api/dcim/devices/",
      { name: "spine1", device_type: id.dt, device_role: id.spine, site: id.site, status: "active" },
      "d2",
    );
    await mk(
      "/api/extras/config-contexts/",
      { name: "site-wide", weight: 1000, sites: [id.site], data: { ntp: "a", dns: { primary: "1.1.1.1" } } },
      "c1",
    );
    await mk(
      "/api/extras/config-contexts/",
      { name: "leafs", weight: 2000, roles: [id.leaf], data: { ntp: "b", dns: { secondary: "8.8.8.8" } } },
      "c2",
    );
    await mk(
      "/api/extras/config-contexts/",
      { name: "off", weight: 3000, is_active: false, data: { ntp: "never" } },
      "c3",
    );
  });
  after(async () => {
    await s.close();
  });

  it("merges matching contexts by weight, deep, on detail and list; inactive ones are ignored", async () => {
    const leaf = await s.api(`/api/dcim/devices/${id.d1}/`);
    assert.deepEqual(leaf.body.config_context, {
      ntp: "b",
      dns: { primary: "1.1.1.1", secondary: "8.8.8.8" },
    });
    const spine = await s.api(`/api/dcim/devices/${id.d2}/`);
    assert.deepEqual(spine.body.config_context, { ntp: "a", dns: { primary: "1.1.1.1" } });
    const list = await s.api("/api/dcim/devices/?site_id=" + id.site);
    const byName = Object.fromEntries(list.body.results.map((d: any) => [d.name, d.config_context]));
    assert.deepEqual(byName.leaf1, leaf.body.config_context);
    assert.deepEqual(byName.spine1, spine.body.config_context);
  });

  it("exclude=config_context leaves the key out", async () => {
    const one = await s.api(`/api/dcim/devices/${id.d1}/?exclude=config_context`);
    assert.equal(one.status, 200);
    assert.equal("config_context" in one.body, false);
    const list = await s.api("/api/dcim/devices/?exclude=config_context");
    assert.ok(list.body.results.every((d: any) => !("config_context" in d)));
  });
});
