/**
 * Security headers on every response (issue 12), by @fastify/helmet: a Content-Security-Policy that fits
 * Swagger UI (local scripts only; it sets inline styles and uses data: images) and the browsable API pages
 * (one inline style block), no framing, no MIME sniffing, no referrer across origins. HSTS is helmet's
 * default: browsers honour it only over HTTPS (behind a TLS proxy), so plain-HTTP use on loopback is
 * unaffected; `upgrade-insecure-requests` is left out for the same plain-HTTP use.
 */
import helmet from "@fastify/helmet";
import type { FastifyInstance } from "fastify";

/** Register the headers; call before any other hook so that errors and 404s carry them too. */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
      },
    },
    crossOriginEmbedderPolicy: false,
    // As Nautobot 1.6 sends them (X_FRAME_OPTIONS = "DENY", SECURE_REFERRER_POLICY = "same-origin").
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "same-origin" },
  });
}
