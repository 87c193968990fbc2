import { createHash } from 'node:crypto';
import type { AppContext } from '../app-context.js';
import { findIdempotentResponse, saveIdempotentResponse, type StoredResponse } from '../db/idempotency.js';
import { asApiError, errors } from './errors.js';
import { HANDLED, type JsonResult } from './route.js';

/**
 * The Idempotency-Key rules of the REST API (Stripe's semantics), for both of its transports: the
 * HTTP pipeline (pipeline.ts) and the local one (local.ts, the phone's worker). A write sent with
 * a key is answered once; the same key again within the window replays that first answer (client
 * errors included), and the same key with another request is refused.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;

/** A write's key, held for its request: whose it is, the key, what the request was, and when. */
export interface HeldKey {
  principalId: string;
  key: string;
  requestHash: string;
  nowMs: number;
}

/** The Idempotency-Key of a write, checked (1 to 255 characters); undefined on a read or without one. */
export function idempotencyKeyOf(method: string, header: unknown): string | undefined {
  if (method === 'GET' || typeof header !== 'string') return undefined;
  if (header.length === 0 || header.length > 255) {
    throw errors.parameterInvalid('Idempotency-Key', 'The Idempotency-Key header must be 1 to 255 characters.');
  }
  return header;
}

/** What a key is held to: the method, the path and the body (canonical JSON, or a streamed body's digest). */
export function requestHashOf(method: string, path: string, body: string): string {
  return createHash('sha256').update(`${method} ${path}\n${body}`).digest('hex');
}

/** The answer recorded under this key within the window, if any. */
export function storedAnswer(app: AppContext, held: HeldKey): StoredResponse | undefined {
  return findIdempotentResponse(app.db, held.principalId, held.key, held.nowMs - IDEMPOTENCY_WINDOW_MS);
}

/** The first answer, to send again; idempotency_conflict when the key came with another request. */
export function replayOf(previous: StoredResponse, held: HeldKey): JsonResult {
  if (previous.requestHash !== held.requestHash) throw errors.idempotencyConflict();
  return { status: previous.status, body: previous.body, headers: { 'Idempotent-Replayed': 'true' } };
}

export function recordAnswer(app: AppContext, held: HeldKey, status: number, body: unknown): void {
  saveIdempotentResponse(app.db, held.principalId, held.key, held.requestHash, status, body, held.nowMs);
}

/**
 * A synchronous handler under its key: the look-up, the write and the record of its answer are one
 * transaction, so a crash can never leave a write whose retry with the same key applies it again,
 * and of two concurrent requests with one key only the first runs. Gives the handler's answer, or
 * the one recorded before (for replayOf, outside whatever records client errors: a conflict is not
 * an answer to record).
 */
export function runOnce(app: AppContext, held: HeldKey, handler: () => JsonResult | typeof HANDLED): { result: JsonResult | typeof HANDLED } | { previous: StoredResponse } {
  let previous: StoredResponse | undefined;
  const result = app.bus.write(() => {
    previous = storedAnswer(app, held);
    if (previous) return HANDLED;
    const r = handler();
    if (r !== HANDLED) recordAnswer(app, held, r.status ?? 200, r.body);
    return r;
  });
  return previous ? { previous } : { result };
}

/** Client errors are part of the request's answer: replay them too, as Stripe does (not 5xx or 429, which a retry may cure). */
export function recordClientError(app: AppContext, held: HeldKey, err: unknown, requestId: string): void {
  const apiError = asApiError(err);
  if (!apiError || apiError.status >= 500 || apiError.status === 429) return;
  try {
    recordAnswer(app, held, apiError.status, apiError.toBody(requestId));
  } catch (saveErr) {
    // The client still gets its error; only a replay of it is lost (a storage fault).
    app.log.warn('could not record an idempotent error response', { request_id: requestId, error: String(saveErr) });
  }
}
