import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

const BANANA = 'food_usda_09040';
const BANANA_BREAD = 'food_usda_18019'; // Bread, banana, prepared from recipe, made with margarine

describe('custom foods, usage ranking and saved meals', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const eventTypes = () =>
    (t.service.app.db.prepare('SELECT type FROM events ORDER BY seq').pluck().all() as string[]).filter((e) => e.startsWith('food.'));
  const search = async (q: string, limit = 10) =>
    (await t.request('GET', `/v1/foods?query=${encodeURIComponent(q)}&limit=${limit}`)).body.data as Array<{ id: string; name: string }>;
  const logMeal = (foods: unknown[], timestamp = '2026-11-22T08:00:00Z') =>
    t.request('POST', '/v1/nutrition/meals', { body: { timestamp, meal_type: 'breakfast', foods } });

  test('create (per 100 g), read, search, patch and delete a custom food, each announced', async () => {
    const created = await t.request('POST', '/v1/foods', {
      body: { name: 'Skyr natur', brand: 'Arla', nutrients: { calories: 63, protein_g: 11, carbs_g: 4, fat_g: 0.2 }, portions: [{ label: '1 pot', grams: 150 }] },
    });
    assert.equal(created.status, 201, created.text);
    const food = created.body;
    assert.match(food.id, /^food_[0-9A-Za-z]{20}$/);
    assert.equal(food.source, 'custom');
    assert.equal(food.brand, 'Arla');
    assert.deepEqual(food.nutrients, { calories: 63, protein_g: 11, carbs_g: 4, fat_g: 0.2, fiber_g: null, sugars_g: null, sodium_mg: null, caffeine_mg: null });
    assert.deepEqual(food.portions, [{ id: '1', label: '1 pot', grams: 150 }]);
    assert.equal(food.created_at, '2026-11-22T12:00:00Z');
    assert.deepEqual((await t.request('GET', `/v1/foods/${food.id}`)).body, food);
    assert.equal((await search('skyr'))[0]!.id, food.id, 'found by name');
    assert.equal((await search('arla'))[0]!.id, food.id, 'found by brand');

    const patched = await t.request('PATCH', `/v1/foods/${food.id}`, { body: { name: 'Skyr vanilla', nutrients: { sugars_g: 6 } } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.nutrients.sugars_g, 6);
    assert.equal(patched.body.nutrients.protein_g, 11, 'nutrients merge field by field');
    assert.equal((await search('vanilla skyr'))[0]!.id, food.id, 'the index follows the rename');
    assert.ok(!(await search('skyr natur')).some((f) => f.id === food.id));

    const deleted = await t.request('DELETE', `/v1/foods/${food.id}`);
    assert.deepEqual(deleted.body, { id: food.id, object: 'nutrition.food', deleted: true });
    assert.ok(!(await search('skyr')).some((f) => f.id === food.id));
    assert.deepEqual(eventTypes(), ['food.created', 'food.updated', 'food.deleted']);
  });

  test('table foods are read-only; invalid custom foods are clear 400s', async () => {
    const patch = await t.request('PATCH', `/v1/foods/${BANANA}`, { body: { name: 'Mine' } });
    assert.equal(patch.status, 403);
    assert.equal(errorOf(patch).code, 'resource_read_only');
    assert.equal((await t.request('DELETE', `/v1/foods/${BANANA}`)).status, 403);
    const cases: Array<[unknown, string]> = [
      [{ name: 'x' }, 'nutrients'],
      [{ name: 'x', nutrients: { protein_g: 3 } }, 'nutrients.calories'],
      [{ name: 'x', nutrients: { calories: 1200 } }, 'nutrients.calories'],
      [{ name: 'x', nutrients: { calories: 400, protein_g: 60, fat_g: 60 } }, 'nutrients'],
      [{ name: 'x', per_serving: { grams: 0, nutrients: { calories: 100 } } }, 'per_serving.grams'],
      [{ name: 'x', nutrients: { calories: 100 }, per_serving: { grams: 30, nutrients: { calories: 100 } } }, 'per_serving'],
      [{ name: '', nutrients: { calories: 100 } }, 'name'],
    ];
    for (const [body, param] of cases) {
      const r = await t.request('POST', '/v1/foods', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(errorOf(r).param, param, JSON.stringify(body));
    }
    const readOnly = await t.request('POST', '/v1/foods', { body: { name: 'x', nutrients: { calories: 1 } }, key: t.keyWith('nutrition:read') });
    assert.equal(readOnly.status, 403);
  });

  test("the person's recent and frequent foods come first, and are listed before typing", async () => {
    assert.deepEqual((await t.request('GET', '/v1/foods')).body.data, [], 'nothing used yet');
    assert.equal((await search('banana'))[0]!.id, BANANA);
    await logMeal([{ food_id: BANANA_BREAD, quantity: 60, unit: 'g' }], '2026-11-20T08:00:00Z');
    await logMeal([{ food_id: BANANA_BREAD, quantity: 60, unit: 'g' }], '2026-11-21T08:00:00Z');
    const first = await search('banana');
    assert.equal(first[0]!.id, BANANA_BREAD, 'a food they eat beats a better name match');
    assert.equal(first[1]!.id, BANANA);
    const recent = (await t.request('GET', '/v1/foods')).body.data;
    assert.deepEqual(recent.map((f: { id: string }) => f.id), [BANANA_BREAD]);
    assert.deepEqual(recent[0].usage, { count: 2, last_used_at: '2026-11-21T08:00:00Z' });
    // Yesterday's egg once vs banana bread twice: frequency and recency both count.
    await logMeal([{ food_id: 'food_usda_01123', quantity: 1, unit: '1' }], '2026-11-22T07:00:00Z');
    const ids = (await t.request('GET', '/v1/foods?limit=5')).body.data.map((f: { id: string }) => f.id);
    assert.deepEqual(new Set(ids), new Set([BANANA_BREAD, 'food_usda_01123']));
    // Their food beats a staple too: "milk" means whole milk, unless sheep's milk is what they drink.
    assert.equal((await search('milk'))[0]!.id, 'food_usda_01077');
    await logMeal([{ food_id: 'food_usda_01109', quantity: 200, unit: 'g' }], '2026-11-22T07:30:00Z');
    assert.equal((await search('milk'))[0]!.id, 'food_usda_01109');
    // Deleting the meals forgets the usage.
    const meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30')).body.data;
    for (const m of meals) await t.request('DELETE', `/v1/nutrition/meals/${m.id}`);
    assert.deepEqual((await t.request('GET', '/v1/foods')).body.data, []);
  });

  test('saved meals: CRUD and /log in one request', async () => {
    const created = await t.request('POST', '/v1/nutrition/saved_meals', {
      body: { name: 'Usual breakfast', meal_type: 'breakfast', foods: [{ food_id: BANANA, quantity: 1, unit: '5' }, { name: 'Coffee', calories: 2 }] },
    });
    assert.equal(created.status, 201, created.text);
    const saved = created.body;
    assert.match(saved.id, /^smeal_/);
    assert.equal(saved.object, 'nutrition.saved_meal');
    assert.deepEqual(saved.totals, { calories: 107.02, protein_g: 1.29, carbs_g: 26.95, fat_g: 0.39, fiber_g: 3.07 });
    assert.deepEqual((await t.request('GET', '/v1/nutrition/saved_meals')).body.data, [saved]);
    const renamed = await t.request('PATCH', `/v1/nutrition/saved_meals/${saved.id}`, { body: { name: 'Weekday breakfast' } });
    assert.equal(renamed.body.name, 'Weekday breakfast');
    assert.deepEqual(renamed.body.foods, saved.foods);

    const logged = await t.request('POST', `/v1/nutrition/saved_meals/${saved.id}/log`, { body: { timestamp: '2026-11-22T07:30:00Z' } });
    assert.equal(logged.status, 201, logged.text);
    assert.equal(logged.body.object, 'nutrition.meal');
    assert.equal(logged.body.meal_type, 'breakfast');
    assert.equal(logged.body.description, 'Weekday breakfast');
    assert.deepEqual(logged.body.foods, saved.foods);
    assert.equal(logged.body.macros.calories, 107.02);
    assert.equal(logged.body.macros.fiber_g, 3.07);
    const asSnack = await t.request('POST', `/v1/nutrition/saved_meals/${saved.id}/log`, { body: { timestamp: '2026-11-22T10:00:00Z', meal_type: 'snack' } });
    assert.equal(asSnack.body.meal_type, 'snack');

    const untyped = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Shake', foods: [{ name: 'shake', calories: 300 }] } });
    assert.equal(untyped.body.meal_type, null);
    const needsType = await t.request('POST', `/v1/nutrition/saved_meals/${untyped.body.id}/log`, { body: { timestamp: '2026-11-22T10:00:00Z' } });
    assert.equal(needsType.status, 400);
    assert.equal(errorOf(needsType).param, 'meal_type');
    const bad = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'x', foods: [] } });
    assert.equal(errorOf(bad).param, 'foods');
    assert.equal((await t.request('DELETE', `/v1/nutrition/saved_meals/${saved.id}`)).status, 200);
    assert.equal((await t.request('GET', `/v1/nutrition/saved_meals/${saved.id}`)).status, 404);
    assert.equal((await t.request('POST', `/v1/nutrition/saved_meals/${saved.id}/log`, { body: { timestamp: '2026-11-22T10:00:00Z' } })).status, 404);
  });

  test('custom foods, saved meals and meals from foods survive export and import', async () => {
    const food = (await t.request('POST', '/v1/foods', { body: { name: 'Protein bar', brand: 'Acme', per_serving: { grams: 60, nutrients: { calories: 210, protein_g: 20 } } } })).body;
    await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Bar snack', meal_type: 'snack', foods: [{ food_id: food.id, quantity: 1, unit: '1' }] } });
    await logMeal([{ food_id: food.id, quantity: 1, unit: '1' }, { food_id: BANANA, quantity: 100, unit: 'g' }]);
    const exported = (await t.request('GET', '/v1/export')).body;
    assert.equal(exported.foods.length, 1);
    assert.ok(exported.saved_meals.length >= 1);

    const fresh = await startTestService();
    try {
      const imported = await fresh.request('POST', '/v1/import', { body: exported });
      assert.equal(imported.status, 200, imported.text);
      assert.deepEqual(imported.body.foods, { imported: 1, skipped: 0 });
      const again = (await fresh.request('GET', '/v1/export')).body;
      for (const key of ['foods', 'saved_meals', 'meals']) assert.deepEqual(again[key], exported[key], key);
      const found = (await fresh.request('GET', '/v1/foods?query=protein%20bar')).body.data;
      assert.equal(found[0].id, food.id, 'imported foods are searchable and keep their usage');
      assert.equal(found[0].usage.count, 1);
    } finally {
      await fresh.stop();
    }
  });
});
