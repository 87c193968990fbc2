/** Combined stomach load over time — calories still in the stomach — for charts and checks. */

import { digestiveKinetics } from './episodes.js';
import { loadFromRun, runStomach } from './stomach.js';
import type { EngineMeal, StomachLoadPoint } from './types.js';

/**
 * Calories still in the stomach at `at` from the digestive meals eaten at or before it. Meals older
 * than MAX_DIGESTION_LOOKBACK_MS contribute at most their last 10 %, emptying at their own pace.
 */
export function stomachLoadAt(meals: readonly EngineMeal[], at: number): number {
  const run = runStomach(
    digestiveKinetics(meals.filter((m) => m.timestamp <= at)),
    { recordTrajectories: true },
  );
  return loadFromRun(run, at);
}

/**
 * The load from `from` to `to` (inclusive) every `stepMs`, for a chart. Uses every meal given, so a
 * point before a later meal is not affected by it (the simulation is causal).
 */
export function stomachLoadSeries(meals: readonly EngineMeal[], from: number, to: number, stepMs: number): StomachLoadPoint[] {
  if (!(stepMs > 0) || to < from) return [];
  const run = runStomach(digestiveKinetics(meals), { recordTrajectories: true });
  const points: StomachLoadPoint[] = [];
  for (let at = from; at <= to; at += stepMs) points.push({ at, kcal: loadFromRun(run, at) });
  return points;
}
