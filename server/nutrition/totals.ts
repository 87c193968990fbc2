/**
 * What a meal's numbers say, and what meals add up to: the one place nutrients are read and added,
 * for Today, the Score screen, MCP answers, MQTT attributes and the CSV export.
 *
 * The meal resource types protein, carbs, fat and sodium as numbers (the binding interface), so an
 * unknown one reads 0 there; `nutrient_sources` (null: nobody gave it) says which are unknown. Its
 * calories are unknown when they were derived from nothing: `calories_source` "macros" with no
 * protein, carbs or fat known (a meal logged as a description only, or imported naming foods
 * without numbers). An unknown number is never added as 0: a total counts the meals it leaves out.
 *
 * Dependency-free (types only): the renderer shares it.
 */

export const TOTAL_NUTRIENTS = ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sodium_mg', 'caffeine_mg'] as const;
export type TotalNutrient = (typeof TOTAL_NUTRIENTS)[number];

type Source = 'logged' | 'foods' | null;

/** The numbers of a meal resource (spec "Meal"); nutrient_sources absent: a service from before them. */
export interface MealNumbers {
  macros: { calories: number; protein_g: number; carbs_g: number; fat_g: number; fiber_g: number | null };
  micros: { sodium_mg: number; caffeine_mg: number | null };
  calories_source?: 'logged' | 'foods' | 'macros' | undefined;
  nutrient_sources?: Partial<Record<Exclude<TotalNutrient, 'calories'>, Source>> | undefined;
}

function raw(meal: MealNumbers, k: TotalNutrient): number | null {
  return k === 'sodium_mg' || k === 'caffeine_mg' ? meal.micros[k] : meal.macros[k];
}

function sourceKnown(meal: MealNumbers, k: Exclude<TotalNutrient, 'calories'>): boolean {
  return !meal.nutrient_sources || meal.nutrient_sources[k] !== null;
}

/** A meal's number, or null when nobody gave it (see the top of this file). */
export function mealNutrient(meal: MealNumbers, k: TotalNutrient): number | null {
  if (k === 'calories') {
    const fromNothing = meal.calories_source === 'macros' && !sourceKnown(meal, 'protein_g') && !sourceKnown(meal, 'carbs_g') && !sourceKnown(meal, 'fat_g');
    return fromNothing ? null : meal.macros.calories;
  }
  const v = raw(meal, k);
  return v !== null && sourceKnown(meal, k) ? v : null;
}

/** A saved meal's `totals` (sums of its entries; null: no entry knows it). */
export interface EntrySums {
  calories: number;
  protein_g: number | null;
  carbs_g: number | null;
  fat_g: number | null;
  fiber_g: number | null;
}

/**
 * A saved meal's totals as the numbers of the meal it logs: each nutrient the sum of the entries
 * that know it ("foods"), unknown where none does (sodium and caffeine, which the totals leave out,
 * read as unknown), so it is shown and added by the same rule as a meal.
 */
export function entrySumNumbers(t: EntrySums): MealNumbers {
  const source = (v: number | null): Source => (v === null ? null : 'foods');
  return {
    macros: { calories: t.calories, protein_g: t.protein_g ?? 0, carbs_g: t.carbs_g ?? 0, fat_g: t.fat_g ?? 0, fiber_g: t.fiber_g },
    micros: { sodium_mg: 0, caffeine_mg: null },
    calories_source: 'foods',
    nutrient_sources: { protein_g: source(t.protein_g), carbs_g: source(t.carbs_g), fat_g: source(t.fat_g), fiber_g: source(t.fiber_g), sodium_mg: null, caffeine_mg: null },
  };
}

/** A nutrient added over meals: the sum of those that know it, and how many do not. */
export interface NutrientTotal {
  value: number;
  /** Meals that gave it. */
  known: number;
  /** Meals left out of `value` because they did not give it. */
  unknown: number;
}

export type MealTotals = Record<TotalNutrient, NutrientTotal>;

export function mealTotals(meals: readonly MealNumbers[]): MealTotals {
  const out = {} as MealTotals;
  for (const k of TOTAL_NUTRIENTS) out[k] = { value: 0, known: 0, unknown: 0 };
  for (const m of meals) {
    for (const k of TOTAL_NUTRIENTS) {
      const v = mealNutrient(m, k);
      if (v === null) out[k].unknown++;
      else {
        out[k].value += v;
        out[k].known++;
      }
    }
  }
  return out;
}

/** How many meals a total leaves out, in words: "2 meals without protein not counted". */
export function leftOut(n: number, what: string): string {
  return `${n} meal${n === 1 ? '' : 's'} without ${what} not counted`;
}
