/** Keeps docs/ARCHITECTURE.md's import direction true: scans every import under src/. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";

const ALLOWED: Record<string, string[]> = {
  registry: ["registry", "net", "template"],
  template: ["template"],
  net: ["net"],
  config: ["config", "net"],
  store: ["store", "registry", "net"],
  query: ["query", "registry", "store", "net"],
  service: ["service", "registry", "store", "query", "net", "template"],
  http: ["http", "service", "query", "registry", "store", "config", "net"],
  webhooks: ["webhooks", "service", "store", "registry", "template", "net"],
  importer: ["importer", "service", "registry", "store", "net", "config"],
  ui: ["ui", "service", "registry", "query", "store", "webhooks"],
  graphql: ["graphql", "service", "registry", "query", "store", "net"],
  server: ["server", "http", "graphql", "ui", "config", "webhooks"],
  cli: [
    "cli",
    "server",
    "http",
    "service",
    "registry",
    "store",
    "config",
    "importer",
    "query",
    "net",
    "webhooks",
  ],
};

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("import direction", () => {
  it("every src module imports only from layers below it", () => {
    const src = resolve("src");
    const bad: string[] = [];
    for (const file of walk(src)) {
      const layer = relative(src, file).split(/[\\/]/)[0]!.replace(/\.ts$/, "");
      const allowed = ALLOWED[layer];
      if (!allowed) continue;
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(src, resolve(dirname(file), m[1]!));
        const tlayer = target.split(/[\\/]/)[0]!.replace(/\.ts$/, "");
        if (!allowed.includes(tlayer)) bad.push(`${relative(src, file)} → ${target}`);
      }
    }
    assert.deepEqual(bad, []);
  });
});
