import type { MealType } from '../db/meals.js';

/**
 * The meal type a meal logged without one gets, from the local minute of day it was eaten: the
 * app's Log meal form, Home Assistant's "Log a meal" and AI assistants all use this one rule (the
 * renderer imports it too: it has no runtime dependencies). A person can always change it.
 */
export function guessMealType(minuteOfDay: number): MealType {
  if (minuteOfDay >= 4 * 60 && minuteOfDay < 10 * 60 + 30) return 'breakfast';
  if (minuteOfDay >= 11 * 60 + 30 && minuteOfDay < 14 * 60 + 30) return 'lunch';
  if (minuteOfDay >= 17 * 60 + 30 && minuteOfDay < 21 * 60 + 30) return 'dinner';
  return 'snack';
}
