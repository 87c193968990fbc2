/** Builders for engine tests. */

import type { EngineMeal, EngineSettings, EngineSleep } from '../../server/engine/types.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A Monday morning, 08:00 UTC. */
export const T0 = Date.UTC(2026, 4, 4, 8, 0);

export const UTC_SETTINGS: EngineSettings = { timezone: 'UTC', dayStart: '00:00' };

let counter = 0;

/** A meal with only calories logged, solid unless the description says otherwise. */
export function meal(at: number, calories: number | null, extra: Partial<EngineMeal> = {}): EngineMeal {
  counter++;
  return {
    id: `meal_${String(counter).padStart(6, '0')}`,
    timestamp: at,
    mealType: 'lunch',
    description: 'mixed meal',
    calories,
    proteinG: null,
    carbsG: null,
    fatG: null,
    fiberG: null,
    sodiumMg: null,
    caffeineMg: null,
    foods: [],
    ...extra,
  };
}

/** A meal with calories split into protein/carbs/fat shares of energy. */
export function mixedMeal(at: number, calories: number, shares: { protein: number; carbs: number; fat: number }, extra: Partial<EngineMeal> = {}): EngineMeal {
  return meal(at, calories, {
    proteinG: (calories * shares.protein) / 4,
    carbsG: (calories * shares.carbs) / 4,
    fatG: (calories * shares.fat) / 9,
    ...extra,
  });
}

export function sleep(start: number, end: number, extra: Partial<EngineSleep> = {}): EngineSleep {
  counter++;
  return { id: `sleep_${String(counter).padStart(6, '0')}`, start, end, efficiency: null, awakenings: null, ...extra };
}

/** Instant of a UTC wall-clock time on a date, e.g. at('2026-05-04', 19, 30). */
export function at(date: string, hour: number, minute = 0): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d, hour, minute);
}

/** Relative difference |x − ref| / ref. */
export function relativeError(x: number, ref: number): number {
  return Math.abs(x - ref) / ref;
}
