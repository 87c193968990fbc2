import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../server/db/connection.js';
import { firstMealDays, insertMeal, type MealRecord } from '../../server/db/meals.js';
import { migrations } from '../../server/db/migrations.js';

function meal(id: string, day: string): MealRecord {
  const ts = Date.parse(`${day}T12:00:00Z`);
  return {
    id, timestampMs: ts, utcOffsetMin: 0, day, mealType: 'lunch', description: '', calories: 500, caloriesSource: 'logged',
    proteinG: null, carbsG: null, fatG: null, fiberG: null, sodiumMg: null, caffeineMg: null, foods: [], source: 'manual', inferredTime: false, mealTypeInferred: false, nutrientSources: {}, createdMs: ts, updatedMs: ts,
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

test('migration 11 keeps every meal and its sync triggers, and lets meals say they came through MCP or MQTT', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'chyme-db-')), 'chyme.db');
  const old = openDatabase(path, { migrations: migrations.filter((m) => m.version < 10) });
  insertMealRow(old, "'meal_old', 1, 60, '2026-11-01', 'lunch', 'soup', 300, 'logged', 10, 20, 5, 2, 400, NULL, '[]', '{}', 'cronometer', 1, 1, 2");
  assert.throws(() => insertMealRow(old, "'meal_mcp', 1, 0, '2026-11-01', 'lunch', '', 1, 'logged', NULL, NULL, NULL, NULL, NULL, NULL, '[]', '{}', 'mcp', 0, 1, 1"), /CHECK/);
  const before = old.prepare('SELECT * FROM meals').all();
  old.close();

  const db = openDatabase(path);
  assert.deepEqual(db.prepare('SELECT * FROM meals').all(), (before as Array<Record<string, unknown>>).map((r) => ({ ...r, meal_type_inferred: 0 })));
  const schema = (type: string) => (db.prepare(`SELECT name FROM sqlite_master WHERE type = ? AND tbl_name = 'meals' AND sql IS NOT NULL ORDER BY name`).all(type) as Array<{ name: string }>).map((r) => r.name);
  assert.deepEqual(schema('index'), ['meals_by_day', 'meals_by_time']);
  assert.deepEqual(schema('trigger'), ['meals_sync_delete', 'meals_sync_insert', 'meals_sync_update']);
  for (const source of ['mcp', 'mqtt']) insertMeal(db, { ...meal(`meal_${source}`, '2026-11-02'), source: source as MealRecord['source'] });
  assert.throws(() => insertMealRow(db, "'meal_bad', 1, 0, '2026-11-01', 'lunch', '', 1, 'logged', NULL, NULL, NULL, NULL, NULL, NULL, '[]', '{}', 'elsewhere', 0, 1, 1"), /CHECK/);
  // With sync on, a change of a meal is still recorded for the other devices.
  db.exec('INSERT OR REPLACE INTO sync_capture (id, active) VALUES (1, 1)');
  db.exec("UPDATE meals SET calories = 310 WHERE id = 'meal_old'");
  assert.deepEqual(db.prepare("SELECT entity, record_id, fields FROM sync_outbox WHERE record_id = 'meal_old'").all(), [{ entity: 'meal', record_id: 'meal_old', fields: 'calories' }]);
  db.close();
});

/** Inserts a row with the columns every schema since migration 5 has, in their order. */
function insertMealRow(db: ReturnType<typeof openDatabase>, values: string): void {
  db.exec(`INSERT INTO meals (id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, calories_source, protein_g, carbs_g, fat_g, fiber_g,
    sodium_mg, caffeine_mg, foods_json, nutrient_sources_json, source, inferred_time, created_ms, updated_ms) VALUES (${values})`);
}
