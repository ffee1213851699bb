/**
 * Issue 5: the OpenAPI document describes what the server really returns. Real responses of every
 * endpoint (create, patch, list, brief list, detail, 404) are validated against the document's schemas
 * with ajv (OpenAPI 3.0 `nullable` mapped to JSON Schema).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Ajv } from "ajv";
import formatsPlugin from "ajv-formats";
import { registry } from "../../src/registry/index.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { buildWorld, SAMPLES, specialCreate, type World } from "../helpers/world.ts";

const reg = registry();

/** OpenAPI 3.0 schema → JSON Schema (draft 7 as ajv reads it): `nullable: true` → `anyOf [.., null]`. */
function toJsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (!s || typeof s !== "object") return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
    if (k === "nullable" || k === "example" || k.startsWith("x-")) continue;
    if (k === "$ref" && typeof v === "string") out[k] = v.replace("#/", "openapi#/");
    else out[k] = toJsonSchema(v);
  }
  if ((s as { nullable?: boolean }).nullable) return { anyOf: [out, { type: "null" }] };
  return out;
}

describe("OpenAPI document against real responses", () => {
  let s: TestServer;
  let w: World;
  let doc: any;
  let ajv: Ajv;
  const failures: string[] = [];

  const check = (label: string, schema: unknown, body: unknown) => {
    if (!schema) {
      failures.push(`${label}: no schema in the document`);
      return;
    }
    const validate = ajv.compile(toJsonSchema(schema) as object);
    if (!validate(body)) {
      failures.push(
        `${label}: ${(validate.errors ?? [])
          .slice(0, 3)
          .map((e: { instancePath: string; message?: string }) => `${e.instancePath} ${e.message}`)
          .join("; ")}`,
      );
    }
  };
  const responseSchema = (path: string, method: string, status: number) =>
    doc.paths[path]?.[method]?.responses?.[String(status)]?.content?.["application/json"]?.schema;

  before(async () => {
    s = await startServer();
    w = await buildWorld(s);
    doc = (await s.api("/api/swagger.json")).body;
    ajv = new Ajv({ strict: false, allErrors: true });
    (formatsPlugin as unknown as { default: (a: Ajv) => void }).default(ajv);
    ajv.addFormat("decimal", /^-?\d+(\.\d+)?$/);
    ajv.addSchema(toJsonSchema({ components: doc.components }) as object, "openapi");
  });
  after(async () => {
    await s.close();
  });

  it("documents every operation and parameter, grouped by app, with the token scheme (issue 13)", () => {
    const bare: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        const params = method === "parameters" ? op : (op.parameters ?? []);
        for (const p of params) if (!p.description) bare.push(`${method} ${path} ?${p.name}`);
        if (method !== "parameters" && (!op.summary || !op.description || !op.tags?.length))
          bare.push(`${method} ${path}`);
      }
    assert.deepEqual(bare.slice(0, 10), []);
    assert.deepEqual(
      doc.tags.map((t: any) => t.name),
      ["circuits", "dcim", "extras", "ipam", "tenancy", "users", "virtualization"],
    );
    const list = doc.paths["/dcim/sites/"].get;
    assert.equal(list.summary, "List sites");
    assert.equal(
      list.parameters.find((p: any) => p.name === "name__ic").description,
      "Name contains (case-insensitive) the value; repeat the parameter for several values (any of them).",
    );
    assert.deepEqual(doc.security, [{ tokenAuth: [] }]);
    assert.equal(doc.components.securitySchemes.tokenAuth.in, "header");
  });

  it("every endpoint's responses match their schemas", async () => {
    // The checker itself can fail: a wrong body is reported.
    check("sanity", responseSchema("/dcim/sites/", "get", 200), { count: "x", results: [{ id: 1 }] });
    assert.equal(failures.length, 1, "a wrong body is caught");
    failures.length = 0;
    let n = 120;
    for (const m of [...reg.models.values()].sort((a, b) => a.key.localeCompare(b.key))) {
      const list = `/${m.app}/${m.path}/`;
      const detail = `/${m.app}/${m.path}/{id}/`;
      assert.ok(doc.paths[list], `${list} documented`);
      const sample = SAMPLES[m.key];
      if (!m.readOnly && sample) {
        const body = (await specialCreate(s, w, m.key, n)) ?? sample.create(w, n);
        n++;
        const created = await s.api(sample.path, { method: "POST", body });
        if (created.status === 201) {
          check(`POST ${list} 201`, responseSchema(list, "post", 201), created.body);
          const patched = await s.api(`${sample.path}${created.body.id}/`, {
            method: "PATCH",
            body: sample.patch,
          });
          if (patched.status === 200)
            check(`PATCH ${detail} 200`, responseSchema(detail, "patch", 200), patched.body);
          else failures.push(`PATCH ${detail}: ${patched.status} ${JSON.stringify(patched.body)}`);
        } else failures.push(`POST ${list}: ${created.status} ${JSON.stringify(created.body)}`);
      }
      const all = await s.api(`/api${list}?limit=1000`);
      assert.equal(all.status, 200, list);
      check(`GET ${list} 200`, responseSchema(list, "get", 200), all.body);
      const brief = await s.api(`/api${list}?brief=1`);
      check(`GET ${list}?brief 200`, responseSchema(list, "get", 200), brief.body);
      const first = all.body.results[0];
      if (first) {
        const one = await s.api(`/api${list}${first.id}/`);
        check(`GET ${detail} 200`, responseSchema(detail, "get", 200), one.body);
      }
      if (m.key !== "extras.contenttype") {
        const missing = await s.api(`/api${list}00000000-0000-4000-8000-000000000000/`);
        assert.equal(missing.status, 404);
        check(`GET ${detail} 404`, responseSchema(detail, "get", 404), missing.body);
      }
    }
    assert.deepEqual(failures, []);
  });

  it("the change feed's 410 and a conditional write's 412 are JSON error objects with `detail`", async () => {
    for (const [path, method, status] of [
      ["/extras/object-changes/feed/", "get", 410],
      ["/dcim/sites/{id}/", "patch", 412],
      ["/dcim/sites/", "patch", 412],
    ] as const) {
      const schema = responseSchema(path, method, status);
      assert.equal(schema?.type, "object", `${method} ${path} ${status}`);
      assert.deepEqual(schema.properties.detail, { type: "string" }, `${method} ${path} ${status}`);
      assert.deepEqual(schema.required, ["detail"], `${method} ${path} ${status}`);
    }
    failures.length = 0;
    const stale = await s.api(`/api/dcim/sites/${w.site}/`, {
      method: "PATCH",
      body: { description: "x" },
      headers: { "If-Match": '"0000:1"' },
    });
    assert.equal(stale.status, 412, JSON.stringify(stale.body));
    check("PATCH 412", responseSchema("/dcim/sites/{id}/", "patch", 412), stale.body);
    check("GET feed 410", responseSchema("/extras/object-changes/feed/", "get", 410), {
      detail: "Position 1 was purged.",
      oldest_seq: 5,
      purged_through: 4,
    });
    assert.deepEqual(failures, []);
  });
});
