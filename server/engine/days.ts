/**
 * The user's days (zone + day start) and the windows of data each engine function needs, so the API
 * can read exactly those rows.
 */

import { addDays, dayBounds, dayOf, parseClock } from '../time/tz.js';
import { BEDTIME_LEARNING_DAYS, LAST_MEAL_SEARCH_MIN, MAX_DIGESTION_LOOKBACK_MS, MS_PER_DAY, MS_PER_MINUTE, REGULARITY_WINDOW_DAYS } from './constants.js';
import type { EngineMeal, EngineSettings } from './types.js';

/** Minutes after local midnight at which the user's day starts. */
export function dayStartMinutes(settings: EngineSettings): number {
  return parseClock(settings.dayStart);
}

/** The user's day an instant belongs to: a meal at 00:30 with day start "04:00" counts for the previous day. */
export function userDay(instant: number, settings: EngineSettings): string {
  return dayOf(instant, settings.timezone, dayStartMinutes(settings));
}

export function mealDay(meal: EngineMeal, settings: EngineSettings): string {
  return userDay(meal.timestamp, settings);
}

/** [start, end) instants of a user's day (23 or 25 h long across DST changes). */
export function userDayBounds(date: string, settings: EngineSettings): { start: number; end: number } {
  return dayBounds(date, settings.timezone, dayStartMinutes(settings));
}

/** An inclusive [from, to] span of instants to read rows for. */
export interface InstantWindow {
  from: number;
  to: number;
}

/** Meals the digestive state needs: timestamp in [now − MAX_DIGESTION_LOOKBACK_MS, now]. */
export function stateInputWindow(now: number): InstantWindow {
  return { from: now - MAX_DIGESTION_LOOKBACK_MS, to: now };
}

/**
 * Meals needed for exact timeline entries of meals on [startDate, endDate]: a look-back before and
 * after, since meals on either side can share the stomach. Filter the output to the range.
 */
export function timelineInputWindow(startDate: string, endDate: string, settings: EngineSettings): InstantWindow {
  return {
    from: userDayBounds(startDate, settings).start - MAX_DIGESTION_LOOKBACK_MS,
    to: userDayBounds(endDate, settings).end + MAX_DIGESTION_LOOKBACK_MS,
  };
}

/**
 * Meals and sleeps daily scores for [startDate, endDate] need: the range plus the prior 14 days
 * (regularity, usual bedtime, the fast before the first day) and the night after the last day
 * (circadian: meals within 3 h of that sleep).
 */
export function dailyScoreInputWindows(
  startDate: string,
  endDate: string,
  settings: EngineSettings,
): { meals: InstantWindow; sleeps: InstantWindow } {
  const from = userDayBounds(addDays(startDate, -REGULARITY_WINDOW_DAYS - 1), settings).start;
  return {
    meals: { from, to: userDayBounds(endDate, settings).end },
    sleeps: { from: from - MS_PER_DAY, to: userDayBounds(addDays(endDate, 1), settings).end },
  };
}

/**
 * Sleeps and meals overnight scores dated [startDate, endDate] need: sleeps ending in the range and
 * in the 14 days before (baselines), meals from a day before the earliest of those sleeps.
 */
export function overnightInputWindows(
  startDate: string,
  endDate: string,
  settings: EngineSettings,
): { meals: InstantWindow; sleeps: InstantWindow } {
  const sleepsFrom = userDayBounds(addDays(startDate, -REGULARITY_WINDOW_DAYS - 1), settings).start;
  const to = userDayBounds(endDate, settings).end;
  return {
    sleeps: { from: sleepsFrom, to },
    meals: { from: sleepsFrom - 2 * LAST_MEAL_SEARCH_MIN * MS_PER_MINUTE, to },
  };
}

/** Windows need today's meals (first meal of the day) and the last 24 h, and 14 days of sleep. */
export function windowsInputWindows(now: number, settings: EngineSettings): { meals: InstantWindow; sleeps: InstantWindow } {
  const todayStart = userDayBounds(userDay(now, settings), settings).start;
  return {
    meals: { from: Math.min(todayStart, now - MAX_DIGESTION_LOOKBACK_MS), to: now },
    sleeps: { from: now - (BEDTIME_LEARNING_DAYS + 1) * MS_PER_DAY, to: now },
  };
}

/** Insights over [startDate, endDate] need the same data as daily scores over that range. */
export const insightsInputWindows = dailyScoreInputWindows;

/** Dates from start to end inclusive. */
export function datesBetween(startDate: string, endDate: string): string[] {
  const out: string[] = [];
  for (let d = startDate; d <= endDate; d = addDays(d, 1)) out.push(d);
  return out;
}
