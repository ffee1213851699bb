/**
 * OPTIONS of every list endpoint compared field by field with Nautobot 1.6.32's answers
 * (test/fixtures/nautobot-options.json, read by `scripts/options-diff.ts --save`; issue 24): type, required,
 * read_only, label, help_text, choices, children/child, bounds and key order. A difference fails unless
 * test/helpers/options-allowed.ts lists it with its reason, and an allowance that no longer matches fails
 * too. Also the nested key order the comparison found (a nested VRF and virtual chassis), in GET.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { ALLOWED, allowedDiff } from "../helpers/options-allowed.ts";
import { diffOptions, expandAnswer, type OptionsDiff } from "../helpers/options-diff.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { create } from "../helpers/world.ts";

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/nautobot-options.json", import.meta.url), "utf8"),
) as { endpoints: Record<string, any> };

/** Nautobot 1.6.32's endpoints this service does not build (README: jobs, Git repositories, image attachments). */
const NOT_BUILT = [
  "extras/git-repositories",
  "extras/image-attachments",
  "extras/job-buttons",
  "extras/job-hooks",
  "extras/job-logs",
  "extras/job-results",
  "extras/jobs",
  "extras/scheduled-jobs",
];

describe("OPTIONS as Nautobot 1.6.32's, endpoint by endpoint", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("differs from the reference only where the allow-list says why", async () => {
    const served = new Set<string>();
    const root = (await s.api("/api/")).body as Record<string, string>;
    for (const app of Object.keys(root).filter((a) => new RegExp(`/api/${a}/$`).test(root[a]!))) {
      if (["graphql", "status", "plugins"].includes(app)) continue;
      for (const name of Object.keys((await s.api(`/api/${app}/`)).body)) served.add(`${app}/${name}`);
    }
    const missing = Object.keys(fixture.endpoints).filter((e) => !served.has(e) && !NOT_BUILT.includes(e));
    const diffs: OptionsDiff[] = [];
    await Promise.all(
      Object.entries(fixture.endpoints).map(async ([e, body]) => {
        if (NOT_BUILT.includes(e)) return;
        const r = await s.api(`/api/${e}/`, { method: "OPTIONS" });
        if (r.status !== 200) diffs.push({ endpoint: e, path: "", attr: "status", ref: 200, ours: r.status });
        else diffs.push(...diffOptions(e, expandAnswer(body), r.body));
      }),
    );
    const unexplained = diffs.filter((d) => !allowedDiff(d));
    const used = new Set(diffs.map((d) => allowedDiff(d)));
    const stale = ALLOWED.filter((a) => !used.has(a));
    assert.ok(diffs.length > 0 || stale.length === 0);
    assert.deepEqual(
      {
        missing,
        unexplained: unexplained.map(
          (d) =>
            `${d.endpoint} ${d.path} ${d.attr}: ref=${JSON.stringify(d.ref)} ours=${JSON.stringify(d.ours)}`,
        ),
        stale: stale.map((a) => `${a.endpoint} ${a.path}: ${a.why}`),
      },
      { missing: [], unexplained: [], stale: [] },
    );
  });

  it("renders a nested VRF and virtual chassis in Nautobot's key order", async () => {
    const vrf = await create(s, "/api/ipam/vrfs/", { name: "Blue", rd: "65000:1" });
    const p = await create(s, "/api/ipam/prefixes/", {
      prefix: "10.9.0.0/16",
      vrf: vrf.id,
      status: "active",
    });
    assert.deepEqual(Object.keys(p.vrf), ["id", "url", "name", "rd", "display"]);
    // Counts are annotations, left out of related objects (as Nautobot 1.6); `?brief=` carries them.
    const got = (await s.api(`/api/ipam/prefixes/${p.id}/`)).body;
    assert.deepEqual(Object.keys(got.vrf), ["id", "url", "name", "rd", "display"]);
    const brief = (await s.api("/api/ipam/vrfs/?brief=1")).body.results[0];
    assert.deepEqual(Object.keys(brief), ["id", "url", "name", "rd", "display", "prefix_count"]);
    const vc = await create(s, "/api/dcim/virtual-chassis/", { name: "VC1" });
    const dev = await s.api("/api/dcim/virtual-chassis/?brief=1");
    assert.deepEqual(Object.keys(dev.body.results[0]), [
      "display",
      "id",
      "name",
      "url",
      "master",
      "member_count",
    ]);
    assert.equal(dev.body.results[0].id, vc.id);
  });
});
