import { ForkcacheError, type ErrorCode } from '../../core/util/errors.ts';

/** The `error.type` values of Anthropic's error bodies, with their HTTP status. */
export const API_ERROR_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
} as const;

export type ApiErrorType = keyof typeof API_ERROR_STATUS;

/**
 * An error the emulator answers with, in the API's shape. It is a ForkcacheError, so code
 * inside the emulator (and tests of its parts) switch on `code` as everywhere else; `type`
 * and `status` are what goes on the wire.
 */
export class ApiError extends ForkcacheError {
  readonly type: ApiErrorType;
  readonly status: number;
  /**
   * `error.details` on the wire: `{ error_code }` where the API names a specific condition
   * (clients switch on it, e.g. Claude Code on `mid_conversation_system_not_supported`).
   */
  readonly details: { error_code: string } | undefined;
  /** `retry-after` seconds of a 429 (undefined: the emulator's default; null: none, as for the spend cap). */
  retryAfter?: number | null | undefined;

  constructor(
    code: ErrorCode,
    type: ApiErrorType,
    message: string,
    data?: Record<string, unknown>,
    details?: { error_code: string },
  ) {
    super(code, message, data === undefined ? {} : { data });
    this.type = type;
    this.status = API_ERROR_STATUS[type];
    this.details = details;
  }

  /** `{ type: "error", error: { type, message[, details] }, request_id }`: every API error's body. */
  body(requestId: string): ApiErrorBody {
    const error =
      this.details === undefined
        ? { type: this.type, message: this.message }
        : { type: this.type, message: this.message, details: this.details };
    return { type: 'error', error, request_id: requestId };
  }
}

interface ApiErrorBody {
  type: 'error';
  error: { type: ApiErrorType; message: string; details?: { error_code: string } };
  request_id: string;
}

/** Shorthand for the commonest case: a 400 naming what is wrong. */
export function invalidRequest(message: string, data?: Record<string, unknown>): ApiError {
  return new ApiError('EMULATOR_INVALID_REQUEST', 'invalid_request_error', message, data);
}
