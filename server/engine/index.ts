/**
 * The digestion engine: pure functions of (meals, sleep sessions, settings, now). No I/O, no clock,
 * no randomness. See docs/model.md for the model in plain words and constants.ts for every number.
 */

export type * from './types.js';
export * as constants from './constants.js';
export { MAX_DIGESTION_LOOKBACK_MS, MIN_DIGESTIVE_KCAL, SETTLING_MIN } from './constants.js';

export { mealEnergy, mealForm, isDigestiveMeal, mealKinetics, emptyingRate, type MealEnergy, type MealKinetics } from './meal-model.js';
export { runStomach, loadFromRun, sharedClockSpeed, type MealCourse, type StomachRun } from './stomach.js';
export { stomachLoadAt, stomachLoadSeries } from './load.js';
export { digestionEpisodes, type DigestionEpisode, type DigestionSegment } from './episodes.js';
export { mealPhases, type PhaseOptions } from './phases.js';
export { digestiveState, stomachAt, StomachMemo, type StateOptions } from './state.js';
export { dailyScore, dailyScores, dayMetrics, loggedDaysThrough, lowerBound, type DailyScoreInput, type DailyScoresInput, type DayMetrics } from './daily.js';
export { overnightScores, analyseNight, baselineOf, mealGapScore, type OvernightScoresInput, type NightAnalysis } from './overnight.js';
export { digestionWindows, type WindowsInput } from './windows.js';
export { digestionInsights, insightEvidence, insightsFromEvidence, insightsRange, insightId, type InsightEvidence, type InsightsInput } from './insights.js';
export { usualBedtime, circularMeanMinute, type UsualBedtime } from './bedtime.js';
export { levelOf, contributionOf } from './scoring.js';
export {
  userDay,
  mealDay,
  userDayBounds,
  stateInputWindow,
  timelineInputWindow,
  dailyScoreInputWindows,
  overnightInputWindows,
  windowsInputWindows,
  insightsInputWindows,
  datesBetween,
  type InstantWindow,
} from './days.js';
