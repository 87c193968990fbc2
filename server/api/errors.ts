import type { Logger } from '../logger.js';
import { ConflictError, UpstreamError, InvalidCursorError, InvalidInputError, LimitExceededError, NotFoundError, PreconditionFailedError, ReadOnlyError } from '../domain-errors.js';

/**
 * The one error module (CONTRACT §4). Every failure the API reports is an ApiError, rendered as
 * {"error": {type, code, message, param?, request_id}}; anything else becomes a 500 with no detail.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'api_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(requestId: string): { error: Record<string, string> } {
    const error: Record<string, string> = { type: this.type, code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    error.request_id = requestId;
    return { error };
  }
}

export const errors = {
  parameterMissing: (param: string, message = `Missing required parameter: ${param}.`) =>
    new ApiError(400, 'invalid_request_error', 'parameter_missing', message, param),
  parameterInvalid: (param: string, message: string) =>
    new ApiError(400, 'invalid_request_error', 'parameter_invalid', message, param),
  parameterUnknown: (param: string) =>
    new ApiError(400, 'invalid_request_error', 'parameter_unknown', `Received unknown parameter: ${param}.`, param),
  invalidCursor: (param: string, value: string) =>
    new ApiError(
      400,
      'invalid_request_error',
      'invalid_cursor',
      `No object with id '${value}' exists in this list to page from.`,
      param,
    ),
  invalidJson: (detail: string) =>
    new ApiError(400, 'invalid_request_error', 'invalid_json', `The request body is not valid JSON: ${detail}`),
  missingApiKey: () =>
    new ApiError(
      401,
      'authentication_error',
      'missing_api_key',
      'No API key provided. Send it as the header "Authorization: Bearer <API_KEY>".',
      undefined,
      { 'WWW-Authenticate': 'Bearer realm="chyme"' },
    ),
  invalidApiKey: () =>
    new ApiError(401, 'authentication_error', 'invalid_api_key', 'The API key is not valid or has been revoked.', undefined, {
      'WWW-Authenticate': 'Bearer realm="chyme", error="invalid_token"',
    }),
  insufficientScope: (scope: string) =>
    new ApiError(403, 'permission_error', 'insufficient_scope', `This API key lacks the scope "${scope}" required for this request.`),
  hostNotAllowed: (host: string) =>
    new ApiError(
      403,
      'permission_error',
      'host_not_allowed',
      `Requests for host "${host}" are not accepted. Use 127.0.0.1 or localhost, or start the server with --allowed-host.`,
    ),
  originNotAllowed: (origin: string) =>
    new ApiError(403, 'permission_error', 'origin_not_allowed', `Cross-origin requests from "${origin}" are not accepted.`),
  resourceMissing: (what: string, id?: string) =>
    new ApiError(
      404,
      'invalid_request_error',
      'resource_missing',
      id === undefined ? `No such ${what}.` : `No such ${what}: '${id}'.`,
      id === undefined ? undefined : 'id',
    ),
  routeMissing: (method: string, path: string) =>
    new ApiError(404, 'invalid_request_error', 'resource_missing', `Unrecognized request URL (${method} ${path}).`),
  methodNotAllowed: (method: string, path: string, allowed: string[]) =>
    new ApiError(
      405,
      'invalid_request_error',
      'method_not_allowed',
      `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`,
      undefined,
      { Allow: allowed.join(', ') },
    ),
  idempotencyConflict: () =>
    new ApiError(
      409,
      'invalid_request_error',
      'idempotency_conflict',
      'This Idempotency-Key was already used with a different request. Use a new key for a new request.',
    ),
  idempotencyInProgress: () =>
    new ApiError(
      409,
      'invalid_request_error',
      'idempotency_conflict',
      'A request with this Idempotency-Key is still being processed. Retry once it has finished to get its answer.',
    ),
  /** A key holding none of several scopes, any one of which would do (the event stream). */
  insufficientScopeAny: (scopes: readonly string[]) =>
    new ApiError(
      403,
      'permission_error',
      'insufficient_scope',
      `This API key lacks a scope this request needs: any of ${scopes.map((s) => `"${s}"`).join(', ')}.`,
    ),
  /** A count limit on a resource (e.g. 50 webhook subscriptions). */
  /** A resource that exists but cannot be changed (a food of the shipped USDA table). */
  resourceReadOnly: (message: string, param = 'id') => new ApiError(403, 'invalid_request_error', 'resource_read_only', message, param),
  limitExceeded: (message: string) => new ApiError(400, 'invalid_request_error', 'limit_exceeded', message),
  conflict: (code: string, message: string, param?: string) => new ApiError(409, 'invalid_request_error', code, message, param),
  /** If-Match named a version the object no longer has; the answer carries the current ETag. */
  preconditionFailed: (message: string, currentETag: string) =>
    new ApiError(412, 'invalid_request_error', 'precondition_failed', message, 'If-Match', { ETag: currentETag }),
  bodyTooLarge: (limit: number) =>
    new ApiError(413, 'invalid_request_error', 'body_too_large', `The request body exceeds the limit of ${limit} bytes.`),
  unsupportedMediaType: (got: string | undefined) =>
    new ApiError(
      415,
      'invalid_request_error',
      'unsupported_media_type',
      `Request bodies must be sent as application/json${got ? `, not ${got}` : ''}.`,
    ),
  rateLimited: (retryAfterSec: number) =>
    new ApiError(429, 'rate_limit_error', 'rate_limited', 'Too many requests. Slow down and retry after a moment.', undefined, {
      'Retry-After': String(retryAfterSec),
    }),
  /** The service cannot do this now (a restore running, a backup that failed, storage faults); retry later. */
  unavailable: (code: string, message: string, retryAfterSec = 5) =>
    new ApiError(503, 'api_error', code, message, undefined, { 'Retry-After': String(retryAfterSec) }),
  /** Another system the request needs (the sync relay) failed; retrying later may work. */
  badGateway: (code: string, message: string) => new ApiError(502, 'api_error', code, message),
  /** A route that writes its own response (a stream, a download), asked of a transport without one (the phone's worker). */
  notHere: (method: string, path: string) =>
    new ApiError(501, 'api_error', 'not_available_here', `${method} ${path} is not available on this device.`),
  internal: () =>
    new ApiError(500, 'api_error', 'internal_error', 'An unexpected error occurred. The request id identifies it in the server log.'),
};

/** A failure as the API reports it: ApiErrors as they are, features' rule errors by kind, else none. */
export function asApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof InvalidInputError) return errors.parameterInvalid(err.param, err.message);
  if (err instanceof NotFoundError) return errors.resourceMissing(err.what, err.id);
  if (err instanceof ConflictError) return errors.conflict(err.code, err.message, err.param);
  if (err instanceof LimitExceededError) return errors.limitExceeded(err.message);
  if (err instanceof ReadOnlyError) return errors.resourceReadOnly(err.message, err.param);
  if (err instanceof InvalidCursorError) return errors.invalidCursor(err.param, err.cursor);
  if (err instanceof PreconditionFailedError) return errors.preconditionFailed(err.message, err.currentETag);
  if (err instanceof UpstreamError) return errors.badGateway(err.code, err.message);
  // The router could not percent-decode a path parameter.
  if (err instanceof URIError) return errors.parameterInvalid('path', 'The URL path is not valid percent-encoding.');
  return storageFault(err);
}

/**
 * The answer to any failure, for every transport: the API's own error, or a 500 that says nothing
 * (logged with its stack under the request id, as a storage fault is with its cause).
 */
export function answerError(err: unknown, requestId: string, log: Logger): ApiError {
  const apiError = asApiError(err);
  if (!apiError) log.error('unhandled error', { request_id: requestId, error: String((err as Error)?.stack ?? err) });
  else if (!(err instanceof ApiError) && apiError.status === 503) log.error('storage fault', { request_id: requestId, code: apiError.code, error: String(err) });
  return apiError ?? errors.internal();
}

/**
 * Storage faults SQLite reports, as the 503 a client can act on (retry later; the data already
 * stored is intact, since the failed write's transaction rolled back). Documented in docs/api.md.
 */
const STORAGE_FAULTS: Record<string, { code: string; message: string }> = {
  SQLITE_FULL: { code: 'storage_full', message: 'The disk holding the database is full, so nothing was written. Free some space and retry.' },
  SQLITE_READONLY: {
    code: 'storage_read_only',
    message: 'The database file or its folder is read-only, so nothing was written. Make them writable and retry.',
  },
  SQLITE_BUSY: { code: 'storage_busy', message: 'Another program is holding the database locked, so nothing was written. Retry in a moment.' },
  SQLITE_IOERR: { code: 'storage_io_error', message: 'The disk reported an input/output error, so nothing was written. Check the disk and retry.' },
  SQLITE_CORRUPT: {
    code: 'storage_corrupt',
    message: 'The database file is damaged. Nothing was written; restore a backup (chyme restore) to recover.',
  },
  SQLITE_CANTOPEN: { code: 'storage_unavailable', message: 'The database file cannot be opened. Check that it exists and is readable.' },
};

/** The API error for a storage fault, or undefined for any other error. */
export function storageFault(err: unknown): ApiError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined;
  // Extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, …) map like their primary code.
  const primary = Object.keys(STORAGE_FAULTS).find((k) => code === k || code.startsWith(`${k}_`));
  if (!primary) return undefined;
  const fault = STORAGE_FAULTS[primary]!;
  return errors.unavailable(fault.code, fault.message, primary === 'SQLITE_BUSY' ? 1 : 30);
}
