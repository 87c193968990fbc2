import type { Food, FoodEntryInput, Meal, MealInput, MealType } from '../api/types.js';
import { mealNutrient, type MealNumbers as TotalsMeal, type TotalNutrient } from '../../../server/nutrition/totals.js';

/** A sensible meal type for a local minute of day (the user can always change it): the service's one rule. */
export { guessMealType } from '../../../server/nutrition/meal-type.js';

type MealNumbers = Pick<Meal, 'macros' | 'micros' | 'calories_source' | 'nutrient_sources'>;

/** A meal's numbers: its macros, then its micros. */
export const MEAL_NUMBER_KEYS = ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sodium_mg', 'caffeine_mg'] as const;
export type NumberKey = (typeof MEAL_NUMBER_KEYS)[number];

export function mealNumber(meal: Pick<Meal, 'macros' | 'micros'>, k: NumberKey): number | null | undefined {
  return k === 'sodium_mg' || k === 'caffeine_mg' ? meal.micros[k] : meal.macros[k];
}

/** Whether a meal's number was typed in rather than summed from its foods (or 4/4/9 kcal per gram for calories). */
export function typedIn(meal: MealNumbers, k: NumberKey): boolean {
  if (k === 'calories') return (meal.calories_source ?? 'logged') === 'logged';
  // From a service without nutrient sources, every stored number was typed.
  return meal.nutrient_sources ? meal.nutrient_sources[k] === 'logged' : true;
}

/**
 * The body that recreates `meal` at `timestamp` (copy, re-log, undo of a delete): its foods as
 * stored, and the numbers that were typed; the others are sums the service makes again from the
 * same foods, so they stay sums.
 */
export function mealInput(meal: Pick<Meal, 'meal_type' | 'description' | 'foods'> & MealNumbers, timestamp: string): MealInput {
  const macros: NonNullable<MealInput['macros']> = {};
  const micros: NonNullable<MealInput['micros']> = {};
  const put = (k: NumberKey, v: number | null | undefined) => {
    const target: Record<string, number | null> = k === 'sodium_mg' || k === 'caffeine_mg' ? micros : macros;
    if (typedIn(meal, k) && v !== null && v !== undefined) target[k] = v;
  };
  for (const k of MEAL_NUMBER_KEYS) put(k, mealNumber(meal, k));
  const body: MealInput = { timestamp, meal_type: meal.meal_type, description: meal.description, foods: meal.foods.map(storedEntryInput) };
  if (Object.keys(macros).length) body.macros = macros;
  if (Object.keys(micros).length) body.micros = micros;
  return body;
}

/** A stored food entry sent back as stored (with its calories): the service keeps its numbers as they were. */
export function storedEntryInput(f: Food): FoodEntryInput {
  return { ...f };
}

/** A favourite as this browser kept it in localStorage before saved meals (read once, to move them). */
export interface Favourite {
  key: string;
  meal_type: MealType;
  description: string;
  macros: Meal['macros'];
  micros: Meal['micros'];
  foods: Meal['foods'];
}

/** Two meals with the same content (type aside) share a key: used to de-duplicate recents. */
export function contentKey(m: Pick<Meal, 'description' | 'macros' | 'foods'>): string {
  return JSON.stringify([m.description.trim().toLowerCase(), Math.round(m.macros.calories), m.foods.map((f) => [f.name, f.calories])]);
}

/** Distinct recent meals, newest first. */
export function recentDistinct(meals: readonly Meal[], max = 8): Meal[] {
  const seen = new Set<string>();
  const out: Meal[] = [];
  for (const m of [...meals].sort((a, b) => b.timestamp.localeCompare(a.timestamp))) {
    const k = contentKey(m);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(m);
    if (out.length >= max) break;
  }
  return out;
}

/** What meals add up to, and how many each total leaves out: the service's one rule (a number nobody gave is unknown, never 0). */
export { entrySumNumbers, leftOut, mealNutrient, mealTotals, type MealTotals, type NutrientTotal, type TotalNutrient } from '../../../server/nutrition/totals.js';

/** A meal's number for display: "–" when nobody gave it, never 0. */
export function nutrientText(meal: TotalsMeal, k: TotalNutrient): string {
  const v = mealNutrient(meal, k);
  return v === null ? '–' : fmtNumber(v);
}

/** "P 12 g · C – g · F 3 g", or null when none of the three is known. */
export function macroText(meal: TotalsMeal): string | null {
  if (mealNutrient(meal, 'protein_g') === null && mealNutrient(meal, 'carbs_g') === null && mealNutrient(meal, 'fat_g') === null) return null;
  return `P ${nutrientText(meal, 'protein_g')} g · C ${nutrientText(meal, 'carbs_g')} g · F ${nutrientText(meal, 'fat_g')} g`;
}

/** "Porridge with banana" or, lacking a description, the foods or the type. */
export function mealTitle(m: Pick<Meal, 'description' | 'foods' | 'meal_type'>): string {
  if (m.description.trim()) return m.description.trim();
  if (m.foods.length) return m.foods.map((f) => f.name).join(', ');
  return m.meal_type[0]!.toUpperCase() + m.meal_type.slice(1);
}

export function groupByDay(meals: readonly Meal[]): [string, Meal[]][] {
  const map = new Map<string, Meal[]>();
  for (const m of meals) {
    const list = map.get(m.day);
    if (list) list.push(m);
    else map.set(m.day, [m]);
  }
  return [...map.entries()]
    .sort((a, b) => b[0].localeCompare(a[0]))
    .map(([d, list]) => [d, list.sort((a, b) => a.timestamp.localeCompare(b.timestamp))]);
}

const numberFormats = new Map<number, Intl.NumberFormat>();
/** A number in the user's locale ("1,065"), with at most `digits` decimals. */
export function fmtNumber(n: number, digits = 0): string {
  let f = numberFormats.get(digits);
  if (!f) {
    f = new Intl.NumberFormat(undefined, { maximumFractionDigits: digits, minimumFractionDigits: 0 });
    numberFormats.set(digits, f);
  }
  return f.format(n);
}

export function capitalize(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1).replace(/_/g, ' ') : s;
}

/**
 * What a write of meals answered, for a screen to show at once, before its list is loaded again:
 * the meals created or saved, as the service returned them, and the ids deleted.
 */
export interface MealChange {
  saved?: readonly Meal[];
  deleted?: readonly string[];
}

/** A screen's handler of meal writes: the change shown at once, then the reload; without one, the reload. */
export type OnMealsChange = (change?: MealChange) => void;

/** `list` with `change` applied: each saved meal replaces its old version (kept only if `keep`), deleted ones go. */
export function withMealChange(list: readonly Meal[], change: MealChange, keep: (m: Meal) => boolean): Meal[] {
  const saved = change.saved ?? [];
  const gone = new Set([...(change.deleted ?? []), ...saved.map((m) => m.id)]);
  return [...saved.filter(keep), ...list.filter((m) => !gone.has(m.id))];
}
