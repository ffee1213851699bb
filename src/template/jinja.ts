/**
 * Sandboxed Jinja2 templates for webhook `body_template` and `additional_headers` (issue 4, seed Events
 * "Outgoing request" 2 and 4).
 *
 * Rendering uses @huggingface/jinja, an interpreter over its own value types: a template sees the plain
 * JSON context it is given (objects become maps of their own keys) and nothing else, so
 * `''.constructor`, `__proto__`, `__class__` and the like are undefined, and there is no file, process or
 * network access. Unlike Nautobot 1.6 (django-jinja, autoescape on, nautobot-webhooks.md §4) output is not
 * HTML-escaped: `{{ data.name }}` renders the name as is, and `| tojson` gives JSON.
 *
 * Undefined values follow Jinja2's default `Undefined` (Nautobot 1.6 renders with django-jinja, which uses it
 * when DEBUG is off): a missing name or attribute renders as "", but an attribute or item of an undefined
 * value (`{{ obj.nosuch.deeper }}`) is an error, so a computed field gives its fallback value (issue 24).
 */
import { Environment, Interpreter, Template } from "@huggingface/jinja";

const compiled = new Map<string, Template>();
const MAX_CACHED = 256;

/** Largest `range()` a template may build; a larger one is a render error. */
export const MAX_RANGE = 100_000;

/** Jinja's `range(stop)` / `range(start, stop[, step])`, refusing more than MAX_RANGE items. */
function boundedRange(start: number, stop?: number, step = 1): number[] {
  const [from, to] = stop === undefined ? [0, start] : [start, stop];
  if (!Number.isInteger(from) || !Number.isInteger(to) || !Number.isInteger(step) || step === 0)
    throw new Error("range() takes integers and a non-zero step");
  const length = Math.max(0, Math.ceil((to - from) / step));
  if (length > MAX_RANGE) throw new Error(`range() of ${length} items exceeds the limit of ${MAX_RANGE}`);
  return Array.from({ length }, (_, i) => from + i * step);
}

/** The interpreter's global names (as @huggingface/jinja's own `Template.render` sets them). */
const GLOBALS: Record<string, unknown> = {
  false: false,
  true: true,
  none: null,
  False: false,
  True: true,
  None: null,
  range: boundedRange,
  raise_exception: (message: unknown) => {
    throw new Error(String(message));
  },
};

/** An AST node of @huggingface/jinja (its runtime types do not resolve under NodeNext, so typed here). */
type Statement = { type?: string } | undefined;
/** A runtime value of @huggingface/jinja (`UndefinedValue`, `StringValue`, …). */
type Value = { type: string; value: unknown };
/** The part of @huggingface/jinja's `Interpreter` used here. */
interface InterpreterApi {
  run(program: unknown): Value;
  evaluate(statement: Statement, environment: Environment): Value;
}
const BaseInterpreter = Interpreter as unknown as new (environment: Environment) => InterpreterApi;

/** An already-evaluated expression (lets `StrictInterpreter` pass a member's object on without evaluating it twice). */
interface Evaluated {
  type: "Evaluated";
  value: Value;
}

/** The source-ish name of an expression, for error messages: `obj.name.nosuch`. */
function nameOf(e: Statement): string {
  const x = e as unknown as { type?: string; value?: unknown; object?: Statement; property?: Statement };
  if (x.type === "Identifier") return String(x.value);
  if (x.type === "MemberExpression" && x.object && x.property)
    return `${nameOf(x.object)}.${nameOf(x.property)}`;
  return x.type === "StringLiteral" || x.type === "IntegerLiteral" ? String(x.value) : "value";
}

/**
 * The interpreter with Jinja2's `Undefined` rule for members: looking up an attribute or item of an
 * undefined value throws (`jinja2.Undefined.__getattr__` raises `UndefinedError`) instead of giving
 * another undefined value.
 */
class StrictInterpreter extends BaseInterpreter {
  override evaluate(statement: Statement, environment: Environment): Value {
    const node = statement as unknown as { type?: string; object?: Statement; value?: Value };
    if (node?.type === "Evaluated") return (statement as unknown as Evaluated).value;
    if (node?.type !== "MemberExpression" || !node.object) return super.evaluate(statement, environment);
    const object = this.evaluate(node.object, environment);
    if (object.type === "UndefinedValue") throw new Error(`'${nameOf(node.object)}' is undefined`);
    const evaluated: Evaluated = { type: "Evaluated", value: object };
    return super.evaluate({ ...node, object: evaluated } as unknown as Statement, environment);
  }
}

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
    // Template.render's globals, with `range` limited (a template cannot allocate a 10^8-item list).
    const env = new Environment();
    for (const [k, v] of Object.entries({ ...GLOBALS, ...context })) env.set(k, v);
    return String(new StrictInterpreter(env).run(t.parsed).value);
  } catch (e) {
    throw new TemplateError(`template rendering failed: ${(e as Error).message}`);
  }
}
