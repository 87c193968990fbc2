import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, TEST_NOW, type TestService } from '../helpers/service.js';

const breakfast = {
  timestamp: '2026-11-22T08:30:00+01:00',
  meal_type: 'breakfast',
  description: 'Oats with milk',
  macros: { calories: 420, protein_g: 15, carbs_g: 60, fat_g: 10 },
  micros: { sodium_mg: 120, caffeine_mg: 80 },
  foods: [
    { name: 'oats', calories: 300 },
    { name: 'milk', calories: 120 },
  ],
};

describe('meals API', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('POST creates a meal with every field of the spec, with the spec types', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', { body: breakfast });
    assert.equal(r.status, 201);
    const m = r.body;
    assert.equal(m.object, 'nutrition.meal');
    assert.match(m.id, /^meal_[0-9A-Za-z]{20}$/);
    assert.equal(m.day, '2026-11-22');
    assert.equal(m.timestamp, '2026-11-22T07:30:00Z');
    assert.equal(m.meal_type, 'breakfast');
    assert.equal(m.description, 'Oats with milk');
    assert.deepEqual(m.macros, { calories: 420, protein_g: 15, carbs_g: 60, fat_g: 10, fiber_g: null });
    assert.deepEqual(m.micros, { sodium_mg: 120, caffeine_mg: 80 });
    assert.deepEqual(m.foods, breakfast.foods);
    assert.equal(m.utc_offset_min, 60);
    const got = await t.request('GET', `/v1/nutrition/meals/${m.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, m);
  });

  test('without macros, calories are the sum of the foods; unknown macros read 0 and caffeine null', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-21T12:00:00Z', meal_type: 'lunch', foods: [{ name: 'soup', calories: 250.5 }, { name: 'bread', calories: 150 }] },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.macros.calories, 400.5);
    assert.equal(r.body.macros.protein_g, 0);
    assert.equal(r.body.micros.caffeine_mg, null);
    assert.equal(r.body.micros.sodium_mg, 0);
    assert.equal(r.body.description, '');
  });

  test('calories come from macros (4/4/9) when neither calories nor foods are given', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-21T13:00:00Z', meal_type: 'snack', macros: { protein_g: 10, carbs_g: 20, fat_g: 5 } },
    });
    assert.equal(r.body.macros.calories, 4 * 10 + 4 * 20 + 9 * 5);
  });

  test('a meal whose foods add up past 10000 kcal is refused naming macros.calories', async () => {
    const foods = Array.from({ length: 3 }, (_, i) => ({ name: `cake ${i}`, calories: 4000 }));
    const r = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-21T13:00:00Z', meal_type: 'snack', foods } });
    assert.equal(r.status, 400);
    assert.equal(errorOf(r).param, 'macros.calories');
  });

  test('day is derived in the user time zone, across the DST change, and honours an explicit offset', async () => {
    // Berlin leaves summer time on 2026-10-25 at 03:00 local (01:00 UTC).
    const cases: Array<[string, string]> = [
      ['2026-10-24T22:30:00Z', '2026-10-25'], // 00:30 CEST
      ['2026-10-25T22:30:00Z', '2026-10-25'], // 23:30 CET
      ['2026-10-25T23:30:00Z', '2026-10-26'], // 00:30 CET
      ['2026-11-21T23:30:00-08:00', '2026-11-21'], // eaten in California: that day, whatever Berlin says
    ];
    for (const [timestamp, day] of cases) {
      const r = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp, meal_type: 'snack', macros: { calories: 100 } } });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.day, day, timestamp);
    }
  });

  test('PATCH changes only the fields sent and merges macros field by field', async () => {
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: breakfast })).body;
    const r = await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, {
      body: { description: 'Oats, berries', macros: { protein_g: 20, fat_g: null }, micros: { caffeine_mg: null } },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.description, 'Oats, berries');
    assert.deepEqual(r.body.macros, { calories: 420, protein_g: 20, carbs_g: 60, fat_g: 0, fiber_g: null });
    assert.equal(r.body.micros.caffeine_mg, null);
    assert.equal(r.body.micros.sodium_mg, 120);
    assert.equal(r.body.timestamp, created.timestamp);
    assert.equal(r.body.created_at, created.created_at);
  });

  test('PATCH of the foods moves calories that were their sum', async () => {
    const created = (
      await t.request('POST', '/v1/nutrition/meals', {
        body: { timestamp: '2026-11-20T18:00:00Z', meal_type: 'dinner', foods: [{ name: 'rice', calories: 200 }] },
      })
    ).body;
    const r = await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, {
      body: { foods: [{ name: 'rice', calories: 200 }, { name: 'curry', calories: 350 }] },
    });
    assert.equal(r.body.macros.calories, 550);
  });

  test('PATCH moving the timestamp re-derives the day', async () => {
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: breakfast })).body;
    const r = await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, { body: { timestamp: '2026-11-19T07:00:00Z' } });
    assert.equal(r.body.day, '2026-11-19');
  });

  test('DELETE removes a meal; a second DELETE and a GET are 404', async () => {
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: breakfast })).body;
    const del = await t.request('DELETE', `/v1/nutrition/meals/${created.id}`);
    assert.deepEqual(del.body, { id: created.id, object: 'nutrition.meal', deleted: true });
    assert.equal((await t.request('DELETE', `/v1/nutrition/meals/${created.id}`)).status, 404);
    const get = await t.request('GET', `/v1/nutrition/meals/${created.id}`);
    assert.equal(get.status, 404);
    assert.equal(errorOf(get).code, 'resource_missing');
  });

  test('PATCH and GET of an unknown meal are 404 resource_missing', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const r = await t.request(method, '/v1/nutrition/meals/meal_doesnotexist', method === 'PATCH' ? { body: { description: 'x' } } : {});
      assert.equal(r.status, 404, method);
      assert.equal(errorOf(r).code, 'resource_missing');
    }
  });

  test('meal writes announce meal.created, meal.updated (with previous attributes) and meal.deleted', async () => {
    const seen: Array<{ type: string; data: any }> = [];
    const unsubscribe = t.service.app.bus.subscribe((e) => seen.push({ type: e.type, data: e.data }));
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: breakfast })).body;
    await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, { body: { meal_type: 'snack' } });
    await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, { body: { meal_type: 'snack' } }); // no change, no event
    await t.request('DELETE', `/v1/nutrition/meals/${created.id}`);
    unsubscribe();
    const mealEvents = seen.filter((e) => e.type.startsWith('meal.'));
    assert.deepEqual(
      mealEvents.map((e) => e.type),
      ['meal.created', 'meal.updated', 'meal.deleted'],
    );
    assert.deepEqual(mealEvents[1]!.data.previous_attributes, { meal_type: 'breakfast' });
    assert.equal(mealEvents[2]!.data.object.deleted, true);
  });
});

describe('meals listing', () => {
  let t: TestService;
  const ids: string[] = [];
  before(async () => {
    t = await startTestService();
    // 300 meals over 30 days, several sharing a timestamp so the id tiebreak is exercised.
    for (let i = 0; i < 300; i++) {
      const ts = new Date(TEST_NOW - 3600_000 - Math.floor(i / 3) * 7 * 3600_000).toISOString();
      const r = await t.request('POST', '/v1/nutrition/meals', {
        body: { timestamp: ts, meal_type: ['breakfast', 'lunch', 'dinner', 'snack'][i % 4], macros: { calories: 100 + i } },
      });
      assert.equal(r.status, 201);
      ids.push(r.body.id);
    }
  });
  after(() => t.stop());

  async function walk(query: string, limit: number): Promise<any[]> {
    const seen: any[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const r = await t.request('GET', `/v1/nutrition/meals?${query}&limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.object, 'list');
      assert.ok(r.body.data.length <= limit);
      seen.push(...r.body.data);
      if (!r.body.has_more) return seen;
      cursor = r.body.data.at(-1).id;
    }
    throw new Error('pagination did not end');
  }

  const ordered = (meals: any[]) =>
    meals.every((m, i) => i === 0 || m.timestamp < meals[i - 1].timestamp || (m.timestamp === meals[i - 1].timestamp && m.id < meals[i - 1].id));

  test('walking every page returns each meal once, newest first, with no gaps', async () => {
    for (const limit of [1, 7, 50, 100]) {
      const all = await walk('start_date=2026-01-01&end_date=2026-12-31', limit);
      assert.equal(all.length, 300, `limit ${limit}`);
      assert.equal(new Set(all.map((m) => m.id)).size, 300);
      assert.deepEqual(new Set(all.map((m) => m.id)), new Set(ids));
      assert.ok(ordered(all), `order at limit ${limit}`);
    }
  });

  test('limit defaults to 50 and has_more reports a next page', async () => {
    const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31');
    assert.equal(r.body.data.length, 50);
    assert.equal(r.body.has_more, true);
  });

  test('the date range is inclusive and by user day', async () => {
    const all = await walk('start_date=2026-11-20&end_date=2026-11-21', 100);
    assert.ok(all.length > 0);
    assert.ok(all.every((m) => m.day >= '2026-11-20' && m.day <= '2026-11-21'));
    const every = await walk('start_date=2026-01-01&end_date=2026-12-31', 100);
    assert.equal(all.length, every.filter((m) => m.day >= '2026-11-20' && m.day <= '2026-11-21').length);
  });

  test('meal_type filters, and pages through the filter', async () => {
    const lunches = await walk('start_date=2026-01-01&end_date=2026-12-31&meal_type=lunch', 9);
    assert.equal(lunches.length, 75);
    assert.ok(lunches.every((m) => m.meal_type === 'lunch'));
  });

  test('paging survives an edit of the cursor item and a deletion ahead of it', async () => {
    const first = await t.request('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31&limit=10');
    const cursor = first.body.data.at(-1);
    await t.request('PATCH', `/v1/nutrition/meals/${cursor.id}`, { body: { description: 'edited' } });
    const next = await t.request('GET', `/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31&limit=10&starting_after=${cursor.id}`);
    assert.equal(next.status, 200);
    const firstIds = new Set(first.body.data.map((m: any) => m.id));
    assert.ok(next.body.data.every((m: any) => !firstIds.has(m.id)));
    assert.ok(next.body.data[0].timestamp <= cursor.timestamp);
  });

  test('an unknown cursor is 400 invalid_cursor naming starting_after', async () => {
    const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31&starting_after=meal_nope');
    assert.equal(r.status, 400);
    const e = errorOf(r);
    assert.equal(e.code, 'invalid_cursor');
    assert.equal(e.param, 'starting_after');
  });

  test('malformed values of every query parameter are 400s naming the parameter', async () => {
    const base = { start_date: '2026-11-01', end_date: '2026-11-30' };
    const cases: Array<[Record<string, string | undefined>, string, string]> = [
      [{ ...base, start_date: undefined }, 'start_date', 'parameter_missing'],
      [{ ...base, end_date: undefined }, 'end_date', 'parameter_missing'],
      [{ ...base, start_date: '2026-13-01' }, 'start_date', 'parameter_invalid'],
      [{ ...base, start_date: '2026-02-30' }, 'start_date', 'parameter_invalid'],
      [{ ...base, start_date: '22-11-2026' }, 'start_date', 'parameter_invalid'],
      [{ ...base, end_date: 'yesterday' }, 'end_date', 'parameter_invalid'],
      [{ ...base, end_date: '2026-10-01' }, 'end_date', 'parameter_invalid'],
      [{ ...base, limit: '0' }, 'limit', 'parameter_invalid'],
      [{ ...base, limit: '101' }, 'limit', 'parameter_invalid'],
      [{ ...base, limit: '2.5' }, 'limit', 'parameter_invalid'],
      [{ ...base, limit: 'ten' }, 'limit', 'parameter_invalid'],
      [{ ...base, limit: '' }, 'limit', 'parameter_invalid'],
      [{ ...base, meal_type: 'brunch' }, 'meal_type', 'parameter_invalid'],
      [{ ...base, starting_after: 'x'.repeat(65) }, 'starting_after', 'parameter_invalid'],
    ];
    for (const [query, param, code] of cases) {
      const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][]);
      const r = await t.request('GET', `/v1/nutrition/meals?${qs}`);
      assert.equal(r.status, 400, `${qs}`);
      const e = errorOf(r);
      assert.equal(e.param, param, `${qs}`);
      assert.equal(e.code, code, `${qs}`);
      assert.equal(e.type, 'invalid_request_error');
    }
  });

  test('unknown query parameters are ignored', async () => {
    const r = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30&limit=2&colour=blue');
    assert.equal(r.status, 200);
    assert.equal(r.body.data.length, 2);
  });
});

describe('meal body validation', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const valid = { timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch' };
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['missing timestamp', { meal_type: 'lunch' }, 'timestamp', 'parameter_missing'],
    ['missing meal_type', { timestamp: valid.timestamp }, 'meal_type', 'parameter_missing'],
    ['timestamp without zone', { ...valid, timestamp: '2026-11-22T08:00:00' }, 'timestamp', 'parameter_invalid'],
    ['timestamp not a date', { ...valid, timestamp: '2026-02-31T08:00:00Z' }, 'timestamp', 'parameter_invalid'],
    ['timestamp far future', { ...valid, timestamp: '2027-01-01T08:00:00Z' }, 'timestamp', 'parameter_invalid'],
    ['timestamp as number', { ...valid, timestamp: 1763800000 }, 'timestamp', 'parameter_invalid'],
    ['bad meal_type', { ...valid, meal_type: 'supper' }, 'meal_type', 'parameter_invalid'],
    ['negative calories', { ...valid, macros: { calories: -1 } }, 'macros.calories', 'parameter_invalid'],
    ['too many calories', { ...valid, macros: { calories: 10001 } }, 'macros.calories', 'parameter_invalid'],
    ['calories as string', { ...valid, macros: { calories: '500' } }, 'macros.calories', 'parameter_invalid'],
    ['too much protein', { ...valid, macros: { protein_g: 2001 } }, 'macros.protein_g', 'parameter_invalid'],
    ['too much fibre', { ...valid, macros: { fiber_g: 2001 } }, 'macros.fiber_g', 'parameter_invalid'],
    ['too much sodium', { ...valid, micros: { sodium_mg: 50001 } }, 'micros.sodium_mg', 'parameter_invalid'],
    ['too much caffeine', { ...valid, micros: { caffeine_mg: 2001 } }, 'micros.caffeine_mg', 'parameter_invalid'],
    ['unknown micro', { ...valid, micros: { iron_mg: 3 } }, 'micros.iron_mg', 'parameter_unknown'],
    ['unknown top-level field', { ...valid, notes: 'x' }, 'notes', 'parameter_unknown'],
    ['description too long', { ...valid, description: 'x'.repeat(2001) }, 'description', 'parameter_invalid'],
    ['foods not an array', { ...valid, foods: { name: 'x' } }, 'foods', 'parameter_invalid'],
    ['food without name', { ...valid, foods: [{ calories: 3 }] }, 'foods.0.name', 'parameter_missing'],
    ['food with empty name', { ...valid, foods: [{ name: ' ', calories: 3 }] }, 'foods.0.name', 'parameter_invalid'],
    ['food calories negative', { ...valid, foods: [{ name: 'a', calories: -3 }] }, 'foods.0.calories', 'parameter_invalid'],
    ['101 foods', { ...valid, foods: Array.from({ length: 101 }, () => ({ name: 'a', calories: 1 })) }, 'foods', 'parameter_invalid'],
  ];
  for (const [name, body, param, code] of cases) {
    test(`POST ${name} → 400 ${code} on ${param}`, async () => {
      const r = await t.request('POST', '/v1/nutrition/meals', { body });
      assert.equal(r.status, 400, r.text);
      const e = errorOf(r);
      assert.equal(e.param, param);
      assert.equal(e.code, code);
    });
  }

  test('nothing is stored by a rejected request', async () => {
    await t.request('POST', '/v1/nutrition/meals', { body: { ...valid, macros: { calories: -5 } } });
    const list = await t.request('GET', '/v1/nutrition/meals?start_date=2000-01-01&end_date=2030-01-01');
    assert.equal(list.body.data.length, 0);
  });

  test('PATCH validates the same way and rejects null for a required field', async () => {
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: valid })).body;
    const r1 = await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, { body: { meal_type: null } });
    assert.equal(errorOf(r1).param, 'meal_type');
    const r2 = await t.request('PATCH', `/v1/nutrition/meals/${created.id}`, { body: { macros: { calories: 20000 } } });
    assert.equal(errorOf(r2).param, 'macros.calories');
  });
});

describe('idempotency', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('the same key and body replay the first response without a second meal', async () => {
    const headers = { 'Idempotency-Key': 'log-breakfast-1' };
    const a = await t.request('POST', '/v1/nutrition/meals', { body: breakfast, headers });
    const b = await t.request('POST', '/v1/nutrition/meals', { body: { ...breakfast }, headers });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(b.body, a.body);
    const list = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-22&end_date=2026-11-22');
    assert.equal(list.body.data.length, 1);
  });

  test('the same key with a different body is 409 idempotency_conflict', async () => {
    const headers = { 'Idempotency-Key': 'log-breakfast-2' };
    await t.request('POST', '/v1/nutrition/meals', { body: breakfast, headers });
    const r = await t.request('POST', '/v1/nutrition/meals', { body: { ...breakfast, description: 'other' }, headers });
    assert.equal(r.status, 409);
    assert.equal(errorOf(r).code, 'idempotency_conflict');
  });

  test('keys are per API key, and expire after 24 hours', async () => {
    const headers = { 'Idempotency-Key': 'shared' };
    const other = t.keyWith('nutrition:write');
    const a = await t.request('POST', '/v1/nutrition/meals', { body: breakfast, headers });
    const b = await t.request('POST', '/v1/nutrition/meals', { body: breakfast, headers, key: other });
    assert.notEqual(a.body.id, b.body.id);
    t.clock.advance(24 * 3600_000 + 1000);
    const c = await t.request('POST', '/v1/nutrition/meals', { body: { ...breakfast, timestamp: '2026-11-23T08:00:00Z' }, headers });
    assert.equal(c.status, 201);
    assert.notEqual(c.body.id, a.body.id);
  });

  test('PATCH and DELETE replay too', async () => {
    const created = (await t.request('POST', '/v1/nutrition/meals', { body: breakfast })).body;
    const headers = { 'Idempotency-Key': 'delete-once' };
    const a = await t.request('DELETE', `/v1/nutrition/meals/${created.id}`, { headers });
    const b = await t.request('DELETE', `/v1/nutrition/meals/${created.id}`, { headers });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
  });

  test('an over-long Idempotency-Key is refused', async () => {
    const r = await t.request('POST', '/v1/nutrition/meals', { body: breakfast, headers: { 'Idempotency-Key': 'k'.repeat(256) } });
    assert.equal(r.status, 400);
    assert.equal(errorOf(r).param, 'Idempotency-Key');
  });
});

describe('where calories come from', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const create = async (body: Record<string, unknown>) =>
    (await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch', ...body } })).body;
  const patch = async (id: string, body: Record<string, unknown>) => (await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body })).body;

  test('typed-in calories survive edits of the foods, even when they equalled the foods\' sum', async () => {
    const meal = await create({ macros: { calories: 635 }, foods: [{ name: 'salmon', calories: 360 }, { name: 'rice', calories: 275 }] });
    assert.equal(meal.calories_source, 'logged');
    assert.equal((await patch(meal.id, { foods: [] })).macros.calories, 635);
    assert.equal((await patch(meal.id, { foods: [{ name: 'salmon', calories: 360 }] })).macros.calories, 635);
  });

  test('calories from foods follow the foods; typing calories makes them logged', async () => {
    const meal = await create({ foods: [{ name: 'soup', calories: 250 }] });
    assert.equal(meal.calories_source, 'foods');
    const more = await patch(meal.id, { foods: [{ name: 'soup', calories: 250 }, { name: 'bread', calories: 150 }] });
    assert.equal(more.macros.calories, 400);
    const typed = await patch(meal.id, { macros: { calories: 380 } });
    assert.equal(typed.calories_source, 'logged');
    assert.equal((await patch(meal.id, { foods: [{ name: 'soup', calories: 250 }] })).macros.calories, 380);
  });

  test('null calories hand typed calories back to the foods, as null does for every nutrient', async () => {
    const foods = [{ name: 'toast', calories: 130, protein_g: 5 }, { name: 'jam', calories: 80, protein_g: 0 }];
    const meal = await create({ macros: { calories: 999, protein_g: 40 }, foods });
    assert.equal(meal.macros.calories, 999);
    assert.equal(meal.calories_source, 'logged');
    const r = await t.request('PATCH', `/v1/nutrition/meals/${meal.id}`, { body: { macros: { calories: null, protein_g: null } } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.macros.calories, 210);
    assert.equal(r.body.calories_source, 'foods');
    assert.equal(r.body.macros.protein_g, 5);
    assert.equal(r.body.nutrient_sources.protein_g, 'foods');
    // Without foods, cleared calories come from the macros.
    const bare = await create({ macros: { calories: 500, protein_g: 10, carbs_g: 10, fat_g: 10 } });
    assert.equal((await patch(bare.id, { macros: { calories: null } })).macros.calories, 170);
    assert.equal((await patch(bare.id, {})).calories_source, 'macros');
  });

  test('calories from macros follow the macros', async () => {
    const meal = await create({ macros: { protein_g: 10, carbs_g: 10, fat_g: 10 } });
    assert.equal(meal.calories_source, 'macros');
    assert.equal(meal.macros.calories, 170);
    assert.equal((await patch(meal.id, { macros: { fat_g: 20 } })).macros.calories, 260);
  });
});

describe('meal versions: ETag and If-Match', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const create = async () => t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T08:00:00Z', meal_type: 'lunch', description: 'Soup', macros: { calories: 400 } } });

  test('GET one meal, POST and PATCH answers carry the meal\'s ETag; it changes when the meal does', async () => {
    const created = await create();
    const tag = created.headers.get('etag');
    assert.match(tag ?? '', /^"[\w-]+"$/);
    const got = await t.request('GET', `/v1/nutrition/meals/${created.body.id}`);
    assert.equal(got.headers.get('etag'), tag);
    const same = await t.request('PATCH', `/v1/nutrition/meals/${created.body.id}`, { body: { description: 'Soup' } });
    assert.equal(same.headers.get('etag'), tag, 'a PATCH that changes nothing keeps the version');
    t.clock.advance(1000);
    const changed = await t.request('PATCH', `/v1/nutrition/meals/${created.body.id}`, { body: { description: 'Lentil soup' } });
    assert.notEqual(changed.headers.get('etag'), tag);
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${created.body.id}`)).headers.get('etag'), changed.headers.get('etag'));
  });

  test('two clients: the second write with a stale If-Match is 412 precondition_failed and changes nothing', async () => {
    const created = await create();
    const id = created.body.id;
    const tag = created.headers.get('etag')!;
    // Tab B saves 520 kcal with the version it read.
    const b = await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { macros: { calories: 520 } }, headers: { 'if-match': tag } });
    assert.equal(b.status, 200, b.text);
    // Tab A, still holding the old version, saves a new description.
    const a = await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'Tomato soup' }, headers: { 'if-match': tag } });
    assert.equal(a.status, 412);
    const e = errorOf(a);
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.code, 'precondition_failed');
    assert.equal(e.param, 'If-Match');
    assert.match(e.message, /changed since you read it/);
    assert.equal(a.headers.get('etag'), b.headers.get('etag'), 'the 412 names the current version');
    const now = await t.request('GET', `/v1/nutrition/meals/${id}`);
    assert.equal(now.body.macros.calories, 520);
    assert.equal(now.body.description, 'Soup');
    // With the current version it goes through.
    const retry = await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'Tomato soup' }, headers: { 'if-match': a.headers.get('etag')! } });
    assert.equal(retry.status, 200);
    assert.equal(retry.body.macros.calories, 520);
  });

  test('If-Match takes *, a list of tags, and never a weak tag; without it writes go through as before', async () => {
    const created = await create();
    const id = created.body.id;
    const tag = created.headers.get('etag')!;
    assert.equal((await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'a' }, headers: { 'if-match': '*' } })).status, 200);
    const cur = (await t.request('GET', `/v1/nutrition/meals/${id}`)).headers.get('etag')!;
    assert.equal((await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'b' }, headers: { 'if-match': `W/${cur}` } })).status, 412);
    assert.equal((await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'b' }, headers: { 'if-match': `${tag}, ${cur}` } })).status, 200);
    assert.equal((await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { description: 'c' } })).status, 200);
  });

  test('DELETE honours If-Match: a stale version is 412 and the meal stays', async () => {
    const created = await create();
    const id = created.body.id;
    const tag = created.headers.get('etag')!;
    const edited = await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { macros: { calories: 450 } } });
    const stale = await t.request('DELETE', `/v1/nutrition/meals/${id}`, { headers: { 'if-match': tag } });
    assert.equal(stale.status, 412);
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${id}`)).status, 200);
    const ok = await t.request('DELETE', `/v1/nutrition/meals/${id}`, { headers: { 'if-match': edited.headers.get('etag')! } });
    assert.equal(ok.status, 200);
  });

  test('an idempotent replay of a POST carries the same ETag', async () => {
    const body = { timestamp: '2026-11-22T09:00:00Z', meal_type: 'snack', macros: { calories: 90 } };
    const first = await t.request('POST', '/v1/nutrition/meals', { body, headers: { 'idempotency-key': 'etag-replay' } });
    const again = await t.request('POST', '/v1/nutrition/meals', { body, headers: { 'idempotency-key': 'etag-replay' } });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.ok(first.headers.get('etag'));
    assert.equal(again.headers.get('etag'), first.headers.get('etag'));
  });
});
