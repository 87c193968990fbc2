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

  test('portions list the natural unit first (one egg, one slice, one medium fruit); ids stay the source\'s positions', async () => {
    const first = async (id: string) => (await t.request('GET', `/v1/foods/${id}`)).body.portions as Array<{ id: string; label: string; grams: number }>;
    const egg = await first('food_usda_01123');
    assert.deepEqual(egg[0], { id: '4', label: '1 large', grams: 50 });
    assert.deepEqual(egg.find((p) => p.id === '1'), { id: '1', label: '1 cup (4.86 large eggs)', grams: 243 }, 'the cup is still there, under its id');
    assert.deepEqual(egg.map((p) => p.id), ['4', '1', '2', '3', '5', '6']);
    assert.equal((await first('food_usda_18070'))[0]!.label, '1 slice');
    assert.equal((await first('food_usda_09040'))[0]!.label, '1 medium (7" to 7-7/8" long)');
    assert.equal((await first('food_usda_09003'))[0]!.label, '1 medium (3" dia)');
    assert.equal((await first('food_usda_09200'))[0]!.label, '1 fruit (2-5/8" dia)');
    assert.equal((await first('food_usda_11529'))[0]!.label, '1 medium whole (2-3/5" dia)');
    // A food nothing counts keeps the source's order.
    assert.deepEqual((await first('food_usda_01077')).map((p) => p.label), ['1 cup', '1 tbsp', '1 fl oz', '1 quart']);
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

  // What a person types, and the plain everyday food it should give first (Enter picks it).
  const EVERYDAY: Array<[string, string]> = [
    ['whole milk', 'Milk, whole, 3.25% milkfat, with added vitamin D'],
    ['milk', 'Milk, whole, 3.25% milkfat, with added vitamin D'],
    ['semi skimmed milk', 'Milk, reduced fat, fluid, 2% milkfat, with added vitamin A and vitamin D'],
    ['skimmed milk', 'Milk, nonfat, fluid, with added vitamin A and vitamin D (fat free or skim)'],
    ['banana', 'Bananas, raw'],
    ['apple', 'Apples, raw, with skin'],
    ['orange', 'Oranges, raw, all commercial varieties'],
    ['orange juice', 'Orange juice, raw'],
    ['grapes', 'Grapes, red or green (European type, such as Thompson seedless), raw'],
    ['strawberries', 'Strawberries, raw'],
    ['avocado', 'Avocados, raw, all commercial varieties'],
    ['tomato', 'Tomatoes, red, ripe, raw, year round average'],
    ['potato', 'Potato, flesh and skin, raw'],
    ['carrot', 'Carrots, raw'],
    ['broccoli', 'Broccoli, raw'],
    ['spinach', 'Spinach, raw'],
    ['onion', 'Onions, raw'],
    ['spring onion', 'Onions, spring or scallions (includes tops and bulb), raw'],
    ['garlic', 'Garlic, raw'],
    ['mushrooms', 'Mushrooms, white, raw'],
    ['aubergine', 'Eggplant, raw'],
    ['courgette', 'Squash, summer, zucchini, includes skin, raw'],
    ['rocket', 'Arugula, raw'],
    ['coriander', 'Coriander (cilantro) leaves, raw'],
    ['sweetcorn', 'Corn, sweet, yellow, raw'],
    ['beetroot', 'Beets, raw'],
    ['chickpeas', 'Chickpeas (garbanzo beans, bengal gram), mature seeds, raw'],
    ['lentils', 'Lentils, raw'],
    ['egg', 'Egg, whole, raw, fresh'],
    ['eggs', 'Egg, whole, raw, fresh'],
    ['fried egg', 'Egg, whole, cooked, fried'],
    ['boiled eggs', 'Egg, whole, cooked, hard-boiled'],
    ['scrambled eggs', 'Egg, whole, cooked, scrambled'],
    ['poached egg', 'Egg, whole, cooked, poached'],
    ['omelette', 'Egg, whole, cooked, omelet'],
    ['chicken breast', 'Chicken, broilers or fryers, breast, meat only, raw'],
    ['chicken', 'Chicken, broilers or fryers, breast, meat only, raw'],
    ['turkey', 'Turkey, all classes, meat only, raw'],
    ['mince', 'Beef, ground, 80% lean meat / 20% fat, raw'],
    ['ground beef', 'Beef, ground, 80% lean meat / 20% fat, raw'],
    ['bacon', 'Pork, cured, bacon, raw'],
    ['salmon', 'Fish, salmon, Atlantic, farmed, raw'],
    ['tuna', 'Fish, tuna, light, canned in water, drained solids'],
    ['prawns', 'Crustaceans, shrimp, mixed species, raw'],
    ['cheese', 'Cheese, cheddar'],
    ['cheddar cheese', 'Cheese, cheddar'],
    ['yoghurt', 'Yogurt, plain, whole milk, 8 grams protein per 8 ounce'],
    ['greek yogurt', 'Yogurt, greek, plain, nonfat'],
    ['butter', 'Butter, salted'],
    ['double cream', 'Cream, fluid, heavy whipping'],
    ['olive oil', 'Oil, olive, salad or cooking'],
    ['rice', 'Rice, white, long-grain, regular, raw, enriched'],
    ['brown rice', 'Rice, brown, long-grain, raw'],
    ['bread', 'Bread, white, commercially prepared (includes soft bread crumbs)'],
    ['toast', 'Bread, white, commercially prepared, toasted'],
    ['white toast', 'Bread, white, commercially prepared, toasted'],
    ['wholemeal toast', 'Bread, whole-wheat, commercially prepared, toasted'],
    ['wholemeal bread', 'Bread, whole-wheat, commercially prepared'],
    ['bagel', 'Bagels, plain, enriched, with calcium propionate (includes onion, poppy, sesame)'],
    ['croissant', 'Croissants, butter'],
    ['pasta', 'Spaghetti, dry, enriched'],
    ['oatmeal', 'Cereals, oats, regular and quick, unenriched, cooked with water (includes boiling and microwaving), without salt'],
    ['porridge', 'Cereals, oats, regular and quick, unenriched, cooked with water (includes boiling and microwaving), without salt'],
    ['flour', 'Wheat flour, white, all-purpose, enriched, bleached'],
    ['sugar', 'Sugars, granulated'],
    ['honey', 'Honey'],
    ['peanut butter', 'Peanut butter, smooth style, with salt'],
    ['almonds', 'Nuts, almonds'],
    ['peanuts', 'Peanuts, all types, raw'],
    ['crisps', 'Snacks, potato chips, plain, salted'],
    ['chips', 'Potatoes, french fried, all types, salt added in processing, frozen, unprepared'],
    ['jacket potato', 'Potatoes, baked, flesh and skin, with salt'],
    ['biscuit', 'Cookies, chocolate chip, commercially prepared, regular, higher fat, enriched'],
    ['ice cream', 'Ice creams, vanilla'],
    ['coffee', 'Coffee, brewed from grounds, prepared with tap water'],
    ['tea', 'Tea, black, brewed, prepared with tap water'],
    ['water', 'Water, tap, drinking'],
    ['beer', 'Alcoholic beverage, beer, regular, all'],
    ['lager', 'Alcoholic beverage, beer, regular, all'],
    ['wine', 'Alcoholic beverage, wine, table, all'],
    ['red wine', 'Alcoholic beverage, wine, table, red'],
    ['cola', 'Carbonated beverage, cola, contains caffeine'],
    ['coke', 'Carbonated beverage, cola, contains caffeine'],
    ['brinjal', 'Eggplant, raw'],
    ['kumara', 'Sweet potato, raw, unprepared'],
    ['rockmelon', 'Melons, cantaloupe, raw'],
    ['dal', 'Lentils, raw'],
  ];

  test(`the plain everyday food comes first for ${EVERYDAY.length} everyday queries (British and other English names too)`, async () => {
    const wrong: string[] = [];
    for (const [query, expected] of EVERYDAY) {
      const top = names(await search(query, 1))[0];
      if (top !== expected) wrong.push(`"${query}" gave ${top ?? 'nothing'}, expected ${expected}`);
    }
    assert.deepEqual(wrong, []);
  });

  test('the look-alikes that used to come first are still found, below the basic form', async () => {
    for (const [query, lookAlike] of [
      ['whole milk', /^Milk, (buttermilk|dry)/],
      ['beer', /^Beerwurst/],
      ['oatmeal', /^Bread, oatmeal/],
      ['cola', /zevia/i],
      ['chips', /^Snacks, potato chips/], // "chips" is British fries first, American potato chips close behind
    ] as const) {
      const found = names(await search(query, 10));
      assert.ok(found.findIndex((n) => lookAlike.test(n)) > 0, `${query}: ${found.join(' | ')}`);
    }
  });

  test('a synonym is found while it is typed, and a name the table lacks no longer finds nothing', async () => {
    assert.equal(names(await search('courg'))[0], 'Squash, summer, zucchini, includes skin, raw');
    assert.equal(names(await search('auberg'))[0], 'Eggplant, raw');
    assert.equal(names(await search('jacket pot'))[0], 'Potatoes, baked, flesh and skin, with salt');
    assert.equal(names(await search('double cr'))[0], 'Cream, fluid, heavy whipping');
    assert.equal(names(await search('whole mil'))[0], 'Milk, whole, 3.25% milkfat, with added vitamin D');
    // A one-word staple is guessed from its first four letters on.
    assert.equal(names(await search('chick'))[0], 'Chicken, broilers or fryers, breast, meat only, raw');
    assert.equal(names(await search('coff'))[0], 'Coffee, brewed from grounds, prepared with tap water');
    for (const q of ['porridge', 'aubergine', 'courgette', 'natural yoghurt', 'cornflakes']) {
      assert.ok((await search(q)).body.data.length > 0, `${q} finds something`);
    }
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
