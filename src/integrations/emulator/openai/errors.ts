import { ForkcacheError, type ErrorCode } from '../../../core/util/errors.ts';
import { ApiError } from '../api-error.ts';

/** The body of every error of the OpenAI-compatible APIs. */
interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * An error the emulator answers with in the OpenAI shape (`{ error: { message, type, param,
 * code } }`). A ForkcacheError like every emulator error, so code inside switches on `code`.
 */
export class OpenAiError extends ForkcacheError {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly apiCode: string | null;
  /** `retry-after` seconds (429 only); null: none. */
  retryAfter: number | string | null = null;

  constructor(
    code: ErrorCode,
    status: number,
    type: string,
    message: string,
    param: string | null = null,
    apiCode: string | null = null,
  ) {
    super(code, message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.apiCode = apiCode;
  }

  static invalid(message: string, param: string | null, apiCode: string | null = null): OpenAiError {
    return new OpenAiError('EMULATOR_INVALID_REQUEST', 400, 'invalid_request_error', message, param, apiCode);
  }

  body(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.apiCode } };
  }
}

// What the shared parts of the emulator (body limits, rate limits, faults, scripts) throw, in
// the words OpenAI-compatible clients expect. Status codes stay; 529 becomes 503, the code
// these APIs use for overload.
const FROM_ANTHROPIC: Record<string, [number, string, string | null]> = {
  invalid_request_error: [400, 'invalid_request_error', null],
  authentication_error: [401, 'invalid_request_error', 'invalid_api_key'],
  permission_error: [403, 'invalid_request_error', 'permission_denied'],
  not_found_error: [404, 'invalid_request_error', 'not_found'],
  request_too_large: [413, 'invalid_request_error', 'request_too_large'],
  rate_limit_error: [429, 'requests', 'rate_limit_exceeded'],
  api_error: [500, 'server_error', null],
  timeout_error: [504, 'server_error', 'timeout'],
  overloaded_error: [503, 'server_error', 'overloaded'],
};

/** Any error → the OpenAI-shaped error to send (unknown errors are a 500). */
export function toOpenAiError(err: unknown, retryAfterDefault: number | string): OpenAiError {
  if (err instanceof OpenAiError) return err;
  if (err instanceof ApiError) {
    const [status, type, apiCode] = FROM_ANTHROPIC[err.type] ?? [500, 'server_error', null];
    const out = new OpenAiError(err.code, status, type, err.message, null, err.details?.error_code ?? apiCode);
    if (status === 429) out.retryAfter = err.retryAfter === undefined ? retryAfterDefault : err.retryAfter;
    return out;
  }
  return new OpenAiError(
    'EMULATOR_INTERNAL',
    500,
    'server_error',
    `emulator internal error: ${(err as Error)?.message ?? String(err)}`,
  );
}
