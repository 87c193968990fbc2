import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Stripe from 'stripe';
import { checkSignature, signatureHeader, verifySignature } from '../../server/index.js';

const SECRET = 'whsec_test_0123456789abcdef';
const BODY = '{"object":"event","id":"evt_1","type":"meal.created","created":"2026-11-22T12:00:00Z","webhook_delivery_id":"whdel_1","data":{"object":{}}}';
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const T = NOW / 1000;

describe('verifySignature (receiver side)', () => {
  test('accepts a header made by our signer, for a string or a Buffer body', () => {
    const header = signatureHeader(BODY, [SECRET], T);
    assert.equal(verifySignature(BODY, header, SECRET, { now: NOW }), true);
    assert.equal(verifySignature(Buffer.from(BODY), header, SECRET, { now: NOW }), true);
    assert.deepEqual(checkSignature(BODY, header, SECRET, { now: NOW }), { valid: true, timestamp: T });
  });

  test("accepts a header made by Stripe's SDK (an independent implementation of the scheme)", () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET, timestamp: T });
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifySignature(BODY, header, SECRET, { now: NOW }), true);
    assert.equal(signatureHeader(BODY, [SECRET], T), header, 'byte-identical to what Stripe computes');
  });

  test('rejects a wrong secret, a changed body and a changed timestamp', () => {
    const header = signatureHeader(BODY, [SECRET], T);
    assert.deepEqual(checkSignature(BODY, header, 'whsec_other_secret_000', { now: NOW }), { valid: false, reason: 'signature_mismatch', timestamp: T });
    assert.equal(verifySignature(BODY.replace('meal.created', 'meal.deleted'), header, SECRET, { now: NOW }), false);
    assert.equal(verifySignature(BODY + ' ', header, SECRET, { now: NOW }), false);
    assert.equal(verifySignature(BODY, header.replace(`t=${T}`, `t=${T + 1}`), SECRET, { now: NOW }), false);
    const flipped = header.replace(/v1=(.)/, (_m, c: string) => `v1=${c === 'a' ? 'b' : 'a'}`);
    assert.equal(verifySignature(BODY, flipped, SECRET, { now: NOW }), false);
  });

  test('rejects stale and future timestamps beyond the tolerance (300 s by default), both ways', () => {
    const at = (offsetSec: number) => signatureHeader(BODY, [SECRET], T + offsetSec);
    assert.equal(verifySignature(BODY, at(-300), SECRET, { now: NOW }), true, 'exactly 300 s old is still accepted');
    assert.equal(verifySignature(BODY, at(300), SECRET, { now: NOW }), true);
    assert.deepEqual(checkSignature(BODY, at(-301), SECRET, { now: NOW }), { valid: false, reason: 'timestamp_too_old', timestamp: T - 301 });
    assert.deepEqual(checkSignature(BODY, at(301), SECRET, { now: NOW }), { valid: false, reason: 'timestamp_in_future', timestamp: T + 301 });
    assert.equal(verifySignature(BODY, at(-3600), SECRET, { now: NOW }), false);
    assert.equal(verifySignature(BODY, at(-30), SECRET, { now: NOW, toleranceSec: 10 }), false);
    assert.equal(verifySignature(BODY, at(-30), SECRET, { now: NOW, toleranceSec: 60 }), true);
    // Without `now`, the real clock decides.
    assert.equal(verifySignature(BODY, signatureHeader(BODY, [SECRET], Math.floor(Date.now() / 1000)), SECRET), true);
    assert.equal(verifySignature(BODY, at(0), SECRET), false, 'a 2026 timestamp is not "now" for the real clock');
  });

  test('accepts any of several v1= values (rotation), and a receiver may hold several secrets', () => {
    const both = signatureHeader(BODY, ['new-secret-0123456789', 'old-secret-0123456789'], T);
    assert.match(both, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    assert.equal(verifySignature(BODY, both, 'new-secret-0123456789', { now: NOW }), true);
    assert.equal(verifySignature(BODY, both, 'old-secret-0123456789', { now: NOW }), true);
    assert.equal(verifySignature(BODY, both, 'neither-secret-01234567', { now: NOW }), false);
    const one = signatureHeader(BODY, ['new-secret-0123456789'], T);
    assert.equal(verifySignature(BODY, one, ['old-secret-0123456789', 'new-secret-0123456789'], { now: NOW }), true);
    const withJunk = `${one},v1=nothex,v1=${'0'.repeat(64)},v0=${'1'.repeat(64)}`;
    assert.equal(verifySignature(BODY, withJunk, 'new-secret-0123456789', { now: NOW }), true, 'junk and other schemes are ignored');
    assert.equal(verifySignature(BODY, ` t=${T} , v1=${one.split('v1=')[1]} `, 'new-secret-0123456789', { now: NOW }), true, 'spaces around parts');
  });

  test('says why a header is unusable', () => {
    const sig = signatureHeader(BODY, [SECRET], T).split(',')[1]!;
    const reason = (h: string | undefined | string[]) => {
      const r = checkSignature(BODY, h, SECRET, { now: NOW });
      return r.valid ? 'valid' : r.reason;
    };
    assert.equal(reason(undefined), 'missing_header');
    assert.equal(reason(''), 'missing_header');
    assert.equal(reason(['a', 'b']), 'missing_header');
    assert.equal(reason('garbage'), 'malformed_header');
    assert.equal(reason(sig), 'malformed_header', 'no timestamp');
    assert.equal(reason(`t=abc,${sig}`), 'malformed_header');
    assert.equal(reason(`t=${T},t=${T},${sig}`), 'malformed_header', 'two timestamps are ambiguous');
    assert.equal(reason(`t=${T}`), 'no_v1_signature');
    assert.equal(reason(`t=${T},v0=${'a'.repeat(64)}`), 'no_v1_signature');
    assert.equal(reason([`t=${T},${sig}`]), 'valid');
  });

  test('refuses parsed JSON and a missing secret loudly (programming errors)', () => {
    const header = signatureHeader(BODY, [SECRET], T);
    assert.throws(() => verifySignature(JSON.parse(BODY) as any, header, SECRET), TypeError);
    assert.throws(() => verifySignature(BODY, header, ''), TypeError);
    assert.throws(() => verifySignature(BODY, header, undefined as any), TypeError);
  });

  test('is exported by the package entry point and by chyme/webhooks/verify', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as any;
    assert.equal(pkg.exports['./webhooks/verify'], './build/server/webhooks/verify.js');
    const index = await import('../../server/index.js');
    assert.equal(typeof index.verifySignature, 'function');
  });
});
