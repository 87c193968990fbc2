import { z } from 'zod';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import {
  deleteMeal,
  getMeal,
  insertMeal,
  MEAL_TYPES,
  RECORD_SOURCES,
  updateMeal,
  type CaloriesSource,
  type Food,
  type MealRecord,
  type MealType,
  type RecordSource,
} from '../db/meals.js';
import { InvalidInputError } from '../domain-errors.js';
import { mealDay } from '../engine/days.js';
import { dateTimeString, isoDateTime, parseDateTime } from '../fields.js';
import { newId } from '../ids.js';
import { currentSettings, type SettingsRecord } from '../settings.js';
import { isoUtc, offsetMinutes } from '../time/tz.js';

/**
 * Meals: the rules a meal must keep (bounds, calorie derivation, its day), the schemas of what a
 * client sends and receives, and the one mapper from a stored meal to its API resource.
 */

// ---- Input ----------------------------------------------------------------------------------

export const MAX_MEAL_CALORIES = 10_000;

export const mealType = z.enum(MEAL_TYPES as [MealType, ...MealType[]], {
  message: `must be one of ${MEAL_TYPES.join(', ')}`,
});

const bounded = (max: number) =>
  z.number({ message: 'must be a number' }).finite().min(0, { message: 'must not be negative' }).max(max, { message: `must be at most ${max}` });

const foodInput = z.strictObject({
  name: z.string().trim().min(1, { message: 'must not be empty' }).max(200),
  calories: bounded(MAX_MEAL_CALORIES),
});

const macrosCreate = z.strictObject({
  calories: bounded(MAX_MEAL_CALORIES).optional(),
  protein_g: bounded(2000).optional(),
  carbs_g: bounded(2000).optional(),
  fat_g: bounded(2000).optional(),
  fiber_g: bounded(2000).optional(),
});
const macrosPatch = z.strictObject({
  calories: bounded(MAX_MEAL_CALORIES).optional(),
  protein_g: bounded(2000).nullable().optional(),
  carbs_g: bounded(2000).nullable().optional(),
  fat_g: bounded(2000).nullable().optional(),
  fiber_g: bounded(2000).nullable().optional(),
});
const microsInput = z.strictObject({
  sodium_mg: bounded(50_000).nullable().optional(),
  caffeine_mg: bounded(2000).nullable().optional(),
});

const description = z.string().max(2000, { message: 'must be at most 2000 characters' });
const foods = z.array(foodInput).max(100, { message: 'a meal may list at most 100 foods' });

export const MealCreateSchema = z
  .strictObject({
    timestamp: dateTimeString,
    meal_type: mealType,
    description: description.optional(),
    macros: macrosCreate.optional(),
    micros: microsInput.optional(),
    foods: foods.optional(),
  })
  .meta({ id: 'MealCreate' });

export const MealUpdateSchema = z
  .strictObject({
    timestamp: dateTimeString.optional(),
    meal_type: mealType.optional(),
    description: description.optional(),
    macros: macrosPatch.optional(),
    micros: microsInput.optional(),
    foods: foods.optional(),
  })
  .meta({ id: 'MealUpdate' });

type Macros = Partial<Record<'calories' | 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', number | null>>;
type Micros = Partial<Record<'sodium_mg' | 'caffeine_mg', number | null>>;

export interface MealInput {
  timestampMs: number;
  /** Offset the client wrote the timestamp with, if any; else the user's zone decides. */
  utcOffsetMin: number | null;
  mealType: MealType;
  description?: string | undefined;
  macros?: Macros | undefined;
  micros?: Micros | undefined;
  foods?: Food[] | undefined;
  /** Where macros.calories came from when they were not typed in just now (an import, a kept value). */
  caloriesSource?: CaloriesSource | undefined;
  /** The app the meal was imported from (default manual). */
  source?: RecordSource | undefined;
  /** True when the source gave no time of day and a default meal time was used. */
  inferredTime?: boolean | undefined;
}

export type MealPatch = Partial<Omit<MealInput, 'caloriesSource' | 'source' | 'inferredTime'>>;

/** Accepts meals from 2000 up to a day ahead (clock skew, planned dinner); beyond is a typo. */
function checkTimestamp(ms: number, nowMs: number): void {
  if (ms < Date.UTC(2000, 0, 1) || ms > nowMs + 24 * 3600_000) {
    throw new InvalidInputError('timestamp', 'Invalid timestamp: must be after 2000-01-01 and at most one day in the future.');
  }
}

/** A validated create or update body as the fields it sets (only those sent). */
export function mealPatchFrom(body: z.output<typeof MealUpdateSchema>, nowMs: number): MealPatch {
  const out: MealPatch = {};
  if (body.timestamp !== undefined) {
    const t = parseDateTime(body.timestamp);
    checkTimestamp(t.ms, nowMs);
    out.timestampMs = t.ms;
    out.utcOffsetMin = t.offsetMin;
  }
  if (body.meal_type !== undefined) out.mealType = body.meal_type;
  if (body.description !== undefined) out.description = body.description;
  if (body.macros !== undefined) out.macros = body.macros;
  if (body.micros !== undefined) out.micros = body.micros;
  if (body.foods !== undefined) out.foods = body.foods;
  return out;
}

export function mealInputFrom(body: z.output<typeof MealCreateSchema>, nowMs: number): MealInput {
  return mealPatchFrom(body, nowMs) as MealInput;
}

// ---- Rules ----------------------------------------------------------------------------------

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
    throw new InvalidInputError('macros.calories', `A meal may carry at most ${MAX_MEAL_CALORIES} kcal; this one adds up to ${rounded}.`);
  }
  return rounded;
}

/**
 * The one way a meal record is made, for create, patch and import: its offset (the one written,
 * else the user's zone at that instant), its day, and its calories (typed in, else derived).
 */
export function buildMeal(
  settings: Pick<SettingsRecord, 'timezone' | 'dayStart'>,
  input: MealInput,
  meta: { id: string; createdMs: number; updatedMs: number },
): MealRecord {
  const foods = input.foods ?? [];
  const utcOffsetMin = input.utcOffsetMin ?? offsetMinutes(input.timestampMs, settings.timezone);
  const energy =
    input.macros?.calories != null
      ? { calories: input.macros.calories, source: input.caloriesSource ?? ('logged' as const) }
      : derivedCalories(input.macros, foods);
  return {
    id: meta.id,
    timestampMs: input.timestampMs,
    utcOffsetMin,
    day: mealDay({ timestamp: input.timestampMs, utcOffsetMin }, settings),
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
    source: input.source ?? 'manual',
    inferredTime: input.inferredTime ?? false,
    createdMs: meta.createdMs,
    updatedMs: meta.updatedMs,
  };
}

/**
 * A stored meal with a patch applied, as the input buildMeal takes. Macros and micros merge field
 * by field (null clears one); typed-in calories change only when new ones are typed, derived ones
 * follow what they came from.
 */
function patchedInput(before: MealRecord, patch: MealPatch): MealInput {
  const has = <T extends object>(obj: T | undefined, key: PropertyKey): obj is T => obj !== undefined && key in obj;
  const macro = (k: 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', old: number | null) =>
    has(patch.macros, k) ? (patch.macros[k] ?? null) : old;
  const micro = (k: 'sodium_mg' | 'caffeine_mg', old: number | null) => (has(patch.micros, k) ? (patch.micros[k] ?? null) : old);
  const typedNow = patch.macros?.calories != null;
  const rederive = !typedNow && before.caloriesSource !== 'logged' && (patch.foods !== undefined || patch.macros !== undefined);
  return {
    timestampMs: patch.timestampMs ?? before.timestampMs,
    utcOffsetMin: patch.timestampMs !== undefined ? (patch.utcOffsetMin ?? null) : before.utcOffsetMin,
    mealType: patch.mealType ?? before.mealType,
    description: patch.description ?? before.description,
    macros: {
      calories: typedNow ? patch.macros!.calories : rederive ? null : before.calories,
      protein_g: macro('protein_g', before.proteinG),
      carbs_g: macro('carbs_g', before.carbsG),
      fat_g: macro('fat_g', before.fatG),
      fiber_g: macro('fiber_g', before.fiberG),
    },
    micros: { sodium_mg: micro('sodium_mg', before.sodiumMg), caffeine_mg: micro('caffeine_mg', before.caffeineMg) },
    foods: patch.foods ?? before.foods,
    caloriesSource: typedNow ? 'logged' : before.caloriesSource,
    source: before.source,
    // A time given by the person replaces the default meal time an import assumed.
    inferredTime: patch.timestampMs !== undefined ? false : before.inferredTime,
  };
}

// ---- Writes ---------------------------------------------------------------------------------

export function createMeal(app: AppContext, input: MealInput): MealRecord {
  return app.bus.write((emit) => {
    const now = app.clock.now();
    const meal = buildMeal(currentSettings(app), input, { id: newId('meal'), createdMs: now, updatedMs: now });
    insertMeal(app.db, meal);
    emit('meal.created', mealResource(meal));
    notifyDataChanged(app, emit);
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
    const after = buildMeal(currentSettings(app), patchedInput(before, patch), {
      id: before.id,
      createdMs: before.createdMs,
      updatedMs: app.clock.now(),
    });
    const beforeResource = mealResource(before);
    const afterResource = mealResource(after);
    const changed = previousAttributes(beforeResource, afterResource);
    if (Object.keys(changed).length === 0) return before;
    updateMeal(app.db, after);
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
    emit('meal.deleted', { ...mealResource(meal), deleted: true });
    notifyDataChanged(app, emit);
    return meal;
  });
}

// ---- The resource ---------------------------------------------------------------------------

export const MealSchema = z
  .object({
    object: z.literal('nutrition.meal'),
    id: z.string(),
    day: z.string().meta({ format: 'date' }),
    timestamp: isoDateTime,
    meal_type: z.enum(['breakfast', 'lunch', 'dinner', 'snack']),
    description: z.string(),
    macros: z.object({
      calories: z.number(),
      protein_g: z.number(),
      carbs_g: z.number(),
      fat_g: z.number(),
      fiber_g: z.number().nullable(),
    }),
    calories_source: z.enum(['logged', 'foods', 'macros']).meta({
      description: 'Where macros.calories came from: typed in, the sum of the foods, or 4/4/9 kcal per gram of macros. Derived calories follow their source when it is edited.',
    }),
    micros: z.object({ sodium_mg: z.number(), caffeine_mg: z.number().nullable() }),
    foods: z.array(z.object({ name: z.string(), calories: z.number() })),
    utc_offset_min: z.number().int().meta({ description: 'Offset from UTC, in minutes, where the meal was eaten.' }),
    inferred_time: z.boolean().meta({
      description: 'True when the meal came from a source without a time of day and a default meal time was used; the digestion model weighs such meals down.',
    }),
    source: z.enum(RECORD_SOURCES).meta({ description: 'Where the meal came from: typed into Chyme (manual), or the app it was imported from.' }),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: 'Meal' });

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
    inferred_time: m.inferredTime,
    source: m.source,
    created_at: isoUtc(m.createdMs),
    updated_at: isoUtc(m.updatedMs),
  };
}
