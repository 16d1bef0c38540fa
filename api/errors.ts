import { DomainError, type ErrorKind } from '../domain/shared/decider.js';

/** Errors the HTTP layer raises itself; domain rejections arrive as DomainError with their own codes. */
export class ApiError extends DomainError {}

/**
 * A refusal of the HTTP layer whose status has no domain kind (415, 431) or must be exact: the error
 * handler answers `status` with the error body and `code`.
 */
export class StatusError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

export class ValidationError extends ApiError {
  constructor(readonly problems: FieldProblem[]) {
    super('VALIDATION_FAILED', problems.map((p) => `${p.field}: ${p.message}`).join('; '), 'invalid', { fields: problems });
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string, code = 'NOT_FOUND') {
    super(code, `${what} not found`, 'not_found');
  }
}

/** The one place a kind of refusal becomes an HTTP status. */
export const HTTP_STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  precondition_failed: 412,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  cancelled: 499,
  internal: 500,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
};

export const httpStatusOf = (err: DomainError): number => HTTP_STATUS_OF_KIND[err.kind] ?? 500;

export function errorBody(code: string, message: string, details?: unknown) {
  return { success: false as const, error: details === undefined ? { code, message } : { code, message, details } };
}
