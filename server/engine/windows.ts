/**
 * Windows at `now`: when the user is ready for sleep, when fasting begins, and meal-timing suggestions
 * where the model has a basis for them.
 */

import {
  EATING_WINDOW_TARGET_MIN,
  MAX_DIGESTION_LOOKBACK_MS,
  MS_PER_MINUTE,
  OVERNIGHT_FAST_TARGET_MIN,
  PRE_SLEEP_WINDOW_MIN,
  EVENING_MEAL_CLOCK_MIN,
  FULL_GAP_MIN,
  IMPROVED_EATING_SPAN_H,
  MEDIAN_EATING_SPAN_H,
  NIGHT_WAKING_ODDS_RATIO,
  REFLUX_ODDS_RATIO,
  SHORT_FAST_HAZARD_RATIO,
} from './constants.js';
import { bedtimeAfterDay, formatClock, isNight, usualBedtime, usualNightsAround, usualWakeTime } from './bedtime.js';
import { formatDuration } from './format.js';
import { eatingDay, nightsBefore } from './daily.js';
import { clockInUserDay, localMinute, minuteInUserDay, userDay } from './days.js';
import { isDigestiveMeal } from './meal-model.js';
import { digestiveState, stomachAt, type StomachMemo } from './state.js';
import type { DigestionWindows, EngineMeal, EngineSettings, EngineSleep, MealSuggestion, TonightWindow } from './types.js';

export interface WindowsInput {
  /** windowsInputWindows(now).meals: today's meals and the last 24 h. */
  meals: readonly EngineMeal[];
  /** The last 15 days of sleep (usual bedtime). */
  sleeps: readonly EngineSleep[];
  settings: EngineSettings;
  now: number;
  daysWithData: number;
  /** The caller's memo of stomach runs (state.ts), when it keeps one. */
  stomachs?: StomachMemo;
}

const PRE_SLEEP_MS = PRE_SLEEP_WINDOW_MIN * MS_PER_MINUTE;

function clockOf(instant: number, settings: EngineSettings): string {
  return formatClock(localMinute(instant, settings));
}

/** A meal's time on the clock where it was eaten. */
function livedClockOf(meal: EngineMeal, settings: EngineSettings): string {
  if (meal.utcOffsetMin == null) return clockOf(meal.timestamp, settings);
  return formatClock((((Math.floor(meal.timestamp / MS_PER_MINUTE) + meal.utcOffsetMin) % 1440) + 1440) % 1440);
}

/**
 * The coming night, once the person is up: from the end of a logged night that ended since the
 * last usual bedtime, else from that night's usual wake time, until the next usual bedtime. Null
 * during the usual night, before the person is known to be up.
 */
export function tonightWindow(
  sleeps: readonly EngineSleep[],
  settings: EngineSettings,
  now: number,
  lastMealAt: number | null,
  sleepReadyAt: number,
): TonightWindow | null {
  const bedtime = usualBedtime(sleeps, settings, now);
  const wake = usualWakeTime(sleeps, settings, now);
  const { previous, next } = usualNightsAround(now, bedtime.minuteOfDay, wake.minuteOfDay, settings);
  let loggedWake: number | null = null;
  for (const s of sleeps) {
    if (isNight(s) && s.end <= now && s.end > previous.start && (loggedWake === null || s.end > loggedWake)) loggedWake = s.end;
  }
  if (loggedWake === null && now < previous.end) return null;
  const wokeAt = loggedWake ?? previous.end;
  return {
    wokeAt,
    wokeSource: loggedWake !== null ? 'sleep' : wake.source,
    bedtimeAt: next.start,
    bedtimeClock: formatClock(bedtime.minuteOfDay),
    bedtimeSource: bedtime.source,
    nights: bedtime.nights,
    finishEatingBy: next.start - PRE_SLEEP_MS,
    sleepReadyAt: lastMealAt !== null && lastMealAt >= wokeAt ? sleepReadyAt : null,
  };
}

/**
 * - sleepReadyAt: the later of the last digestive meal + 180 min and the time the stomach is 75 %
 *   empty (every meal in it ≤ 25 % left). It can be in the past ("ready since"). With no digestive
 *   meal in the last 24 h it is `now`.
 * - fastedAt: as in the digestive state.
 * - tonight: see tonightWindow; what Today's card speaks of once the person is up.
 * - nextMealSuggestions, each only when it lies ahead of `now`:
 *   latest_dinner = tonight's usual bedtime − 3 h; eating_window_close = today's first meal + 12 h,
 *   only when that is no later than latest_dinner (advice never contradicts itself or runs into the night);
 *   earliest_first_meal = an evening meal + 13 h (the overnight fast).
 */
export function digestionWindows(input: WindowsInput): DigestionWindows {
  const { settings, now } = input;
  const eaten = input.meals.filter((m) => m.timestamp <= now);
  const stomach = stomachAt(eaten, now, input.stomachs);
  const state = digestiveState(eaten, now, { daysWithData: input.daysWithData }, stomach);
  const { run } = stomach;

  const recentFrom = now - MAX_DIGESTION_LOOKBACK_MS;
  let lastMealAt: number | null = null;
  let stomachQuarterFullAt = -Infinity;
  for (const course of run.courses) {
    if (course.kinetics.timeMs < recentFrom) continue;
    lastMealAt = Math.max(lastMealAt ?? -Infinity, course.kinetics.timeMs);
    stomachQuarterFullAt = Math.max(stomachQuarterFullAt, course.sleepReadyAt);
  }
  const sleepReadyAt = lastMealAt === null ? now : Math.round(Math.max(lastMealAt + PRE_SLEEP_MS, stomachQuarterFullAt));

  const suggestions: MealSuggestion[] = [];

  const today = userDay(now, settings);
  const usual = usualBedtime(input.sleeps, settings, now);
  const tonight = tonightWindow(input.sleeps, settings, now, lastMealAt, sleepReadyAt);
  // Once up, tonight's bedtime is the next usual one (on the clock, whatever the day start says).
  const bedtime = tonight?.bedtimeAt ?? bedtimeAfterDay(today, usual.minuteOfDay, settings);
  const latestDinner = bedtime - PRE_SLEEP_MS;
  if (latestDinner > now) {
    const bedtimeWhy =
      usual.source === 'learned'
        ? `your usual bedtime is ${formatClock(usual.minuteOfDay)} (from ${usual.nights} logged night${usual.nights === 1 ? '' : 's'})`
        : `no night has been logged yet, so bedtime is assumed to be ${formatClock(usual.minuteOfDay)}`;
    suggestions.push({
      kind: 'latest_dinner',
      at: latestDinner,
      reason:
        `Finish eating by ${clockOf(latestDinner, settings)}: ${bedtimeWhy}, and going to bed less than ` +
        `${formatDuration(PRE_SLEEP_WINDOW_MIN)} after eating is linked to reflux (odds ratio ${REFLUX_ODDS_RATIO} against ` +
        `${formatDuration(FULL_GAP_MIN)} or more) and night waking (odds ratio ${NIGHT_WAKING_ODDS_RATIO}).`,
      basis: { bedtimeAt: bedtime, bedtimeClock: formatClock(usual.minuteOfDay), bedtimeSource: usual.source, nights: usual.nights, gapMin: PRE_SLEEP_WINDOW_MIN },
    });
  }

  // Today's first meal is the first of the meals of today's eating window, by the one rule for
  // it (eatingDay: where each was eaten; a snack in last night belongs to yesterday), as the
  // scores count them.
  const nights = nightsBefore(input.sleeps, settings, now);
  let first: EngineMeal | null = null;
  let lastDigestive: number | null = null;
  for (const m of eaten) {
    if (!isDigestiveMeal(m)) continue;
    if ((first === null || m.timestamp < first.timestamp) && eatingDay(m, settings, nights).date === today) first = m;
    if (m.timestamp >= recentFrom && (lastDigestive === null || m.timestamp > lastDigestive)) lastDigestive = m.timestamp;
  }
  const firstToday = first?.timestamp ?? null;
  const close = firstToday === null ? null : firstToday + EATING_WINDOW_TARGET_MIN * MS_PER_MINUTE;
  // Only when it comes before the latest dinner: a later close would contradict "finish eating by"
  // and, past the bedtime, advise eating into the night; the earlier limit is the one that counts.
  if (close !== null && close > now && close <= latestDinner) {
    suggestions.push({
      kind: 'eating_window_close',
      at: close,
      reason:
        `Your first meal today was at ${livedClockOf(first!, settings)}; finishing by ${clockOf(close, settings)} keeps ` +
        `today's eating span within ${formatDuration(EATING_WINDOW_TARGET_MIN)} (half of people eat over more than ` +
        `${MEDIAN_EATING_SPAN_H} h a day; ${IMPROVED_EATING_SPAN_H} h improved sleep).`,
      basis: { firstMealAt: firstToday, targetSpanMin: EATING_WINDOW_TARGET_MIN },
    });
  }

  if (lastDigestive !== null) {
    const minuteInDay = minuteInUserDay(lastDigestive, settings);
    const eveningInDay = clockInUserDay(EVENING_MEAL_CLOCK_MIN, settings);
    const earliest = lastDigestive + OVERNIGHT_FAST_TARGET_MIN * MS_PER_MINUTE;
    if (minuteInDay >= eveningInDay && earliest > now) {
      suggestions.push({
        kind: 'earliest_first_meal',
        at: earliest,
        reason:
          `Your last meal was at ${clockOf(lastDigestive, settings)}; a first meal from ${clockOf(earliest, settings)} ` +
          `gives a ${formatDuration(OVERNIGHT_FAST_TARGET_MIN)} overnight fast (shorter fasts are associated with worse ` +
          `outcomes, hazard ratio ${SHORT_FAST_HAZARD_RATIO}).`,
        basis: { lastMealAt: lastDigestive, targetFastMin: OVERNIGHT_FAST_TARGET_MIN },
      });
    }
  }

  suggestions.sort((a, b) => a.at - b.at);
  return { sleepReadyAt, fastedAt: state.fastedAt, nextMealSuggestions: suggestions, tonight, calculatedAt: now };
}
