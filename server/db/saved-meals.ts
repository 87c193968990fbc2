import type { SqlDatabase as Db } from './sql-api.js';
import type { FoodEntry, MealType } from './meals.js';

export interface SavedMealRecord {
  id: string;
  name: string;
  mealType: MealType | null;
  foods: FoodEntry[];
  createdMs: number;
  updatedMs: number;
}

interface SavedMealRow {
  id: string;
  name: string;
  meal_type: MealType | null;
  foods_json: string;
  created_ms: number;
  updated_ms: number;
}

const COLUMNS = 'id, name, meal_type, foods_json, created_ms, updated_ms';

function fromRow(r: SavedMealRow): SavedMealRecord {
  return {
    id: r.id,
    name: r.name,
    mealType: r.meal_type,
    foods: JSON.parse(r.foods_json) as FoodEntry[],
    createdMs: r.created_ms,
    updatedMs: r.updated_ms,
  };
}

function toParams(m: SavedMealRecord) {
  return { id: m.id, name: m.name, meal_type: m.mealType, foods_json: JSON.stringify(m.foods), created_ms: m.createdMs, updated_ms: m.updatedMs };
}

export function insertSavedMeal(db: Db, m: SavedMealRecord): void {
  db.prepare(`INSERT INTO saved_meals (${COLUMNS}) VALUES (@id, @name, @meal_type, @foods_json, @created_ms, @updated_ms)`).run(toParams(m));
}

export function updateSavedMeal(db: Db, m: SavedMealRecord): void {
  db.prepare('UPDATE saved_meals SET name = @name, meal_type = @meal_type, foods_json = @foods_json, updated_ms = @updated_ms WHERE id = @id').run(
    toParams(m),
  );
}

export function deleteSavedMeal(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM saved_meals WHERE id = ?').run(id).changes > 0;
}

export function getSavedMeal(db: Db, id: string): SavedMealRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM saved_meals WHERE id = ?`).get(id) as SavedMealRow | undefined;
  return row && fromRow(row);
}

/** Every saved meal, by name (case-insensitive), then id. */
export function listSavedMeals(db: Db): SavedMealRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM saved_meals ORDER BY name COLLATE NOCASE, id`).all() as SavedMealRow[]).map(fromRow);
}

export function countSavedMeals(db: Db): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM saved_meals').get() as { n: number }).n;
}

export function savedMealExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM saved_meals WHERE id = ?').get(id) !== undefined;
}
