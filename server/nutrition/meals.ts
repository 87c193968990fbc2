import { notifyDataChanged, type AppContext } from '../app-context.js';
import { deleteMeal, getMeal, insertMeal, updateMeal, type CaloriesSource, type Food, type MealRecord, type MealType } from '../db/meals.js';
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
  foods?: Food[] | undefined;
}

export type MealPatch = Partial<MealInput>;

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
    micros: { sodium_mg: m.sodiumMg ?? 0, caffeine_mg: m.caffeineMg },
    foods: m.foods.map((f) => ({ name: f.name, calories: f.calories })),
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
function derivedCalories(macros: Macros | undefined, foods: Food[]): { calories: number; source: CaloriesSource } {
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

export function buildMeal(app: AppContext, input: MealInput, id: string, nowMs: number): MealRecord {
  const settings = currentSettings(app);
  const foods = input.foods ?? [];
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
    proteinG: input.macros?.protein_g ?? null,
    carbsG: input.macros?.carbs_g ?? null,
    fatG: input.macros?.fat_g ?? null,
    fiberG: input.macros?.fiber_g ?? null,
    sodiumMg: input.micros?.sodium_mg ?? null,
    caffeineMg: input.micros?.caffeine_mg ?? null,
    foods,
    createdMs: nowMs,
    updatedMs: nowMs,
  };
}

export function createMeal(app: AppContext, input: MealInput): MealRecord {
  return app.bus.write((emit) => {
    const now = app.clock.now();
    const meal = buildMeal(app, input, newId('meal'), now);
    insertMeal(app.db, meal);
    emit('meal.created', mealResource(meal));
    notifyDataChanged(app, emit, { mealTimes: [meal.timestampMs] });
    return meal;
  });
}

/** Fields of the resource that differ, with their old values (Stripe's previous_attributes). */
function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(before)) {
    if (k !== 'updated_at' && JSON.stringify(v) !== JSON.stringify(after[k])) out[k] = v;
  }
  return out;
}

export function patchMeal(app: AppContext, id: string, patch: MealPatch): MealRecord | undefined {
  return app.bus.write((emit) => {
    const before = getMeal(app.db, id);
    if (!before) return undefined;
    const settings = currentSettings(app);
    const now = app.clock.now();
    const foods = patch.foods ?? before.foods;
    const timestampMs = patch.timestampMs ?? before.timestampMs;
    const utcOffsetMin =
      patch.timestampMs !== undefined ? offsetFor(app, timestampMs, patch.utcOffsetMin ?? null) : before.utcOffsetMin;
    const pick = <K extends keyof NonNullable<MealInput['macros']>>(k: K, old: number | null) =>
      patch.macros && k in patch.macros ? (patch.macros[k] ?? null) : old;
    const pickMicro = <K extends keyof NonNullable<MealInput['micros']>>(k: K, old: number | null) =>
      patch.micros && k in patch.micros ? (patch.micros[k] ?? null) : old;
    const macros = { protein_g: pick('protein_g', before.proteinG), carbs_g: pick('carbs_g', before.carbsG), fat_g: pick('fat_g', before.fatG) };
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
      proteinG: macros.protein_g,
      carbsG: macros.carbs_g,
      fatG: macros.fat_g,
      fiberG: pick('fiber_g', before.fiberG),
      sodiumMg: pickMicro('sodium_mg', before.sodiumMg),
      caffeineMg: pickMicro('caffeine_mg', before.caffeineMg),
      foods,
      updatedMs: now,
    };
    const beforeResource = mealResource(before);
    const afterResource = mealResource(after);
    const changed = previousAttributes(beforeResource, afterResource);
    if (Object.keys(changed).length === 0) return before;
    updateMeal(app.db, after);
    emit('meal.updated', afterResource, { previousAttributes: changed });
    notifyDataChanged(app, emit, { mealTimes: [before.timestampMs, after.timestampMs] });
    return after;
  });
}

export function removeMeal(app: AppContext, id: string): MealRecord | undefined {
  return app.bus.write((emit) => {
    const meal = getMeal(app.db, id);
    if (!meal) return undefined;
    deleteMeal(app.db, id);
    emit('meal.deleted', { ...mealResource(meal), deleted: true });
    notifyDataChanged(app, emit, { mealTimes: [meal.timestampMs] });
    return meal;
  });
}
