import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { MealRecord, MealType, RecordSource } from '../db/meals.js';
import {
  countSavedMeals,
  deleteSavedMeal,
  getSavedMeal,
  insertSavedMeal,
  listSavedMeals,
  updateSavedMeal,
  type SavedMealRecord,
} from '../db/saved-meals.js';
import { entryTotals, resolveFoodEntries, type FoodEntryInput } from '../foods/entries.js';
import { FoodEntrySchema } from '../foods/schemas.js';
import { isoDateTime, nonBlankText } from '../fields.js';
import { InvalidInputError, LimitExceededError } from '../domain-errors.js';
import { newId } from '../ids.js';
import { isoUtc } from '../time/tz.js';
import { createMeal, foodEntries, foodEntryResource, mealType } from './meals.js';

export const MAX_SAVED_MEALS = 500;

// ---- Input ----------------------------------------------------------------------------------

const name = nonBlankText(200);
const savedFoods = foodEntries.min(1, { message: 'a saved meal needs at least one food' });

export const SavedMealCreateSchema = z
  .strictObject({ name, meal_type: mealType.nullable().optional(), foods: savedFoods })
  .meta({ id: 'SavedMealCreate' });

export const SavedMealUpdateSchema = z
  .strictObject({ name: name.optional(), meal_type: mealType.nullable().optional(), foods: savedFoods.optional() })
  .meta({ id: 'SavedMealUpdate' });

/** A validated create or update body as the fields it sets (only those sent). */
export function savedMealPatchFrom(body: z.output<typeof SavedMealUpdateSchema>): Partial<SavedMealInput> {
  const out: Partial<SavedMealInput> = {};
  if (body.name !== undefined) out.name = body.name;
  if (body.meal_type !== undefined) out.mealType = body.meal_type;
  if (body.foods !== undefined) out.foods = body.foods;
  return out;
}

// ---- The resource ---------------------------------------------------------------------------

export const SavedMealSchema = z
  .object({
    id: z.string(),
    object: z.literal('nutrition.saved_meal'),
    name: z.string(),
    meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']).nullable(),
    foods: z.array(FoodEntrySchema),
    totals: z
      .object({
        calories: z.number(),
        protein_g: z.number().nullable(),
        carbs_g: z.number().nullable(),
        fat_g: z.number().nullable(),
        fiber_g: z.number().nullable(),
      })
      .meta({ description: 'Sums of the entries (null when no entry knows the nutrient).' }),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'SavedMeal' });


export interface SavedMealInput {
  name: string;
  mealType: MealType | null;
  foods: FoodEntryInput[];
}

export function savedMealResource(m: SavedMealRecord): Record<string, unknown> {
  const totals = entryTotals(m.foods);
  return {
    id: m.id,
    object: 'nutrition.saved_meal',
    name: m.name,
    meal_type: m.mealType,
    foods: m.foods.map(foodEntryResource),
    totals: { calories: totals.calories, protein_g: totals.protein_g, carbs_g: totals.carbs_g, fat_g: totals.fat_g, fiber_g: totals.fiber_g },
    created_at: isoUtc(m.createdMs),
    updated_at: isoUtc(m.updatedMs),
  };
}

/** Saves a named set of entries; entries from foods are computed now and keep these numbers. */
export function createSavedMeal(app: AppContext, input: SavedMealInput): SavedMealRecord {
  const foods = resolveFoodEntries(app, input.foods);
  return afterCommit(app, () => app.bus.write(() => {
    if (countSavedMeals(app.db) >= MAX_SAVED_MEALS) throw new LimitExceededError(`At most ${MAX_SAVED_MEALS} saved meals; delete one first.`);
    const now = app.clock.now();
    const meal: SavedMealRecord = { id: newId('smeal'), name: input.name, mealType: input.mealType, foods, createdMs: now, updatedMs: now };
    insertSavedMeal(app.db, meal);
    return meal;
  }));
}

export function patchSavedMeal(app: AppContext, id: string, patch: Partial<SavedMealInput>): SavedMealRecord | undefined {
  const foods = patch.foods === undefined ? undefined : resolveFoodEntries(app, patch.foods);
  return afterCommit(app, () => app.bus.write(() => {
    const before = getSavedMeal(app.db, id);
    if (!before) return undefined;
    const after: SavedMealRecord = {
      ...before,
      name: patch.name ?? before.name,
      mealType: patch.mealType === undefined ? before.mealType : patch.mealType,
      foods: foods ?? before.foods,
      updatedMs: app.clock.now(),
    };
    updateSavedMeal(app.db, after);
    return after;
  }));
}

export function removeSavedMeal(app: AppContext, id: string): boolean {
  return afterCommit(app, () => app.bus.write(() => deleteSavedMeal(app.db, id)));
}

/** Runs a saved-meal write, then (once it committed) tells whoever follows saved meals. */
function afterCommit<T>(app: AppContext, write: () => T): T {
  const result = write();
  if (!app.db.inTransaction) for (const hook of app.hooks.savedMealsChanged) hook();
  return result;
}

export function findSavedMeal(app: AppContext, id: string): SavedMealRecord | undefined {
  return getSavedMeal(app.db, id);
}

export function allSavedMeals(app: AppContext): SavedMealRecord[] {
  return listSavedMeals(app.db);
}

/**
 * Logs a saved meal as a new meal (one request): its entries as saved, so the meal has the numbers
 * the person saved; meal_type from the request, else the saved meal's.
 */
export function logSavedMeal(
  app: AppContext,
  id: string,
  at: {
    timestampMs: number;
    utcOffsetMin: number | null;
    mealType?: MealType | undefined;
    /** Where the request came from (default manual). */
    source?: RecordSource | undefined;
    /** Neither the request nor the saved meal has a meal type: guess it from the time (else refuse). */
    guessType?: boolean | undefined;
  },
): MealRecord | undefined {
  return app.bus.write(() => {
    const saved = getSavedMeal(app.db, id);
    if (!saved) return undefined;
    const mealType = at.mealType ?? saved.mealType ?? undefined;
    if (!mealType && !at.guessType) {
      throw new InvalidInputError('meal_type', 'This saved meal has no meal_type; send one (breakfast, lunch, dinner or snack).');
    }
    return createMeal(app, { timestampMs: at.timestampMs, utcOffsetMin: at.utcOffsetMin, mealType, description: saved.name, foods: saved.foods, source: at.source });
  });
}
