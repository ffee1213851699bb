/**
 * Sandboxed Jinja2 templates for webhook `body_template` and `additional_headers` (issue 4, seed Events
 * "Outgoing request" 2 and 4).
 *
 * Rendering uses @huggingface/jinja, an interpreter over its own value types: a template sees the plain
 * JSON context it is given (objects become maps of their own keys) and nothing else, so
 * `''.constructor`, `__proto__`, `__class__` and the like are undefined, and there is no file, process or
 * network access. Unlike Nautobot 1.6 (django-jinja, autoescape on, nautobot-webhooks.md §4) output is not
 * HTML-escaped: `{{ data.name }}` renders the name as is, and `| tojson` gives JSON.
 */
import { Template } from "@huggingface/jinja";

const compiled = new Map<string, Template>();
const MAX_CACHED = 256;

/** Raised when a template does not parse or fails while rendering. */
export class TemplateError extends Error {
  override name = "TemplateError";
}

function compile(source: string): Template {
  let t = compiled.get(source);
  if (t) return t;
  try {
    t = new Template(source);
  } catch (e) {
    throw new TemplateError(`template syntax error: ${(e as Error).message}`);
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(source, t);
  return t;
}

/**
 * Check that `source` parses. @returns the error message, or undefined when it is valid.
 */
export function checkTemplate(source: string): string | undefined {
  try {
    compile(source);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Render `source` over `context` (plain JSON values only).
 * @throws TemplateError with the parse or render error.
 */
export function renderTemplate(source: string, context: Record<string, unknown>): string {
  const t = compile(source);
  try {
    return t.render(context);
  } catch (e) {
    throw new TemplateError(`template rendering failed: ${(e as Error).message}`);
  }
}
