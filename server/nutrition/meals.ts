import { notifyDataChanged, type AppContext } from '../app-context.js';
import { recountFoodUsage } from '../db/foods.js';
import {
  deleteMeal,
  getMeal,
  insertMeal,
  MEAL_NUTRIENTS,
  updateMeal,
  type CaloriesSource,
  type FoodEntry,
  type MealNutrient,
  type MealRecord,
  type MealType,
  type NutrientSources,
} from '../db/meals.js';
import { previousAttributes } from '../events/bus.js';
import { entryFoodIds, entryTotals, resolveFoodEntries, type FoodEntryInput } from '../foods/entries.js';
import { FoodError } from '../foods/foods.js';
import { newId } from '../ids.js';
import { currentSettings, mealDay } from '../settings.js';
import { isoUtc, offsetMinutes } from '../time/tz.js';

export interface MealInput {
  timestampMs: number;
  /** Offset the client wrote the timestamp with, if any; else the user's zone decides. */
  utcOffsetMin: number | null;
  mealType: MealType;
  description?: string | undefined;
  macros?: Partial<Record<'calories' | 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', number | null>> | undefined;
  micros?: Partial<Record<'sodium_mg' | 'caffeine_mg', number | null>> | undefined;
  /** Entries as sent: {name, calories}, {food_id, quantity, unit, name?}, or a returned entry sent back. */
  foods?: FoodEntryInput[] | undefined;
}

export type MealPatch = Partial<MealInput>;

/** A food entry in a response: the fields it has, in the contract's order. */
export function foodEntryResource(f: FoodEntry): Record<string, unknown> {
  const out: Record<string, unknown> = { name: f.name, calories: f.calories };
  for (const k of ['food_id', 'quantity', 'unit', 'grams', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg'] as const) {
    if (f[k] !== undefined) out[k] = f[k];
  }
  return out;
}

/** Where each nutrient came from, as the resource shows it (null: not known). */
function nutrientSourcesResource(m: MealRecord): Record<MealNutrient, 'logged' | 'foods' | null> {
  const out = {} as Record<MealNutrient, 'logged' | 'foods' | null>;
  for (const k of MEAL_NUTRIENTS) out[k] = sourceOf(m, k);
  return out;
}

/** The API resource for a meal (spec "Meal"); unknown macros read as 0, caffeine as null. */
export function mealResource(m: MealRecord): Record<string, unknown> {
  return {
    object: 'nutrition.meal',
    id: m.id,
    day: m.day,
    timestamp: isoUtc(m.timestampMs),
    meal_type: m.mealType,
    description: m.description,
    macros: {
      calories: m.calories,
      protein_g: m.proteinG ?? 0,
      carbs_g: m.carbsG ?? 0,
      fat_g: m.fatG ?? 0,
      fiber_g: m.fiberG,
    },
    calories_source: m.caloriesSource,
    nutrient_sources: nutrientSourcesResource(m),
    micros: { sodium_mg: m.sodiumMg ?? 0, caffeine_mg: m.caffeineMg },
    foods: m.foods.map(foodEntryResource),
    utc_offset_min: m.utcOffsetMin,
    created_at: isoUtc(m.createdMs),
    updated_at: isoUtc(m.updatedMs),
  };
}

export class MealValidationError extends Error {
  constructor(readonly param: string, message: string) {
    super(message);
  }
}

export const MAX_MEAL_CALORIES = 10_000;

type Macros = Partial<Record<'protein_g' | 'carbs_g' | 'fat_g', number | null>>;

/** Calories derived from what else was logged: the sum of the foods, else 4/4/9 kcal per gram of macros. */
function derivedCalories(macros: Macros | undefined, foods: FoodEntry[]): { calories: number; source: CaloriesSource } {
  if (foods.length > 0) return { calories: foods.reduce((sum, f) => sum + f.calories, 0), source: 'foods' };
  const p = macros?.protein_g ?? 0;
  const c = macros?.carbs_g ?? 0;
  const f = macros?.fat_g ?? 0;
  return { calories: 4 * p + 4 * c + 9 * f, source: 'macros' };
}

function checkCalories(calories: number): number {
  const rounded = Math.round(calories * 100) / 100;
  if (rounded > MAX_MEAL_CALORIES) {
    throw new MealValidationError('macros.calories', `A meal may carry at most ${MAX_MEAL_CALORIES} kcal; this one adds up to ${rounded}.`);
  }
  return rounded;
}

function offsetFor(app: AppContext, timestampMs: number, explicit: number | null): number {
  return explicit ?? offsetMinutes(timestampMs, currentSettings(app).timezone);
}

const FIELD: Record<MealNutrient, 'proteinG' | 'carbsG' | 'fatG' | 'fiberG' | 'sodiumMg' | 'caffeineMg'> = {
  protein_g: 'proteinG',
  carbs_g: 'carbsG',
  fat_g: 'fatG',
  fiber_g: 'fiberG',
  sodium_mg: 'sodiumMg',
  caffeine_mg: 'caffeineMg',
};

/** A nutrient's source; meals from before sources were stored count a value as typed in. */
function sourceOf(m: Pick<MealRecord, 'nutrientSources' | MealFieldName>, k: MealNutrient): 'logged' | 'foods' | null {
  return m.nutrientSources[k] ?? (m[FIELD[k]] !== null ? 'logged' : null);
}
type MealFieldName = (typeof FIELD)[MealNutrient];

function typedValue(input: Pick<MealInput, 'macros' | 'micros'>, k: MealNutrient): number | null | undefined {
  if (k === 'sodium_mg' || k === 'caffeine_mg') return input.micros && k in input.micros ? (input.micros[k] ?? null) : undefined;
  return input.macros && k in input.macros ? (input.macros[k] ?? null) : undefined;
}

/**
 * The calories_source rule for every nutrient: a typed value is kept ("logged") and never
 * overwritten by foods; otherwise the nutrient is the sum of the foods that know it ("foods"),
 * re-derived whenever the foods change; with no such food it is unknown. Sending null for a typed
 * nutrient hands it back to the foods.
 */
function nutrientValues(
  before: Pick<MealRecord, 'nutrientSources' | MealFieldName> | null,
  input: Pick<MealInput, 'macros' | 'micros'>,
  foods: FoodEntry[],
  foodsChanged: boolean,
): { values: Record<MealFieldName, number | null>; sources: NutrientSources } {
  const totals = entryTotals(foods);
  const values = {} as Record<MealFieldName, number | null>;
  const sources: NutrientSources = {};
  for (const k of MEAL_NUTRIENTS) {
    const typed = typedValue(input, k);
    const previous = before ? sourceOf(before, k) : null;
    let value: number | null;
    let source: 'logged' | 'foods' | null;
    if (typed !== undefined && typed !== null) [value, source] = [typed, 'logged'];
    else if (typed === null || !before || previous !== 'logged') {
      // Not typed (or typed away): follows the foods, recomputed only when they or the choice changed.
      const keep = before && typed === undefined && !foodsChanged && previous !== null;
      value = keep ? before[FIELD[k]] : totals[k];
      source = value === null ? null : 'foods';
    } else [value, source] = [before[FIELD[k]], 'logged'];
    values[FIELD[k]] = value;
    if (source) sources[k] = source;
  }
  return { values, sources };
}

function resolveEntries(app: AppContext, foods: FoodEntryInput[] | undefined): FoodEntry[] | undefined {
  if (foods === undefined) return undefined;
  try {
    return resolveFoodEntries(app, foods);
  } catch (err) {
    if (err instanceof FoodError) throw new MealValidationError(err.param, err.message);
    throw err;
  }
}

export function buildMeal(app: AppContext, input: MealInput, id: string, nowMs: number): MealRecord {
  const settings = currentSettings(app);
  const foods = resolveEntries(app, input.foods) ?? [];
  const nutrients = nutrientValues(null, input, foods, true);
  const utcOffsetMin = offsetFor(app, input.timestampMs, input.utcOffsetMin);
  const energy =
    input.macros?.calories != null ? { calories: input.macros.calories, source: 'logged' as const } : derivedCalories(input.macros, foods);
  return {
    id,
    timestampMs: input.timestampMs,
    utcOffsetMin,
    day: mealDay(input.timestampMs, utcOffsetMin, settings.dayStart),
    mealType: input.mealType,
    description: input.description ?? '',
    calories: checkCalories(energy.calories),
    caloriesSource: energy.source,
    ...nutrients.values,
    foods,
    nutrientSources: nutrients.sources,
    createdMs: nowMs,
    updatedMs: nowMs,
  };
}

export function createMeal(app: AppContext, input: MealInput): MealRecord {
  return app.bus.write((emit) => {
    const now = app.clock.now();
    const meal = buildMeal(app, input, newId('meal'), now);
    insertMeal(app.db, meal);
    recountFoodUsage(app.db, entryFoodIds(meal.foods));
    emit('meal.created', mealResource(meal));
    notifyDataChanged(app, emit);
    return meal;
  });
}

export function patchMeal(app: AppContext, id: string, patch: MealPatch): MealRecord | undefined {
  return app.bus.write((emit) => {
    const before = getMeal(app.db, id);
    if (!before) return undefined;
    const settings = currentSettings(app);
    const now = app.clock.now();
    const newFoods = resolveEntries(app, patch.foods);
    const foods = newFoods ?? before.foods;
    const timestampMs = patch.timestampMs ?? before.timestampMs;
    const utcOffsetMin =
      patch.timestampMs !== undefined ? offsetFor(app, timestampMs, patch.utcOffsetMin ?? null) : before.utcOffsetMin;
    const nutrients = nutrientValues(before, patch, foods, newFoods !== undefined);
    const macros = { protein_g: nutrients.values.proteinG, carbs_g: nutrients.values.carbsG, fat_g: nutrients.values.fatG };
    // Typed-in calories change only when new ones are typed; derived ones follow what they came from.
    let energy = { calories: before.calories, source: before.caloriesSource };
    if (patch.macros?.calories != null) energy = { calories: patch.macros.calories, source: 'logged' };
    else if (before.caloriesSource !== 'logged' && (patch.foods !== undefined || patch.macros !== undefined)) energy = derivedCalories(macros, foods);
    const after: MealRecord = {
      ...before,
      timestampMs,
      utcOffsetMin,
      day: mealDay(timestampMs, utcOffsetMin, settings.dayStart),
      mealType: patch.mealType ?? before.mealType,
      description: patch.description ?? before.description,
      calories: checkCalories(energy.calories),
      caloriesSource: energy.source,
      ...nutrients.values,
      foods,
      nutrientSources: nutrients.sources,
      updatedMs: now,
    };
    const beforeResource = mealResource(before);
    const afterResource = mealResource(after);
    const changed = previousAttributes(beforeResource, afterResource);
    if (Object.keys(changed).length === 0) return before;
    updateMeal(app.db, after);
    recountFoodUsage(app.db, [...entryFoodIds(before.foods), ...entryFoodIds(after.foods)]);
    emit('meal.updated', afterResource, { previousAttributes: changed });
    notifyDataChanged(app, emit);
    return after;
  });
}

export function removeMeal(app: AppContext, id: string): MealRecord | undefined {
  return app.bus.write((emit) => {
    const meal = getMeal(app.db, id);
    if (!meal) return undefined;
    deleteMeal(app.db, id);
    recountFoodUsage(app.db, entryFoodIds(meal.foods));
    emit('meal.deleted', { ...mealResource(meal), deleted: true });
    notifyDataChanged(app, emit);
    return meal;
  });
}
