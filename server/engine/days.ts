/**
 * The user's days (zone + day start) and the windows of data each engine function needs, so the API
 * can read exactly those rows.
 */

import { addDays, dayBounds, dayOf, localMinuteOfDay, parseClock } from '../time/tz.js';
import { BEDTIME_LEARNING_DAYS, LAST_MEAL_SEARCH_MIN, MAX_DIGESTION_LOOKBACK_MS, MEAL_DAY_SPREAD_MS, MS_PER_DAY, MS_PER_MINUTE, REGULARITY_WINDOW_DAYS } from './constants.js';
import type { EngineMeal, EngineSettings } from './types.js';

/** Minutes after local midnight at which the user's day starts. */
export function dayStartMinutes(settings: EngineSettings): number {
  return parseClock(settings.dayStart);
}

/**
 * Zone look-ups cost 0.2 µs from a zone file and 5.5 µs through Intl (names with no file, and
 * Windows); a 90-day score range makes tens of thousands of them on the same few hundred
 * instants, and every request asks again about the same days. These memos hold pure results only,
 * per zone and day start (not per settings object: each request builds its own), so they change
 * no answer; each table is cleared when it grows past a bound, and only the last few
 * zone/day-start pairs are kept.
 */
const MEMO_LIMIT = 20_000;
const MEMO_SETTINGS_LIMIT = 8;
interface MemoTables {
  day: Map<number, string>;
  bounds: Map<string, { start: number; end: number }>;
  minute: Map<number, number>;
}
const memoTables = new Map<string, MemoTables>();

function tablesFor(settings: EngineSettings): MemoTables {
  const key = `${settings.timezone}|${settings.dayStart}`;
  let t = memoTables.get(key);
  if (!t) {
    if (memoTables.size >= MEMO_SETTINGS_LIMIT) memoTables.clear();
    t = { day: new Map(), bounds: new Map(), minute: new Map() };
    memoTables.set(key, t);
  }
  return t;
}

function memo<K, V>(map: Map<K, V>, key: K, compute: () => V): V {
  const hit = map.get(key);
  if (hit !== undefined) return hit;
  if (map.size >= MEMO_LIMIT) map.clear();
  const value = compute();
  map.set(key, value);
  return value;
}

/** The user's day an instant belongs to: a meal at 00:30 with day start "04:00" counts for the previous day. */
export function userDay(instant: number, settings: EngineSettings): string {
  return memo(tablesFor(settings).day, instant, () => dayOf(instant, settings.timezone, dayStartMinutes(settings)));
}

/** The user's day of a meal: from the offset it was eaten at when known, else the settings' zone. */
export function mealDay(meal: Pick<EngineMeal, 'timestamp' | 'utcOffsetMin'>, settings: EngineSettings): string {
  if (meal.utcOffsetMin == null) return userDay(meal.timestamp, settings);
  return new Date(meal.timestamp + (meal.utcOffsetMin - dayStartMinutes(settings)) * MS_PER_MINUTE).toISOString().slice(0, 10);
}

/** Minutes after the user's day start (0–1439) of a meal, on the clock where it was eaten. */
export function mealMinuteInUserDay(meal: EngineMeal, settings: EngineSettings): number {
  if (meal.utcOffsetMin == null) return minuteInUserDay(meal.timestamp, settings);
  const local = Math.floor((meal.timestamp / MS_PER_MINUTE + meal.utcOffsetMin) % 1440);
  return (((local - dayStartMinutes(settings)) % 1440) + 1440) % 1440;
}

/** [start, end) instants of a user's day (23 or 25 h long across DST changes). */
export function userDayBounds(date: string, settings: EngineSettings): { start: number; end: number } {
  const b = memo(tablesFor(settings).bounds, date, () => dayBounds(date, settings.timezone, dayStartMinutes(settings)));
  return { start: b.start, end: b.end };
}

/** Minutes after local midnight (0–1439) of an instant in the user's zone. */
export function localMinute(instant: number, settings: EngineSettings): number {
  return memo(tablesFor(settings).minute, instant, () => localMinuteOfDay(instant, settings.timezone));
}

/** Minutes after the user's day start (0–1439) of an instant, on the local clock. */
export function minuteInUserDay(instant: number, settings: EngineSettings): number {
  return (localMinute(instant, settings) - dayStartMinutes(settings) + 1440) % 1440;
}

/** Minutes after the user's day start of a local clock time. */
export function clockInUserDay(minuteOfDay: number, settings: EngineSettings): number {
  return (minuteOfDay - dayStartMinutes(settings) + 1440) % 1440;
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
 * Meals needed for exact timeline entries of meals on [startDate, endDate]: those whose day is in
 * the range (up to MEAL_DAY_SPREAD_MS outside its bounds in the zone), and a look-back before and
 * after them, since meals on either side can share the stomach. Filter the output to the range.
 */
export function timelineInputWindow(startDate: string, endDate: string, settings: EngineSettings): InstantWindow {
  return {
    from: userDayBounds(startDate, settings).start - MEAL_DAY_SPREAD_MS - MAX_DIGESTION_LOOKBACK_MS,
    to: userDayBounds(endDate, settings).end + MEAL_DAY_SPREAD_MS + MAX_DIGESTION_LOOKBACK_MS,
  };
}

/**
 * Meals and sleeps daily scores for [startDate, endDate] need: the range plus the prior 14 days
 * (regularity, usual bedtime, the fast before the first day), the night after the last day
 * (circadian: meals within 3 h of that sleep), and the day after it for meals, at least
 * MEAL_DAY_SPREAD_MS (a meal eaten at another offset can belong to the last day yet fall after its
 * bounds in the user's zone).
 */
export function dailyScoreInputWindows(
  startDate: string,
  endDate: string,
  settings: EngineSettings,
): { meals: InstantWindow; sleeps: InstantWindow } {
  const from = userDayBounds(addDays(startDate, -REGULARITY_WINDOW_DAYS - 1), settings).start;
  return {
    meals: { from, to: Math.max(userDayBounds(addDays(endDate, 1), settings).end, userDayBounds(endDate, settings).end + MEAL_DAY_SPREAD_MS) },
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

/**
 * Windows need today's meals (first meal of the day: up to MEAL_DAY_SPREAD_MS before today's start
 * when eaten at another offset) and the last 24 h, and 14 days of sleep.
 */
export function windowsInputWindows(now: number, settings: EngineSettings): { meals: InstantWindow; sleeps: InstantWindow } {
  const todayStart = userDayBounds(userDay(now, settings), settings).start;
  return {
    meals: { from: Math.min(todayStart - MEAL_DAY_SPREAD_MS, now - MAX_DIGESTION_LOOKBACK_MS), to: now },
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
