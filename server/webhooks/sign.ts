import { createHmac } from 'node:crypto';

/**
 * The signing side of the webhook signature scheme (spec "Signature"):
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * During a secret rotation both secrets sign, so the header carries two v1= values (the new
 * secret's first); a receiver accepts the delivery when any of them matches its secret.
 */

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const SIGNATURE_SCHEME = 'v1';

/** Lowercase hex HMAC-SHA256 of `${timestampSec}.${body}` keyed by `secret`. */
export function computeSignature(secret: string, timestampSec: number, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestampSec}.`, 'utf8');
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return hmac.digest('hex');
}

/** The header value for a body signed at `timestampSec` with each of `secrets` (at least one). */
export function signatureHeader(body: string | Uint8Array, secrets: readonly string[], timestampSec: number): string {
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  if (!Number.isInteger(timestampSec) || timestampSec < 0) throw new Error('the timestamp must be whole unix seconds');
  return [`t=${timestampSec}`, ...secrets.map((s) => `${SIGNATURE_SCHEME}=${computeSignature(s, timestampSec, body)}`)].join(',');
}
