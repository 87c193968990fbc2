import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

describe('webhook subscriptions: CRUD and validation', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => {
    await t.stop();
  });

  test('create returns 201 with the resource and a generated whsec_ secret, shown once', async () => {
    const res = await t.request('POST', '/v1/webhooks', {
      body: { url: 'http://192.168.1.20:8123/api/webhook/chyme-abc', events: ['meal.created', 'digestion.state_changed'] },
    });
    assert.equal(res.status, 201);
    const s = res.body;
    assert.equal(s.object, 'webhook_subscription');
    assert.match(s.id, /^whsub_[0-9A-Za-z]{20}$/);
    assert.equal(s.url, 'http://192.168.1.20:8123/api/webhook/chyme-abc');
    assert.deepEqual(s.events, ['meal.created', 'digestion.state_changed']);
    assert.equal(s.status, 'enabled');
    assert.equal(s.disabled_reason, null);
    assert.equal(s.disabled_at, null);
    assert.equal(s.previous_secret_expires_at, null);
    assert.equal(s.created_at, '2026-11-22T12:00:00Z');
    assert.match(s.secret, /^whsec_[0-9A-Za-z]{32}$/);

    const got = await t.request('GET', `/v1/webhooks/${s.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.secret, undefined, 'the secret is in the create response only');
    assert.equal(got.body.url, s.url);

    const list = await t.request('GET', '/v1/webhooks');
    assert.equal(list.body.object, 'list');
    assert.equal(list.body.has_more, false);
    assert.ok(list.body.data.some((x: any) => x.id === s.id && x.secret === undefined));
  });

  test('a given secret is kept; loopback, LAN, https and host names are accepted; duplicate events collapse', async () => {
    for (const url of [
      'http://127.0.0.1:9999/hook',
      'http://localhost/hook',
      'https://homeassistant.local:8123/api/webhook/x',
      'http://10.0.0.5/a?b=c',
      'http://[::1]:8080/x',
      'http://Hub.LAN:8123',
    ]) {
      const res = await t.request('POST', '/v1/webhooks', {
        body: { url, events: ['meal.created', 'meal.created', 'test.ping'], secret: 'my-own-secret-1234567' },
      });
      assert.equal(res.status, 201, `${url}: ${res.text}`);
      assert.equal(res.body.secret, 'my-own-secret-1234567');
      assert.equal(res.body.url, url, 'kept exactly as given');
      assert.deepEqual(res.body.events, ['meal.created', 'test.ping']);
      await t.request('DELETE', `/v1/webhooks/${res.body.id}`);
    }
  });

  test('validation errors name the parameter (CONTRACT §4)', async () => {
    const cases: Array<[unknown, number, string, string | undefined]> = [
      [{ events: ['meal.created'] }, 400, 'parameter_missing', 'url'],
      [{ url: 'http://127.0.0.1/x' }, 400, 'parameter_missing', 'events'],
      [{ url: 'ftp://127.0.0.1/x', events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: '/relative/path', events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: 'http://user:pass@127.0.0.1/x', events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: 'http://127.0.0.1/x#frag', events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: 'http://127.0.0.1/x y', events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: 42, events: ['meal.created'] }, 400, 'parameter_invalid', 'url'],
      [{ url: 'http://127.0.0.1/x', events: [] }, 400, 'parameter_invalid', 'events'],
      [{ url: 'http://127.0.0.1/x', events: 'meal.created' }, 400, 'parameter_invalid', 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created', 'meal.eaten'] }, 400, 'parameter_invalid', 'events.1'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created'], secret: 'short' }, 400, 'parameter_invalid', 'secret'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created'], secret: 'x'.repeat(257) }, 400, 'parameter_invalid', 'secret'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created'], secret: 'line\nbreak-in-the-secret' }, 400, 'parameter_invalid', 'secret'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created'], secret: 1234567890123456 }, 400, 'parameter_invalid', 'secret'],
      [{ url: 'http://127.0.0.1/x', events: ['meal.created'], description: 'x' }, 400, 'parameter_unknown', 'description'],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await t.request('POST', '/v1/webhooks', { body });
      assert.equal(res.status, status, `${JSON.stringify(body)} → ${res.text}`);
      const e = errorOf(res);
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(e.code, code, JSON.stringify(body));
      assert.equal(e.param, param, JSON.stringify(body));
      assert.ok(e.message.length > 10);
    }
    const credentials = errorOf(await t.request('POST', '/v1/webhooks', { body: { url: 'http://u:p@127.0.0.1/x', events: ['meal.created'] } }));
    assert.match(credentials.message, /credentials/);
    const badJson = await t.request('POST', '/v1/webhooks', { rawBody: '{"url":', headers: { 'content-type': 'application/json' } });
    assert.equal(errorOf(badJson).code, 'invalid_json');
  });

  test('PATCH changes url, events and status; pausing and resuming', async () => {
    const s = (await t.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:1/a', events: ['meal.created'] } })).body;
    t.clock.advance(60_000);
    const patched = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { url: 'http://127.0.0.1:2/b', events: ['meal.updated', 'meal.deleted'] } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.url, 'http://127.0.0.1:2/b');
    assert.deepEqual(patched.body.events, ['meal.updated', 'meal.deleted']);
    assert.equal(patched.body.updated_at, '2026-11-22T12:01:00Z');
    assert.equal(patched.body.secret, undefined);

    const paused = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { status: 'disabled' } });
    assert.equal(paused.body.status, 'disabled');
    assert.equal(paused.body.disabled_reason, null, 'paused by hand: no automatic reason');
    assert.equal(paused.body.disabled_at, '2026-11-22T12:01:00Z');
    const resumed = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { status: 'enabled' } });
    assert.equal(resumed.body.status, 'enabled');
    assert.equal(resumed.body.disabled_at, null);

    t.clock.advance(60_000);
    const noop = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { events: ['meal.updated', 'meal.deleted'] } });
    assert.equal(noop.status, 200);
    assert.equal(noop.body.updated_at, resumed.body.updated_at, 'a PATCH that changes nothing leaves updated_at alone');

    const bad = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { status: 'paused' } });
    assert.equal(errorOf(bad).param, 'status');
    const badUrl = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { url: 'mailto:x@y.z' } });
    assert.equal(errorOf(badUrl).param, 'url');
    const unknown = await t.request('PATCH', `/v1/webhooks/${s.id}`, { body: { id: 'whsub_x' } });
    assert.equal(errorOf(unknown).code, 'parameter_unknown');
  });

  test('DELETE removes it; unknown ids are 404 resource_missing', async () => {
    const s = (await t.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:1/a', events: ['meal.created'] } })).body;
    const del = await t.request('DELETE', `/v1/webhooks/${s.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { id: s.id, object: 'webhook_subscription', deleted: true });
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${s.id}`],
      ['PATCH', `/v1/webhooks/${s.id}`],
      ['DELETE', `/v1/webhooks/${s.id}`],
      ['POST', `/v1/webhooks/${s.id}/test`],
      ['GET', `/v1/webhooks/${s.id}/deliveries`],
      ['POST', `/v1/webhooks/${s.id}/deliveries/whdel_nope/redeliver`],
    ] as const) {
      const res = await t.request(method, path, method === 'PATCH' ? { body: {} } : {});
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(errorOf(res).code, 'resource_missing');
    }
  });

  test('scopes: webhooks:read lists, webhooks:write changes; others are 403; no key is 401', async () => {
    const reader = t.keyWith('webhooks:read');
    const writer = t.keyWith('webhooks:write');
    const other = t.keyWith('nutrition:read', 'digestion:read');
    assert.equal((await t.request('GET', '/v1/webhooks', { key: reader })).status, 200);
    const denied = await t.request('POST', '/v1/webhooks', { key: reader, body: { url: 'http://127.0.0.1/x', events: ['meal.created'] } });
    assert.equal(denied.status, 403);
    assert.equal(errorOf(denied).code, 'insufficient_scope');
    assert.match(errorOf(denied).message, /webhooks:write/);
    const created = await t.request('POST', '/v1/webhooks', { key: writer, body: { url: 'http://127.0.0.1/x', events: ['meal.created'] } });
    assert.equal(created.status, 201);
    assert.equal((await t.request('GET', '/v1/webhooks', { key: other })).status, 403);
    assert.equal((await t.request('GET', `/v1/webhooks/${created.body.id}/deliveries`, { key: writer })).status, 403);
    assert.equal((await t.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: reader })).status, 403);
    const anon = await t.request('GET', '/v1/webhooks', { key: null });
    assert.equal(anon.status, 401);
    assert.equal(errorOf(anon).code, 'missing_api_key');
    await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  test('Idempotency-Key replays a create instead of making a second subscription', async () => {
    const before = (await t.request('GET', '/v1/webhooks')).body.data.length;
    const body = { url: 'http://127.0.0.1:5/idem', events: ['meal.created'] };
    const a = await t.request('POST', '/v1/webhooks', { body, headers: { 'idempotency-key': 'wh-create-1' } });
    const b = await t.request('POST', '/v1/webhooks', { body, headers: { 'idempotency-key': 'wh-create-1' } });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.equal(b.body.id, a.body.id);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.equal((await t.request('GET', '/v1/webhooks')).body.data.length, before + 1);
    await t.request('DELETE', `/v1/webhooks/${a.body.id}`);
  });

  test('at most 50 subscriptions', async () => {
    const existing = (await t.request('GET', '/v1/webhooks')).body.data.length;
    for (let i = existing; i < 50; i++) {
      const res = await t.request('POST', '/v1/webhooks', { body: { url: `http://127.0.0.1:1/n${i}`, events: ['meal.created'] } });
      assert.equal(res.status, 201);
    }
    const over = await t.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:1/too-many', events: ['meal.created'] } });
    assert.equal(over.status, 400);
    assert.equal(errorOf(over).code, 'limit_exceeded');
    assert.match(errorOf(over).message, /50/);
    assert.equal((await t.request('GET', '/v1/webhooks')).body.data.length, 50);
  });

  test('the OpenAPI document lists the webhook routes and every payload', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    for (const path of ['/v1/webhooks', '/v1/webhooks/{id}', '/v1/webhooks/{id}/test', '/v1/webhooks/{id}/deliveries', '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', '/v1/events/stream']) {
      assert.ok(doc.paths[path], `missing path ${path}`);
    }
    assert.ok(doc.paths['/v1/webhooks'].post['x-required-scopes'].includes('webhooks:write'));
    for (const type of ['meal.created', 'meal.updated', 'meal.deleted', 'gut_score.created', 'overnight_score.created', 'digestion.state_changed', 'windows.updated', 'test.ping']) {
      const hook = doc.webhooks?.[type]?.post;
      assert.ok(hook, `missing webhook payload ${type}`);
      const params = hook.parameters.map((p: any) => p.name);
      assert.deepEqual(params, ['X-Service-Signature', 'X-Webhook-Delivery-Id', 'X-Webhook-Event']);
      assert.ok(hook.requestBody.content['application/json'].schema);
    }
    const text = JSON.stringify(doc);
    assert.ok(text.includes('webhook_delivery_id'));
  });
});
