import { idempotencyKey } from '../api/client';
import { createSavedMeal, listSavedMeals, logSavedMeal as logSaved } from '../api/saved-meals';
import type { FoodEntryInput, Meal, MealType, SavedMeal, SavedMealInput } from '../api/types';
import { mealTitle, storedEntryInput, type Favourite } from './meals';

/**
 * Saved meals live in the service (`/v1/nutrition/saved_meals`). The form that saves one and the
 * list that shows them sit in different components; this tells the list to reload.
 */
const listeners = new Set<() => void>();
export function onSavedMealsChanged(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
export function emitSavedMealsChanged(): void {
  for (const fn of listeners) fn();
}

/** A logged meal as a saved meal: its foods as logged, or the meal itself as one entry when it has none. */
export function savedMealFrom(meal: Pick<Meal, 'description' | 'foods' | 'meal_type' | 'macros' | 'micros'>, name = mealTitle(meal)): SavedMealInput {
  const foods: FoodEntryInput[] = meal.foods.length && !carriesMoreThanFoods(meal) ? meal.foods.map(storedEntryInput) : [wholeMealEntry(meal, name)];
  return { name, meal_type: meal.meal_type, foods };
}

const MEAL_NUTRIENTS = ['protein_g', 'carbs_g', 'fat_g', 'fiber_g'] as const;

/**
 * Whether the meal's numbers say more than its food entries: protein, fat… typed for the meal
 * while its foods carry calories only (how meals were logged before the food table), or calories
 * typed over the foods' sum. Saving its entries alone would drop those numbers.
 */
function carriesMoreThanFoods(meal: Pick<Meal, 'foods' | 'macros' | 'micros'>): boolean {
  const sum = meal.foods.reduce((s, f) => s + f.calories, 0);
  if (Math.abs(sum - meal.macros.calories) > 0.5) return true;
  const typed = (k: (typeof MEAL_NUTRIENTS)[number]) => (meal.macros[k] ?? 0) > 0 && meal.foods.every((f) => f[k] === undefined || f[k] === null);
  return MEAL_NUTRIENTS.some(typed) || ((meal.micros.sodium_mg ?? 0) > 0 && meal.foods.every((f) => f.sodium_mg == null));
}

/** The whole meal as one entry with all its numbers; its foods' names are kept in the entry's name. */
function wholeMealEntry(meal: Pick<Meal, 'foods' | 'macros' | 'micros'>, name: string): FoodEntryInput {
  return {
    name: meal.foods.length ? meal.foods.map((f) => f.name).join(', ') : name,
    calories: meal.macros.calories,
    protein_g: meal.macros.protein_g,
    carbs_g: meal.macros.carbs_g,
    fat_g: meal.macros.fat_g,
    fiber_g: meal.macros.fiber_g ?? null,
    sodium_mg: meal.micros.sodium_mg,
    caffeine_mg: meal.micros.caffeine_mg,
  };
}

/** Where favourites were kept before saved meals: one browser's localStorage. */
export const FAVOURITES_KEY = 'chyme.favourites';

let migration: Promise<number> | null = null;

/**
 * Moves the favourites this browser kept in localStorage to saved meals, once. Each favourite is
 * removed from localStorage right after the service stored it, so an interrupted move resumes
 * where it stopped without making copies (the Idempotency-Key, derived from the favourite, covers
 * a reply lost in between). Resolves to how many moved; runs once per page load.
 */
export function migrateFavourites(): Promise<number> {
  migration ??= (async () => {
    let list: Favourite[];
    try {
      const raw = localStorage.getItem(FAVOURITES_KEY);
      list = raw ? (JSON.parse(raw) as Favourite[]) : [];
    } catch {
      return 0;
    }
    if (!Array.isArray(list) || !list.length) return 0;
    let moved = 0;
    const existing = await listSavedMeals().catch(() => []);
    const names = new Set(existing.map((s) => s.name));
    while (list.length) {
      const fav = list[0]!;
      const body = savedMealFrom(fav);
      if (!names.has(body.name)) {
        await createSavedMeal(body, `favourite-${await digest(fav.key)}`);
        names.add(body.name);
        moved++;
      }
      list = list.slice(1);
      if (list.length) localStorage.setItem(FAVOURITES_KEY, JSON.stringify(list));
      else localStorage.removeItem(FAVOURITES_KEY);
    }
    if (moved) emitSavedMealsChanged();
    return moved;
  })().catch((err: unknown) => {
    migration = null; // try again next time the list is shown
    throw err;
  });
  return migration;
}

async function digest(s: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)));
  return [...bytes.slice(0, 12)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Logs a saved meal in one request, as its own meal type or else `fallbackType`. */
export function logSavedMeal(saved: SavedMeal, timestamp: string, fallbackType: MealType): Promise<Meal> {
  return logSaved(saved.id, { timestamp, meal_type: saved.meal_type ?? fallbackType }, idempotencyKey());
}
