/**
 * The daily gut score of a user's day (zone + day start) and its four components:
 *
 * - overnight:    the overnight score of the night that ended on this day ("last night"); with no
 *                 night logged, the same meal features measured against the usual bedtime (learned
 *                 from logged nights, else 23:00), with lower confidence;
 * - fastedRatio:  the overnight fast before the day's first meal and the day's eating span;
 * - regularity:   SD of the eating-window midpoint over this day and the 14 before it;
 * - circadian:    share of the day's calories eaten after 20:00, within 3 h of that night's sleep, or
 *                 in the night before the day (inside a logged sleep, or after the usual bedtime).
 *
 * States: the day containing `now` is PENDING with a provisional score from what has been eaten so
 * far (no score, components neutral, until its first meal or sleep is logged); a finished day with logged meals is SCORED; a finished day with none is UNSCORABLE (score and
 * level null; components still carry the values the data gives — see dailyScore — each
 * with contribution `neutral`, since a day without data earns neither praise nor blame); a day that has not
 * started is PENDING with no score.
 */

import { addDays } from '../time/tz.js';
import {
  CALIBRATION_CONFIDENCE_FACTOR,
  CALIBRATION_MIN_DAYS,
  DAILY_WEIGHTS,
  EARLY_WAKE_ALLOWANCE_MIN,
  EATING_SPAN_ANCHORS_H,
  ESTIMATED_OVERNIGHT_CONFIDENCE_FACTOR,
  FASTED_RATIO_FAST_WEIGHT,
  LATE_EVENING_CLOCK_MIN,
  LATE_SHARE_ANCHORS,
  MAX_CONFIDENCE,
  MEAL_DAY_SPREAD_MS,
  MS_PER_DAY,
  MS_PER_MINUTE,
  OVERNIGHT_FAST_ANCHORS_H,
  PRE_SLEEP_WINDOW_MIN,
  REGULARITY_SD_ANCHORS_MIN,
  REGULARITY_WINDOW_DAYS,
  UNKNOWN_FAST_CONFIDENCE_FACTOR,
} from './constants.js';
import { bedtimeAfterDay, isNight, usualBedtime, usualWakeTime, wakeAfter } from './bedtime.js';
import { clockInUserDay, datesBetween, mealDay, mealMinuteInUserDay, userDayBounds } from './days.js';
import { isDigestiveMeal, mealEnergy } from './meal-model.js';
import { analyseNight, nightEatingUntil } from './overnight.js';
import { roundConfidence } from './phases.js';
import { clampScore, component, fromAnchors, levelOf, standardDeviation } from './scoring.js';
import type { DailyScore, EngineMeal, EngineSettings, EngineSleep, ScoreState } from './types.js';

/** What a day's meals say, computed from meals eaten at or before `now`. */
export interface DayMetrics {
  date: string;
  start: number;
  end: number;
  /** Logged meals of any size (a water-only day is a logged day). */
  loggedMeals: number;
  /** Digestive meals (≥ 15 kcal) in time order. */
  digestive: EngineMeal[];
  firstMealAt: number | null;
  lastMealAt: number | null;
  eatingSpanMin: number | null;
  /** Eating-window midpoint, minutes after the day start on the local clock. */
  midpointMin: number | null;
  /** From the last digestive meal before the first one; null when nothing was logged the day before. */
  overnightFastMin: number | null;
  totalKcal: number;
  lateKcal: number;
  /** Bedtime of the night after this day: a logged night's start, else the usual bedtime. */
  nightBedtime: number;
  nightBedtimeSource: 'sleep' | 'learned' | 'default';
  /** The night that ended on this day ("last night"). */
  previousNight: NightBefore;
}

/**
 * The night that ended on a day, and the span in which eating counts as eating in the night, each
 * ending 1 h before the wake time (EARLY_WAKE_ALLOWANCE_MIN: a meal just before getting up is breakfast):
 * - a logged night (the longest ≥ 3 h that ended on the day): from its start;
 * - else the usual night: from the usual bedtime before the day, up to the usual wake time learned
 *   from logged nights' ends, else bedtime + 8 h.
 */
export interface NightBefore {
  bedtime: number;
  /** Meals in [bedtime, lateUntil) were eaten in the night. */
  lateUntil: number;
  sleep: EngineSleep | null;
  source: 'sleep' | 'learned' | 'default';
}

export function nightBeforeDay(date: string, sleeps: readonly EngineSleep[], settings: EngineSettings, now: number): NightBefore {
  const night = mainSleepEndingOn(date, sleeps, settings, now);
  if (night) return { bedtime: night.start, lateUntil: nightEatingUntil(night), sleep: night, source: 'sleep' };
  const { start } = userDayBounds(date, settings);
  const usual = usualBedtime(sleeps, settings, start);
  const bedtime = bedtimeAfterDay(addDays(date, -1), usual.minuteOfDay, settings);
  const wake = wakeAfter(bedtime, usualWakeTime(sleeps, settings, start).minuteOfDay, settings);
  return { bedtime, lateUntil: Math.max(bedtime, wake - EARLY_WAKE_ALLOWANCE_MIN * MS_PER_MINUTE), sleep: null, source: usual.source };
}

/** Whether a meal was eaten in `night`, before its last hour (see NightBefore). */
export function eatenInNight(meal: Pick<EngineMeal, 'timestamp'>, night: NightBefore): boolean {
  return meal.timestamp >= night.bedtime && meal.timestamp < night.lateUntil;
}

/** The night before each day, computed once per day asked (sleeps, settings and now fixed). */
export type NightsBefore = (date: string) => NightBefore;

export function nightsBefore(sleeps: readonly EngineSleep[], settings: EngineSettings, now: number): NightsBefore {
  const memo = new Map<string, NightBefore>();
  return (date) => {
    let night = memo.get(date);
    if (!night) memo.set(date, (night = nightBeforeDay(date, sleeps, settings, now)));
    return night;
  };
}

/**
 * The day whose eating window a meal belongs to, and its minute on that day's clock (after the day
 * start; past 1 440 for a meal in the night after it). A meal's day is its date (mealDay), except
 * a meal eaten in the night before its date, which belongs to the day before: it extends that
 * evening's eating rather than opening the morning's. The night ends the waking day it follows:
 * eating after the evening meal, waking to eat included, is that day's intake (Allison 2010); the
 * eating span is first to last intake of the waking day (Gill & Panda 2015); and the overnight fast
 * runs from the last intake, a night snack included, to the next day's first meal (Marinac 2016).
 */
export function eatingDay(meal: EngineMeal, settings: EngineSettings, nights: NightsBefore): { date: string; minute: number } {
  const date = mealDay(meal, settings);
  const minute = mealMinuteInUserDay(meal, settings);
  return eatenInNight(meal, nights(date)) ? { date: addDays(date, -1), minute: minute + 1440 } : { date, minute };
}

function byTime(a: EngineMeal, b: EngineMeal): number {
  return a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The longest night (≥ 3 h) that ended on user-day `date` and by `now`. */
export function mainSleepEndingOn(date: string, sleeps: readonly EngineSleep[], settings: EngineSettings, now: number): EngineSleep | null {
  const { start, end } = userDayBounds(date, settings);
  let best: EngineSleep | null = null;
  for (const s of sleeps) {
    if (s.end < start || s.end >= end || s.end > now || !isNight(s)) continue;
    if (!best || s.end - s.start > best.end - best.start) best = s;
  }
  return best;
}

/**
 * Metrics of day `date`. `meals` must already be limited to those eaten at or before now and include
 * the day before (for the overnight fast).
 */
export function dayMetrics(
  date: string,
  meals: readonly EngineMeal[],
  sleeps: readonly EngineSleep[],
  settings: EngineSettings,
  now: number,
  nights: NightsBefore = nightsBefore(sleeps, settings, now),
): DayMetrics {
  const { start, end } = userDayBounds(date, settings);
  const previousStart = userDayBounds(addDays(date, -1), settings).start;
  // A meal's day comes from where it was eaten, which can differ from the zone's day bounds.
  const nearDay = meals.filter((m) => m.timestamp >= start - MEAL_DAY_SPREAD_MS && m.timestamp < end + MS_PER_DAY + MEAL_DAY_SPREAD_MS);
  const ofDay = nearDay.filter((m) => mealDay(m, settings) === date);
  // The eating window: the day's meals but those eaten in the night before it, and those eaten in
  // the night after it (see eatingDay).
  const windowMinute = new Map<EngineMeal, number>();
  for (const m of nearDay) {
    if (!isDigestiveMeal(m)) continue;
    const d = eatingDay(m, settings, nights);
    if (d.date === date) windowMinute.set(m, d.minute);
  }
  const digestive = [...windowMinute.keys()].sort(byTime);
  const first = digestive[0] ?? null;
  const last = digestive[digestive.length - 1] ?? null;

  let overnightFastMin: number | null = null;
  // Something logged the day before (or in the night before this day, which belongs to it).
  const loggedBefore = (m: EngineMeal) => m.timestamp >= previousStart && (m.timestamp < start || eatenInNight(m, nights(date)));
  if (first && meals.some((m) => m.timestamp < first.timestamp && loggedBefore(m))) {
    let previous: number | null = null;
    for (const m of meals) {
      if (m.timestamp < first.timestamp && isDigestiveMeal(m) && (previous === null || m.timestamp > previous)) previous = m.timestamp;
    }
    // Nothing digestive before in the data: at least since the previous day started.
    overnightFastMin = (first.timestamp - (previous ?? previousStart)) / MS_PER_MINUTE;
  }

  let midpointMin: number | null = null;
  if (first && last) {
    midpointMin = (windowMinute.get(first)! + windowMinute.get(last)!) / 2;
  }

  // The night after this day: a logged night ending the next day, else the usual bedtime.
  const nextNight = mainSleepEndingOn(addDays(date, 1), sleeps, settings, now);
  let nightBedtime: number;
  let nightBedtimeSource: DayMetrics['nightBedtimeSource'];
  if (nextNight) {
    nightBedtime = nextNight.start;
    nightBedtimeSource = 'sleep';
  } else {
    const usual = usualBedtime(sleeps, settings, end);
    nightBedtime = bedtimeAfterDay(date, usual.minuteOfDay, settings);
    nightBedtimeSource = usual.source;
  }

  const previousNight = nights(date);
  const lateClockInDay = clockInUserDay(LATE_EVENING_CLOCK_MIN, settings);
  let totalKcal = 0;
  let lateKcal = 0;
  for (const m of digestive) {
    const kcal = mealEnergy(m).kcal;
    totalKcal += kcal;
    const lateByClock = windowMinute.get(m)! >= lateClockInDay;
    // A meal of the night after the day (see eatingDay) is after its bedtime, so late here.
    const nearSleep = m.timestamp >= nightBedtime - PRE_SLEEP_WINDOW_MIN * MS_PER_MINUTE;
    if (lateByClock || nearSleep) lateKcal += kcal;
  }

  return {
    date,
    start,
    end,
    // Meals dated on the day, and those of the night after it that belong to its eating window.
    loggedMeals: ofDay.length + digestive.filter((m) => mealDay(m, settings) !== date).length,
    digestive,
    firstMealAt: first?.timestamp ?? null,
    lastMealAt: last?.timestamp ?? null,
    eatingSpanMin: first && last ? (last.timestamp - first.timestamp) / MS_PER_MINUTE : null,
    midpointMin,
    overnightFastMin,
    totalKcal,
    lateKcal,
    nightBedtime,
    nightBedtimeSource,
    previousNight,
  };
}

export interface DailyScoreInput {
  date: string;
  /** Meals of the day and of the 14 days before it (see dailyScoreInputWindows); more is fine. */
  meals: readonly EngineMeal[];
  /** Sleeps from 15 days before the day to the night after it. */
  sleeps: readonly EngineSleep[];
  settings: EngineSettings;
  now: number;
  /** Days with logged meals up to and including `date`; < 2 means calibrating. */
  daysWithData: number;
  /** The nights before days, shared by the days of one range (nightsBefore of the same sleeps, settings and now). */
  nights?: NightsBefore | undefined;
}

/**
 * The daily score of one day.
 *
 * Component values on a day without digestive meals describe the log as it stands: no intake logged,
 * so no eating span and no late calories (fasted_ratio and circadian 100), while regularity and
 * overnight come from the days and nights around it. That is why such a finished day, when nothing at
 * all was logged, is UNSCORABLE: the log cannot tell a fast from a day not logged. (A day with only
 * drinks under 15 kcal logged is SCORED: the user logged, and logged no food.)
 */
export function dailyScore(input: DailyScoreInput): DailyScore {
  const { date, settings, now } = input;
  const meals = input.meals.filter((m) => m.timestamp <= now);
  const nights = input.nights ?? nightsBefore(input.sleeps, settings, now);
  const day = dayMetrics(date, meals, input.sleeps, settings, now, nights);

  // fasted_ratio
  const spanValue = day.eatingSpanMin === null ? 100 : fromAnchors(day.eatingSpanMin / 60, EATING_SPAN_ANCHORS_H);
  const fastValue = day.overnightFastMin === null ? null : fromAnchors(day.overnightFastMin / 60, OVERNIGHT_FAST_ANCHORS_H);
  const fastedRatio =
    day.digestive.length === 0
      ? 100
      : fastValue === null
        ? spanValue
        : FASTED_RATIO_FAST_WEIGHT * fastValue + (1 - FASTED_RATIO_FAST_WEIGHT) * spanValue;

  // regularity: this day and the 14 before it
  const midpoints = eatingWindowMidpoints(addDays(date, -REGULARITY_WINDOW_DAYS), date, meals, settings, nights);
  const midpointSd = standardDeviation(midpoints) ?? 0;
  const regularity = fromAnchors(midpointSd, REGULARITY_SD_ANCHORS_MIN);

  // circadian
  const lateShare = day.totalKcal > 0 ? day.lateKcal / day.totalKcal : 0;
  const circadian = fromAnchors(lateShare, LATE_SHARE_ANCHORS);

  // overnight: last night, logged or estimated; a meal inside it is a gap of 0
  const lastNight = day.previousNight;
  const night = lastNight.sleep;
  const overnight = analyseNight(lastNight.bedtime, meals, night, lastNight.lateUntil).score;
  const overnightBedtime = lastNight.bedtime;
  const overnightBedtimeSource = lastNight.source;

  const components = {
    overnight: component(overnight),
    fastedRatio: component(fastedRatio),
    regularity: component(regularity),
    circadian: component(circadian),
  };
  const weighted =
    DAILY_WEIGHTS.overnight * components.overnight.value +
    DAILY_WEIGHTS.fastedRatio * components.fastedRatio.value +
    DAILY_WEIGHTS.regularity * components.regularity.value +
    DAILY_WEIGHTS.circadian * components.circadian.value;

  let scoreState: ScoreState;
  let score: number | null;
  if (now < day.start) {
    scoreState = 'PENDING';
    score = null;
  } else if (now < day.end) {
    scoreState = 'PENDING';
    // Until the day's first meal or sleep is logged there is nothing of today to score: a fresh
    // database is not an optimal day, it is no data yet (as a finished empty day is).
    const logged = day.loggedMeals > 0 || input.sleeps.some((s) => s.end >= day.start && s.end <= now);
    score = logged ? clampScore(weighted) : null;
    if (!logged) neutralise(components);
  } else if (day.loggedMeals > 0) {
    scoreState = 'SCORED';
    score = clampScore(weighted);
  } else {
    scoreState = 'UNSCORABLE';
    score = null;
    neutralise(components);
  }

  const calibrating = input.daysWithData < CALIBRATION_MIN_DAYS;
  let confidence = MAX_CONFIDENCE;
  if (calibrating) confidence *= CALIBRATION_CONFIDENCE_FACTOR;
  if (!night) confidence *= ESTIMATED_OVERNIGHT_CONFIDENCE_FACTOR;
  if (day.digestive.length > 0 && day.overnightFastMin === null) confidence *= UNKNOWN_FAST_CONFIDENCE_FACTOR;

  return {
    date,
    score,
    scoreState,
    level: score === null ? null : levelOf(score),
    components,
    calibrating,
    confidence: roundConfidence(confidence),
    overnightSource: night ? 'sleep' : 'estimated',
    basis: {
      firstMealAt: day.firstMealAt,
      lastMealAt: day.lastMealAt,
      eatingSpanMin: day.eatingSpanMin === null ? null : Math.round(day.eatingSpanMin),
      overnightFastMin: day.overnightFastMin === null ? null : Math.round(day.overnightFastMin),
      midpointSdMin: Math.round(midpointSd),
      midpointDays: midpoints.length,
      totalKcal: Math.round(day.totalKcal),
      lateKcal: Math.round(day.lateKcal),
      lateSharePct: Math.round(lateShare * 100),
      overnightSleepId: night?.id ?? null,
      overnightBedtime,
      overnightBedtimeSource,
      nightBedtime: day.nightBedtime,
      nightBedtimeSource: day.nightBedtimeSource,
    },
  };
}

/** Nothing was logged: the values say what the log gives, but none of them is praise or blame. */
function neutralise(components: DailyScore['components']): void {
  for (const c of Object.values(components)) c.contribution = 'neutral';
}

/**
 * Eating-window midpoints (minutes after day start) of the days in [fromDate, toDate] that have
 * digestive meals, in one pass over the meals.
 */
export function eatingWindowMidpoints(
  fromDate: string,
  toDate: string,
  meals: readonly EngineMeal[],
  settings: EngineSettings,
  nights: NightsBefore,
): number[] {
  // A meal's own offset can move it across the zone's bounds; the night after toDate belongs to it.
  const from = userDayBounds(fromDate, settings).start - MEAL_DAY_SPREAD_MS;
  const to = userDayBounds(toDate, settings).end + MS_PER_DAY + MEAL_DAY_SPREAD_MS;
  type Edge = { at: number; minute: number };
  const windows = new Map<string, { first: Edge; last: Edge }>();
  for (const m of meals) {
    if (m.timestamp < from || m.timestamp >= to || !isDigestiveMeal(m)) continue;
    const { date: d, minute } = eatingDay(m, settings, nights);
    if (d < fromDate || d > toDate) continue;
    const edge = { at: m.timestamp, minute };
    const w = windows.get(d);
    if (!w) windows.set(d, { first: edge, last: edge });
    else {
      if (edge.at < w.first.at) w.first = edge;
      if (edge.at > w.last.at) w.last = edge;
    }
  }
  return datesBetween(fromDate, toDate)
    .map((d) => windows.get(d))
    .filter((w): w is { first: Edge; last: Edge } => w !== undefined)
    .map((w) => (w.first.minute + w.last.minute) / 2);
}

export interface DailyScoresInput {
  startDate: string;
  endDate: string;
  /** Meals in dailyScoreInputWindows(startDate, endDate).meals. */
  meals: readonly EngineMeal[];
  /** Sleeps in dailyScoreInputWindows(startDate, endDate).sleeps. */
  sleeps: readonly EngineSleep[];
  settings: EngineSettings;
  now: number;
  /**
   * The first days of the whole history with a logged meal, ascending: at least the first
   * CALIBRATION_MIN_DAYS of them (all of them when there are fewer). A day is calibrating while
   * fewer than that many of these lie on or before it, so each day's score depends on its own
   * date only, never on the range it was asked in.
   */
  firstLoggedDays: readonly string[];
}

/** Daily scores for every date of [startDate, endDate], ascending. */
export function dailyScores(input: DailyScoresInput): DailyScore[] {
  // Each day needs only its own meals and those of the 15 days before: hand it that slice of the
  // sorted meals rather than the whole range, so a long range costs linear, not quadratic, time.
  const sorted = [...input.meals].sort(byTime);
  const times = sorted.map((m) => m.timestamp);
  const nights = nightsBefore(input.sleeps, input.settings, input.now);
  return datesBetween(input.startDate, input.endDate).map((date) => {
    const daysWithData = loggedDaysThrough(input.firstLoggedDays, date);
    const from = userDayBounds(addDays(date, -REGULARITY_WINDOW_DAYS - 1), input.settings).start;
    // Through the next day too: a meal eaten at another offset can belong to `date` yet fall after its bounds.
    const to = userDayBounds(addDays(date, 1), input.settings).end;
    const meals = sorted.slice(lowerBound(times, from), lowerBound(times, to));
    return dailyScore({ date, meals, sleeps: input.sleeps, settings: input.settings, now: input.now, daysWithData, nights });
  });
}

/** How many of `days` lie on or before `date`. */
export function loggedDaysThrough(days: readonly string[], date: string): number {
  let n = 0;
  for (const d of days) if (d <= date) n++;
  return n;
}

/** First index whose value is ≥ x in an ascending array. */
export function lowerBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
