/**
 * Sending one webhook request with undici: configured method, URL and headers; TLS verification on/off and
 * an optional CA file; connect and response timeouts; redirects never followed (Nautobot follows them
 * and has no timeout, nautobot-webhooks.md W5/W6).
 */
import { Agent, request } from "undici";
import { guardedLookup, isRestricted, RESTRICTED_TARGET, type TargetPolicy } from "../net/targets.ts";
import { CA_FILE_UNUSABLE, readCaFile } from "../net/tls.ts";

/** Bytes of a receiver's answer kept for the delivery log; the rest is never read. */
export const RESPONSE_EXCERPT_BYTES = 500;

/** What to send. */
export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  sslVerification: boolean;
  caFilePath: string | null;
  /** Set for webhooks not trusted with restricted targets: every resolved address is checked. */
  restrictTo?: TargetPolicy;
}

/** How it went: a status code, or an error (timeout, TLS, connection). Durations in milliseconds. */
export interface SendOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
  /** First bytes of the response body (for the delivery record). */
  responseExcerpt: string;
  /**
   * The response's headers, name → value (repeated ones joined with ", "): at most RESPONSE_HEADERS_KEPT,
   * each value cut to RESPONSE_EXCERPT_BYTES characters. Empty when there was no response.
   */
  responseHeaders: Record<string, string>;
}

/** Response headers kept for "Send test". */
export const RESPONSE_HEADERS_KEPT = 50;

/** undici's response headers, bounded (see `SendOutcome.responseHeaders`). */
function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers).slice(0, RESPONSE_HEADERS_KEPT))
    if (v !== undefined) out[k] = [v].flat().join(", ").slice(0, RESPONSE_EXCERPT_BYTES);
  return out;
}

const agents = new Map<string, Agent>();

function agentFor(req: OutgoingRequest, timeoutMs: number): Agent {
  const key = `${req.sslVerification}|${req.caFilePath ?? ""}|${timeoutMs}|${req.restrictTo ? JSON.stringify(req.restrictTo) : ""}`;
  let a = agents.get(key);
  if (!a) {
    const tls: Record<string, unknown> = { rejectUnauthorized: req.sslVerification };
    if (req.sslVerification && req.caFilePath) {
      const ca = readCaFile(req.caFilePath);
      if (!ca) throw new Error(CA_FILE_UNUSABLE);
      tls.ca = ca;
    }
    a = new Agent({
      connect: {
        timeout: timeoutMs,
        ...tls,
        ...(req.restrictTo ? { lookup: guardedLookup(req.restrictTo) } : {}),
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4000,
      connections: 32,
    });
    agents.set(key, a);
  }
  return a;
}

function describe(e: unknown): string {
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code;
  const msg = err.message ?? String(e);
  return code ? `${code}: ${msg}` : msg;
}

/** Send `req`, never throwing: every failure becomes an outcome with `error` set. */
export async function send(req: OutgoingRequest, timeoutMs: number): Promise<SendOutcome> {
  const started = performance.now();
  try {
    // An IP literal is never looked up, so the guarded lookup cannot see it: check it here.
    const host = new URL(req.url).hostname;
    if (req.restrictTo && /^[\d.]+$|:/.test(host) && isRestricted(host, req.restrictTo))
      throw new Error(RESTRICTED_TARGET);
    const dispatcher = agentFor(req, timeoutMs);
    const res = await request(req.url, {
      method: req.method as "POST",
      headers: req.headers,
      body: req.method === "GET" && req.body === "" ? null : req.body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs + 1000),
    });
    let excerpt = "";
    try {
      // Keep the first bytes and stop reading: a receiver streaming gigabytes costs us nothing.
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= RESPONSE_EXCERPT_BYTES) break;
      }
      res.body.destroy();
      excerpt = Buffer.concat(chunks)
        .subarray(0, RESPONSE_EXCERPT_BYTES)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
    } catch {
      // body errors after the status do not change the outcome
    }
    return {
      status: res.statusCode,
      error: null,
      durationMs: Math.round(performance.now() - started),
      responseExcerpt: excerpt,
      responseHeaders: keptHeaders(res.headers),
    };
  } catch (e) {
    return {
      status: null,
      error: describe(e),
      durationMs: Math.round(performance.now() - started),
      responseExcerpt: "",
      responseHeaders: {},
    };
  }
}

/** Close pooled connections (worker shutdown). */
export async function closeAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.close().catch(() => {})));
}
