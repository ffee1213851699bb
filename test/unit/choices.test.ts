/**
 * Every choice set of the registry equals Nautobot 1.6.32's for the same model field: values, labels and
 * order (issue 9), at API 1.2, 1.3 and 1.6 (issue 24): Nautobot's choice sets are its models' and no serializer
 * changes them by version, so one list holds for every version, and each choice field must be on the wire
 * (not hidden) at every version. The expected lists were read from Nautobot's models
 * (test/fixtures/nautobot-choices.json).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { registryAt } from "../../src/registry/index.ts";

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/nautobot-choices.json", import.meta.url), "utf8"),
) as {
  fields: Record<string, Array<[string | number, string]>>;
};

/** Nautobot fields not on the wire at API 1.2 (the object change's `change_context` arrived in 1.3). */
const SKIP = new Set<string>(["extras.objectchange.change_context"]);

for (const version of ["1.2", "1.3", "1.6"]) {
  describe(`choice sets equal Nautobot 1.6.32's at API ${version}`, () => {
    const reg = registryAt(version);
    for (const [key, expected] of Object.entries(fixture.fields)) {
      const [app, model, field] = key.split(".") as [string, string, string];
      const m = reg.models.get(`${app}.${model}`);
      const fd = m?.fields[field];
      if (!m || SKIP.has(key)) continue;
      it(key, () => {
        assert.ok(fd && fd.kind === "choice", `${key} is a choice field here`);
        assert.equal(fd.hidden ?? false, false, `${key} is on the wire at ${version}`);
        const ours = fd.choices.map(([v, l]) => [v, l]);
        const lack = expected.filter(([v]) => !ours.some(([o]) => o === v)).map(([v]) => v);
        const extra = ours.filter(([o]) => !expected.some(([v]) => v === o)).map(([v]) => v);
        assert.deepEqual(ours, expected, `lack ${JSON.stringify(lack)} extra ${JSON.stringify(extra)}`);
      });
    }
  });
}
