// The meal form's food arithmetic (renderer/src/lib/foods.ts): the units it offers, the amount typed
// with its unit, the portion it proposes, and the live totals. Checked against the service's own
// rule and the real shipped table, so the form offers "ml" exactly where the service converts it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NutritionFood } from '../../renderer/src/api/types.js';
import { amountOf, amountWithUnit, entryFromFood, entryFromStored, entryGrams, entryInput, mlGrams, totalsOf, unitsOf, unknownUnitWord, type Entry } from '../../renderer/src/lib/foods.js';
import { shippedFoodTable } from '../../server/foods/table-file.js';

const NUTRIENTS = ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg'] as const;

function food(name: string, nutrients: Partial<NutritionFood['nutrients']>, portions: [string, number][]): NutritionFood {
  return {
    object: 'nutrition.food',
    id: `food_test_${name}`,
    name,
    brand: null,
    source: 'usda_sr',
    nutrients: { calories: null, protein_g: null, carbs_g: null, fat_g: null, fiber_g: null, sugars_g: null, sodium_mg: null, caffeine_mg: null, ...nutrients },
    portions: portions.map(([label, grams], i) => ({ id: String(i + 1), label, grams })),
    usage: { count: 0, last_used_at: null },
    created_at: null,
    updated_at: null,
  };
}

test('ml is offered for the table foods measured by volume, at grams per ml from their own cup or fl oz', () => {
  const table = shippedFoodTable().read();
  const withMl = table.foods.filter((row) => mlGrams({ portions: row[12].map(([label, grams], i) => ({ id: String(i + 1), label, grams })) }) !== null);
  assert.ok(withMl.length > 1000, `many foods are measured by volume (${withMl.length})`);
  const milk = food('milk', {}, [['1 quart', 976], ['1 cup', 244], ['1 fl oz', 30.5]]);
  assert.ok(Math.abs(mlGrams(milk)! - 244 / 236.588) < 1e-9, 'a plain cup');
  assert.ok(Math.abs(mlGrams(food('banana', {}, [['1 cup, mashed', 225], ['1 medium', 118]]))! - 225 / 236.588) < 1e-9, 'else a qualified one');
  assert.equal(mlGrams(food('cheese', {}, [['1 slice', 21], ['1 oz', 28.35]])), null);
});

test('a picked food proposes a medium portion, else a counted one, else a cup, else 100 g', () => {
  const banana = food('banana', { calories: 89 }, [['1 cup, mashed', 225], ['1 large', 136], ['1 medium (7" to 7-7/8" long)', 118]]);
  const e = entryFromFood(banana);
  assert.equal(e.units.find((u) => u.id === e.unit)?.portion, '1 medium (7" to 7-7/8" long)');
  assert.equal(e.quantity, '1');
  const bread = food('bread', { calories: 250 }, [['1 cup, crumbs', 45], ['1 slice', 28]]);
  assert.equal(entryFromFood(bread).unit, '2');
  const milk = food('milk', { calories: 61 }, [['1 quart', 976], ['1 cup', 244], ['1 fl oz', 30.5]]);
  assert.equal(entryFromFood(milk).unit, '2', 'a cup, not a quart');
  assert.deepEqual(unitsOf(milk).map((u) => u.id), ['g', 'ml', '1', '2', '3']);
  const oil = food('oil', { calories: 884 }, []);
  assert.deepEqual([entryFromFood(oil).quantity, entryFromFood(oil).unit], ['100', 'g']);
});

test('an amount may carry its unit: grams, millilitres where offered, a portion by a word of its label', () => {
  const bread = food('bread', {}, [['1 slice', 28], ['1 cup, cubes', 30]]);
  const units = unitsOf(bread);
  assert.deepEqual(amountWithUnit('60 g', units), { quantity: '60', unit: 'g' });
  assert.deepEqual(amountWithUnit('2 slices', units), { quantity: '2', unit: '1' });
  assert.deepEqual(amountWithUnit('1,5 cups', units), { quantity: '1,5', unit: '2' });
  assert.deepEqual(amountWithUnit('250 ml', units), { quantity: '250', unit: 'ml' }, 'its cup converts millilitres');
  assert.equal(amountWithUnit('250 ml', unitsOf(food('cheese', {}, [['1 slice', 21], ['1 oz', 28.35]]))), null, 'no volume measure, no ml');
  assert.equal(amountWithUnit('60', units), null, 'a bare number keeps the unit chosen');
  assert.equal(amountWithUnit('2 sl', units), null, 'too short to name a portion yet');
});

test('what an amount field means comes from its whole text, whatever was typed before it', () => {
  const banana = food('banana', { calories: 89 }, [['1 medium (7" to 7-7/8" long)', 118], ['1 large (8" to 8-7/8" long)', 136], ['1 extra large (9" or longer)', 152]]);
  const e = entryFromFood(banana);
  const at = (quantity: string) => ({ ...e, quantity });
  // Every prefix of "2 large", as a person types it: none of them decides the unit for good.
  const steps = ['2', '2 ', '2 l', '2 la', '2 lar', '2 larg', '2 large'].map((q) => amountOf(at(q)));
  assert.deepEqual(steps.at(-1), { quantity: 2, unit: '2' });
  assert.deepEqual(amountOf(at('2 l')), null, 'a word that names no unit yet is no amount');
  assert.equal(entryGrams(at('2 large')), 272);
  assert.deepEqual(entryInput(at('2 large')), { food_id: e.foodId, quantity: 2, unit: '2', name: 'banana' });
  assert.deepEqual(amountOf(at('1,5')), { quantity: 1.5, unit: e.unit }, 'a bare number takes the unit chosen');
  assert.equal(unknownUnitWord(at('2 xyz')), 'xyz');
  assert.equal(unknownUnitWord(at('2 large')), null);
  assert.equal(amountOf(at('2ces')), null, 'what a rewrite used to leave is not taken for an amount');
});

test('totals scale per 100 g values to the grams; an unknown nutrient makes its total a lower bound', () => {
  const banana = food('banana', { calories: 89, protein_g: 1.09, fiber_g: 2.6, caffeine_mg: 0 }, [['1 medium', 118]]);
  const oats = food('oats', { calories: 389, protein_g: 16.89, fiber_g: null }, []);
  const b = entryFromFood(banana);
  const o = { ...entryFromFood(oats), quantity: '60' };
  const entries: Entry[] = [b, o, { kind: 'free', key: 99, name: 'Honey', calories: '60' }];
  const t = totalsOf(entries);
  assert.ok(Math.abs(t.values.calories! - (89 * 1.18 + 389 * 0.6 + 60)) < 1e-9);
  assert.ok(Math.abs(t.values.protein_g! - (1.09 * 1.18 + 16.89 * 0.6)) < 1e-9);
  assert.equal(t.partial.has('protein_g'), true, 'the honey does not know its protein');
  assert.equal(t.values.fiber_g, 2.6 * 1.18);
  assert.equal(t.partial.has('fiber_g'), true, 'the oats do not know their fibre');
  assert.equal(t.known.has('sugars_g'), false, 'no food knows sugars: no total at all, not 0');
  for (const k of NUTRIENTS) assert.ok(Number.isFinite(t.values[k]));
});

test('a stored entry goes back as stored until its amount changes, then by its food and amount', () => {
  const stored = { name: 'Bananas, raw', calories: 105.02, food_id: 'food_usda_09040', quantity: 1, unit: '3', grams: 118, protein_g: 1.29, fiber_g: 3.07 };
  const e = entryFromStored(stored);
  assert.deepEqual(entryInput(e), stored);
  assert.equal(e.kind, 'food');
  if (e.kind !== 'food') return;
  assert.deepEqual(entryInput({ ...e, quantity: '2' }), { food_id: 'food_usda_09040', quantity: 2, unit: '3', name: 'Bananas, raw' });
  assert.deepEqual(entryInput(entryFromStored({ name: 'Toast', calories: 80 })), { name: 'Toast', calories: 80 });
});
