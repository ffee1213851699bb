/**
 * "Send test" from the web interface (issue 10): deliver a sample `created` event of the webhook's first
 * object type now, exactly as a delivery would be sent (templates, headers, signature, TLS and target
 * policy), without recording a delivery, and report the receiver's answer.
 */
import type { Store } from "../store/db.ts";
import { TemplateError } from "../template/jinja.ts";
import { buildContext, renderBody, renderHeaders, signature } from "./payload.ts";
import { send } from "./send.ts";
import type { WorkerSettings } from "./worker.ts";

/** What the test delivery sent and got back (signature redacted). */
export interface TestOutcome {
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  status: number | null;
  error: string | null;
  durationMs: number;
  response: string;
  /** The receiver's answer headers (bounded, `SendOutcome.responseHeaders`). */
  responseHeaders: Record<string, string>;
}

/**
 * Send a sample event to webhook `id`. @returns the outcome, or undefined when the webhook does not exist.
 * Template errors and refused targets are outcomes with `error` set, never exceptions.
 */
export async function sendTest(
  store: Store,
  id: string,
  settings: WorkerSettings,
): Promise<TestOutcome | undefined> {
  const hook = await store.db
    .selectFrom("extras_webhook")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirst();
  if (!hook) return undefined;
  const ct = await store.db
    .selectFrom("extras_webhook_content_types")
    .select("content_type")
    .where("source_id", "=", id)
    .orderBy("content_type")
    .executeTakeFirst();
  const model = String(ct?.content_type ?? "dcim.site");
  const sample = {
    id: "00000000-0000-0000-0000-000000000000",
    display: "webhook test",
    url: null,
    name: "webhook test",
  };
  const context = buildContext({
    action: "create",
    contentType: model,
    time: new Date().toISOString(),
    userName: "webhook-test",
    hasUser: true,
    requestId: "00000000-0000-0000-0000-000000000000",
    objectData: sample,
    prechangeData: null,
  });
  const request = {
    method: String(hook.http_method || "POST"),
    url: String(hook.payload_url),
    headers: {} as Record<string, string>,
    body: "",
  };
  try {
    request.body = await renderBody(String(hook.body_template ?? ""), context, settings.render);
    Object.assign(
      request.headers,
      {
        "Content-Type": String(hook.http_content_type || "application/json"),
        "User-Agent": settings.userAgent,
        "X-Hook-Delivery": "test",
      },
      await renderHeaders(String(hook.additional_headers ?? ""), context, settings.render),
    );
    const headers = { ...request.headers };
    if (hook.secret) headers["X-Hook-Signature"] = signature(String(hook.secret), request.body);
    const res = await send(
      {
        ...request,
        headers,
        sslVerification: !!hook.ssl_verification,
        caFilePath: hook.ca_file_path ? String(hook.ca_file_path) : null,
        ...(hook.trusted_target || settings.targets.allowPrivate ? {} : { restrictTo: settings.targets }),
      },
      settings.timeoutMs,
    );
    if (hook.secret) request.headers["X-Hook-Signature"] = "<redacted>";
    const error =
      res.error ??
      (res.status !== null && (res.status < 200 || res.status > 299) ? `HTTP ${res.status} (not 2xx)` : null);
    return {
      request,
      status: res.status,
      error,
      durationMs: res.durationMs,
      response: res.responseExcerpt,
      responseHeaders: res.responseHeaders,
    };
  } catch (e) {
    const error = e instanceof TemplateError ? e.message : `delivery failed: ${(e as Error).message}`;
    return { request, status: null, error, durationMs: 0, response: "", responseHeaders: {} };
  }
}
