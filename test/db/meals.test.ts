import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../server/db/connection.js';
import { countMealDaysBefore, countMealDaysThrough, insertMeal, type MealRecord } from '../../server/db/meals.js';

function meal(id: string, day: string): MealRecord {
  const ts = Date.parse(`${day}T12:00:00Z`);
  return {
    id, timestampMs: ts, utcOffsetMin: 0, day, mealType: 'lunch', description: '', calories: 500, caloriesSource: 'logged',
    proteinG: null, carbsG: null, fatG: null, fiberG: null, sodiumMg: null, caffeineMg: null, foods: [], source: 'manual', inferredTime: false, nutrientSources: {}, createdMs: ts, updatedMs: ts,
  };
}

test('days with meals are counted exactly up to the cap, through or before a day', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-db-')), 'chyme.db'));
  for (const [i, day] of ['2026-11-01', '2026-11-01', '2026-11-03', '2026-11-04', '2026-11-07'].entries()) insertMeal(db, meal(`meal_${i}`, day));
  assert.equal(countMealDaysThrough(db, '2026-11-07', 100), 4, 'two meals on one day count once');
  assert.equal(countMealDaysThrough(db, '2026-11-04', 100), 3);
  assert.equal(countMealDaysThrough(db, '2026-11-07', 2), 2, 'the cap stops the count');
  assert.equal(countMealDaysBefore(db, '2026-11-04', 100), 2);
  assert.equal(countMealDaysBefore(db, '2026-11-01', 100), 0);
  assert.equal(countMealDaysThrough(db, '2026-10-31', 2), 0);
  db.close();
});
