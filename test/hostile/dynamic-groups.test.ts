/**
 * Issue 23, dynamic-group filters: a group's filter is checked when it is saved with the rules and bounds
 * of query parameters (nothing saved on a 400), a filter stored before that check makes a member read a
 * 400 naming the filter (never a 500), and a member read obeys the statement budget like any list.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { configFromEnv } from "../../src/config.ts";
import { buildApp } from "../../src/http/app.ts";
import { registry } from "../../src/registry/index.ts";
import { openStore } from "../../src/store/db.ts";
import { setStatementBudget } from "../../src/store/sqlite-driver.ts";
import { ENGINE, startServer, type TestServer } from "../helpers/server.ts";

describe("dynamic-group filters (issue 23)", () => {
  let s: TestServer;
  let typeId: string;
  before(async () => {
    s = await startServer();
    const ct = await s.api("/api/virtualization/cluster-types/", {
      method: "POST",
      body: { name: "CT", slug: "ct" },
    });
    assert.equal(ct.status, 201, JSON.stringify(ct.body));
    typeId = ct.body.id;
    const clusters = Array.from({ length: 5 }, (_, i) => ({ name: `c-${i}`, type: typeId }));
    const r = await s.api("/api/virtualization/clusters/", { method: "POST", body: clusters });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await s.close();
  });

  const groupCount = async () => (await s.api("/api/extras/dynamic-groups/?limit=1")).body.count as number;
  const save = (name: string, filter: unknown) =>
    s.api("/api/extras/dynamic-groups/", {
      method: "POST",
      body: { name, content_type: "virtualization.cluster", filter },
    });

  /** A valid group whose stored filter is then replaced behind the service's back (an old, unchecked row). */
  const storedGroup = async (name: string, filterText: string) => {
    const g = await save(name, {});
    assert.equal(g.status, 201, JSON.stringify(g.body));
    await s.store.db
      .updateTable("extras_dynamicgroup")
      .set({ filter: filterText })
      .where("id", "=", g.body.id)
      .execute();
    return g.body.id as string;
  };

  it("bad filters are refused at save with a 400 naming the filter, and nothing is saved", async () => {
    const before = await groupCount();
    // 100,000 characters: a 400 on `q` (its length) or on `filter` (the JSON field's own size cap).
    const huge = await save("bad-huge", { q: "x".repeat(100_000) });
    assert.equal(huge.status, 400, JSON.stringify(huge.body).slice(0, 300));
    assert.ok(huge.body.q || huge.body.filter, JSON.stringify(huge.body).slice(0, 300));
    const bad: Array<[string, unknown, string]> = [
      ["q", { q: "x".repeat(5000) }, "at most 1000 characters"],
      ["comments__re", { comments__re: "[xy]".repeat(400) }, "at most 1000 characters"],
      ["name", { name: { nested: 1 } }, "string, number, boolean or null"],
      ["name", { name: [["nested"]] }, "string, number, boolean or null"],
      ["name", { name: Array.from({ length: 4000 }, (_, i) => `n${i}`) }, "16384 characters in all"],
      ["name__re", { name__re: "(a)\\1" }, "Invalid regular expression"],
    ];
    for (const [key, filter, reason] of bad) {
      const r = await save(`bad-${key}`, filter);
      const shown = JSON.stringify(r.body).slice(0, 300);
      assert.equal(r.status, 400, `${key}: ${shown}`);
      assert.ok(Array.isArray(r.body[key]), `${key}: ${shown}`);
      assert.match(r.body[key].join(" "), new RegExp(reason.replace(/[()]/g, "\\$&")), `${key}: ${shown}`);
    }
    // PUT and PATCH of an existing group go through the same check.
    const ok = await save("patched", { name: ["c-1"] });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const patch = await s.api(`/api/extras/dynamic-groups/${ok.body.id}/`, {
      method: "PATCH",
      body: { filter: { q: "y".repeat(5000) } },
    });
    assert.equal(patch.status, 400, JSON.stringify(patch.body).slice(0, 300));
    const put = await s.api(`/api/extras/dynamic-groups/${ok.body.id}/`, {
      method: "PUT",
      body: { name: "patched", content_type: "virtualization.cluster", filter: { name: { a: 1 } } },
    });
    assert.equal(put.status, 400, JSON.stringify(put.body).slice(0, 300));
    assert.equal(await groupCount(), before + 1, "no bad group was saved");
    const kept = await s.api(`/api/extras/dynamic-groups/${ok.body.id}/`);
    assert.deepEqual(kept.body.filter, { name: ["c-1"] }, "the refused updates changed nothing");
  });

  it("list query parameters have the same bound on one value", async () => {
    const r = await s.api(`/api/virtualization/clusters/?q=${"x".repeat(1001)}`);
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.ok(Array.isArray(r.body.q), JSON.stringify(r.body).slice(0, 300));
    assert.equal((await s.api(`/api/virtualization/clusters/?q=${"x".repeat(1000)}`)).status, 200);
  });

  it("a bad filter stored before the check makes a member read a 400 naming the filter, not a 500", async () => {
    const stored: Array<[string, string]> = [
      ["q", JSON.stringify({ q: "x".repeat(100_000) })],
      ["name", JSON.stringify({ name: { nested: 1 } })],
      ["name", JSON.stringify({ name: Array.from({ length: 40_000 }, (_, i) => `n${i}`) })],
      ["foo", JSON.stringify({ foo: "x" })],
      ["Filter must be a dict", JSON.stringify(["name", "c-1"])],
      ["Filter must be a dict", "{not json"],
    ];
    for (const [named, text] of stored) {
      const id = await storedGroup(`stored-${Math.random()}`, text);
      const r = await s.api(`/api/extras/dynamic-groups/${id}/members/`);
      const shown = `${text.slice(0, 40)}: ${JSON.stringify(r.body).slice(0, 300)}`;
      assert.equal(r.status, 400, shown);
      assert.ok(Array.isArray(r.body.filter), shown);
      assert.ok(
        r.body.filter.some((m: string) => m.startsWith(named)),
        shown,
      );
    }
    // A parent whose child group holds such a filter names the child.
    const childId = await storedGroup("bad-child", JSON.stringify({ q: "x".repeat(100_000) }));
    const parent = await save("parent", {});
    const m = await s.api("/api/extras/dynamic-group-memberships/", {
      method: "POST",
      body: { group: childId, parent_group: parent.body.id, operator: "union", weight: 10 },
    });
    assert.equal(m.status, 201, JSON.stringify(m.body).slice(0, 300));
    const r = await s.api(`/api/extras/dynamic-groups/${parent.body.id}/members/`);
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.match(r.body.filter.join(" "), /child group bad-child: q: /);
  });

  it("a valid group still lists its members", async () => {
    const g = await save("valid", { name: ["c-1", "c-3"], type: "ct", q: "c-", comments__re: "^$" });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    const r = await s.api(`/api/extras/dynamic-groups/${g.body.id}/members/`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.results.map((c: { name: string }) => c.name).sort(), ["c-1", "c-3"]);
    const all = await save("everything", {});
    const every = await s.api(`/api/extras/dynamic-groups/${all.body.id}/members/`);
    assert.equal(every.body.count, 5);
  });
});

describe("dynamic-group member reads obey the statement budget (issue 23)", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(async () => {
    await s.close();
  });

  it("a regex filter over much text is a 503 within the budget, and the server keeps serving", async () => {
    const ct = await s.api("/api/virtualization/cluster-types/", {
      method: "POST",
      body: { name: "CT", slug: "ct" },
    });
    // 300 × 20,000 characters: the regex does real work on every row.
    const big = Array.from({ length: 300 }, (_, i) => ({
      name: `big-${i}`,
      type: ct.body.id,
      comments: "x".repeat(20_000),
    }));
    for (let i = 0; i < big.length; i += 100) {
      const r = await s.api("/api/virtualization/clusters/", { method: "POST", body: big.slice(i, i + 100) });
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    }
    const g = await s.api("/api/extras/dynamic-groups/", {
      method: "POST",
      body: {
        name: "slow",
        content_type: "virtualization.cluster",
        filter: { comments__ire: "y$", comments__ic: "zz" },
      },
    });
    assert.equal(g.status, 201, JSON.stringify(g.body));
    const members = `/api/extras/dynamic-groups/${g.body.id}/members/`;
    if (ENGINE === "sqlite") {
      setStatementBudget(1);
      try {
        const r = await s.api(members);
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.ok(Number(r.headers.get("retry-after")) > 0);
      } finally {
        setStatementBudget(30_000);
      }
    } else {
      // A second app on the same schema whose pool has a 1 ms statement_timeout.
      process.env.INVENTORY_STATEMENT_TIMEOUT = "0.001";
      const store = await openStore(s.databaseUrl);
      delete process.env.INVENTORY_STATEMENT_TIMEOUT;
      const app = await buildApp({ store, reg: registry(), config: configFromEnv({}), logger: false });
      try {
        const r = await app.inject({ url: members, headers: { authorization: `Token ${s.token}` } });
        assert.equal(r.statusCode, 503, r.body);
        assert.ok(Number(r.headers["retry-after"]) > 0);
      } finally {
        await app.close();
        await store.close();
      }
    }
    const ok = await s.api("/api/virtualization/clusters/?limit=1");
    assert.equal(ok.status, 200, "the server keeps serving");
  });
});
