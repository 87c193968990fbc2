/**
 * Overnight score: a gut analysis of one sleep session from the meals before it and the sleep itself,
 * with a baseline (weighted mean of the previous up-to-14 nights) and the deviation from it.
 */

import { addDays } from '../time/tz.js';
import {
  BASELINE_HALF_LIFE_NIGHTS,
  BASELINE_NIGHTS,
  CAFFEINE_WINDOW_MIN,
  EARLY_WAKE_ALLOWANCE_MIN,
  FULL_GAP_MIN,
  LAST_MEAL_SEARCH_MIN,
  LATE_CAFFEINE_ANCHORS_MG,
  LATE_KCAL_ANCHORS,
  MAX_CONFIDENCE,
  MEAL_GAP_AT_THRESHOLD_VALUE,
  MEAL_GAP_BELOW_THRESHOLD_MAX_VALUE,
  MISSING_SLEEP_DETAIL_CONFIDENCE_FACTOR,
  MS_PER_MINUTE,
  NO_BASELINE_CONFIDENCE_FACTOR,
  OVERNIGHT_WEIGHTS,
  PRE_SLEEP_WINDOW_MIN,
  SLEEP_DURATION_ANCHORS_MIN,
  SLEEP_EFFICIENCY_ANCHORS,
  AWAKENINGS_ANCHORS,
} from './constants.js';
import { userDay } from './days.js';
import { isNight } from './bedtime.js';
import { mealEnergy, isDigestiveMeal } from './meal-model.js';
import { roundConfidence } from './phases.js';
import { clampScore, contributionOf, fromAnchors, levelOf } from './scoring.js';
import type { EngineMeal, EngineSettings, EngineSleep, OvernightFeature, OvernightScore, ScoreState } from './types.js';

export type OvernightFeatureName = keyof typeof OVERNIGHT_WEIGHTS;

export interface NightAnalysis {
  features: Partial<Record<OvernightFeatureName, OvernightFeature>>;
  lastMealAt: number | null;
  /** Digestive meals from bedtime up to `mealsUntil`: inside a logged sleep, or after the usual bedtime. */
  afterBedtime: { meals: number; kcal: number; firstAt: number | null };
  /** Weighted mean of the feature scores, 0–100 integer. */
  score: number;
}

/**
 * Gap (minutes) from the last meal to sleep → 0–100. ≥ 3 h is good and < 3 h needs attention (reflux OR
 * 7.45, Fujiwara 2005; night waking OR 1.61, Chung 2020), hence the step at 180 min; ≥ 4 h → 100.
 */
export function mealGapScore(gapMin: number): number {
  if (gapMin >= PRE_SLEEP_WINDOW_MIN) {
    const intoFullGap = Math.min(1, (gapMin - PRE_SLEEP_WINDOW_MIN) / (FULL_GAP_MIN - PRE_SLEEP_WINDOW_MIN));
    return MEAL_GAP_AT_THRESHOLD_VALUE + (100 - MEAL_GAP_AT_THRESHOLD_VALUE) * intoFullGap;
  }
  return (MEAL_GAP_BELOW_THRESHOLD_MAX_VALUE * Math.max(0, gapMin)) / PRE_SLEEP_WINDOW_MIN;
}

function feature(value: number, score: number): OvernightFeature {
  const s = clampScore(score);
  return { value, contribution: contributionOf(s), score: s };
}

/**
 * The end of a logged night's late-eating span: 1 h before it ended (EARLY_WAKE_ALLOWANCE_MIN), so a
 * breakfast logged just before the logged wake time stays breakfast.
 */
export function nightEatingUntil(sleep: EngineSleep): number {
  return Math.max(sleep.start, sleep.end - EARLY_WAKE_ALLOWANCE_MIN * MS_PER_MINUTE);
}

/**
 * The meal and sleep features of a night that starts at `bedtime`.
 *
 * Meals count from a day before bedtime up to `mealsUntil`: for a logged sleep, up to an hour before
 * its end (nightEatingUntil), so a meal eaten inside it (the person got up to eat, or the times
 * logged are off) is the last meal, a gap of 0 and late calories, instead of being skipped for an
 * earlier one; for an estimated night, the end of its late-eating span (see nightBeforeDay), so a
 * meal after the usual bedtime counts the same.
 * With no digestive meal in the 24 h before, the gap is reported as 1 440 min (≥ a day).
 */
export function analyseNight(
  bedtime: number,
  meals: readonly EngineMeal[],
  sleep: EngineSleep | null,
  mealsUntil: number = sleep ? Math.max(bedtime, nightEatingUntil(sleep)) : bedtime,
): NightAnalysis {
  const searchFrom = bedtime - LAST_MEAL_SEARCH_MIN * MS_PER_MINUTE;
  let lastMealAt: number | null = null;
  let lateKcal = 0;
  let lateCaffeine = 0;
  const afterBedtime: NightAnalysis['afterBedtime'] = { meals: 0, kcal: 0, firstAt: null };
  for (const m of meals) {
    if (m.timestamp < searchFrom || m.timestamp >= mealsUntil) continue;
    if (m.timestamp >= bedtime - CAFFEINE_WINDOW_MIN * MS_PER_MINUTE) lateCaffeine += m.caffeineMg ?? 0;
    if (!isDigestiveMeal(m)) continue;
    if (lastMealAt === null || m.timestamp > lastMealAt) lastMealAt = m.timestamp;
    const kcal = mealEnergy(m).kcal;
    if (m.timestamp >= bedtime - PRE_SLEEP_WINDOW_MIN * MS_PER_MINUTE) lateKcal += kcal;
    if (m.timestamp >= bedtime) {
      afterBedtime.meals++;
      afterBedtime.kcal += kcal;
      if (afterBedtime.firstAt === null || m.timestamp < afterBedtime.firstAt) afterBedtime.firstAt = m.timestamp;
    }
  }
  const gapMin =
    lastMealAt === null ? LAST_MEAL_SEARCH_MIN : Math.min(LAST_MEAL_SEARCH_MIN, Math.max(0, Math.round((bedtime - lastMealAt) / MS_PER_MINUTE)));

  const features: Partial<Record<OvernightFeatureName, OvernightFeature>> = {
    last_meal_gap_min: feature(gapMin, mealGapScore(gapMin)),
    late_calories: feature(Math.round(lateKcal), fromAnchors(lateKcal, LATE_KCAL_ANCHORS)),
    late_caffeine_mg: feature(Math.round(lateCaffeine), fromAnchors(lateCaffeine, LATE_CAFFEINE_ANCHORS_MG)),
  };
  if (sleep) {
    const durationMin = Math.round((sleep.end - sleep.start) / MS_PER_MINUTE);
    features.sleep_duration_min = feature(durationMin, fromAnchors(durationMin, SLEEP_DURATION_ANCHORS_MIN));
    if (sleep.efficiency !== null && Number.isFinite(sleep.efficiency)) {
      features.sleep_efficiency = feature(sleep.efficiency, fromAnchors(sleep.efficiency, SLEEP_EFFICIENCY_ANCHORS));
    }
    if (sleep.awakenings !== null && Number.isFinite(sleep.awakenings)) {
      features.awakenings = feature(sleep.awakenings, fromAnchors(sleep.awakenings, AWAKENINGS_ANCHORS));
    }
  }

  let weighted = 0;
  let weights = 0;
  for (const [name, f] of Object.entries(features) as Array<[OvernightFeatureName, OvernightFeature]>) {
    weighted += OVERNIGHT_WEIGHTS[name] * f.score;
    weights += OVERNIGHT_WEIGHTS[name];
  }
  return { features, lastMealAt, afterBedtime, score: clampScore(weighted / weights) };
}

export interface OvernightScoresInput {
  sleeps: readonly EngineSleep[];
  meals: readonly EngineMeal[];
  settings: EngineSettings;
  now: number;
  /** Only return scores dated in [startDate, endDate]; earlier sleeps in the input still feed baselines. */
  startDate?: string;
  endDate?: string;
}

/** Weighted mean of earlier scores, most recent first: weight 0.5^(k / 7) for the k-th night back. */
export function baselineOf(previousScoresMostRecentFirst: readonly number[]): { score: number | null; days: number } {
  const used = previousScoresMostRecentFirst.slice(0, BASELINE_NIGHTS);
  if (used.length === 0) return { score: null, days: 0 };
  let weighted = 0;
  let weights = 0;
  used.forEach((s, k) => {
    const w = Math.pow(0.5, k / BASELINE_HALF_LIFE_NIGHTS);
    weighted += w * s;
    weights += w;
  });
  return { score: Math.round(weighted / weights), days: used.length };
}

/**
 * Overnight scores of the sleep sessions given, ordered by date then sleep end.
 *
 * - date: the user's day the sleep ended on;
 * - SCORED once the sleep has ended; PENDING (with a provisional score) while it has not; UNSCORABLE
 *   for a nap (< 3 h), which also stays out of baselines;
 * - baseline: previous SCORED nights that ended before this one started and are dated within the 14
 *   days before it, at most 14; deviation = score − baseline (null without a baseline).
 */
export function overnightScores(input: OvernightScoresInput): OvernightScore[] {
  const sleeps = [...input.sleeps].sort((a, b) => a.end - b.end || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const scored: Array<{ end: number; date: string; score: number }> = [];
  const out: OvernightScore[] = [];
  for (const sleep of sleeps) {
    const date = userDay(sleep.end, input.settings);
    const night = analyseNight(sleep.start, input.meals, sleep);
    const scoreState: ScoreState = !isNight(sleep) ? 'UNSCORABLE' : sleep.end > input.now ? 'PENDING' : 'SCORED';
    const earliestDate = addDays(date, -BASELINE_NIGHTS);
    const previous = scored
      .filter((p) => p.end <= sleep.start && p.date >= earliestDate)
      .sort((a, b) => b.end - a.end)
      .map((p) => p.score);
    const baseline = baselineOf(previous);
    const score = scoreState === 'UNSCORABLE' ? null : night.score;
    let confidence = MAX_CONFIDENCE;
    if (sleep.efficiency === null) confidence *= MISSING_SLEEP_DETAIL_CONFIDENCE_FACTOR;
    if (sleep.awakenings === null) confidence *= MISSING_SLEEP_DETAIL_CONFIDENCE_FACTOR;
    if (baseline.days < 2) confidence *= NO_BASELINE_CONFIDENCE_FACTOR;
    if (scoreState === 'SCORED') scored.push({ end: sleep.end, date, score: night.score });
    out.push({
      sleepId: sleep.id,
      date,
      score,
      scoreState,
      level: score === null ? null : levelOf(score),
      sleep: { start: sleep.start, end: sleep.end, durationMin: Math.round((sleep.end - sleep.start) / MS_PER_MINUTE) },
      lastMealAt: night.lastMealAt,
      mealsDuringSleep: night.afterBedtime.meals,
      features: night.features,
      baseline,
      deviation: score !== null && baseline.score !== null ? score - baseline.score : null,
      confidence: roundConfidence(confidence),
    });
  }
  return out
    .filter((s) => (input.startDate === undefined || s.date >= input.startDate) && (input.endDate === undefined || s.date <= input.endDate))
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.sleep.end - b.sleep.end));
}
