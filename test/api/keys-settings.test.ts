import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

describe('API keys over the API', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('create returns the secret once; list and get never do; the database holds only a hash', async () => {
    const r = await t.request('POST', '/v1/api_keys', { body: { name: 'Home Assistant', scopes: ['digestion:read', 'nutrition:read'] } });
    assert.equal(r.status, 201);
    assert.equal(r.body.object, 'api_key');
    assert.match(r.body.id, /^key_/);
    assert.match(r.body.secret, /^chy_[0-9A-Za-z]{32,}$/);
    assert.equal(r.body.prefix, r.body.secret.slice(0, 10));
    assert.deepEqual(r.body.scopes, ['digestion:read', 'nutrition:read']);
    assert.equal(r.body.last_used_at, null);

    const list = await t.request('GET', '/v1/api_keys');
    const listed = list.body.data.find((k: any) => k.id === r.body.id);
    assert.ok(listed);
    assert.equal(listed.secret, undefined);
    assert.equal(list.text.includes(r.body.secret), false);

    t.service.app.db.pragma('wal_checkpoint(TRUNCATE)');
    const file = readFileSync(t.dbPath);
    assert.equal(file.includes(Buffer.from(r.body.secret)), false, 'the secret must not be stored');

    await t.request('GET', '/v1/settings', { key: r.body.secret });
    const used = (await t.request('GET', '/v1/api_keys')).body.data.find((k: any) => k.id === r.body.id);
    assert.equal(used.last_used_at, '2026-11-22T12:00:00Z');
  });

  test('create validates name and scopes', async () => {
    const cases: Array<[unknown, string]> = [
      [{ scopes: ['admin'] }, 'name'],
      [{ name: '', scopes: ['admin'] }, 'name'],
      [{ name: 'x' }, 'scopes'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['root'] }, 'scopes.0'],
    ];
    for (const [body, param] of cases) {
      const r = await t.request('POST', '/v1/api_keys', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(errorOf(r).param, param);
    }
  });

  test('revoking an unknown key is 404', async () => {
    const r = await t.request('DELETE', '/v1/api_keys/key_nope');
    assert.equal(r.status, 404);
  });
});

describe('settings', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('GET works with any valid key and shows the defaults', async () => {
    const r = await t.request('GET', '/v1/settings', { key: t.keyWith('nutrition:read') });
    assert.equal(r.status, 200);
    assert.deepEqual(
      { ...r.body, updated_at: undefined, generated_at: undefined },
      { object: 'settings', timezone: 'Europe/Berlin', day_start: '00:00', units: 'metric', updated_at: undefined, generated_at: undefined },
    );
  });

  test('GET and PATCH carry the service’s clock to the millisecond (a client aligns its "today" with it)', async () => {
    const was = t.clock.now();
    try {
      t.clock.set(Date.parse('2026-11-22T23:59:30.250Z'));
      const got = await t.request('GET', '/v1/settings');
      assert.equal(got.body.generated_at, '2026-11-22T23:59:30.250Z');
      t.clock.advance(1);
      const patched = await t.request('PATCH', '/v1/settings', { body: { units: 'metric' } });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.generated_at, '2026-11-22T23:59:30.251Z');
    } finally {
      t.clock.set(was);
    }
  });

  test('PATCH validates time zone, day start and units', async () => {
    for (const [body, param] of [
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ day_start: '25:00' }, 'day_start'],
      [{ day_start: '4:00' }, 'day_start'],
      [{ units: 'furlongs' }, 'units'],
    ] as const) {
      const r = await t.request('PATCH', '/v1/settings', { body });
      assert.equal(r.status, 400);
      assert.equal(errorOf(r).param, param);
    }
  });

  test('a change announces settings.updated with the old values; a PATCH that changes nothing announces nothing', async () => {
    const seen: any[] = [];
    const off = t.service.app.bus.subscribe((e) => e.type === 'settings.updated' && seen.push(e.data));
    await t.request('PATCH', '/v1/settings', { body: { units: 'imperial' } });
    await t.request('PATCH', '/v1/settings', { body: { units: 'imperial' } });
    await t.request('PATCH', '/v1/settings', { body: { units: 'metric' } });
    off();
    assert.equal(seen.length, 2);
    assert.equal(seen[0].object.units, 'imperial');
    assert.deepEqual(seen[0].previous_attributes, { units: 'metric' });
  });

  test('changing day_start re-derives meal days; meal instants never change', async () => {
    // 02:30 Berlin on 22 Nov: day 22 with day_start 00:00, day 21 with 04:00.
    const meal = (await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T01:30:00Z', meal_type: 'snack' } })).body;
    assert.equal(meal.day, '2026-11-22');
    const r = await t.request('PATCH', '/v1/settings', { body: { day_start: '04:00' } });
    assert.equal(r.body.day_start, '04:00');
    const after = (await t.request('GET', `/v1/nutrition/meals/${meal.id}`)).body;
    assert.equal(after.day, '2026-11-21');
    assert.equal(after.timestamp, meal.timestamp);
    await t.request('PATCH', '/v1/settings', { body: { day_start: '00:00' } });
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${meal.id}`)).body.day, '2026-11-22');
  });
});

describe('the desktop renderer key', () => {
  test('has every scope, is not listed, and each launch revokes the previous one', async () => {
    const t = await startTestService();
    try {
      const first = t.service.createRendererKey();
      assert.equal((await t.request('GET', '/v1/api_keys', { key: first })).status, 200, 'admin scope');
      assert.equal((await t.request('GET', '/v1/api_keys')).body.data.some((k: any) => k.name === 'Desktop app'), false);
      const second = t.service.createRendererKey();
      assert.equal((await t.request('GET', '/v1/settings', { key: first })).status, 401);
      assert.equal((await t.request('GET', '/v1/settings', { key: second })).status, 200);
    } finally {
      await t.stop();
    }
  });
});
