/**
 * Business errors raised by the service and store layers. The HTTP layer maps them to Nautobot/DRF
 * response shapes in one place (http/errors.ts); the CLI maps them to one-line messages.
 */

/** Field errors: `{field: [messages]}`; model-level errors under `__all__`, serializer-level under `non_field_errors`. */
export type FieldErrors = Record<string, unknown>;

/** A request the service refuses. `status` is the HTTP status the API answers with. */
export class AppError extends Error {
  override name = "AppError";
  readonly status: number;
  /** Response body override (field errors, bulk item list). */
  readonly body: unknown;
  /** Extra response headers (`Retry-After` of a 429). */
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, message: string, body?: unknown, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** 400 with field errors (DRF `ValidationError`). */
export class ValidationError extends AppError {
  override name = "ValidationError";
  readonly errors: FieldErrors | unknown[];
  constructor(errors: FieldErrors | unknown[]) {
    super(400, "validation failed", errors);
    this.errors = errors;
  }
}

/** 404 `{"detail": "Not found."}`. */
export class NotFoundError extends AppError {
  override name = "NotFoundError";
  constructor() {
    super(404, "Not found.");
  }
}

/** 409: delete blocked by dependent objects (Django ProtectedError). */
export class ProtectedError extends AppError {
  override name = "ProtectedError";
  constructor(detail: string) {
    super(409, detail);
  }
}

/** 403 with Nautobot's messages. */
export class PermissionDenied extends AppError {
  override name = "PermissionDenied";
  constructor(detail = "You do not have permission to perform this action.") {
    super(403, detail);
  }
}

/** Collects field errors in DRF's shape. */
export class ErrorBag {
  readonly errors: Record<string, string[]> = {};
  add(field: string, message: string): void {
    const list = this.errors[field] ?? [];
    list.push(message);
    this.errors[field] = list;
  }
  has(field?: string): boolean {
    return field ? field in this.errors : Object.keys(this.errors).length > 0;
  }
  /** @throws ValidationError when any error was collected. */
  throwIfAny(): void {
    if (this.has()) throw new ValidationError(this.errors);
  }
}

/**
 * An allocation's claim ahead did not hold (service/allocation.ts `claimAfterHint`): the outermost
 * `inTransaction` rolls back and runs again with `Ctx.claimFirst`; never seen by clients.
 */
export class ClaimAheadFailed extends Error {
  override name = "ClaimAheadFailed";
}
