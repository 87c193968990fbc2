import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entrySumNumbers, mealNutrient, mealTotals, type MealNumbers } from '../../server/nutrition/totals.js';
import { fmtTimeOnDay } from '../../renderer/src/lib/time.js';

const none = { protein_g: null, carbs_g: null, fat_g: null, fiber_g: null, sodium_mg: null, caffeine_mg: null };
/** As the service answers a meal logged with calories only: unknown macros read 0, their sources null. */
const caloriesOnly: MealNumbers = {
  macros: { calories: 500, protein_g: 0, carbs_g: 0, fat_g: 0, fiber_g: null },
  micros: { sodium_mg: 0, caffeine_mg: null },
  calories_source: 'logged',
  nutrient_sources: none,
};
const typed: MealNumbers = {
  macros: { calories: 300, protein_g: 31, carbs_g: 2, fat_g: 9, fiber_g: null },
  micros: { sodium_mg: 0, caffeine_mg: null },
  calories_source: 'logged',
  nutrient_sources: { ...none, protein_g: 'logged', carbs_g: 'logged', fat_g: 'logged' },
};
/** Imported naming foods without numbers: calories 4/4/9 of nothing. */
const fromNothing: MealNumbers = { ...caloriesOnly, macros: { ...caloriesOnly.macros, calories: 0 }, calories_source: 'macros' };

test('a nutrient nobody gave is unknown, not 0; calories derived from nothing are unknown', () => {
  assert.equal(mealNutrient(caloriesOnly, 'protein_g'), null);
  assert.equal(mealNutrient(caloriesOnly, 'calories'), 500);
  assert.equal(mealNutrient(typed, 'protein_g'), 31);
  assert.equal(mealNutrient(fromNothing, 'calories'), null);
});

test('totals add the meals that know a nutrient and count those they leave out', () => {
  const t = mealTotals([caloriesOnly, typed, fromNothing]);
  assert.deepEqual(t.protein_g, { value: 31, known: 1, unknown: 2 });
  assert.deepEqual(t.calories, { value: 800, known: 2, unknown: 1 });
  assert.deepEqual(t.caffeine_mg, { value: 0, known: 0, unknown: 3 });
});

test("a saved meal's totals read by the same rule: a nutrient none of its foods gives is unknown", () => {
  const egg = entrySumNumbers({ calories: 192, protein_g: 6.3, carbs_g: null, fat_g: null, fiber_g: null });
  assert.equal(mealNutrient(egg, 'calories'), 192);
  assert.equal(mealNutrient(egg, 'protein_g'), 6.3);
  assert.equal(mealNutrient(egg, 'carbs_g'), null);
  assert.equal(mealNutrient(egg, 'sodium_mg'), null);
  assert.deepEqual(mealTotals([egg, typed]).carbs_g, { value: 2, known: 1, unknown: 1 });
});

test('a time not on today carries its day', () => {
  const now = Date.parse('2026-11-23T08:00:00Z');
  assert.equal(fmtTimeOnDay('2026-11-23T07:10:00Z', now, 'UTC').includes('yesterday'), false);
  assert.match(fmtTimeOnDay('2026-11-22T19:32:00Z', now, 'UTC'), /^7:32\sPM yesterday$/);
  assert.match(fmtTimeOnDay('2026-11-24T07:33:00Z', now, 'UTC'), /^7:33\sAM tomorrow$/);
});
