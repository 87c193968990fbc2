import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

describe('sleep sessions', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('create, read, list and delete a session', async () => {
    const r = await t.request('POST', '/v1/sleep/sessions', {
      body: { start: '2026-11-21T22:30:00Z', end: '2026-11-22T06:15:00Z', efficiency: 0.91, awakenings: 2, source: 'watch' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.object, 'sleep.session');
    assert.match(r.body.id, /^sleep_/);
    assert.equal(r.body.date, '2026-11-22');
    assert.equal(r.body.duration_min, 465);
    assert.equal((await t.request('GET', `/v1/sleep/sessions/${r.body.id}`)).body.id, r.body.id);
    const list = await t.request('GET', '/v1/sleep/sessions?start_date=2026-11-22&end_date=2026-11-22');
    assert.deepEqual(list.body.data.map((s: any) => s.id), [r.body.id]);
    const del = await t.request('DELETE', `/v1/sleep/sessions/${r.body.id}`);
    assert.equal(del.body.deleted, true);
    assert.equal((await t.request('GET', `/v1/sleep/sessions/${r.body.id}`)).status, 404);
  });

  test('rejects backwards, over-long, future and overlapping sessions', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ start: '2026-11-20T06:00:00Z', end: '2026-11-19T22:00:00Z' }, 400, 'end'],
      [{ start: '2026-11-18T06:00:00Z', end: '2026-11-19T22:00:00Z' }, 400, 'end'],
      [{ start: '2026-11-22T11:00:00Z', end: '2026-11-22T19:00:00Z' }, 400, 'end'],
      [{ start: '2026-11-20T22:00:00Z', end: '2026-11-21T06:00:00Z', efficiency: 1.5 }, 400, 'efficiency'],
      [{ start: '2026-11-20T22:00:00Z' }, 400, 'end'],
    ];
    for (const [body, status, param] of cases) {
      const r = await t.request('POST', '/v1/sleep/sessions', { body });
      assert.equal(r.status, status, JSON.stringify(body));
      assert.equal(errorOf(r).param, param);
    }
    await t.request('POST', '/v1/sleep/sessions', { body: { start: '2026-11-19T22:00:00Z', end: '2026-11-20T06:00:00Z' } });
    const overlap = await t.request('POST', '/v1/sleep/sessions', { body: { start: '2026-11-20T05:00:00Z', end: '2026-11-20T08:00:00Z' } });
    assert.equal(overlap.status, 409);
    assert.equal(errorOf(overlap).code, 'sleep_overlap');
  });

  test('sleep scopes are enforced', async () => {
    const r = await t.request('GET', '/v1/sleep/sessions?start_date=2026-11-01&end_date=2026-11-30', { key: t.keyWith('nutrition:read') });
    assert.equal(r.status, 403);
    assert.match(errorOf(r).message, /sleep:read/);
  });
});

describe('export and import', () => {
  let source: TestService;
  let target: TestService;
  before(async () => {
    source = await startTestService();
    target = await startTestService({ timezone: 'UTC' });
  });
  after(async () => {
    await source.stop();
    await target.stop();
  });

  test('an export re-imports into an empty database exactly, and a second import skips everything', async () => {
    await source.request('PATCH', '/v1/settings', { body: { day_start: '03:00', units: 'imperial' } });
    for (let i = 0; i < 5; i++) {
      await source.request('POST', '/v1/nutrition/meals', {
        body: {
          timestamp: `2026-11-${17 + i}T07:30:00+01:00`,
          meal_type: 'breakfast',
          description: `=HYPERLINK("x"), day ${i}`,
          macros: { calories: 400 + i, protein_g: 20 },
          micros: { caffeine_mg: 95 },
          foods: [{ name: 'eggs, scrambled', calories: 200 }],
        },
      });
    }
    await source.request('POST', '/v1/sleep/sessions', { body: { start: '2026-11-21T22:00:00Z', end: '2026-11-22T06:00:00Z', efficiency: 0.9 } });
    const hook = await source.request('POST', '/v1/webhooks', {
      body: { url: 'http://127.0.0.1:9/hook', events: ['meal.created'], secret: 'a-secret-of-twenty-chars' },
    });
    assert.equal(hook.status, 201, hook.text);
    const exported = await source.request('GET', '/v1/export');
    assert.equal(exported.text.includes('a-secret-of-twenty-chars'), false, 'secrets are never exported');
    assert.deepEqual(exported.body.webhook_subscriptions.map((s: any) => s.id), [hook.body.id]);
    assert.equal(exported.status, 200);
    assert.equal(exported.body.format_version, 1);
    assert.match(exported.headers.get('content-disposition') ?? '', /attachment; filename="chyme-export-2026-11-22\.json"/);
    assert.equal(exported.body.meals.length, 5);

    const imported = await target.request('POST', '/v1/import', { body: exported.body });
    assert.equal(imported.status, 200, imported.text);
    assert.deepEqual(imported.body, {
      object: 'import_result',
      foods: { imported: 0, skipped: 0 },
      saved_meals: { imported: 0, skipped: 0 },
      meals: { imported: 5, skipped: 0 },
      sleep_sessions: { imported: 1, skipped: 0 },
      webhook_subscriptions: { imported: 1, skipped: 0 },
      settings: 'applied',
    });
    const restored = (await target.request('GET', `/v1/webhooks/${hook.body.id}`)).body;
    assert.equal(restored.url, 'http://127.0.0.1:9/hook');
    assert.equal(restored.status, 'disabled', 'an imported subscription waits for a new secret');
    assert.match(restored.disabled_reason, /secret/);

    const reexported = await target.request('GET', '/v1/export');
    assert.deepEqual(reexported.body.meals, exported.body.meals);
    assert.deepEqual(reexported.body.sleep_sessions, exported.body.sleep_sessions);
    assert.deepEqual(reexported.body.settings, exported.body.settings);

    const again = await target.request('POST', '/v1/import', { body: exported.body });
    assert.deepEqual(again.body.meals, { imported: 0, skipped: 5 });
    assert.equal(again.body.settings, 'kept');
  });

  test('an invalid record anywhere rejects the whole import and writes nothing', async () => {
    const fresh = await startTestService();
    try {
      const doc = {
        format: 'chyme.export',
        format_version: 1,
        meals: [
          { id: 'meal_good1', timestamp: '2026-11-20T08:00:00Z', meal_type: 'lunch', macros: { calories: 300 } },
          { id: 'meal_bad', timestamp: '2026-11-20T09:00:00Z', meal_type: 'elevenses', macros: { calories: 300 } },
        ],
      };
      const r = await fresh.request('POST', '/v1/import', { body: doc });
      assert.equal(r.status, 400);
      assert.equal(errorOf(r).param, 'meals.1.meal_type');
      const list = await fresh.request('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31');
      assert.equal(list.body.data.length, 0);
      const wrongFormat = await fresh.request('POST', '/v1/import', { body: { format: 'other', format_version: 1 } });
      assert.equal(errorOf(wrongFormat).param, 'format');
    } finally {
      await fresh.stop();
    }
  });

  test('imports larger than 64 KiB are accepted (up to the import limit)', async () => {
    const fresh = await startTestService();
    try {
      const meals = Array.from({ length: 800 }, (_, i) => ({
        id: `meal_bulk${i}`,
        timestamp: new Date(Date.UTC(2026, 0, 1) + i * 6 * 3600_000).toISOString(),
        meal_type: 'snack',
        description: 'a reasonably long description of a snack to make the body bigger',
        macros: { calories: 150 },
      }));
      const body = { format: 'chyme.export', format_version: 1, meals };
      assert.ok(JSON.stringify(body).length > 64 * 1024);
      const r = await fresh.request('POST', '/v1/import', { body });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.meals.imported, 800);
    } finally {
      await fresh.stop();
    }
  });

  test('meals.csv has a header, one row per meal, quoting, and no formula injection', async () => {
    const r = await source.request('GET', '/v1/export/meals.csv');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/csv/);
    const lines = r.text.trimEnd().split('\r\n');
    assert.equal(lines[0], 'id,day,timestamp,utc_offset_min,meal_type,description,calories,protein_g,carbs_g,fat_g,fiber_g,sodium_mg,caffeine_mg,foods,source,inferred_time');
    assert.equal(lines.length, 6);
    assert.match(lines[1]!, /,"'=HYPERLINK\(""x""\), day 0",400,20,,,,,95,eggs, scrambled: 200 kcal,manual,false$|"eggs, scrambled: 200 kcal",manual,false$/);
    assert.ok(lines.slice(1).every((l) => !/,=/.test(l)));
  });

  test('export needs the admin scope', async () => {
    const r = await source.request('GET', '/v1/export', { key: source.keyWith('nutrition:read') });
    assert.equal(r.status, 403);
  });
});
