/**
 * Unit tests of the filter compiler (src/query): the lookup table, parameter derivation per model,
 * value coercion and errors, and the SQL it compiles (on an empty in-memory SQLite store).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { compileFilters, escapeLike, filterSetFor, normalizeUuid } from "../../src/query/filters.ts";
import { LOOKUPS, lookupKindOf } from "../../src/query/lookups.ts";
import { registry } from "../../src/registry/index.ts";
import { openStore, type Store } from "../../src/store/db.ts";
import { migrate } from "../../src/store/migrate.ts";

const reg = registry();

describe("lookup table", () => {
  it("has Nautobot's suffixes for each value kind", () => {
    const forKind = (k: string) =>
      Object.entries(LOOKUPS)
        .filter(([, l]) => l.kinds.includes(k as never))
        .map(([s]) => s)
        .sort();
    assert.deepEqual(forKind("number"), ["", "gt", "gte", "isnull", "lt", "lte", "n"]);
    assert.deepEqual(forKind("string"), [
      "",
      "ic",
      "ie",
      "iew",
      "ire",
      "isnull",
      "isw",
      "n",
      "nic",
      "nie",
      "niew",
      "nire",
      "nisw",
      "nre",
      "re",
    ]);
    assert.deepEqual(forKind("choice"), ["", "isnull", "n"]);
    assert.deepEqual(forKind("bool"), ["", "isnull"]);
  });
  it("maps field kinds to lookup kinds", () => {
    assert.equal(lookupKindOf({ kind: "str", max: 5 }), "string");
    assert.equal(lookupKindOf({ kind: "int" }), "number");
    assert.equal(lookupKindOf({ kind: "choice", choices: [] }), "choice");
    assert.equal(lookupKindOf({ kind: "fk", to: "dcim.site", onDelete: "PROTECT" }), undefined);
  });
  it("escapes LIKE wildcards and normalises UUIDs", () => {
    assert.equal(escapeLike("50%_a\\b"), "50\\%\\_a\\\\b");
    assert.equal(
      normalizeUuid("{3F2504E0-4F89-11D3-9A0C-0305E82C3301}"),
      "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    );
    assert.equal(normalizeUuid("3f2504e04f8911d39a0c0305e82c3301"), "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
    assert.equal(normalizeUuid("nope"), undefined);
  });
});

describe("filter set derivation", () => {
  it("derives automatic, lookup, relation and declared filters", () => {
    const site = filterSetFor(reg, reg.get("dcim.site"));
    for (const p of [
      "id",
      "name",
      "name__ic",
      "name__nisw",
      "asn__gte",
      "region",
      "region_id",
      "tenant",
      "tenant_id",
      "status",
      "tag",
      "q",
      "created__gte",
      "has_devices",
      "tenant_group",
    ]) {
      assert.ok(site.has(p), `site filter ${p}`);
    }
    assert.ok(!site.has("name__gte"), "no numeric lookups on strings");
    const ip = filterSetFor(reg, reg.get("ipam.ipaddress"));
    for (const p of [
      "parent",
      "address",
      "mask_length",
      "family",
      "device_id",
      "assigned_object_type",
      "assigned_to_interface",
    ])
      assert.ok(ip.has(p), `ip filter ${p}`);
  });
});

describe("compiled conditions", () => {
  let store: Store;
  before(async () => {
    store = await openStore("sqlite::memory:");
    await migrate(store, reg);
  });
  after(async () => {
    await store.close();
  });
  const compile = async (key: string, params: Record<string, string[]>) => {
    const model = reg.get(key);
    const { cond, errors } = await compileFilters(
      { db: store.db, dialect: store.dialect, reg, model },
      new Map(Object.entries(params)),
    );
    const q = cond
      ? store.db.selectFrom(`${model.table} as t`).selectAll("t").where(cond).compile()
      : undefined;
    return { sql: q?.sql ?? "", parameters: q?.parameters ?? [], errors };
  };

  it("ORs repeated values and ANDs different parameters", async () => {
    const r = await compile("dcim.rack", { name: ["a", "b"], u_height: ["42"] });
    assert.match(r.sql, /"t"\."name" IN \(\?, \?\) AND "t"\."u_height" IN \(\?\)/);
    assert.deepEqual(r.parameters, ["a", "b", 42]);
  });
  it("negates with __n and keeps NULL rows", async () => {
    const r = await compile("dcim.site", { facility__n: ["x"] });
    assert.match(r.sql, /"t"\."facility" IS NULL OR NOT/);
  });
  it("escapes LIKE input for __ic", async () => {
    const r = await compile("dcim.site", { name__ic: ["50%"] });
    assert.match(r.sql, /LIKE ulower\(\?\) ESCAPE/);
    assert.deepEqual(r.parameters, ["%50\\%%"]);
  });
  it("compiles IP containment to range predicates on the stored keys", async () => {
    const r = await compile("ipam.ipaddress", { parent: ["10.0.0.0/8"] });
    assert.match(
      r.sql,
      /"t"\."address_family" = \? AND "t"\."address_host" >= \? AND "t"\."address_host" <= \?/,
    );
    assert.deepEqual(r.parameters, [4, "0a000000", "0affffff"]);
    const w = await compile("ipam.prefix", { within: ["10.0.0.0/8"] });
    assert.deepEqual(w.parameters, [4, "0a000000", "0affffff", 8]);
  });
  it("reports unknown parameters and bad values as field errors", async () => {
    assert.deepEqual((await compile("dcim.site", { bogus: ["1"] })).errors, {
      bogus: ["Unknown filter field"],
    });
    assert.deepEqual((await compile("dcim.site", { asn: ["many"] })).errors, {
      asn: ["Enter a whole number."],
    });
    assert.deepEqual((await compile("dcim.rack", { width: ["7"] })).errors, {
      width: ["Select a valid choice. 7 is not one of the available choices."],
    });
    assert.deepEqual((await compile("dcim.site", { region: ["nowhere"] })).errors, {
      region: ["Select a valid choice. nowhere is not one of the available choices."],
    });
    assert.deepEqual((await compile("dcim.site", { id: ["x"] })).errors, {
      id: ["“x” is not a valid UUID."],
    });
    // A malformed network matches nothing, as in Nautobot (issue 24).
    assert.deepEqual((await compile("ipam.prefix", { within: ["nope"] })).errors, {});
  });
  it("ignores booleans it cannot parse, as Nautobot's NullBooleanField does (issue 24)", async () => {
    const r = await compile("dcim.rack", { desc_units: ["maybe"] });
    assert.deepEqual(r.errors, {});
    assert.equal(r.sql, "");
  });
});
