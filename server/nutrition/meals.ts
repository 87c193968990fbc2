import { createHash } from 'node:crypto';
import { z } from 'zod';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import { recountFoodUsage } from '../db/foods.js';
import {
  deleteMeal,
  getMeal,
  insertMeal,
  MEAL_NUTRIENTS,
  MEAL_TYPES,
  RECORD_SOURCES,
  updateMeal,
  type CaloriesSource,
  type FoodEntry,
  type MealNutrient,
  type MealRecord,
  type MealType,
  type NutrientSources,
  type RecordSource,
} from '../db/meals.js';
import { InvalidInputError, PreconditionFailedError } from '../domain-errors.js';
import { mealDay } from '../engine/days.js';
import { previousAttributes } from '../events/bus.js';
import { entryFoodIds, entryTotals, resolveFoodEntries, type FoodEntryInput } from '../foods/entries.js';
import { FoodEntrySchema, NutrientSourcesSchema } from '../foods/schemas.js';
import { boundedDateTime, foodIdField, isoDateTime, nonBlankText, parseDateTime, type FutureBound } from '../fields.js';
import { newId } from '../ids.js';
import { guessMealType } from './meal-type.js';
import { currentSettings, type SettingsRecord } from '../settings.js';
import { isoUtc, offsetMinutes } from '../time/tz.js';
import type { MealNumbers } from './totals.js';

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

/**
 * A food entry: {name, calories} as before; {food_id, quantity, unit?, name?} computed from the food;
 * or an entry exactly as a meal returned it (kept as sent, so re-sending a meal's foods never
 * rewrites them).
 */
export const foodEntryInput = z
  .strictObject({
    name: nonBlankText(200).optional(),
    calories: bounded(MAX_MEAL_CALORIES).optional(),
    food_id: foodIdField.optional(),
    quantity: z.number({ message: 'must be a number' }).finite().gt(0, { message: 'must be more than 0' }).max(100_000).optional(),
    unit: z
      .string()
      .min(1)
      .max(20)
      .optional()
      .meta({
        description:
          '"g", "ml", a portion id of the food, or a word of a portion ("slice", "medium") or of the food ("eggs"). Omitted: quantity counts the food\'s natural unit, its first portion (2 eggs, 1 slice).',
      }),
    grams: bounded(100_000).optional(),
    protein_g: bounded(2000).nullable().optional(),
    carbs_g: bounded(2000).nullable().optional(),
    fat_g: bounded(2000).nullable().optional(),
    fiber_g: bounded(2000).nullable().optional(),
    sugars_g: bounded(2000).nullable().optional(),
    sodium_mg: bounded(50_000).nullable().optional(),
    caffeine_mg: bounded(2000).nullable().optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.food_id !== undefined) {
      if (entry.quantity === undefined) ctx.addIssue({ code: 'custom', path: ['quantity'], message: 'is required with food_id' });
      // Computed from the food, a missing unit is its natural one; an entry sent back says its own.
      else if (entry.unit === undefined && entry.calories !== undefined) ctx.addIssue({ code: 'custom', path: ['unit'], message: 'is required with food_id' });
      return;
    }
    if (entry.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required without food_id' });
    else if (entry.calories === undefined) ctx.addIssue({ code: 'custom', path: ['calories'], message: 'is required without food_id' });
  })
  .meta({ id: 'FoodEntryInput' });

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
const macrosCreate = z.lazy(() =>
  z.strictObject({
    calories: bounded(MAX_MEAL_CALORIES).optional(),
    protein_g: bounded(2000).optional(),
    carbs_g: bounded(2000).optional(),
    fat_g: bounded(2000).optional(),
    fiber_g: bounded(2000).optional(),
  }),
);
const macrosPatch = z.lazy(() =>
  z.strictObject({
    calories: bounded(MAX_MEAL_CALORIES).nullable().optional(),
    protein_g: bounded(2000).nullable().optional(),
    carbs_g: bounded(2000).nullable().optional(),
    fat_g: bounded(2000).nullable().optional(),
    fiber_g: bounded(2000).nullable().optional(),
  }),
);
const microsInput = z.lazy(() =>
  z.strictObject({
    sodium_mg: bounded(50_000).nullable().optional(),
    caffeine_mg: bounded(2000).nullable().optional(),
  }),
);

const description = z.string().max(2000, { message: 'must be at most 2000 characters' });
export const foodEntries = z.array(foodEntryInput).max(100, { message: 'a meal may list at most 100 foods' });

/** Meals from 2000 up to a day ahead (clock skew, a planned dinner); beyond is a typo. */
const MEAL_TIMESTAMP_MAX_FUTURE: FutureBound = { iso: 'P1D', ms: 24 * 3600_000, words: 'one day' };
export const mealTimestamp = boundedDateTime({ earliest: '2000-01-01T00:00:00Z', maxFuture: MEAL_TIMESTAMP_MAX_FUTURE });

export const MealCreateSchema = z.lazy(() =>
  z
    .strictObject({
      timestamp: mealTimestamp,
      meal_type: mealType,
      description: description.optional(),
      macros: macrosCreate.optional(),
      micros: microsInput.optional(),
      foods: foodEntries.optional(),
    })
    .meta({ id: 'MealCreate' }),
);

export const MealUpdateSchema = z.lazy(() =>
  z
    .strictObject({
      timestamp: mealTimestamp.optional(),
      meal_type: mealType.optional(),
      description: description.optional(),
      macros: macrosPatch.optional(),
      micros: microsInput.optional(),
      foods: foodEntries.optional(),
    })
    .meta({ id: 'MealUpdate' }),
);

type Macros = Partial<Record<'calories' | 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', number | null>>;
type Micros = Partial<Record<'sodium_mg' | 'caffeine_mg', number | null>>;

export interface MealInput {
  timestampMs: number;
  /** Offset the client wrote the timestamp with, if any; else the user's zone decides. */
  utcOffsetMin: number | null;
  /**
   * Absent: the meal type the local time of day suggests (an assistant or Home Assistant gave
   * none), guessed again whenever the meal is moved, until one is given.
   */
  mealType?: MealType | undefined;
  description?: string | undefined;
  macros?: Macros | undefined;
  micros?: Micros | undefined;
  /** Entries as sent: {name, calories}, {food_id, quantity, unit, name?}, or a returned entry sent back. */
  foods?: FoodEntryInput[] | undefined;
  /** Where macros.calories came from when they were not typed in just now (an import, a kept value). */
  caloriesSource?: CaloriesSource | undefined;
  /** The app the meal was imported from (default manual). */
  source?: RecordSource | undefined;
  /** True when the source gave no time of day and a default meal time was used. */
  inferredTime?: boolean | undefined;
  /**
   * Where each nutrient given in macros/micros came from when not typed just now: "foods" means
   * it follows the foods (recomputed from them); otherwise a value given counts as typed in.
   */
  nutrientSources?: NutrientSources | undefined;
}

/** What buildMeal takes: an input whose food entries are resolved (computed from their foods). */
export type ResolvedMealInput = Omit<MealInput, 'foods'> & { foods?: FoodEntry[] | undefined };

export type MealPatch = Partial<Omit<MealInput, 'caloriesSource' | 'nutrientSources' | 'source' | 'inferredTime'>>;

/** Accepts meals from 2000 up to a day ahead (clock skew, planned dinner); beyond is a typo. */
export function checkTimestamp(ms: number, nowMs: number): void {
  if (ms < Date.UTC(2000, 0, 1) || ms > nowMs + MEAL_TIMESTAMP_MAX_FUTURE.ms) {
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

export function mealInputFrom(
  body: Omit<z.output<typeof MealCreateSchema>, 'meal_type'> & { meal_type?: MealType | undefined },
  nowMs: number,
): MealInput {
  return mealPatchFrom(body, nowMs) as MealInput;
}

// ---- Rules ----------------------------------------------------------------------------------

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
    throw new InvalidInputError('macros.calories', `A meal may carry at most ${MAX_MEAL_CALORIES} kcal; this one adds up to ${rounded}.`);
  }
  return rounded;
}

/**
 * The one way a meal record is made, for create, patch and import: its offset (the one written,
 * else the user's zone at that instant), its day, and its calories (typed in, else derived).
 */
const FIELD: Record<MealNutrient, 'proteinG' | 'carbsG' | 'fatG' | 'fiberG' | 'sodiumMg' | 'caffeineMg'> = {
  protein_g: 'proteinG',
  carbs_g: 'carbsG',
  fat_g: 'fatG',
  fiber_g: 'fiberG',
  sodium_mg: 'sodiumMg',
  caffeine_mg: 'caffeineMg',
};
type MealFieldName = (typeof FIELD)[MealNutrient];

/** A stored nutrient's source; meals from before sources were stored count a value as typed in. */
function sourceOf(m: Pick<MealRecord, 'nutrientSources' | MealFieldName>, k: MealNutrient): 'logged' | 'foods' | null {
  return m.nutrientSources[k] ?? (m[FIELD[k]] !== null ? 'logged' : null);
}

function givenValue(input: Pick<MealInput, 'macros' | 'micros'>, k: MealNutrient): number | null {
  return (k === 'sodium_mg' || k === 'caffeine_mg' ? input.micros?.[k] : input.macros?.[k]) ?? null;
}

/**
 * The calories_source rule for every nutrient: a value typed in is kept ("logged") and never
 * overwritten by foods; otherwise the nutrient is the sum of the food entries that know it
 * ("foods"), recomputed from the entries every time; with no such entry it is unknown.
 */
function mealNutrients(input: ResolvedMealInput, foods: FoodEntry[]): { values: Record<MealFieldName, number | null>; sources: NutrientSources } {
  const totals = entryTotals(foods);
  const values = {} as Record<MealFieldName, number | null>;
  const sources: NutrientSources = {};
  for (const k of MEAL_NUTRIENTS) {
    const given = givenValue(input, k);
    const typed = given !== null && input.nutrientSources?.[k] !== 'foods';
    const value = typed ? given : totals[k];
    values[FIELD[k]] = value;
    if (value !== null) sources[k] = typed ? 'logged' : 'foods';
  }
  return { values, sources };
}

export function buildMeal(
  settings: Pick<SettingsRecord, 'timezone' | 'dayStart'>,
  input: ResolvedMealInput,
  meta: { id: string; createdMs: number; updatedMs: number },
): MealRecord {
  const foods = input.foods ?? [];
  const nutrients = mealNutrients(input, foods);
  const utcOffsetMin = input.utcOffsetMin ?? offsetMinutes(input.timestampMs, settings.timezone);
  const localMinute = (((Math.floor(input.timestampMs / 60_000) + utcOffsetMin) % 1440) + 1440) % 1440;
  const energy =
    input.macros?.calories != null
      ? { calories: input.macros.calories, source: input.caloriesSource ?? ('logged' as const) }
      : derivedCalories(input.macros, foods);
  return {
    id: meta.id,
    timestampMs: input.timestampMs,
    utcOffsetMin,
    day: mealDay({ timestamp: input.timestampMs, utcOffsetMin }, settings),
    mealType: input.mealType ?? guessMealType(localMinute),
    description: input.description ?? '',
    calories: checkCalories(energy.calories),
    caloriesSource: energy.source,
    ...nutrients.values,
    foods,
    source: input.source ?? 'manual',
    inferredTime: input.inferredTime ?? false,
    mealTypeInferred: input.mealType === undefined,
    nutrientSources: nutrients.sources,
    createdMs: meta.createdMs,
    updatedMs: meta.updatedMs,
  };
}

/**
 * A stored meal with a patch applied, as the input buildMeal takes. Macros and micros merge field
 * by field (null clears one: calories and every nutrient go back to what the foods add up to);
 * typed-in calories change only when new ones are typed or cleared, derived ones follow what they
 * came from.
 */
function patchedInput(before: MealRecord, patch: Omit<MealPatch, 'foods'> & { foods?: FoodEntry[] | undefined }): ResolvedMealInput {
  const has = <T extends object>(obj: T | undefined, key: PropertyKey): obj is T => obj !== undefined && key in obj;
  const macro = (k: 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', old: number | null) =>
    has(patch.macros, k) ? (patch.macros[k] ?? null) : old;
  const micro = (k: 'sodium_mg' | 'caffeine_mg', old: number | null) => (has(patch.micros, k) ? (patch.micros[k] ?? null) : old);
  // A nutrient not sent keeps its source: one from the foods follows the (maybe new) foods; null
  // sent for a typed one hands it back to the foods.
  const nutrientSources: NutrientSources = {};
  for (const k of MEAL_NUTRIENTS) {
    const sent = k === 'sodium_mg' || k === 'caffeine_mg' ? has(patch.micros, k) : has(patch.macros, k);
    if (!sent && sourceOf(before, k) === 'foods') nutrientSources[k] = 'foods';
  }
  const typedNow = patch.macros?.calories != null;
  // null sent for calories hands them back, as for every nutrient: to the foods' sum, else 4/4/9.
  const cleared = has(patch.macros, 'calories') && patch.macros.calories === null;
  const rederive = cleared || (!typedNow && before.caloriesSource !== 'logged' && (patch.foods !== undefined || patch.macros !== undefined));
  return {
    timestampMs: patch.timestampMs ?? before.timestampMs,
    utcOffsetMin: patch.timestampMs !== undefined ? (patch.utcOffsetMin ?? null) : before.utcOffsetMin,
    // A meal type given now is the person's; a guessed one is guessed again from the (new) time.
    mealType: patch.mealType ?? (before.mealTypeInferred ? undefined : before.mealType),
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
    nutrientSources,
  };
}

/** Computes entries with food_id from their foods now (others are kept as sent). */
function resolveEntries(app: AppContext, foods: FoodEntryInput[] | undefined): FoodEntry[] | undefined {
  return foods === undefined ? undefined : resolveFoodEntries(app, foods);
}

// ---- Writes ---------------------------------------------------------------------------------

export function createMeal(app: AppContext, input: MealInput): MealRecord {
  return app.bus.write((emit) => {
    const now = app.clock.now();
    const meal = buildMeal(currentSettings(app), { ...input, foods: resolveEntries(app, input.foods) }, { id: newId('meal'), createdMs: now, updatedMs: now });
    insertMeal(app.db, meal);
    recountFoodUsage(app.db, entryFoodIds(meal.foods));
    emit('meal.created', mealResource(meal));
    notifyDataChanged(app, emit, { mealTimes: [meal.timestampMs] });
    return meal;
  });
}

/** A write's condition on the meal as the client last read it: the If-Match header, when sent. */
export interface WriteCondition {
  ifMatch?: string | undefined;
}

export function patchMeal(app: AppContext, id: string, patch: MealPatch, condition: WriteCondition = {}): MealRecord | undefined {
  return app.bus.write((emit) => {
    const before = getMeal(app.db, id);
    if (!before) return undefined;
    // Checked in the write's own transaction, so no other write can land between check and change.
    checkIfMatch(before, condition.ifMatch);
    const after = buildMeal(currentSettings(app), patchedInput(before, { ...patch, foods: resolveEntries(app, patch.foods) }), {
      id: before.id,
      createdMs: before.createdMs,
      updatedMs: app.clock.now(),
    });
    const beforeResource = mealResource(before);
    const afterResource = mealResource(after);
    const changed = previousAttributes(beforeResource, afterResource);
    if (Object.keys(changed).length === 0) return before;
    updateMeal(app.db, after);
    recountFoodUsage(app.db, [...entryFoodIds(before.foods), ...entryFoodIds(after.foods)]);
    emit('meal.updated', afterResource, { previousAttributes: changed });
    notifyDataChanged(app, emit, { mealTimes: [before.timestampMs, after.timestampMs] });
    return after;
  });
}

export function removeMeal(app: AppContext, id: string, condition: WriteCondition = {}): MealRecord | undefined {
  return app.bus.write((emit) => {
    const meal = getMeal(app.db, id);
    if (!meal) return undefined;
    checkIfMatch(meal, condition.ifMatch);
    deleteMeal(app.db, id);
    recountFoodUsage(app.db, entryFoodIds(meal.foods));
    emit('meal.deleted', { ...mealResource(meal), deleted: true });
    notifyDataChanged(app, emit, { mealTimes: [meal.timestampMs] });
    return meal;
  });
}

// ---- Versions -------------------------------------------------------------------------------

/**
 * A meal's entity tag: a digest of its resource's JSON as the API sends it (updated_at included),
 * so it changes exactly when what a client read has changed, needs nothing stored, and comes out
 * the same from a stored answer's body (an idempotent replay).
 */
export function resourceETag(json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
}

export function mealETag(m: MealRecord): string {
  return resourceETag(JSON.stringify(mealResource(m)));
}

/**
 * If-Match (RFC 9110 §13.1.1): "*" or a list of entity tags, one of which must be the meal's
 * current one (strong comparison: a weak tag W/"…" never matches). Absent: no condition.
 */
export function checkIfMatch(meal: MealRecord, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  const header = ifMatch.trim();
  if (header === '*') return;
  const current = mealETag(meal);
  const tags: string[] = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  if (tags.includes(current)) return;
  throw new PreconditionFailedError(
    `The meal ${meal.id} was changed since you read it (it was last updated at ${isoUtc(meal.updatedMs)}; its ETag is now ${current}, If-Match sent ${header || 'nothing'}). Nothing was changed: read it again, then apply your change to what is there now.`,
    current,
  );
}

// ---- The resource ---------------------------------------------------------------------------

export const MealSchema = z.lazy(() =>
  z
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
      nutrient_sources: NutrientSourcesSchema,
      micros: z.object({ sodium_mg: z.number(), caffeine_mg: z.number().nullable() }),
      foods: z.array(FoodEntrySchema),
      utc_offset_min: z.number().int().meta({ description: 'Offset from UTC, in minutes, where the meal was eaten.' }),
      inferred_time: z.boolean().meta({
        description: 'True when the meal came from a source without a time of day and a default meal time was used; the digestion model weighs such meals down.',
      }),
      source: z.enum(RECORD_SOURCES).meta({
        description:
          'Where the meal came from: typed into Chyme or sent by a /v1 client (manual), an AI assistant through MCP (mcp), Home Assistant or another client through MQTT (mqtt), or the app it was imported from.',
      }),
      created_at: isoDateTime,
      updated_at: isoDateTime,
    })
    .meta({ id: 'Meal' }),
);

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
    inferred_time: m.inferredTime,
    source: m.source,
    created_at: isoUtc(m.createdMs),
    updated_at: isoUtc(m.updatedMs),
  };
}

/** A stored meal's numbers as its resource gives them, for what nutrition/totals.ts reads and adds. */
export function mealNumbers(m: MealRecord): MealNumbers {
  return mealResource(m) as unknown as MealNumbers;
}

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
