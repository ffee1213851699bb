/** Issue 4: `inventory webhook-receiver` prints method, path, headers and the pretty-printed JSON body, answers 200. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { freePort, PROCESS_START_MS } from "../helpers/process.ts";
import { HANG_MS, waitUntil } from "../helpers/wait.ts";

async function run(args: string[], body: string): Promise<{ status: number; text: string; out: string }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["src/main.ts", "webhook-receiver", "--port", String(port), ...args],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  let exited: number | null | undefined;
  child.once("exit", (code) => {
    exited = code;
  });
  try {
    // Deadlines detect a hang (a start took over 10 s at load 8–14, issue 24); an exit fails at once.
    await waitUntil(
      async () => out.includes("Listening") || exited !== undefined,
      PROCESS_START_MS,
      () => `receiver did not start: ${out}`,
      20,
    );
    if (!out.includes("Listening")) throw new Error(`receiver exited (${exited}) before listening: ${out}`);
    const res = await fetch(`http://localhost:${port}/some/path?x=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Test": "yes" },
      body,
    });
    const text = await res.text();
    // The request is printed in full once the closing rule is out.
    await waitUntil(
      async () => out.includes("------------"),
      HANG_MS,
      () => `not printed: ${out}`,
      20,
    );
    return { status: res.status, text, out };
  } finally {
    child.kill("SIGKILL");
  }
}

describe("webhook-receiver command", () => {
  it("prints the request and answers 200", async () => {
    const r = await run([], '{"event":"created","data":{"name":"x"}}');
    assert.equal(r.status, 200);
    assert.equal(r.text, "Webhook received!\n");
    assert.match(r.out, /Listening on port http:\/\/localhost:\d+/);
    assert.match(r.out, /\[1\] .* "POST \/some\/path\?x=1 HTTP\/1\.1" 200 -/);
    assert.match(r.out, /X-Test: yes/i);
    assert.match(r.out, /\{\n {4}"event": "created",\n {4}"data": \{\n {8}"name": "x"\n {4}\}\n\}/);
  });
  it("--no-headers hides the headers", async () => {
    const r = await run(["--no-headers"], "plain text");
    assert.equal(r.status, 200);
    assert.doesNotMatch(r.out, /X-Test/i);
    assert.match(r.out, /plain text/);
  });
});
