import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

describe('errors', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ rateLimit: { perSecond: 1, burst: 1000 } });
  });
  after(() => t.stop());

  test('unknown routes under /v1 are 404 resource_missing, with or without a key', async () => {
    for (const key of [undefined, null]) {
      const r = await t.request('GET', '/v1/nutrition/breakfasts', { key });
      assert.equal(r.status, 404);
      assert.equal(errorOf(r).code, 'resource_missing');
      assert.equal(errorOf(r).type, 'invalid_request_error');
    }
  });

  test('routes match case-sensitively and segment by segment; a trailing slash is the same path', async () => {
    // Each resource's router is mounted at its routes' common prefix: these pin what that must not change.
    for (const path of ['/V1/nutrition/meals', '/v1/Nutrition/meals', '/v1/nutrition/mealsx', '/v1//nutrition/meals', '/v1/webhooks/x/y']) {
      const r = await t.request('GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(errorOf(r).code, 'resource_missing', path);
    }
    assert.equal((await t.request('GET', '/v1/health/')).status, 200);
    assert.equal((await t.request('GET', '/v1/snapshot/')).status, 200);
    assert.equal((await t.request('GET', '/v1/nutrition/meals/meal_x/')).status, 404);
    const wrongMethod = await t.request('DELETE', '/v1/nutrition/meals/');
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET, POST');
  });

  test('a known path with the wrong method is 405 with an Allow header', async () => {
    const r = await t.request('PUT', '/v1/nutrition/meals');
    assert.equal(r.status, 405);
    assert.equal(errorOf(r).code, 'method_not_allowed');
    assert.equal(r.headers.get('allow'), 'GET, POST');
  });

  test('malformed JSON is 400 invalid_json', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', { rawBody: '{"timestamp": ', headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 400);
    assert.equal(errorOf(r).code, 'invalid_json');
  });

  test('a body that is not application/json is 415', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', { rawBody: 'timestamp=now', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(r.status, 415);
    assert.equal(errorOf(r).code, 'unsupported_media_type');
    const charset = await t.request('POST', '/v1/nutrition/meals', {
      rawBody: JSON.stringify({ timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(charset.status, 201);
  });

  test('a JSON body that is not an object is 400', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', { rawBody: '[1,2]', headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 400);
    assert.equal(errorOf(r).type, 'invalid_request_error');
  });

  test('bodies over 64 KiB are 413 body_too_large, declared or streamed', async () => {
    const big = JSON.stringify({ timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch', description: 'x'.repeat(70 * 1024) });
    const r = await t.request('POST', '/v1/nutrition/meals', { rawBody: big, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 413);
    assert.equal(errorOf(r).code, 'body_too_large');
    // Chunked upload without a Content-Length: the limit still applies while reading.
    const url = new URL(t.baseUrl);
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: '/v1/nutrition/meals', method: 'POST', headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 80; i++) req.write('x'.repeat(1024));
      req.end();
    });
    assert.equal(streamed.status, 413);
    assert.equal(JSON.parse(streamed.body).error.code, 'body_too_large');
  });

  test('an unexpected failure is a 500 internal_error with no stack trace, and the service keeps serving', async () => {
    t.service.app.db.exec('ALTER TABLE meals RENAME TO meals_away');
    try {
      const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30');
      assert.equal(r.status, 500);
      const e = errorOf(r);
      assert.equal(e.type, 'api_error');
      assert.equal(e.code, 'internal_error');
      assert.doesNotMatch(r.text, /at |sqlite|meals|\.ts|\.js/i);
      assert.equal(e.request_id, r.headers.get('request-id'));
    } finally {
      t.service.app.db.exec('ALTER TABLE meals_away RENAME TO meals');
    }
    assert.equal((await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30')).status, 200);
  });

  test('every response carries a Request-Id, and error bodies repeat it', async () => {
    const replies = [
      await t.request('GET', '/v1/health', { key: null }),
      await t.request('GET', '/v1/nutrition/meals', { key: null }),
      await t.request('GET', '/v1/nope'),
      await t.request('GET', '/'),
    ];
    const ids = replies.map((r) => r.headers.get('request-id'));
    for (const id of ids) assert.match(id ?? '', /^req_[0-9A-Za-z]{20}$/);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(errorOf(replies[1]!).request_id, ids[1]);
  });

  test('a flood of requests from one key is 429 rate_limited with Retry-After', async () => {
    const key = t.keyWith('nutrition:read');
    let limited;
    for (let i = 0; i < 1100 && !limited; i++) {
      const r = await t.request('GET', '/v1/nutrition/meals/meal_x', { key });
      if (r.status === 429) limited = r;
    }
    assert.ok(limited, 'expected a 429 within 1100 requests at a burst of 1000');
    assert.equal(errorOf(limited).type, 'rate_limit_error');
    assert.equal(errorOf(limited).code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Other keys are unaffected.
    assert.equal((await t.request('GET', '/v1/health')).status, 200);
  });
});
