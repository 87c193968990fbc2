import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

const BANANA = 'food_usda_09040'; // 89 kcal, 1.09 g protein, 22.84 g carbs, 0.33 g fat, 2.6 g fibre per 100 g; portion 5 = 1 medium, 118 g
const MILK = 'food_usda_01077'; // 61 kcal per 100 g; 1 cup = 244 g
const BREAD = 'food_usda_18064'; // Bread, wheat: 274 kcal, 473 mg sodium per 100 g; portion 2 = 1 slice, 29 g

describe('meals built from foods', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const logMeal = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T08:00:00Z', meal_type: 'breakfast', ...body } });

  test('entries are computed from the table (grams, ml, portions) and the meal totals are their sums', async () => {
    const r = await logMeal({
      foods: [
        { food_id: BANANA, quantity: 1, unit: '5' },
        { food_id: MILK, quantity: 250, unit: 'ml' },
        { food_id: BREAD, quantity: 2, unit: '2', name: 'Toast' },
        { name: 'Black coffee', calories: 2 },
      ],
    });
    assert.equal(r.status, 201, r.text);
    const [banana, milk, toast, coffee] = r.body.foods;
    assert.deepEqual(banana, {
      name: 'Bananas, raw', calories: 105.02, food_id: BANANA, quantity: 1, unit: '5', grams: 118,
      protein_g: 1.29, carbs_g: 26.95, fat_g: 0.39, fiber_g: 3.07, sugars_g: 14.43, sodium_mg: 1.18, caffeine_mg: 0,
    });
    // 250 ml at the density of its "1 cup" portion (244 g per 236.588 ml).
    assert.equal(milk.grams, 257.8);
    assert.equal(milk.calories, Math.round(61 * 2.57833 * 100) / 100);
    assert.equal(toast.name, 'Toast');
    assert.equal(toast.grams, 58);
    assert.equal(toast.sodium_mg, Math.round(473 * 0.58 * 100) / 100);
    assert.deepEqual(coffee, { name: 'Black coffee', calories: 2 });
    const sum = (k: string) => Math.round([banana, milk, toast].reduce((s, e) => s + e[k], 0) * 100) / 100;
    assert.equal(r.body.macros.calories, Math.round((banana.calories + milk.calories + toast.calories + 2) * 100) / 100);
    assert.equal(r.body.calories_source, 'foods');
    assert.equal(r.body.macros.protein_g, sum('protein_g'));
    assert.equal(r.body.macros.fat_g, sum('fat_g'));
    assert.equal(r.body.macros.fiber_g, sum('fiber_g'));
    assert.equal(r.body.micros.sodium_mg, sum('sodium_mg'));
    assert.equal(r.body.micros.caffeine_mg, 0);
    assert.deepEqual(r.body.nutrient_sources, {
      protein_g: 'foods', carbs_g: 'foods', fat_g: 'foods', fiber_g: 'foods', sodium_mg: 'foods', caffeine_mg: 'foods',
    });
  });

  test('typed nutrients are kept when foods change; derived ones follow; null hands a nutrient back to the foods', async () => {
    const r = await logMeal({ macros: { protein_g: 30 }, foods: [{ food_id: BANANA, quantity: 100, unit: 'g' }] });
    assert.equal(r.body.macros.protein_g, 30);
    assert.equal(r.body.macros.fat_g, 0.33);
    assert.equal(r.body.nutrient_sources.protein_g, 'logged');
    const id = r.body.id;
    const more = await t.request('PATCH', `/v1/nutrition/meals/${id}`, {
      body: { foods: [...r.body.foods, { food_id: BANANA, quantity: 100, unit: 'g' }] },
    });
    assert.equal(more.status, 200, more.text);
    assert.equal(more.body.macros.protein_g, 30, 'typed protein is never overwritten by foods');
    assert.equal(more.body.macros.fat_g, 0.66, 'derived fat follows the foods');
    assert.equal(more.body.macros.calories, 178);
    const back = await t.request('PATCH', `/v1/nutrition/meals/${id}`, { body: { macros: { protein_g: null } } });
    assert.equal(back.body.macros.protein_g, 2.18);
    assert.equal(back.body.nutrient_sources.protein_g, 'foods');
  });

  test('entries without food_id keep working; nutrients nobody knows stay unknown', async () => {
    const r = await logMeal({ foods: [{ name: 'soup', calories: 250 }] });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.foods, [{ name: 'soup', calories: 250 }]);
    assert.equal(r.body.macros.calories, 250);
    assert.equal(r.body.macros.fiber_g, null);
    assert.equal(r.body.micros.caffeine_mg, null);
    assert.deepEqual(Object.values(r.body.nutrient_sources), [null, null, null, null, null, null]);
  });

  test('a count with a food is of its natural unit: "2 eggs" is two large eggs, not two cups', async () => {
    const EGG = 'food_usda_01123'; // 143 kcal per 100 g; portions: 1 cup (4.86 large eggs) 243 g, …, 1 large 50 g (id 4)
    const TOAST = 'food_usda_18070'; // 1 slice = 22 g (id 9), after "1 slice, large" and "1 slice crust not eaten"
    for (const unit of [undefined, 'eggs', 'egg', 'large']) {
      const r = await logMeal({ foods: [{ food_id: EGG, quantity: 2, ...(unit === undefined ? {} : { unit }) }] });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual({ unit: r.body.foods[0].unit, grams: r.body.foods[0].grams, calories: r.body.macros.calories }, { unit: '4', grams: 100, calories: 143 }, String(unit));
    }
    const toast = await logMeal({ foods: [{ food_id: TOAST, quantity: 2, unit: 'slices' }, { food_id: BANANA, quantity: 1 }] });
    assert.equal(toast.status, 201, JSON.stringify(toast.body));
    assert.deepEqual(toast.body.foods.map((f: { unit: string; grams: number }) => [f.unit, f.grams]), [['9', 44], ['5', 118]]);
  });

  test('bad entries are clear 400s naming the entry', async () => {
    const cases: Array<[unknown, string]> = [
      [{ food_id: 'food_usda_99999', quantity: 1, unit: 'g' }, 'foods.0.food_id'],
      [{ food_id: BANANA, quantity: 1, unit: '99' }, 'foods.0.unit'],
      [{ food_id: BANANA, quantity: 1, unit: 'cup' }, 'foods.0.unit'], // a cup of banana is mashed or sliced: a word cannot say which
      [{ food_id: BANANA, quantity: 1, unit: 'eggs' }, 'foods.0.unit'],
      [{ food_id: MILK, quantity: 1 }, 'foods.0.unit'], // milk has no portion that counts it
      [{ food_id: 'food_usda_05062', quantity: 100, unit: 'ml' }, 'foods.0.unit'], // chicken has no volume measure
      [{ food_id: BANANA, unit: 'g' }, 'foods.0.quantity'],
      [{ food_id: BANANA, quantity: 0, unit: 'g' }, 'foods.0.quantity'],
      [{ calories: 100 }, 'foods.0.name'],
      // Kept as sent (it has calories), yet its food_id must name a food, in the documented shape.
      [{ name: 'Apple', calories: 52, food_id: 'food_usda_99999', quantity: 1, unit: 'g' }, 'foods.0.food_id'],
      [{ name: 'Apple', calories: 52, food_id: 'bogus!', quantity: 1, unit: 'g' }, 'foods.0.food_id'],
      [{ name: 'Apple', calories: 52, food_id: '', quantity: 1, unit: 'g' }, 'foods.0.food_id'],
    ];
    for (const [entry, param] of cases) {
      const r = await logMeal({ foods: [entry] });
      assert.equal(r.status, 400, JSON.stringify(entry));
      assert.equal(errorOf(r).param, param, JSON.stringify(entry));
    }
  });

  test('editing or deleting a custom food never rewrites logged meals; sending entries back keeps them', async () => {
    const food = await t.request('POST', '/v1/foods', {
      body: { name: 'Granola', brand: 'Acme', per_serving: { grams: 50, nutrients: { calories: 220, protein_g: 5, fat_g: 8, carbs_g: 32 } } },
    });
    assert.equal(food.status, 201, food.text);
    assert.equal(food.body.nutrients.calories, 440);
    assert.deepEqual(food.body.portions, [{ id: '1', label: '1 serving', grams: 50 }]);
    const meal = await logMeal({ foods: [{ food_id: food.body.id, quantity: 1, unit: '1' }] });
    assert.equal(meal.body.macros.calories, 220);
    const edited = await t.request('PATCH', `/v1/foods/${food.body.id}`, { body: { nutrients: { calories: 500 } } });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.nutrients.calories, 500);
    const after = await t.request('GET', `/v1/nutrition/meals/${meal.body.id}`);
    assert.deepEqual(after.body.foods, meal.body.foods);
    // A client adding a food sends the meal's entries back as it got them: they keep their numbers.
    const added = await t.request('PATCH', `/v1/nutrition/meals/${meal.body.id}`, {
      body: { foods: [...after.body.foods, { name: 'tea', calories: 1 }] },
    });
    assert.deepEqual(added.body.foods[0], meal.body.foods[0]);
    assert.equal(added.body.macros.calories, 221);
    assert.equal((await t.request('DELETE', `/v1/foods/${food.body.id}`)).status, 200);
    const kept = await t.request('GET', `/v1/nutrition/meals/${meal.body.id}`);
    assert.deepEqual(kept.body.foods[0], meal.body.foods[0]);
    assert.equal((await t.request('GET', `/v1/foods/${food.body.id}`)).status, 404);
    // The food is gone, but the meal still holds its entry: sent back (an edit, a copy, a saved
    // meal made from it) it is kept as it was, since its food_id names a food the data knows.
    const resent = await t.request('PATCH', `/v1/nutrition/meals/${meal.body.id}`, { body: { foods: kept.body.foods } });
    assert.equal(resent.status, 200, resent.text);
    const copy = await logMeal({ foods: kept.body.foods });
    assert.equal(copy.status, 201, copy.text);
    assert.deepEqual(copy.body.foods, kept.body.foods);
    const saved = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Granola bowl', foods: kept.body.foods } });
    assert.equal(saved.status, 201, saved.text);
    // Computing a new entry from it is another matter: there is nothing to compute from.
    const computed = await logMeal({ foods: [{ food_id: food.body.id, quantity: 1, unit: 'g' }] });
    assert.equal(errorOf(computed).param, 'foods.0.food_id');
  });
});
