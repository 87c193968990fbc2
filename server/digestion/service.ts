import type { AppContext } from '../app-context.js';
import { countMealDaysBefore, countMealDaysThrough, listMealsBetween, type MealRecord } from '../db/meals.js';
import { getSleep, listSleepEndingBetween } from '../db/sleep.js';
import {
  constants,
  dailyScoreInputWindows,
  dailyScores,
  digestionInsights,
  digestionWindows,
  digestiveState,
  mealPhases,
  overnightInputWindows,
  overnightScores,
  stateInputWindow,
  timelineInputWindow,
  userDay,
  windowsInputWindows,
  type DailyScore,
  type DigestionWindows,
  type DigestiveState,
  type EngineMeal,
  type EngineSettings,
  type EngineSleep,
  type InstantWindow,
  type Insight,
  type MealPhases,
  type OvernightScore,
} from '../engine/index.js';
import { engineMeal, engineSettings, engineSleep } from './inputs.js';

/**
 * The digestion read side: each function reads only the rows its engine computation needs (the
 * engine's input windows), so the cost follows the range asked for, not the length of history.
 */

/**
 * Days with logged meals matter only below the calibration threshold, so they are counted up to
 * it (the count stays a window read, not a scan of all history).
 */
const DAYS_WITH_DATA_CAP = constants.CALIBRATION_MIN_DAYS;

function mealsIn(app: AppContext, w: InstantWindow): MealRecord[] {
  return listMealsBetween(app.db, w.from, w.to + 1);
}

function sleepsIn(app: AppContext, w: InstantWindow) {
  return listSleepEndingBetween(app.db, w.from, w.to + 1).map(engineSleep);
}

export interface DigestionContext {
  settings: EngineSettings;
  now: number;
  today: string;
}

export function digestionContext(app: AppContext): DigestionContext {
  const settings = engineSettings(app);
  const now = app.clock.now();
  return { settings, now, today: userDay(now, settings) };
}

export function currentState(app: AppContext, ctx = digestionContext(app)): DigestiveState {
  const meals = mealsIn(app, stateInputWindow(ctx.now)).map(engineMeal);
  return digestiveState(meals, ctx.now, { daysWithData: countMealDaysThrough(app.db, ctx.today, DAYS_WITH_DATA_CAP) });
}

export function currentWindows(app: AppContext, ctx = digestionContext(app)): DigestionWindows {
  const w = windowsInputWindows(ctx.now, ctx.settings);
  return digestionWindows({
    meals: mealsIn(app, w.meals).map(engineMeal),
    sleeps: sleepsIn(app, w.sleeps),
    settings: ctx.settings,
    now: ctx.now,
    daysWithData: countMealDaysThrough(app.db, ctx.today, DAYS_WITH_DATA_CAP),
  });
}

/**
 * Timeline entries of the meals whose day lies in [startDate, endDate], newest first. Meals just
 * outside the range are read too, since they can share the stomach with meals inside it.
 */
export function timelineEntries(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): MealPhases[] {
  const records = mealsIn(app, timelineInputWindow(startDate, endDate, ctx.settings));
  const inRange = new Set(records.filter((m) => m.day >= startDate && m.day <= endDate).map((m) => m.id));
  const phases = mealPhases(records.map(engineMeal), { daysWithData: countMealDaysThrough(app.db, ctx.today, DAYS_WITH_DATA_CAP) });
  return phases
    .filter((p) => inRange.has(p.mealId))
    .sort((a, b) => b.mealTime - a.mealTime || (a.mealId < b.mealId ? 1 : a.mealId > b.mealId ? -1 : 0));
}

/**
 * The meals and sleep that daily scores and insights over [startDate, endDate] need: the engine
 * declares the same window for both, so a caller computing both reads it once.
 */
export interface RangeInputs {
  startDate: string;
  endDate: string;
  meals: EngineMeal[];
  sleeps: EngineSleep[];
}

export function rangeInputs(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): RangeInputs {
  const w = dailyScoreInputWindows(startDate, endDate, ctx.settings);
  return { startDate, endDate, meals: mealsIn(app, w.meals).map(engineMeal), sleeps: sleepsIn(app, w.sleeps) };
}

export function dailyScoresRange(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app), inputs?: RangeInputs): DailyScore[] {
  const data = inputs ?? rangeInputs(app, startDate, endDate, ctx);
  return dailyScores({
    startDate,
    endDate,
    meals: data.meals,
    sleeps: data.sleeps,
    settings: ctx.settings,
    now: ctx.now,
    daysWithDataBefore: countMealDaysBefore(app.db, startDate, DAYS_WITH_DATA_CAP),
  });
}

export function overnightRange(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): OvernightScore[] {
  const w = overnightInputWindows(startDate, endDate, ctx.settings);
  return overnightScores({
    sleeps: sleepsIn(app, w.sleeps),
    meals: mealsIn(app, w.meals).map(engineMeal),
    settings: ctx.settings,
    now: ctx.now,
    startDate,
    endDate,
  });
}

/** The overnight score of one sleep session, with its baseline from the nights before. */
export function overnightForSleep(app: AppContext, sleepId: string, ctx = digestionContext(app)): OvernightScore | undefined {
  const sleep = getSleep(app.db, sleepId);
  if (!sleep) return undefined;
  return overnightRange(app, sleep.day, sleep.day, ctx).find((o) => o.sleepId === sleepId);
}

export function insightsRangeFor(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app), inputs?: RangeInputs): Insight[] {
  const data = inputs ?? rangeInputs(app, startDate, endDate, ctx);
  return digestionInsights({ startDate, endDate, meals: data.meals, sleeps: data.sleeps, settings: ctx.settings, now: ctx.now });
}
