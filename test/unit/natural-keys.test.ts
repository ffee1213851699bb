/**
 * Every writable model has a natural key (issue 28), declared once in the registry or derived from its
 * uniqueness rules, and each one is backed by a uniqueness rule of the model or by a documented reason
 * (`ModelDef.naturalKeyNote`).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { registry } from "../../src/registry/index.ts";

describe("natural keys", () => {
  const models = [...registry().models.values()];

  it("every writable model has a natural key or says why not; read-only models have none", () => {
    const missing = models.filter((m) => !m.readOnly && !m.naturalKeyFields.length && !m.naturalKeyNote);
    assert.deepEqual(
      missing.map((m) => m.key),
      [],
    );
    for (const m of models.filter((x) => x.readOnly)) assert.deepEqual(m.naturalKeyFields, [], m.key);
    // The models the issue names, as it names them.
    const nk = (key: string) => [...registry().get(key).naturalKeyFields].sort();
    assert.deepEqual(nk("dcim.device"), ["name", "site", "tenant"]);
    assert.deepEqual(nk("dcim.interface"), ["device", "name"]);
    assert.deepEqual(nk("ipam.ipaddress"), ["address", "vrf"]);
    assert.deepEqual(nk("ipam.prefix"), ["prefix", "vrf"]);
    assert.deepEqual(nk("ipam.vlan"), ["group", "site", "vid"]);
    assert.deepEqual(nk("dcim.site"), ["name"]);
    assert.deepEqual(nk("dcim.cable"), ["termination_a", "termination_b"]);
  });

  it("each natural key is a uniqueness rule (a unique field or a unique-together set within it) or documented", () => {
    const unbacked: string[] = [];
    for (const m of models) {
      const key = m.naturalKeyFields;
      if (!key.length) continue;
      for (const f of key) assert.ok(f in m.fields, `${m.key}: ${f} is not a field`);
      const byField = key.some((f) => (m.fields[f] as { unique?: boolean }).unique);
      // A generic FK's columns in a rule (`source_type`, `source_id`) belong to its field (`source`).
      const fieldOf = (c: string) => (c in m.fields ? c : c.replace(/_(type|id)$/, ""));
      const byTogether = (m.uniqueTogether ?? []).some((u) =>
        u.fields.every((f) => key.includes(fieldOf(f))),
      );
      if (!byField && !byTogether && !m.naturalKeyNote) unbacked.push(m.key);
    }
    assert.deepEqual(unbacked, []);
  });

  it("declared keys with a note are the exceptions, not the rule", () => {
    const noted = models.filter((m) => m.naturalKeyNote).map((m) => m.key);
    // A note each, and most models derive their key (Nautobot 2.x's default rule).
    for (const key of noted) assert.ok(registry().get(key).naturalKeyNote!.length > 20, key);
    assert.ok(noted.length < models.length / 4, `${noted.length} of ${models.length} models need a note`);
  });
});
