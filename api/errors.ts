import { DomainError } from '../domain/shared/decider.js';

/** Errors the HTTP layer raises itself; domain rejections arrive as DomainError with their own codes. */
export class ApiError extends DomainError {}

export interface FieldProblem {
  field: string;
  message: string;
}

export class ValidationError extends ApiError {
  constructor(readonly problems: FieldProblem[]) {
    super('VALIDATION_FAILED', problems.map((p) => `${p.field}: ${p.message}`).join('; '), 400, { fields: problems });
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string, code = 'NOT_FOUND') {
    super(code, `${what} not found`, 404);
  }
}

export function errorBody(code: string, message: string, details?: unknown) {
  return { success: false as const, error: details === undefined ? { code, message } : { code, message, details } };
}
