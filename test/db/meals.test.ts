import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../server/db/connection.js';
import { firstMealDays, insertMeal, type MealRecord } from '../../server/db/meals.js';

function meal(id: string, day: string): MealRecord {
  const ts = Date.parse(`${day}T12:00:00Z`);
  return {
    id, timestampMs: ts, utcOffsetMin: 0, day, mealType: 'lunch', description: '', calories: 500, caloriesSource: 'logged',
    proteinG: null, carbsG: null, fatG: null, fiberG: null, sodiumMg: null, caffeineMg: null, foods: [], source: 'manual', inferredTime: false, nutrientSources: {}, createdMs: ts, updatedMs: ts,
  };
}

test('the first days with meals are listed once each, oldest first, up to the count', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-db-')), 'chyme.db'));
  assert.deepEqual(firstMealDays(db, 2), [], 'no meals, no days');
  for (const [i, day] of ['2026-11-07', '2026-11-01', '2026-11-01', '2026-11-03', '2026-11-04'].entries()) insertMeal(db, meal(`meal_${i}`, day));
  assert.deepEqual(firstMealDays(db, 2), ['2026-11-01', '2026-11-03'], 'two meals on one day count once');
  assert.deepEqual(firstMealDays(db, 10), ['2026-11-01', '2026-11-03', '2026-11-04', '2026-11-07']);
  db.close();
});
