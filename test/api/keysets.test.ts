/**
 * Every model's full representation has Nautobot 1.6.32's key set, in Nautobot's order, on GET at API 1.2
 * (issue 9), 1.3 and 1.6 (issue 24: the `*SerializerVersion1x` classes Nautobot picks per version). The
 * expected keys come from Nautobot's own serializers (test/fixtures/nautobot-keys.json for 1.2,
 * nautobot-keys-<version>.json otherwise, read with nbshell by scripts/nautobot-keysets.py), not from memory.
 * Write responses at the same version carry the same keys plus the opt-in `computed_fields` and
 * `relationships` where the model has them (1.2: the create's answer; other versions: an empty PATCH's).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildWorld, SAMPLES, specialCreate, type World } from "../helpers/world.ts";

type KeyFixture = { endpoints: Record<string, { serializer: string; keys: string[] }> };

/** Nautobot's key sets at an API version (the 1.2 file keeps its original name). */
const fixtureAt = (version: string): KeyFixture =>
  JSON.parse(
    readFileSync(
      new URL(`../fixtures/nautobot-keys${version === "1.2" ? "" : `-${version}`}.json`, import.meta.url),
      "utf8",
    ),
  ) as KeyFixture;

/** The API versions compared: the default, the first with tag content types, the newest. */
const VERSIONS = ["1.2", "1.3", "1.6"];

/** Endpoints Nautobot serves that we deliberately do not (README, "Not built"). */
const NOT_BUILT = new Set([
  "extras/git-repositories",
  "extras/graphql-queries",
  "extras/image-attachments",
  "extras/job-buttons",
  "extras/job-hooks",
  "extras/job-logs",
  "extras/job-results",
  "extras/jobs",
  "extras/scheduled-jobs",
]);

/** Endpoints that are not model lists here (answered by their own routes, tested elsewhere). */
const NOT_MODELS = new Set([
  "dcim/console-connections",
  "dcim/interface-connections",
  "dcim/power-connections",
]);

/**
 * Known, documented differences: endpoint → keys we lack (`-key`) or add (`+key`). Each is a deliberate
 * deviation listed in the README.
 */
const DEVIATIONS: Record<string, string[]> = {
  // Webhook secrets are write-only (never returned); `enabled` is on the wire (the seed's configuration
  // record; Nautobot 1.6 keeps it off its serializer).
  "extras/webhooks": ["-secret", "+enabled>payload_url"],
  // Nautobot's `fields = "__all__"` leaks the raw custom-field storage column; `custom_fields` has it.
  "dcim/interface-redundancy-groups": ["-_custom_field_data"],
};

const reg = registry();

for (const version of VERSIONS) {
  const fixture = fixtureAt(version);
  const at = { Accept: `application/json; version=${version}` };
  describe(`representation key sets match Nautobot 1.6.32 at API ${version}`, () => {
    let s: TestServer;
    let w: World;
    let n = 60;
    before(async () => {
      s = await startServer();
      w = await buildWorld(s);
    });
    after(async () => {
      await s.close();
    });

    it("every endpoint Nautobot serves is served here, or listed as not built", () => {
      const missing = Object.keys(fixture.endpoints).filter((ep) => {
        if (NOT_BUILT.has(ep) || NOT_MODELS.has(ep)) return false;
        const [app, path] = ep.split("/") as [string, string];
        return !reg.byUrl(app, path);
      });
      assert.deepEqual(missing, []);
    });

    for (const [ep, { keys }] of Object.entries(fixture.endpoints)) {
      const [app, path] = ep.split("/") as [string, string];
      const model = reg.byUrl(app, path);
      if (!model || NOT_BUILT.has(ep)) continue;
      const sample = SAMPLES[model.key];
      if (!sample && !model.readOnly) continue;
      it(`${ep}: GET keys, in order, and write-response keys`, async () => {
        let id: string | undefined;
        let written: Record<string, unknown> | undefined;
        if (sample) {
          const i = n++;
          const body = (await specialCreate(s, w, model.key, i)) ?? sample.create(w, i);
          const created = await s.api(sample.path, { method: "POST", body });
          assert.equal(created.status, 201, JSON.stringify(created.body));
          id = created.body.id;
          written = created.body;
          if (version !== "1.2") {
            const patched = await s.api(`${sample.path}${id}/`, { method: "PATCH", body: {}, headers: at });
            assert.equal(patched.status, 200, JSON.stringify(patched.body));
            written = patched.body;
          }
        } else {
          const list = await s.api(`/api/${ep}/?limit=1`, { headers: at });
          id = list.body.results[0]?.id;
        }
        if (id === undefined) return;
        const got = await s.api(`/api/${ep}/${id}/`, { headers: at });
        assert.equal(got.status, 200);
        assert.equal(got.headers.get("api-version"), version);
        const expected = keys.filter((k) => !(DEVIATIONS[ep] ?? []).includes(`-${k}`));
        for (const d of DEVIATIONS[ep] ?? []) {
          if (!d.startsWith("+")) continue;
          const [key, after] = d.slice(1).split(">") as [string, string | undefined];
          expected.splice(after ? expected.indexOf(after) + 1 : expected.length, 0, key);
        }
        const actual = Object.keys(got.body);
        const lack = expected.filter((k) => !actual.includes(k));
        const extra = actual.filter((k) => !expected.includes(k));
        assert.deepEqual(actual, expected, `lack ${JSON.stringify(lack)} extra ${JSON.stringify(extra)}`);
        if (written) {
          const optIn = ["computed_fields", "relationships"].filter((k) => k in written);
          const counts = (k: string) => k.endsWith("_count") || k === "tagged_items";
          assert.deepEqual(
            Object.keys(written).filter((k) => !optIn.includes(k) && !counts(k)),
            expected.filter((k) => !counts(k)),
          );
        }
      });
    }
  });
}
