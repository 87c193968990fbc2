import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

const names = (r: { body: { data: Array<{ name: string }> } }) => r.body.data.map((f) => f.name);

describe('foods API: the USDA table and search', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const search = (query: string, limit = 10) => t.request('GET', `/v1/foods?query=${encodeURIComponent(query)}&limit=${limit}`);

  test('GET /v1/foods/{id} returns a USDA food with nutrients per 100 g and household portions', async () => {
    const r = await t.request('GET', '/v1/foods/food_usda_09040');
    assert.equal(r.status, 200);
    assert.equal(r.body.object, 'nutrition.food');
    assert.equal(r.body.name, 'Bananas, raw');
    assert.equal(r.body.source, 'usda_sr');
    assert.equal(r.body.brand, null);
    assert.deepEqual(r.body.nutrients, {
      calories: 89, protein_g: 1.09, carbs_g: 22.84, fat_g: 0.33, fiber_g: 2.6, sugars_g: 12.23, sodium_mg: 1, caffeine_mg: 0,
    });
    assert.ok(r.body.portions.length >= 8);
    assert.deepEqual(r.body.portions.find((p: { label: string }) => p.label.startsWith('1 medium')), {
      id: '5', label: '1 medium (7" to 7-7/8" long)', grams: 118,
    });
    assert.deepEqual(r.body.usage, { count: 0, last_used_at: null });
    assert.equal(r.body.created_at, null);
    const missing = await t.request('GET', '/v1/foods/food_usda_99999');
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing).code, 'resource_missing');
  });

  test('unknown values are null, never a silent 0 (SR28 carries no caffeine; this apple is not in SR24)', async () => {
    const r = await t.request('GET', '/v1/foods/food_usda_09503');
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'Apples, raw, gala, with skin');
    assert.equal(r.body.nutrients.caffeine_mg, null);
    assert.ok(r.body.nutrients.calories > 50);
  });

  test('"banana" finds the raw banana first, before banana bread and dishes', async () => {
    const r = await search('banana');
    assert.equal(r.status, 200);
    assert.equal(r.body.object, 'list');
    assert.equal(r.body.has_more, false);
    assert.equal(r.body.data[0].id, 'food_usda_09040');
    const all = names(await search('banana', 50));
    const bread = all.findIndex((n) => /^Bread, banana/.test(n));
    assert.ok(bread === -1 || bread > 0, 'banana bread ranks below the banana');
  });

  test('"chicken breast" finds raw and cooked breast near the top; word order does not matter', async () => {
    const top = names(await search('chicken breast', 10));
    assert.ok(top.slice(0, 3).some((n) => /^Chicken, broilers or fryers, breast, meat only, raw$/.test(n)), top.join(' | '));
    assert.ok(top.some((n) => /^Chicken, broilers or fryers, breast, .*cooked/.test(n)), top.join(' | '));
    assert.deepEqual(names(await search('breast chicken', 10)), top);
  });

  test('prefixes work while typing', async () => {
    for (const typed of ['chick', 'chicke', 'chicken br']) {
      const r = names(await search(typed, 10));
      assert.ok(r.length === 10 && r.every((n) => /chicken/i.test(n)), `${typed}: ${r.join(' | ')}`);
    }
    assert.ok(names(await search('banan'))[0] === 'Bananas, raw');
  });

  test('plurals and small typos are forgiven', async () => {
    assert.equal(names(await search('bananas'))[0], 'Bananas, raw');
    assert.equal(names(await search('bananna'))[0], 'Bananas, raw');
    assert.equal(names(await search('tomato'))[0], names(await search('tomatoes'))[0]);
    const typo = names(await search('chiken brest', 10));
    assert.ok(typo.slice(0, 3).includes('Chicken, broilers or fryers, breast, meat only, raw'), typo.join(' | '));
    assert.deepEqual(names(await search('qqqqzzz')), []);
  });

  test('limit is 1–50, default 10; a bad limit is a clear 400', async () => {
    assert.equal((await search('cheese')).body.data.length, 10);
    assert.equal((await search('cheese', 50)).body.data.length, 50);
    const bad = await t.request('GET', '/v1/foods?query=cheese&limit=51');
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad).param, 'limit');
  });

  test('scopes: nutrition:read reads foods', async () => {
    const noScope = await t.request('GET', '/v1/foods?query=egg', { key: t.keyWith('sleep:read') });
    assert.equal(noScope.status, 403);
    const ok = await t.request('GET', '/v1/foods?query=egg', { key: t.keyWith('nutrition:read') });
    assert.equal(ok.status, 200);
  });

  test('GET /v1/foods/sources tells where every value comes from, with the USDA credit', async () => {
    const r = await t.request('GET', '/v1/foods/sources');
    assert.equal(r.status, 200);
    assert.match(r.body.credit, /U\.S\. Department of Agriculture, Agricultural Research Service/);
    assert.ok(r.body.food_count > 9000);
    assert.deepEqual(r.body.sources.map((s: { id: string }) => s.id), ['usda_sr28', 'usda_sr24']);
    assert.equal(r.body.values.caffeine_mg.usda_sr28, 0, 'SR28 ABBREV has no caffeine');
    assert.ok(r.body.values.caffeine_mg.usda_sr24 > 4000);
    assert.ok(r.body.values.calories.usda_sr28 > 8000);
  });
});
