/**
 * Task t5, custom-field `validation_regex` on a bounded matcher: a user who may write custom fields stores
 * a catastrophic pattern (`^(a+)+$`, exponential for a backtracking engine such as JavaScript's RegExp or
 * Python's `re`), then anyone writes values built to make it backtrack. Patterns are RE2 (linear time) within
 * the size bounds of regex lookups, long searches run off the event loop within a per-request budget, and a
 * pattern RE2 cannot compile is a 400 naming `validation_regex` when the field is saved. The server runs in
 * this process with the hostile suite's health guard (test/helpers/health-guard.ts): a write that held the
 * event loop shows as a slow `/health` poll, checked after each hostile write and again at `close()`.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/** The value cap of custom fields (README, Configuration: 64 KiB). */
const CUSTOM_FIELD_VALUE_MAX = 65_536;

describe("custom-field validation_regex under a bounded matcher (task t5)", () => {
  let s: TestServer;
  let site = "";
  before(async () => {
    s = await startServer();
    const r = await s.api("/api/dcim/sites/", {
      method: "POST",
      body: { name: "Regex site", status: "active" },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    site = r.body.id;
  });
  after(async () => {
    await s.close();
    const h = s.health;
    if (h)
      console.log(
        `/health: ${h.polls} polls, worst ${h.worstMs} ms, threshold ${h.thresholdMs} ms, ${h.waits.length} waits for a core`,
      );
  });

  /** Fail when the guard saw a held event loop; waits for two more polls so a late one is counted. */
  async function assertLoopFree(what: string): Promise<void> {
    const report = s.health;
    assert.ok(report, "the hostile suite's health guard is on");
    const polls = report.polls;
    await waitUntil(async () => report.polls >= polls + 2);
    assert.deepEqual(report.slow, [], `${what}: /health was slow while the event loop was held`);
  }

  const setValue = (key: string, value: unknown) =>
    s.api(`/api/dcim/sites/${site}/`, { method: "PATCH", body: { custom_fields: { [key]: value } } });

  it("^(a+)+$ is accepted (RE2 syntax); values built to backtrack are refused at once, matching ones kept", async () => {
    const cf = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: { name: "evil", type: "text", validation_regex: "^(a+)+$", content_types: ["dcim.site"] },
    });
    assert.equal(cf.status, 201, JSON.stringify(cf.body));
    // 2^28 backtracking steps for JavaScript's RegExp (seconds of a held event loop), linear for RE2.
    const short = `${"a".repeat(28)}!`;
    const r = await setValue("evil", short);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      __all__: ["Invalid value for custom field 'evil': Value must match regex '^(a+)+$'"],
    });
    await assertLoopFree("a 29-character value against ^(a+)+$");
    // The longest value allowed: a backtracking engine would never finish.
    const long = `${"a".repeat(CUSTOM_FIELD_VALUE_MAX - 1)}!`;
    const r2 = await setValue("evil", long);
    assert.equal(r2.status, 400, JSON.stringify(r2.body).slice(0, 300));
    assert.deepEqual(r2.body, r.body);
    await assertLoopFree("a 64 KiB value against ^(a+)+$");
    const ok = await setValue("evil", "a".repeat(CUSTOM_FIELD_VALUE_MAX));
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    assert.equal(ok.body.custom_fields.evil.length, CUSTOM_FIELD_VALUE_MAX);
    const over = await setValue("evil", "a".repeat(CUSTOM_FIELD_VALUE_MAX + 1));
    assert.equal(over.status, 400);
    assert.deepEqual(over.body, {
      __all__: [
        `Invalid value for custom field 'evil': Ensure this value has no more than ${CUSTOM_FIELD_VALUE_MAX} characters.`,
      ],
    });
  });

  it("a default built to backtrack is refused at once with Nautobot's message", async () => {
    const r = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: {
        name: "evil_default",
        type: "text",
        validation_regex: "^(a|aa)+$",
        default: `${"a".repeat(40)}!`,
        content_types: ["dcim.site"],
      },
    });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      default: [`Invalid default value "${"a".repeat(40)}!": Value must match regex '^(a|aa)+$'`],
    });
    await assertLoopFree("a default against ^(a|aa)+$");
  });

  it("the costliest patterns RE2 accepts: a 64 KiB search runs off the event loop and answers within its budget", async () => {
    // ~7,000 RE2 instructions (under the 10,000 bound): linear, but re2js needs tens of seconds for 64 KiB.
    const pattern = "^([a-z]+[0-9]*){1,1000}$";
    const cf = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: { name: "slow", type: "text", validation_regex: pattern, content_types: ["dcim.site"] },
    });
    assert.equal(cf.status, 201, JSON.stringify(cf.body));
    const r = await setValue("slow", `${"a".repeat(CUSTOM_FIELD_VALUE_MAX - 1)}!`);
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    const [message] = r.body.__all__ as string[];
    assert.ok(
      message === `Invalid value for custom field 'slow': Value must match regex '${pattern}'` ||
        message ===
          `Invalid value for custom field 'slow': Matching the value against regex '${pattern}' took longer than the time allowed`,
      message,
    );
    await assertLoopFree("a 64 KiB value against a 7,000-instruction pattern");
    // A short value is cheap enough to match inline, and is stored.
    const ok = await setValue("slow", "abc1def2");
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.custom_fields.slow, "abc1def2");
  });

  it("a bulk create of 200 objects with such values shares one matching budget: a prompt 400 for each", async () => {
    const pattern = "^([a-z]+[0-9]*){1,1000}$";
    const value = `${"b".repeat(CUSTOM_FIELD_VALUE_MAX - 1)}!`;
    const body = Array.from({ length: 200 }, (_, i) => ({
      name: `Bulk regex ${i}`,
      status: "active",
      custom_fields: { slow: value },
    }));
    const r = await s.api("/api/dcim/sites/", { method: "POST", body });
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.ok(Array.isArray(r.body) && r.body.length === 200, JSON.stringify(r.body).slice(0, 300));
    for (const item of r.body as Array<{ __all__?: string[] }>) {
      const [message] = item.__all__ ?? [];
      assert.ok(
        message === `Invalid value for custom field 'slow': Value must match regex '${pattern}'` ||
          message ===
            `Invalid value for custom field 'slow': Matching the value against regex '${pattern}' took longer than the time allowed`,
        JSON.stringify(item).slice(0, 300),
      );
    }
    const list = await s.api("/api/dcim/sites/?name__isw=Bulk%20regex");
    assert.equal(list.body.count, 0);
    await assertLoopFree("200 values of 64 KiB against a 7,000-instruction pattern in one request");
  });

  it("a pattern RE2 cannot compile (lookaround, backreference, too large) is a 400 naming validation_regex", async () => {
    for (const [i, pattern] of ["^(?=a)", "(a)\\1", "(?<!x)y", `${"(.*){999}".repeat(20)}`].entries()) {
      const r = await s.api("/api/extras/custom-fields/", {
        method: "POST",
        body: { name: `bad_${i}`, type: "text", validation_regex: pattern, content_types: ["dcim.site"] },
      });
      assert.equal(r.status, 400, `${pattern}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(Object.keys(r.body), ["validation_regex"], JSON.stringify(r.body));
      assert.match(
        r.body.validation_regex[0],
        new RegExp(
          `^${pattern.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")} is not a valid regular expression \\(RE2: .+\\)\\.$`,
        ),
      );
    }
    const list = await s.api("/api/extras/custom-fields/?name__isw=bad_");
    assert.equal(list.body.count, 0);
    // Patterns Python's `re` and RE2 both read are accepted (named groups, inline flags).
    const good = await s.api("/api/extras/custom-fields/", {
      method: "POST",
      body: {
        name: "good",
        type: "text",
        validation_regex: "(?i)^(?P<x>[a-z]{3})-\\d+$",
        content_types: ["dcim.site"],
      },
    });
    assert.equal(good.status, 201, JSON.stringify(good.body));
    assert.equal((await setValue("good", "ABC-12")).status, 200);
    const bad = await setValue("good", "ABCD-12");
    assert.deepEqual(bad.body, {
      __all__: ["Invalid value for custom field 'good': Value must match regex '(?i)^(?P<x>[a-z]{3})-\\d+$'"],
    });
  });
});
