/**
 * The usual bedtime: the circular mean of the local clock time at which logged nights started (so
 * 23:30 and 00:30 average to 00:00, not to 12:00), or 23:00 when no night has been logged. The usual
 * wake time likewise from the nights' ends, or 8 h after the default bedtime (07:00).
 */

import { addDays, dayOf, localTimeToInstant } from '../time/tz.js';
import {
  BEDTIME_LEARNING_DAYS,
  DEFAULT_BEDTIME_MIN,
  DEFAULT_NIGHT_MIN,
  MIN_BEDTIME_RESULTANT,
  MIN_NIGHT_SLEEP_MIN,
  MS_PER_DAY,
  MS_PER_MINUTE,
} from './constants.js';
import { localMinute } from './days.js';
import type { EngineSettings, EngineSleep } from './types.js';

export interface UsualBedtime {
  /** Local clock, minutes after midnight. */
  minuteOfDay: number;
  source: 'learned' | 'default';
  /** Nights it was learned from. */
  nights: number;
}

const MINUTES_PER_DAY = 1440;

/** A session long enough to be a night rather than a nap. */
export function isNight(sleep: EngineSleep): boolean {
  if (sleep.nap) return false;
  return sleep.end - sleep.start >= MIN_NIGHT_SLEEP_MIN * MS_PER_MINUTE;
}

/** Circular mean of clock times (minutes after midnight) and the resultant length (0 scattered … 1 identical). */
export function circularMeanMinute(minutes: readonly number[]): { minuteOfDay: number; resultant: number } | null {
  if (minutes.length === 0) return null;
  let c = 0;
  let s = 0;
  for (const m of minutes) {
    const angle = (2 * Math.PI * m) / MINUTES_PER_DAY;
    c += Math.cos(angle);
    s += Math.sin(angle);
  }
  c /= minutes.length;
  s /= minutes.length;
  const resultant = Math.hypot(c, s);
  const angle = Math.atan2(s, c);
  const minute = Math.round(((angle / (2 * Math.PI)) * MINUTES_PER_DAY + MINUTES_PER_DAY) % MINUTES_PER_DAY) % MINUTES_PER_DAY;
  return { minuteOfDay: minute, resultant };
}

/** Usual bedtime learned from the nights that started in the 14 days before `before`. */
export function usualBedtime(sleeps: readonly EngineSleep[], settings: EngineSettings, before: number): UsualBedtime {
  const starts = learningNights(sleeps, before).map((s) => localMinute(s.start, settings));
  const mean = circularMeanMinute(starts);
  if (!mean || mean.resultant < MIN_BEDTIME_RESULTANT) {
    return { minuteOfDay: DEFAULT_BEDTIME_MIN, source: 'default', nights: starts.length };
  }
  return { minuteOfDay: mean.minuteOfDay, source: 'learned', nights: starts.length };
}

/** The nights that started in the 14 days before `before`. */
function learningNights(sleeps: readonly EngineSleep[], before: number): EngineSleep[] {
  const from = before - BEDTIME_LEARNING_DAYS * MS_PER_DAY;
  return sleeps.filter((s) => isNight(s) && s.start >= from && s.start < before);
}

/**
 * Usual wake time from the ends of the nights that taught the usual bedtime; with too few or too
 * scattered ends, the usual bedtime + 8 h (07:00 with the default bedtime).
 */
export function usualWakeTime(sleeps: readonly EngineSleep[], settings: EngineSettings, before: number): UsualBedtime {
  const nights = learningNights(sleeps, before).filter((s) => s.end <= before);
  const mean = circularMeanMinute(nights.map((s) => localMinute(s.end, settings)));
  if (!mean || mean.resultant < MIN_BEDTIME_RESULTANT) {
    const bedtime = usualBedtime(sleeps, settings, before);
    return { minuteOfDay: (bedtime.minuteOfDay + DEFAULT_NIGHT_MIN) % MINUTES_PER_DAY, source: 'default', nights: nights.length };
  }
  return { minuteOfDay: mean.minuteOfDay, source: 'learned', nights: nights.length };
}

/** A night's span as instants: from its bedtime to its wake time. */
export interface NightSpan {
  start: number;
  end: number;
}

/**
 * The usual nights around `now` on the local clock: `previous`, the last whose bedtime is at or
 * before now (it may still be going on), and `next`, the first whose bedtime is after now. A night
 * ends at the first wake-time clock after its bedtime.
 */
export function usualNightsAround(now: number, bedtimeMinute: number, wakeMinute: number, settings: EngineSettings): { previous: NightSpan; next: NightSpan } {
  const today = dayOf(now, settings.timezone);
  const spans: NightSpan[] = [-2, -1, 0, 1].map((offset) => {
    const date = addDays(today, offset);
    const start = localTimeToInstant(date, bedtimeMinute, settings.timezone);
    const end = localTimeToInstant(wakeMinute > bedtimeMinute ? date : addDays(date, 1), wakeMinute, settings.timezone);
    return { start, end };
  });
  const nextIndex = spans.findIndex((s) => s.start > now);
  return { previous: spans[nextIndex - 1]!, next: spans[nextIndex]! };
}

/**
 * The instant of a bedtime clock time in the night after the user's day `date`: the same calendar date
 * for evening times, the next one for times after midnight (before noon).
 */
export function bedtimeAfterDay(date: string, bedtimeMinute: number, settings: EngineSettings): number {
  const calendarDate = bedtimeMinute < 12 * 60 ? addDays(date, 1) : date;
  return localTimeToInstant(calendarDate, bedtimeMinute, settings.timezone);
}

/** The first instant after `bedtime` at which the local clock reads `wakeMinute`: that night's end. */
export function wakeAfter(bedtime: number, wakeMinute: number, settings: EngineSettings): number {
  const date = dayOf(bedtime, settings.timezone);
  const sameDate = localTimeToInstant(date, wakeMinute, settings.timezone);
  return sameDate > bedtime ? sameDate : localTimeToInstant(addDays(date, 1), wakeMinute, settings.timezone);
}

/** "23:05" */
export function formatClock(minuteOfDay: number): string {
  const m = ((Math.round(minuteOfDay) % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}
