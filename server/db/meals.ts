import type { SqlDatabase as Db } from './sql-api.js';

export type MealType = 'breakfast' | 'lunch' | 'dinner' | 'snack';
export const MEAL_TYPES: readonly MealType[] = ['breakfast', 'lunch', 'dinner', 'snack'];

/** The nutrients a food entry may carry besides calories (per entry, not per 100 g). */
export const ENTRY_NUTRIENTS = ['protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg'] as const;
export type EntryNutrient = (typeof ENTRY_NUTRIENTS)[number];

/**
 * A food entry of a meal or saved meal as stored and returned: always a name and calories (the
 * interface requires them); entries built from a food also carry what they were built from and
 * every nutrient computed at that moment, so later edits of the food never change them.
 */
export interface FoodEntry {
  name: string;
  calories: number;
  food_id?: string;
  quantity?: number;
  /** "g", "ml", or the id of one of the food's portions. */
  unit?: string;
  grams?: number;
  protein_g?: number | null;
  carbs_g?: number | null;
  fat_g?: number | null;
  fiber_g?: number | null;
  sugars_g?: number | null;
  sodium_mg?: number | null;
  caffeine_mg?: number | null;
}

/** The meal nutrients (besides calories) that follow the calories_source rule: typed in, or the sum of the foods. */
export const MEAL_NUTRIENTS = ['protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sodium_mg', 'caffeine_mg'] as const;
export type MealNutrient = (typeof MEAL_NUTRIENTS)[number];
export type NutrientSource = 'logged' | 'foods';
export type NutrientSources = Partial<Record<MealNutrient, NutrientSource>>;

/** Where a meal's calories came from: typed in, or derived from its foods or macros. */
export type CaloriesSource = 'logged' | 'foods' | 'macros';

/**
 * Where a record came from: typed into Chyme (the app or a /v1 client), one of the apps it imports
 * from, an AI assistant through MCP, or Home Assistant (or any client) through MQTT.
 */
export const RECORD_SOURCES = ['manual', 'apple_health', 'cronometer', 'myfitnesspal', 'oura', 'fitbit', 'mcp', 'mqtt'] as const;
export type RecordSource = (typeof RECORD_SOURCES)[number];

export interface MealRecord {
  id: string;
  timestampMs: number;
  utcOffsetMin: number;
  day: string;
  mealType: MealType;
  description: string;
  calories: number;
  caloriesSource: CaloriesSource;
  proteinG: number | null;
  carbsG: number | null;
  fatG: number | null;
  fiberG: number | null;
  sodiumMg: number | null;
  caffeineMg: number | null;
  source: RecordSource;
  /** True when the source had no time of day and a default meal time was used. */
  inferredTime: boolean;
  /** True when the meal type was guessed from the time of day (moving the meal guesses again). */
  mealTypeInferred: boolean;
  foods: FoodEntry[];
  /** Where each nutrient came from; absent = legacy (logged when it has a value). */
  nutrientSources: NutrientSources;
  createdMs: number;
  updatedMs: number;
}

interface MealRow {
  id: string;
  timestamp_ms: number;
  utc_offset_min: number;
  day: string;
  meal_type: MealType;
  description: string;
  calories: number;
  calories_source: CaloriesSource;
  protein_g: number | null;
  carbs_g: number | null;
  fat_g: number | null;
  fiber_g: number | null;
  sodium_mg: number | null;
  caffeine_mg: number | null;
  foods_json: string;
  source: RecordSource;
  inferred_time: number;
  meal_type_inferred: number;
  nutrient_sources_json: string;
  created_ms: number;
  updated_ms: number;
}

function fromRow(r: MealRow): MealRecord {
  return {
    id: r.id,
    timestampMs: r.timestamp_ms,
    utcOffsetMin: r.utc_offset_min,
    day: r.day,
    mealType: r.meal_type,
    description: r.description,
    calories: r.calories,
    caloriesSource: r.calories_source,
    proteinG: r.protein_g,
    carbsG: r.carbs_g,
    fatG: r.fat_g,
    fiberG: r.fiber_g,
    sodiumMg: r.sodium_mg,
    caffeineMg: r.caffeine_mg,
    source: r.source,
    inferredTime: r.inferred_time === 1,
    mealTypeInferred: r.meal_type_inferred === 1,
    foods: JSON.parse(r.foods_json) as FoodEntry[],
    nutrientSources: JSON.parse(r.nutrient_sources_json) as NutrientSources,
    createdMs: r.created_ms,
    updatedMs: r.updated_ms,
  };
}

function toParams(m: MealRecord) {
  return {
    id: m.id,
    timestamp_ms: m.timestampMs,
    utc_offset_min: m.utcOffsetMin,
    day: m.day,
    meal_type: m.mealType,
    description: m.description,
    calories: m.calories,
    calories_source: m.caloriesSource,
    protein_g: m.proteinG,
    carbs_g: m.carbsG,
    fat_g: m.fatG,
    fiber_g: m.fiberG,
    sodium_mg: m.sodiumMg,
    caffeine_mg: m.caffeineMg,
    foods_json: JSON.stringify(m.foods),
    source: m.source,
    inferred_time: m.inferredTime ? 1 : 0,
    meal_type_inferred: m.mealTypeInferred ? 1 : 0,
    nutrient_sources_json: JSON.stringify(m.nutrientSources),
    created_ms: m.createdMs,
    updated_ms: m.updatedMs,
  };
}

const COLUMNS =
  'id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, calories_source, protein_g, carbs_g, fat_g, fiber_g, sodium_mg, caffeine_mg, foods_json, nutrient_sources_json, source, inferred_time, meal_type_inferred, created_ms, updated_ms';

export function insertMeal(db: Db, meal: MealRecord): void {
  db.prepare(
    `INSERT INTO meals (${COLUMNS}) VALUES (@id, @timestamp_ms, @utc_offset_min, @day, @meal_type, @description, @calories, @calories_source, @protein_g, @carbs_g, @fat_g, @fiber_g, @sodium_mg, @caffeine_mg, @foods_json, @nutrient_sources_json, @source, @inferred_time, @meal_type_inferred, @created_ms, @updated_ms)`,
  ).run(toParams(meal));
}

export function updateMeal(db: Db, meal: MealRecord): void {
  db.prepare(
    `UPDATE meals SET timestamp_ms = @timestamp_ms, utc_offset_min = @utc_offset_min, day = @day, meal_type = @meal_type,
       description = @description, calories = @calories, calories_source = @calories_source, protein_g = @protein_g, carbs_g = @carbs_g, fat_g = @fat_g,
       fiber_g = @fiber_g, sodium_mg = @sodium_mg, caffeine_mg = @caffeine_mg, foods_json = @foods_json, nutrient_sources_json = @nutrient_sources_json, inferred_time = @inferred_time, meal_type_inferred = @meal_type_inferred, updated_ms = @updated_ms
     WHERE id = @id`,
  ).run(toParams(meal));
}

export function deleteMeal(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM meals WHERE id = ?').run(id).changes > 0;
}

export function getMeal(db: Db, id: string): MealRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM meals WHERE id = ?`).get(id) as MealRow | undefined;
  return row && fromRow(row);
}

/** The newest meal eaten at or before `ms` (meals logged ahead of time are not "the last meal" yet). */
export function latestMealAtOrBefore(db: Db, ms: number): MealRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM meals WHERE timestamp_ms <= ? ORDER BY timestamp_ms DESC, id DESC LIMIT 1`).get(ms) as MealRow | undefined;
  return row && fromRow(row);
}

export function mealExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM meals WHERE id = ?').get(id) !== undefined;
}

/** A position in the newest-first order: (timestamp desc, id desc). */
export interface SortPosition {
  timestampMs: number;
  id: string;
}

export function mealPosition(db: Db, id: string): SortPosition | undefined {
  const row = db.prepare('SELECT timestamp_ms, id FROM meals WHERE id = ?').get(id) as
    | { timestamp_ms: number; id: string }
    | undefined;
  return row && { timestampMs: row.timestamp_ms, id: row.id };
}

export interface MealPageQuery {
  startDay: string;
  endDay: string;
  mealType?: MealType | undefined;
  after?: SortPosition | undefined;
  limit: number;
}

/** One page of meals newest first, by user day range; reads limit + 1 rows to know has_more. */
export function listMealsPage(db: Db, q: MealPageQuery): { meals: MealRecord[]; hasMore: boolean } {
  const where = ['day >= @startDay', 'day <= @endDay'];
  if (q.mealType) where.push('meal_type = @mealType');
  if (q.after) where.push('(timestamp_ms < @afterTs OR (timestamp_ms = @afterTs AND id < @afterId))');
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM meals WHERE ${where.join(' AND ')} ORDER BY timestamp_ms DESC, id DESC LIMIT @take`)
    .all({
      startDay: q.startDay,
      endDay: q.endDay,
      mealType: q.mealType ?? null,
      afterTs: q.after?.timestampMs ?? null,
      afterId: q.after?.id ?? null,
      take: q.limit + 1,
    }) as MealRow[];
  return { meals: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
}

/** Meals with fromMs <= timestamp < toMs, oldest first (what the digestion engine reads). */
export function listMealsBetween(db: Db, fromMs: number, toMs: number): MealRecord[] {
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM meals WHERE timestamp_ms >= ? AND timestamp_ms < ? ORDER BY timestamp_ms ASC, id ASC`)
    .all(fromMs, toMs) as MealRow[];
  return rows.map(fromRow);
}

/** Meals whose user day lies in [startDay, endDay], oldest first. */
export function listMealsByDays(db: Db, startDay: string, endDay: string): MealRecord[] {
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM meals WHERE day >= ? AND day <= ? ORDER BY timestamp_ms ASC, id ASC`)
    .all(startDay, endDay) as MealRow[];
  return rows.map(fromRow);
}

export function listAllMeals(db: Db): MealRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM meals ORDER BY timestamp_ms ASC, id ASC`).all() as MealRow[]).map(fromRow);
}

/**
 * The first `count` distinct user days with a meal, ascending: what calibration needs ("fewer than
 * two days logged through this day"). One walk of the day index from its start, whatever the
 * length of history.
 */
export function firstMealDays(db: Db, count: number): string[] {
  return (db.prepare('SELECT DISTINCT day FROM meals ORDER BY day ASC LIMIT ?').all(count) as Array<{ day: string }>).map((r) => r.day);
}

/** True when at least one meal is stored. */
export function hasMeals(db: Db): boolean {
  return db.prepare('SELECT 1 FROM meals LIMIT 1').get() !== undefined;
}

export function countMeals(db: Db): number {
  return db.prepare('SELECT count(*) FROM meals').pluck().get() as number;
}

/** Re-derives every meal's day (after a day_start change); `dayFor` maps (instant, offset) to a day. */
export function recomputeMealDays(db: Db, dayFor: (timestampMs: number, utcOffsetMin: number) => string): number {
  const rows = db.prepare('SELECT id, timestamp_ms, utc_offset_min, day FROM meals').all() as Pick<
    MealRow,
    'id' | 'timestamp_ms' | 'utc_offset_min' | 'day'
  >[];
  const update = db.prepare('UPDATE meals SET day = ? WHERE id = ?');
  let changed = 0;
  for (const r of rows) {
    const day = dayFor(r.timestamp_ms, r.utc_offset_min);
    if (day !== r.day) {
      update.run(day, r.id);
      changed++;
    }
  }
  return changed;
}
