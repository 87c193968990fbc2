import type { AppContext } from '../app-context.js';
import type { MealRecord } from '../db/meals.js';
import type { SleepRecord } from '../db/sleep.js';
import type { EngineMeal, EngineSettings, EngineSleep } from '../engine/types.js';
import { currentSettings } from '../settings.js';

/** Stored records → the engine's input shapes. */

export function engineMeal(m: MealRecord): EngineMeal {
  return {
    id: m.id,
    timestamp: m.timestampMs,
    mealType: m.mealType,
    description: m.description,
    // Derived calories go to the engine as unknown, so it weighs their source in its confidence.
    calories: m.caloriesSource === 'logged' ? m.calories : null,
    proteinG: m.proteinG,
    carbsG: m.carbsG,
    fatG: m.fatG,
    fiberG: m.fiberG,
    sodiumMg: m.sodiumMg,
    caffeineMg: m.caffeineMg,
    foods: m.foods,
    utcOffsetMin: m.utcOffsetMin,
    inferredTime: m.inferredTime,
  };
}

export function engineSleep(s: SleepRecord): EngineSleep {
  return { id: s.id, start: s.startMs, end: s.endMs, efficiency: s.efficiency, awakenings: s.awakenings, nap: s.nap };
}

export function engineSettings(app: AppContext): EngineSettings {
  const s = currentSettings(app);
  return { timezone: s.timezone, dayStart: s.dayStart };
}
