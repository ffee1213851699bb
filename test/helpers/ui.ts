/** A cookie-keeping web client for the UI tests: log in, GET pages, POST forms with the page's CSRF token. */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { TestServer } from "./server.ts";

export interface WebClient {
  get(
    path: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; html: string; location: string | null }>;
  post(
    path: string,
    form: Record<string, string | string[]>,
    opts?: { csrf?: string | null },
  ): Promise<{ status: number; html: string; location: string | null }>;
  csrf(path?: string): Promise<string>;
}

/** A client for `s`, logged in as `username` unless `login` is false. */
export async function webClient(
  s: TestServer,
  username = "admin",
  password = "admin",
  login = true,
): Promise<WebClient> {
  let cookie = "";
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      if (pair?.startsWith("sessionid=")) cookie = pair.endsWith("=") ? "" : pair;
    }
  };
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${s.url}${path}`, {
      headers: { ...headers, ...(cookie ? { cookie } : {}) },
      redirect: "manual",
    });
    keep(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
  };
  const csrf = async (path = "/login/") => {
    const page = await get(path);
    const m = /name="_csrf" value="([^"]+)"/.exec(page.html);
    assert.ok(m, `no CSRF token on ${path}`);
    return m[1]!;
  };
  const post = async (
    path: string,
    form: Record<string, string | string[]>,
    opts: { csrf?: string | null } = {},
  ) => {
    const token = opts.csrf === undefined ? await csrf(path === "/login/" ? "/login/" : "/") : opts.csrf;
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const x of [v].flat()) body.append(k, x);
    if (token) body.append("_csrf", token);
    const res = await fetch(`${s.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
      body,
      redirect: "manual",
    });
    keep(res);
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
  };
  const client = { get, post, csrf };
  if (login) {
    const r = await post("/login/", { username, password, next: "/" });
    assert.equal(r.status, 302, r.html.slice(0, 500));
  }
  return client;
}

/**
 * Asserts the page shows a flash message (issue 25: `.flash` alerts drawn by the layout from
 * `src/ui/flash.ts`) whose whole text matches `text` (a string must be equal); returns the texts shown.
 */
export async function expectFlash(page: Page, text: RegExp | string): Promise<string[]> {
  const shown = (await page.$$eval(".flash", (els) => els.map((e) => (e.textContent ?? "").trim()))).filter(
    Boolean,
  );
  const hit = shown.some((t) => (typeof text === "string" ? t === text : text.test(t)));
  assert.ok(hit, `no flash message ${String(text)} on ${page.url()}; shown: ${JSON.stringify(shown)}`);
  return shown;
}
