/** The client's errors: an API error carries the RFC 9457 problem details the service answered. */

export interface FieldError {
  field: string | null;
  code: string;
  message: string;
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  errors?: FieldError[];
  requestId?: string;
  [member: string]: unknown;
}

export class AgeVerifyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An error answer of the API: `status`, `code`, `detail`, field `errors` and `requestId` from its problem. */
export class ApiError extends AgeVerifyError {
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter: number | null;

  constructor(status: number, problem: Problem, retryAfter: number | null = null) {
    super(`${status} ${problem.code ?? "error"}: ${problem.detail ?? problem.title ?? "the service refused the request"}`);
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }

  get code(): string | undefined {
    return this.problem.code;
  }

  get detail(): string | undefined {
    return this.problem.detail;
  }

  get errors(): FieldError[] {
    return this.problem.errors ?? [];
  }

  get requestId(): string | undefined {
    return this.problem.requestId;
  }
}

export class BadRequestError extends ApiError {}
export class AuthenticationError extends ApiError {}
export class PermissionDeniedError extends ApiError {}
export class NotFoundError extends ApiError {}
export class ConflictError extends ApiError {}
export class RateLimitError extends ApiError {}
export class ServerError extends ApiError {}

export function apiErrorFor(status: number, problem: Problem, retryAfter: number | null): ApiError {
  const kind =
    status === 400 || status === 413 || status === 415 || status === 422
      ? BadRequestError
      : status === 401
        ? AuthenticationError
        : status === 403
          ? PermissionDeniedError
          : status === 404
            ? NotFoundError
            : status === 409
              ? ConflictError
              : status === 429
                ? RateLimitError
                : status >= 500
                  ? ServerError
                  : ApiError;
  return new kind(status, problem, retryAfter);
}

/** The service could not be reached (after the retries that were safe). */
export class ConnectionError extends AgeVerifyError {}

/** `sessions.wait` gave up; `last` is the last reading. */
export class WaitTimeoutError<T = unknown> extends AgeVerifyError {
  readonly last: T;

  constructor(message: string, last: T) {
    super(message);
    this.last = last;
  }
}

/** A webhook whose signature, timestamp or body does not verify: answer it 400. */
export class WebhookVerificationError extends AgeVerifyError {}
