import type { AppContext } from '../app-context.js';
import { getFoods, knownFoodIds, type FoodRecord } from '../db/foods.js';
import { ENTRY_NUTRIENTS, type EntryNutrient, type FoodEntry } from '../db/meals.js';
import { InvalidInputError } from '../domain-errors.js';
import { ensureFoods } from './foods.js';
import { countsFood, listedPortions, measureOf, naturalPortionIndex } from './portions.js';
import { forms, words } from './search.js';
import { gramsPerMlOf } from './volume.js';

export { ENTRY_NUTRIENTS, type EntryNutrient, type FoodEntry };

/**
 * What a client may send: `{name, calories}` as before, `{food_id, quantity, unit, name?}` to be
 * computed from the food, or an entry exactly as returned (it has `calories`: kept as sent).
 */
export interface FoodEntryInput {
  name?: string | undefined;
  calories?: number | undefined;
  food_id?: string | undefined;
  quantity?: number | undefined;
  unit?: string | undefined;
  grams?: number | undefined;
  protein_g?: number | null | undefined;
  carbs_g?: number | null | undefined;
  fat_g?: number | null | undefined;
  fiber_g?: number | null | undefined;
  sugars_g?: number | null | undefined;
  sodium_mg?: number | null | undefined;
  caffeine_mg?: number | null | undefined;
}

/** Entry values keep 2 decimals (0.01 kcal, 0.01 g, 0.01 mg); grams 1 decimal. */
const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places;

/** Grams per millilitre from the food's own volume portions; null when it has none (see volume.ts). */
export function gramsPerMl(food: FoodRecord): number | null {
  return gramsPerMlOf(food.portions);
}

/**
 * The unit an entry is stored with: "g", "ml" or a portion id. Omitted, it is the food's natural
 * unit (one egg, one slice: the portion listed first; a custom food's first portion); a word names a portion by its measure
 * ("slices" → "1 slice", "medium" → "1 medium (…)") or the food itself ("eggs" for an egg: its
 * natural unit), so "2 eggs" is two eggs, not two cups of egg.
 */
export function resolveUnit(food: FoodRecord, unit: string | undefined, param: string): string {
  const listed = listedPortions(food);
  if (unit === 'g' || unit === 'ml' || listed.some((p) => p.id === unit)) return unit!;
  // A custom food's own portions ("1 serving" of a packet) count it even when their words do not say so.
  const at = naturalPortionIndex(food.portions);
  const natural = at >= 0 ? String(at + 1) : food.source === 'custom' ? listed[0]?.id : undefined;
  if (unit === undefined) {
    if (natural) return natural;
    throw new InvalidInputError(`${param}.unit`, `${food.name} has no portion that counts it; give unit "g", "ml"${listed.length ? ` or a portion id (${listed.map((p) => p.id).join(', ')})` : ''}.`);
  }
  const stems = /^[a-z]{3,}$/i.test(unit) ? forms(unit.toLowerCase()) : [];
  if (stems.length > 0) {
    const nameWord = words(food.name)[0];
    if (natural && nameWord !== undefined && forms(nameWord).some((s) => stems.includes(s))) return natural;
    // Only portions that count the food: "2 cups" of a banana is mashed or sliced, which a word cannot say.
    const portion = listed.find((p) => countsFood(p.label) && stems.some((s) => measureOf(p.label).startsWith(s)));
    if (portion) return portion.id;
  }
  const ids = listed.map((p) => p.id);
  throw new InvalidInputError(
    `${param}.unit`,
    `unit must be "g", "ml", one of this food's portion ids${ids.length ? ` (${ids.join(', ')})` : ' (it has none)'}, or a word of a portion that counts it ("slice").`,
  );
}

function entryGrams(food: FoodRecord, quantity: number, unit: string, param: string): number {
  if (unit === 'g') return quantity;
  if (unit === 'ml') {
    const density = gramsPerMl(food);
    if (density === null) {
      throw new InvalidInputError(`${param}.unit`, `${food.name} has no volume measure to convert millilitres; log it in g or one of its portions.`);
    }
    return quantity * density;
  }
  return quantity * food.portions[Number(unit) - 1]!.grams;
}

/** Builds an entry from a food and an amount: nutrients per 100 g scaled to the grams eaten. */
export function entryFromFood(food: FoodRecord, quantity: number, unitAsSent: string | undefined, name: string | undefined, param: string): FoodEntry {
  const unit = resolveUnit(food, unitAsSent, param);
  const grams = entryGrams(food, quantity, unit, param);
  const scale = (v: number | null) => (v === null ? null : round((v * grams) / 100, 2));
  const entry: FoodEntry = {
    name: name ?? food.name,
    calories: scale(food.nutrients.calories) ?? 0,
    food_id: food.id,
    quantity,
    unit,
    grams: round(grams, 1),
  };
  for (const k of ENTRY_NUTRIENTS) entry[k] = scale(food.nutrients[k]);
  return entry;
}

/** An entry taken as sent (a free entry, or a stored entry sent back): only the fields given. */
function entryAsSent(input: FoodEntryInput, param: string): FoodEntry {
  if (input.name === undefined) throw new InvalidInputError(`${param}.name`, `Missing required parameter: ${param}.name.`);
  if (input.calories === undefined) throw new InvalidInputError(`${param}.calories`, `Missing required parameter: ${param}.calories.`);
  const entry: FoodEntry = { name: input.name, calories: input.calories };
  if (input.food_id !== undefined) entry.food_id = input.food_id;
  if (input.quantity !== undefined) entry.quantity = input.quantity;
  if (input.unit !== undefined) entry.unit = input.unit;
  if (input.grams !== undefined) entry.grams = input.grams;
  for (const k of ENTRY_NUTRIENTS) if (input[k] !== undefined) entry[k] = input[k];
  return entry;
}

/**
 * Turns the entries a client sent into stored entries. An entry with food_id and no calories is
 * computed from the food now; anything else is kept as sent. `param` names the array for errors.
 */
export function resolveFoodEntries(app: AppContext, inputs: readonly FoodEntryInput[], param = 'foods'): FoodEntry[] {
  const toCompute = inputs.filter((e) => e.food_id !== undefined && e.calories === undefined);
  const asSent = inputs.filter((e) => e.food_id !== undefined && e.calories !== undefined);
  let foods = new Map<string, FoodRecord>();
  let known = new Set<string>();
  if (toCompute.length > 0 || asSent.length > 0) ensureFoods(app);
  if (toCompute.length > 0) foods = new Map(getFoods(app.db, toCompute.map((e) => e.food_id!)).map((f) => [f.id, f]));
  if (asSent.length > 0) known = knownFoodIds(app.db, asSent.map((e) => e.food_id!));
  return inputs.map((input, i) => {
    const at = `${param}.${i}`;
    if (input.food_id === undefined || input.calories !== undefined) {
      if (input.food_id !== undefined && (input.quantity === undefined || input.unit === undefined)) {
        throw new InvalidInputError(`${at}.quantity`, `An entry with food_id needs quantity and unit.`);
      }
      // Kept as sent, but its food_id must still name a food: one that exists, or one whose
      // entries the person's meals or saved meals already hold (the food was deleted since).
      if (input.food_id !== undefined && !known.has(input.food_id)) {
        throw new InvalidInputError(`${at}.food_id`, `No such food: '${input.food_id}'.`);
      }
      return entryAsSent(input, at);
    }
    const food = foods.get(input.food_id);
    if (!food) throw new InvalidInputError(`${at}.food_id`, `No such food: '${input.food_id}'.`);
    if (input.quantity === undefined) throw new InvalidInputError(`${at}.quantity`, `Missing required parameter: ${at}.quantity.`);
    return entryFromFood(food, input.quantity, input.unit, input.name, at);
  });
}

export type EntryTotals = Record<'calories', number> & Record<EntryNutrient, number | null>;

/** Sums of the entries; a nutrient no entry knows is null (unknown), not 0. */
export function entryTotals(entries: readonly FoodEntry[]): EntryTotals {
  const totals = { calories: round(entries.reduce((s, e) => s + e.calories, 0), 2) } as EntryTotals;
  for (const k of ENTRY_NUTRIENTS) {
    const known = entries.map((e) => e[k]).filter((v): v is number => typeof v === 'number');
    totals[k] = known.length === 0 ? null : round(known.reduce((s, v) => s + v, 0), 2);
  }
  return totals;
}

/** The food ids entries reference (for usage counts). */
export function entryFoodIds(entries: readonly FoodEntry[]): string[] {
  return entries.flatMap((e) => (e.food_id ? [e.food_id] : []));
}

