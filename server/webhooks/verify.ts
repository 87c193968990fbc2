import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Receiver-side check of a Chyme webhook signature (spec "Signature"). Self-contained (node:crypto
 * only) so it can be imported alone as `chyme/webhooks/verify` or copied into a receiver.
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>[,v1=…]
 *
 * Pass the body exactly as received (bytes or the undecoded string), never re-serialised JSON.
 */

export const DEFAULT_TOLERANCE_SEC = 300;

export interface VerifyOptions {
  /** Largest accepted distance between the signed timestamp and now, either way (default 300 s). */
  toleranceSec?: number;
  /** The current time in epoch milliseconds (default Date.now()). */
  now?: number;
}

export type VerifyFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'no_v1_signature'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'signature_mismatch';

export type VerifyResult = { valid: true; timestamp: number } | { valid: false; reason: VerifyFailure; timestamp?: number };

const HEX_DIGEST = /^[0-9a-f]{64}$/;

function parseHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return undefined;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value.toLowerCase());
    }
    // Other schemes (a future v2) are ignored, so receivers keep working through an upgrade.
  }
  return timestamp === undefined ? undefined : { timestamp, signatures };
}

function digest(secret: string, timestamp: number, body: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
}

/**
 * Checks a delivery and says why it is rejected: a missing or malformed header, no v1 signature,
 * a timestamp more than `toleranceSec` in the past or the future, or no v1 value matching the
 * secret (any of `secret` when given several, e.g. during a rotation on the receiver's side).
 * Digests are compared in constant time.
 */
export function checkSignature(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): VerifyResult {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('verifySignature needs the raw request body (a string or Buffer), not parsed JSON');
  }
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError('verifySignature needs the webhook secret');
  }
  const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  if (typeof value !== 'string' || value.trim() === '') return { valid: false, reason: 'missing_header' };
  const parsed = parseHeader(value);
  if (!parsed) return { valid: false, reason: 'malformed_header' };
  const { timestamp, signatures } = parsed;
  if (signatures.length === 0) return { valid: false, reason: 'no_v1_signature', timestamp };

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  let matched = false;
  for (const s of secrets) {
    const expected = digest(s, timestamp, body);
    for (const candidate of signatures) {
      // Every candidate is compared in full (no early exit), so timing reveals nothing of the digest.
      const given = HEX_DIGEST.test(candidate) ? Buffer.from(candidate, 'hex') : Buffer.alloc(expected.length);
      const equal = timingSafeEqual(given, expected) && HEX_DIGEST.test(candidate);
      matched = matched || equal;
    }
  }

  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const nowSec = Math.floor((options.now ?? Date.now()) / 1000);
  if (timestamp < nowSec - toleranceSec) return { valid: false, reason: 'timestamp_too_old', timestamp };
  if (timestamp > nowSec + toleranceSec) return { valid: false, reason: 'timestamp_in_future', timestamp };
  if (!matched) return { valid: false, reason: 'signature_mismatch', timestamp };
  return { valid: true, timestamp };
}

/**
 * True when `header` (the X-Service-Signature value) is a valid signature of `rawBody` by
 * `secret`, made within `toleranceSec` (300 s) of now. See checkSignature for the reason of a false.
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): boolean {
  return checkSignature(rawBody, header, secret, options).valid;
}
