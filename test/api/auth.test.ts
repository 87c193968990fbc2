import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { listApiKeys, revokeApiKey } from '../../server/db/api-keys.js';
import { openDatabase } from '../../server/db/connection.js';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

/** A raw request with full control of the Host header (fetch does not allow setting it). */
function rawGet(baseUrl: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: headers['x-method'] ?? 'GET', headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('authentication and scopes', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('no key is 401 missing_api_key with a WWW-Authenticate header', async () => {
    const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-02', { key: null });
    assert.equal(r.status, 401);
    assert.equal(errorOf(r).type, 'authentication_error');
    assert.equal(errorOf(r).code, 'missing_api_key');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  test('a wrong, malformed or revoked key is 401 invalid_api_key', async () => {
    for (const header of ['Bearer chy_notarealkey', 'Basic dXNlcjpwYXNz', 'Bearer', `Bearer ${t.adminKey} extra`]) {
      const r = await t.request('GET', '/v1/settings', { headers: { authorization: header }, key: null });
      assert.equal(r.status, 401, header);
      assert.equal(errorOf(r).code, 'invalid_api_key');
    }
    const key = t.keyWith('nutrition:read');
    const created = await t.request('POST', '/v1/api_keys', { body: { name: 'temp', scopes: ['nutrition:read'] } });
    assert.equal((await t.request('GET', '/v1/settings', { key: created.body.secret })).status, 200);
    await t.request('DELETE', `/v1/api_keys/${created.body.id}`);
    const r = await t.request('GET', '/v1/settings', { key: created.body.secret });
    assert.equal(r.status, 401);
    assert.equal(errorOf(r).code, 'invalid_api_key');
    assert.equal((await t.request('GET', '/v1/settings', { key })).status, 200);
  });

  test('a key revoked by another process (the CLI) stops working at once', async () => {
    const key = t.keyWith('nutrition:read');
    assert.equal((await t.request('GET', '/v1/settings', { key })).status, 200, 'known, and remembered');
    const other = openDatabase(t.dbPath);
    try {
      const id = listApiKeys(other).find((k) => k.prefix === key.slice(0, 10))!.id;
      assert.ok(revokeApiKey(other, id, Date.now()));
    } finally {
      other.close();
    }
    assert.equal((await t.request('GET', '/v1/settings', { key })).status, 401);
  });

  test('a key without the scope is 403 insufficient_scope naming the scope', async () => {
    const readOnly = t.keyWith('nutrition:read');
    const cases: Array<[string, string, string, unknown?]> = [
      ['POST', '/v1/nutrition/meals', 'nutrition:write', { timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch' }],
      ['GET', '/v1/api_keys', 'admin'],
      ['PATCH', '/v1/settings', 'admin', { units: 'imperial' }],
    ];
    for (const [method, path, scope, body] of cases) {
      const r = await t.request(method, path, { key: readOnly, ...(body ? { body } : {}) });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(errorOf(r).type, 'permission_error');
      assert.equal(errorOf(r).code, 'insufficient_scope');
      assert.match(errorOf(r).message, new RegExp(scope));
    }
    const writeOnly = t.keyWith('nutrition:write');
    const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-02', { key: writeOnly });
    assert.equal(r.status, 403);
    assert.match(errorOf(r).message, /nutrition:read/);
  });

  test('scope checks come before parameter validation, auth before both', async () => {
    const r = await t.request('GET', '/v1/nutrition/meals', { key: t.keyWith('digestion:read') });
    assert.equal(r.status, 403);
    const r2 = await t.request('GET', '/v1/nutrition/meals', { key: null });
    assert.equal(r2.status, 401);
  });

  test('health and openapi need no key', async () => {
    assert.equal((await t.request('GET', '/v1/health', { key: null })).status, 200);
    assert.equal((await t.request('GET', '/v1/openapi.json', { key: null })).status, 200);
  });

  test('only loopback Host names are served (DNS rebinding defence)', async () => {
    const port = new URL(t.baseUrl).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`]) {
      const r = await rawGet(t.baseUrl, '/v1/health', { host });
      assert.equal(r.status, 200, host);
    }
    for (const host of [`evil.example:${port}`, `192.168.1.20:${port}`, 'localhost.evil.example', `127.0.0.1.nip.io:${port}`]) {
      const r = await rawGet(t.baseUrl, '/v1/health', { host });
      assert.equal(r.status, 403, host);
      assert.equal(r.body.error.code, 'host_not_allowed');
    }
  });

  test('foreign browser origins are refused and no CORS headers are ever sent', async () => {
    const foreign = await t.request('GET', '/v1/settings', { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    assert.equal(errorOf(foreign).code, 'origin_not_allowed');
    const same = await t.request('GET', '/v1/settings', { headers: { origin: t.baseUrl } });
    assert.equal(same.status, 200);
    for (const r of [foreign, same]) assert.equal(r.headers.get('access-control-allow-origin'), null);
    const preflight = await t.request('OPTIONS', '/v1/nutrition/meals', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });
});

describe('browser mode session', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('the one-time App token becomes an HttpOnly cookie, and works once', async () => {
    const launch = new URL(t.service.createLaunchUrl());
    const first = await fetch(launch, { redirect: 'manual' });
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), '/');
    const cookie = first.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^chyme_session=[0-9A-Za-z]{40};/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const session = cookie.split(';')[0]!;

    const read = await t.request('GET', '/v1/settings', { key: null, headers: { cookie: session } });
    assert.equal(read.status, 200);

    const again = await fetch(launch, { redirect: 'manual' });
    assert.equal(again.status, 302);
    assert.equal(again.headers.get('set-cookie'), null, 'a used token must not open a second session');
  });

  test('cookie-authenticated writes must come from our own origin', async () => {
    const launch = await fetch(t.service.createLaunchUrl(), { redirect: 'manual' });
    const session = (launch.headers.get('set-cookie') ?? '').split(';')[0]!;
    const body = { timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch' };
    const noOrigin = await t.request('POST', '/v1/nutrition/meals', { key: null, body, headers: { cookie: session } });
    assert.equal(noOrigin.status, 403);
    const sameOrigin = await t.request('POST', '/v1/nutrition/meals', { key: null, body, headers: { cookie: session, origin: t.baseUrl } });
    assert.equal(sameOrigin.status, 201);
  });

  test('a made-up session cookie is 401', async () => {
    const r = await t.request('GET', '/v1/settings', { key: null, headers: { cookie: 'chyme_session=forged' } });
    assert.equal(r.status, 401);
  });
});
