/**
 * Per-meal digestion phases — the timeline entries.
 *
 * fed_end is when the meal itself is half emptied in the shared stomach. processing_end is the end of
 * the processing the meal was eaten into: a meal eaten while another is processing extends that
 * processing for both (they share one stomach; nothing restarts), so they end processing together.
 * settling_end is when the stomach is next fasted: a meal eaten while an earlier one is settling
 * extends the earlier meal's settling until the new meal has settled too. So settling_end −
 * processing_end is 50 min, or more when a later meal kept the stomach busy. This matches the
 * digestive state at every moment.
 *
 * Meals under 15 kcal are not digestive: they have no timeline entry.
 */

import {
  CALIBRATION_CONFIDENCE_FACTOR,
  CALIBRATION_MIN_DAYS,
  MAX_CONFIDENCE,
  MS_PER_MINUTE,
  OVERLAP_CONFIDENCE_FACTOR,
  SETTLING_MIN,
} from './constants.js';
import { digestionEpisodes, digestiveKinetics } from './episodes.js';
import { runStomach, type MealCourse } from './stomach.js';
import type { EngineMeal, MealPhases } from './types.js';

export interface PhaseOptions {
  /** Days with logged meals up to now; < 2 means calibrating (lower confidence). */
  daysWithData: number;
}

/** Confidence of a meal's phases: its own, lowered when it shared the stomach and while calibrating. */
export function courseConfidence(course: MealCourse, episodeMeals: number, daysWithData: number): number {
  let c = course.kinetics.confidence;
  if (episodeMeals > 1) c *= OVERLAP_CONFIDENCE_FACTOR;
  if (daysWithData < CALIBRATION_MIN_DAYS) c *= CALIBRATION_CONFIDENCE_FACTOR;
  return roundConfidence(c);
}

export function roundConfidence(c: number): number {
  return Math.round(Math.min(MAX_CONFIDENCE, Math.max(0, c)) * 100) / 100;
}

/**
 * Timeline entries for the digestive meals among `meals`, newest first (timestamp desc, then id desc).
 *
 * Overlap matters in both directions, so to get exact entries for meals in [from, to) pass the meals
 * in [from − MAX_DIGESTION_LOOKBACK_MS, to + MAX_DIGESTION_LOOKBACK_MS) and keep the entries inside
 * [from, to) (see timelineInputWindow).
 */
export function mealPhases(meals: readonly EngineMeal[], options: PhaseOptions): MealPhases[] {
  const run = runStomach(digestiveKinetics(meals));
  const entries: MealPhases[] = [];
  for (const episode of digestionEpisodes(run)) {
    for (const course of episode.courses) {
      const k = course.kinetics;
      // Each meal's own phases in the shared stomach: a later meal slows its emptying (so it ends
      // later than alone) but does not hold it in "processing" once it is 90 % emptied. The state,
      // processing while any meal is and settling until the last one settles, is their union.
      const fedEndMin = Math.max(1, Math.round((course.fedEndAt - k.timeMs) / MS_PER_MINUTE));
      const processingEndMin = Math.max(fedEndMin + 1, Math.round((course.processingEndAt - k.timeMs) / MS_PER_MINUTE));
      const settlingEndMin = processingEndMin + SETTLING_MIN;
      entries.push({
        mealId: k.mealId,
        mealTime: k.timeMs,
        mealType: k.mealType,
        fedEndMin,
        processingEndMin,
        settlingEndMin,
        totalProcessingMin: settlingEndMin,
        confidence: courseConfidence(course, episode.courses.length, options.daysWithData),
        kcal: k.kcal,
        energySource: k.energySource,
        form: k.form,
        episodeMeals: episode.courses.length,
      });
    }
  }
  return entries.sort((a, b) => b.mealTime - a.mealTime || (a.mealId < b.mealId ? 1 : a.mealId > b.mealId ? -1 : 0));
}
