import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';
import { selfSignedCertificate, type SelfSignedCertificate } from '../helpers/tls.js';
import { createSubscription, MEAL, startReceiver, type Receiver } from './helpers.js';

/**
 * Issue #10 item 7: a real HTTPS receiver on 127.0.0.1 with a self-signed certificate made by
 * openssl in the test. Unpinned, the usual verification refuses it (and reports its fingerprint);
 * pinned by that fingerprint, deliveries go through; pinned to another certificate, they do not.
 */
describe('webhooks: HTTPS receivers with self-signed certificates, pinned by fingerprint', () => {
  let t: TestService;
  let rx: Receiver;
  let cert: SelfSignedCertificate;
  let other: SelfSignedCertificate;
  before(async () => {
    cert = selfSignedCertificate();
    other = selfSignedCertificate();
    t = await startTestService();
    rx = await startReceiver(undefined, { tls: cert });
  });
  after(async () => {
    await t.stop();
    await rx.close();
  });

  const ping = async (id: string) => {
    const res = await t.request('POST', `/v1/webhooks/${id}/test`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  test('unpinned: refused by the usual verification with a clear error naming the observed fingerprint; nothing is sent', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    assert.equal(sub.tls_certificate_sha256, null);
    assert.equal(sub.observed_certificate_sha256, null);

    const result = await ping(sub.id);
    assert.equal(result.delivered, false);
    assert.equal(result.status_code, null);
    assert.equal(result.certificate_sha256, cert.sha256, 'the fingerprint openssl prints for the receiver certificate');
    assert.match(result.error, /not trusted: it is self-signed \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    assert.ok(result.error.includes(cert.sha256), 'the error names the fingerprint to pin');
    assert.match(result.error, /tls_certificate_sha256/);
    assert.equal(rx.received.length, 0, 'no request reached the untrusted receiver');

    const got = await t.request('GET', `/v1/webhooks/${sub.id}`);
    assert.equal(got.body.observed_certificate_sha256, cert.sha256, 'first contact records the certificate for the app to show');
    assert.equal(got.body.observed_certificate_at, '2026-11-22T12:00:00Z');
    const log = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`);
    assert.equal(log.body.data[0].attempts[0].certificate_sha256, cert.sha256);
    await t.request('DELETE', `/v1/webhooks/${sub.id}`);
  });

  test('pinned (PATCH, any usual spelling): the test ping and event deliveries succeed and are signed as usual', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'] });
    assert.equal((await ping(sub.id)).delivered, false);

    // Pasted as 64 lower-case hex digits without colons: stored in the canonical form.
    const patched = await t.request('PATCH', `/v1/webhooks/${sub.id}`, {
      body: { tls_certificate_sha256: cert.sha256.replaceAll(':', '').toLowerCase() },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.tls_certificate_sha256, cert.sha256);

    const before = rx.received.length;
    const result = await ping(sub.id);
    assert.equal(result.delivered, true, result.error);
    assert.equal(result.status_code, 200);
    assert.equal(result.certificate_sha256, cert.sha256);
    assert.equal(rx.received.length, before + 1);
    assert.equal(rx.received.at(-1)!.json.type, 'test.ping');

    const meal = await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    assert.equal(meal.status, 201);
    const got = await rx.waitUntil((r) => r.some((x) => x.json?.type === 'meal.created' && x.json.data.object.id === meal.body.id));
    assert.match(String(got.at(-1)!.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    await t.service.webhooks.dispatcher.idle();
    const log = await t.request('GET', `/v1/webhooks/${sub.id}/deliveries`, { key: t.adminKey });
    const delivered = log.body.data.find((d: any) => d.event_type === 'meal.created');
    assert.equal(delivered.status, 'succeeded');
    assert.equal(delivered.attempts[0].certificate_sha256, cert.sha256);
    await t.request('DELETE', `/v1/webhooks/${sub.id}`);
  });

  test('a pin set at creation (openssl "sha256 Fingerprint=" output pasted whole) works from the first delivery', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'], tls_certificate_sha256: `sha256 Fingerprint=${cert.sha256}` });
    assert.equal(sub.tls_certificate_sha256, cert.sha256);
    assert.equal((await ping(sub.id)).delivered, true);
    await t.request('DELETE', `/v1/webhooks/${sub.id}`);
  });

  test('pinned to another certificate: refused, the error names both fingerprints, nothing is sent', async () => {
    const sub = await createSubscription(t, { url: rx.url, events: ['meal.created'], tls_certificate_sha256: other.sha256 });
    const before = rx.received.length;
    const result = await ping(sub.id);
    assert.equal(result.delivered, false);
    assert.equal(result.certificate_sha256, cert.sha256);
    assert.match(result.error, /is not the pinned one/);
    assert.ok(result.error.includes(cert.sha256) && result.error.includes(other.sha256));
    assert.equal(rx.received.length, before, 'no request reached the receiver');

    // Removing the pin (null) brings back the usual verification, which refuses a self-signed certificate.
    const cleared = await t.request('PATCH', `/v1/webhooks/${sub.id}`, { body: { tls_certificate_sha256: null } });
    assert.equal(cleared.body.tls_certificate_sha256, null);
    assert.match((await ping(sub.id)).error, /not trusted: it is self-signed/);
    assert.equal(rx.received.length, before);
    await t.request('DELETE', `/v1/webhooks/${sub.id}`);
  });

  test('a pin on an http URL changes nothing, and a malformed fingerprint is a 400 naming the param', async () => {
    const plain = await startReceiver();
    try {
      const sub = await createSubscription(t, { url: plain.url, events: ['meal.created'], tls_certificate_sha256: other.sha256 });
      const result = await ping(sub.id);
      assert.equal(result.delivered, true);
      assert.equal(result.certificate_sha256, null);
      await t.request('DELETE', `/v1/webhooks/${sub.id}`);
    } finally {
      await plain.close();
    }
    for (const bad of ['AB:CD', 'zz'.repeat(32), cert.sha256 + ':00', 42]) {
      const res = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['meal.created'], tls_certificate_sha256: bad } });
      assert.equal(res.status, 400, String(bad));
      assert.equal(errorOf(res).param, 'tls_certificate_sha256');
    }
  });
});
