/**
 * Insights over a range of days. Every insight is computed from the user's own meals and nights in
 * the range, carries the numbers that produced it (`basis`), and appears only when those numbers meet
 * an evidence threshold (constants.ts, INSIGHT_*). No data, no insight.
 *
 * An insight's date is the latest day of its evidence and its id is a hash of kind and date, so the
 * same insight keeps its id across calls (and across ranges that share that day).
 */

import { createHash } from 'node:crypto';
import { addDays } from '../time/tz.js';
import {
  CAFFEINE_WINDOW_MIN,
  EATING_SPAN_ANCHORS_H,
  INSIGHT_CAFFEINE_AWAKENINGS_RISE,
  INSIGHT_CAFFEINE_DURATION_DROP_MIN,
  INSIGHT_CAFFEINE_EFFICIENCY_DROP,
  INSIGHT_CAFFEINE_MIN_NIGHTS_EACH,
  INSIGHT_LATE_CAFFEINE_MG,
  INSIGHT_MIN_OCCURRENCES,
  INSIGHT_MIN_SHARE,
  INSIGHT_POSITIVE_MIN_DAYS,
  INSIGHT_REGULARITY_MIN_DAYS,
  INSIGHT_REGULARITY_POSITIVE_MIN_DAYS,
  LATE_SHARE_ANCHORS,
  OVERNIGHT_FAST_TARGET_MIN,
  PRE_SLEEP_WINDOW_MIN,
  REGULARITY_SD_ANCHORS_MIN,
  REGULARITY_WINDOW_DAYS,
  EATING_WINDOW_TARGET_MIN,
  FULL_GAP_MIN,
  DAYTIME_EATING_WINDOW,
  IMPROVED_EATING_SPAN_H,
  LATE_EATING_WINDOW,
  LATE_EVENING_CLOCK_MIN,
  MEDIAN_EATING_SPAN_H,
  NIGHT_WAKING_ODDS_RATIO,
  REFLUX_ODDS_RATIO,
  SHORT_FAST_HAZARD_RATIO,
} from './constants.js';
import { formatClock, isNight } from './bedtime.js';
import { dayMetrics, type DayMetrics } from './daily.js';
import { datesBetween, localMinute, userDay } from './days.js';
import { analyseNight } from './overnight.js';
import { mean, median, standardDeviation } from './scoring.js';
import { formatDuration } from './format.js';
import type { EngineMeal, EngineSettings, EngineSleep, Insight, InsightSeverity, Basis } from './types.js';

export interface InsightsInput {
  startDate: string;
  endDate: string;
  /** insightsInputWindows(startDate, endDate).meals */
  meals: readonly EngineMeal[];
  /** insightsInputWindows(startDate, endDate).sleeps */
  sleeps: readonly EngineSleep[];
  settings: EngineSettings;
  now: number;
}

/** Eating span above which a day counts as long (MODEL.md anchors: > 14 h attention). */
const LONG_SPAN_MIN = EATING_SPAN_ANCHORS_H[2]![0] * 60;
/** Late-calorie share above which a day counts as late (MODEL.md anchors: > 25 % attention). */
const LATE_SHARE_ATTENTION = LATE_SHARE_ANCHORS[2]![0];
/** Midpoint SD thresholds (MODEL.md anchors: ≤ 60 min positive, > 120 min attention). */
const REGULAR_SD_MIN = REGULARITY_SD_ANCHORS_MIN[1]![0];
const IRREGULAR_SD_MIN = REGULARITY_SD_ANCHORS_MIN[2]![0];
const GAP = formatDuration(PRE_SLEEP_WINDOW_MIN);
const FAST = formatDuration(OVERNIGHT_FAST_TARGET_MIN);

export function insightId(kind: string, date: string): string {
  return `ins_${createHash('sha256').update(`${kind}|${date}`).digest('hex').slice(0, 24)}`;
}

function insight(kind: string, date: string, severity: InsightSeverity, title: string, detail: string, basis: Basis): Insight {
  return { id: insightId(kind, date), date, kind, severity, title, detail, basis };
}

/** Enough occurrences, and a large enough share of the days with data, to be a pattern. */
function isPattern(occurrences: number, outOf: number): boolean {
  return occurrences >= INSIGHT_MIN_OCCURRENCES && occurrences / outOf >= INSIGHT_MIN_SHARE;
}

function lastDate(dates: readonly string[]): string {
  return [...dates].sort().pop()!;
}

export interface InsightNight {
  date: string;
  sleep: EngineSleep;
  gapMin: number;
  lateCaffeineMg: number;
  /** Digestive meals logged inside the sleep, and the local clock times the insight quotes. */
  duringSleep: { meals: number; kcal: number; firstAt: number | null; firstClock: string | null; sleepClock: string };
}

/**
 * What insights rest on: the finished days of [fromDate, toDate] (a part of the input's range) and
 * the finished nights dated in it that had a meal in the day before. Evidence computed for the parts
 * of a range and concatenated in date order equals the evidence of the whole range, so a long range
 * can be computed in slices without holding the thread.
 */
export interface InsightEvidence {
  days: DayMetrics[];
  nights: InsightNight[];
}

export function insightEvidence(input: InsightsInput, fromDate: string, toDate: string): InsightEvidence {
  const { settings, now } = input;
  const meals = input.meals.filter((m) => m.timestamp <= now);
  const days = datesBetween(fromDate, toDate)
    .map((d) => dayMetrics(d, meals, input.sleeps, settings, now))
    .filter((d) => d.end <= now);
  const nights: InsightNight[] = [];
  for (const sleep of input.sleeps) {
    if (!isNight(sleep) || sleep.end > now) continue;
    const date = userDay(sleep.end, settings);
    if (date < fromDate || date > toDate) continue;
    const analysis = analyseNight(sleep.start, meals, sleep);
    if (analysis.lastMealAt === null) continue;
    nights.push({
      date,
      sleep,
      gapMin: analysis.features.last_meal_gap_min!.value,
      lateCaffeineMg: analysis.features.late_caffeine_mg!.value,
      duringSleep: {
        ...analysis.afterBedtime,
        firstClock: analysis.afterBedtime.firstAt === null ? null : formatClock(localMinute(analysis.afterBedtime.firstAt, settings)),
        sleepClock: `${formatClock(localMinute(sleep.start, settings))} to ${formatClock(localMinute(sleep.end, settings))}`,
      },
    });
  }
  return { days, nights };
}

export function digestionInsights(input: InsightsInput): Insight[] {
  return insightsFromEvidence(insightEvidence(input, input.startDate, input.endDate));
}

/** The insights a range's evidence supports (nights in date order, as insightEvidence gives them). */
export function insightsFromEvidence(evidence: InsightEvidence): Insight[] {
  const { days, nights } = evidence;
  const out: Insight[] = [];

  // 1. Meals within 3 h of sleep.
  if (nights.length > 0) {
    const late = nights.filter((n) => n.gapMin < PRE_SLEEP_WINDOW_MIN);
    const medianGap = median(nights.map((n) => n.gapMin))!;
    if (isPattern(late.length, nights.length)) {
      const medianLateGap = median(late.map((n) => n.gapMin))!;
      out.push(
        insight(
          'late_meal_before_sleep',
          lastDate(late.map((n) => n.date)),
          'warning',
          `Late meals on ${late.length} of ${nights.length} nights`,
          `On ${late.length} of ${nights.length} logged nights your last meal was less than ${GAP} before sleep ` +
            `(on those nights the median gap was ${formatDuration(medianLateGap)}). Going to bed within ${GAP} of eating is linked to reflux ` +
            `(odds ratio ${REFLUX_ODDS_RATIO} against ${formatDuration(FULL_GAP_MIN)} or more) and to waking at night ` +
            `(odds ratio ${NIGHT_WAKING_ODDS_RATIO}).`,
          {
            nights: nights.length,
            lateNights: late.length,
            medianLateGapMin: Math.round(medianLateGap),
            medianGapMin: Math.round(medianGap),
            thresholdMin: PRE_SLEEP_WINDOW_MIN,
          },
        ),
      );
    } else if (late.length === 0 && nights.length >= INSIGHT_POSITIVE_MIN_DAYS) {
      const minGap = Math.min(...nights.map((n) => n.gapMin));
      out.push(
        insight(
          'meal_gap_before_sleep_kept',
          lastDate(nights.map((n) => n.date)),
          'positive',
          `${GAP} or more between your last meal and sleep on all ${nights.length} nights`,
          `Your shortest gap was ${formatDuration(minGap)} (median ${formatDuration(medianGap)}). A gap of ${GAP} or more ` +
            'keeps the risk of night-time reflux and waking low.',
          { nights: nights.length, minGapMin: Math.round(minGap), medianGapMin: Math.round(medianGap), thresholdMin: PRE_SLEEP_WINDOW_MIN },
        ),
      );
    }
  }

  // 1b. A meal inside a logged sleep: worth telling the person each time, not only as a pattern —
  // either they got up to eat (nocturnal eating, a sign of night eating syndrome: Allison et al.,
  // Int J Eat Disord 2010) or the sleep's times are off, and the night's score rests on them.
  for (const n of nights) {
    if (n.duringSleep.meals === 0) continue;
    const count = n.duringSleep.meals === 1 ? 'A meal was' : `${n.duringSleep.meals} meals were`;
    out.push(
      insight(
        'meal_during_sleep',
        n.date,
        'warning',
        `${count} logged during your sleep`,
        `${count} logged inside the sleep you logged from ${n.duringSleep.sleepClock} (the first at ${n.duringSleep.firstClock}, ` +
          `${Math.round(n.duringSleep.kcal)} kcal in all), ` +
          `so that night counts ${n.duringSleep.meals === 1 ? 'it' : 'them'} as eaten at bedtime. If you got up to eat, that is worth noticing: waking in the night to eat ` +
          `is one of the signs of night eating syndrome. If the sleep times are off, log that sleep again with the times you slept, and the night is scored again.`,
        {
          meals: n.duringSleep.meals,
          kcal: Math.round(n.duringSleep.kcal),
          firstMealAt: n.duringSleep.firstAt,
          sleepStart: n.sleep.start,
          sleepEnd: n.sleep.end,
        },
      ),
    );
  }

  // 2. Eating span.
  const spanDays = days.filter((d) => d.digestive.length >= 2 && d.eatingSpanMin !== null);
  if (spanDays.length > 0) {
    const spans = spanDays.map((d) => d.eatingSpanMin!);
    const long = spanDays.filter((d) => d.eatingSpanMin! > LONG_SPAN_MIN);
    const medianSpan = median(spans)!;
    if (isPattern(long.length, spanDays.length)) {
      out.push(
        insight(
          'long_eating_span',
          lastDate(long.map((d) => d.date)),
          'warning',
          `Eating span over ${formatDuration(LONG_SPAN_MIN)} on ${long.length} of ${spanDays.length} days`,
          `From first to last meal you ate over more than ${formatDuration(LONG_SPAN_MIN)} on ${long.length} of ` +
            `${spanDays.length} days (median ${formatDuration(medianSpan)}). Shortening the eating span to ` +
            `${IMPROVED_EATING_SPAN_H} h improved sleep in a study where half of people ate over more than ${MEDIAN_EATING_SPAN_H} h.`,
          { days: spanDays.length, longDays: long.length, medianSpanMin: Math.round(medianSpan), thresholdMin: LONG_SPAN_MIN },
        ),
      );
    } else if (spanDays.length >= INSIGHT_POSITIVE_MIN_DAYS && spans.every((s) => s <= EATING_WINDOW_TARGET_MIN)) {
      const maxSpan = Math.max(...spans);
      out.push(
        insight(
          'compact_eating_window',
          lastDate(spanDays.map((d) => d.date)),
          'positive',
          `Eating span within ${formatDuration(EATING_WINDOW_TARGET_MIN)} on all ${spanDays.length} days`,
          `Your longest eating span was ${formatDuration(maxSpan)} (median ${formatDuration(medianSpan)}).`,
          { days: spanDays.length, maxSpanMin: Math.round(maxSpan), medianSpanMin: Math.round(medianSpan), thresholdMin: EATING_WINDOW_TARGET_MIN },
        ),
      );
    }
  }

  // 3. Overnight fast.
  const fastDays = days.filter((d) => d.overnightFastMin !== null);
  if (fastDays.length > 0) {
    const fasts = fastDays.map((d) => d.overnightFastMin!);
    const short = fastDays.filter((d) => d.overnightFastMin! < OVERNIGHT_FAST_TARGET_MIN);
    const medianFast = median(fasts)!;
    if (isPattern(short.length, fastDays.length)) {
      out.push(
        insight(
          'short_overnight_fast',
          lastDate(short.map((d) => d.date)),
          'warning',
          `Overnight fast under ${FAST} on ${short.length} of ${fastDays.length} days`,
          `Your overnight fast was shorter than ${FAST} on ${short.length} of ${fastDays.length} days (median ` +
            `${formatDuration(medianFast)}). Fasts under ${FAST} are associated with worse outcomes (hazard ratio ` +
            `${SHORT_FAST_HAZARD_RATIO}).`,
          { days: fastDays.length, shortDays: short.length, medianFastMin: Math.round(medianFast), thresholdMin: OVERNIGHT_FAST_TARGET_MIN },
        ),
      );
    } else if (short.length === 0 && fastDays.length >= INSIGHT_POSITIVE_MIN_DAYS) {
      const minFast = Math.min(...fasts);
      out.push(
        insight(
          'long_overnight_fast',
          lastDate(fastDays.map((d) => d.date)),
          'positive',
          `Overnight fast of ${FAST} or more on all ${fastDays.length} days`,
          `Your shortest overnight fast was ${formatDuration(minFast)} (median ${formatDuration(medianFast)}).`,
          { days: fastDays.length, minFastMin: Math.round(minFast), medianFastMin: Math.round(medianFast), thresholdMin: OVERNIGHT_FAST_TARGET_MIN },
        ),
      );
    }
  }

  // 4. Regularity of meal timing: the last 14 finished days of the range.
  const midpointDays = days.filter((d) => d.midpointMin !== null).slice(-REGULARITY_WINDOW_DAYS);
  if (midpointDays.length >= INSIGHT_REGULARITY_MIN_DAYS) {
    const sd = standardDeviation(midpointDays.map((d) => d.midpointMin!))!;
    const date = lastDate(midpointDays.map((d) => d.date));
    if (sd > IRREGULAR_SD_MIN) {
      out.push(
        insight(
          'irregular_meal_timing',
          date,
          'warning',
          'Meal times vary a lot from day to day',
          `The middle of your eating window moved by ${formatDuration(sd)} (standard deviation) over ` +
            `${midpointDays.length} days. Irregular meal timing is linked to worse metabolic markers; under ${formatDuration(REGULAR_SD_MIN)} is regular.`,
          { days: midpointDays.length, midpointSdMin: Math.round(sd), thresholdMin: IRREGULAR_SD_MIN },
        ),
      );
    } else if (sd <= REGULAR_SD_MIN && midpointDays.length >= INSIGHT_REGULARITY_POSITIVE_MIN_DAYS) {
      out.push(
        insight(
          'regular_meal_timing',
          date,
          'positive',
          'Regular meal times',
          `The middle of your eating window varied by only ${formatDuration(sd)} (standard deviation) over ${midpointDays.length} days.`,
          { days: midpointDays.length, midpointSdMin: Math.round(sd), thresholdMin: REGULAR_SD_MIN },
        ),
      );
    }
  }

  // 5. Late calories.
  const calorieDays = days.filter((d) => d.totalKcal > 0);
  if (calorieDays.length > 0) {
    const shares = calorieDays.map((d) => d.lateKcal / d.totalKcal);
    const lateDays = calorieDays.filter((d) => d.lateKcal / d.totalKcal > LATE_SHARE_ATTENTION);
    if (isPattern(lateDays.length, calorieDays.length)) {
      const medianShare = median(shares)!;
      out.push(
        insight(
          'late_calorie_share',
          lastDate(lateDays.map((d) => d.date)),
          'warning',
          `Over a quarter of calories eaten late on ${lateDays.length} of ${calorieDays.length} days`,
          `On ${lateDays.length} of ${calorieDays.length} days more than ${LATE_SHARE_ATTENTION * 100} % of your calories ` +
            `came after ${formatClock(LATE_EVENING_CLOCK_MIN)} or within ${GAP} of sleep (median ` +
            `${Math.round(medianShare * 100)} %). Eating in the daytime (${DAYTIME_EATING_WINDOW}) beat eating late ` +
            `(${LATE_EATING_WINDOW}) for weight and insulin.`,
          { days: calorieDays.length, lateDays: lateDays.length, medianLateSharePct: Math.round(medianShare * 100), thresholdPct: LATE_SHARE_ATTENTION * 100 },
        ),
      );
    }
  }

  // 6. Caffeine in the 6 h before sleep, on nights that went worse.
  const withCaffeine = nights.filter((n) => n.lateCaffeineMg >= INSIGHT_LATE_CAFFEINE_MG);
  const withoutCaffeine = nights.filter((n) => n.lateCaffeineMg < INSIGHT_LATE_CAFFEINE_MG);
  if (withCaffeine.length >= INSIGHT_CAFFEINE_MIN_NIGHTS_EACH && withoutCaffeine.length >= INSIGHT_CAFFEINE_MIN_NIGHTS_EACH) {
    const duration = (ns: InsightNight[]) => mean(ns.map((n) => (n.sleep.end - n.sleep.start) / 60_000));
    const known = (ns: InsightNight[], f: (s: EngineSleep) => number | null) => {
      const xs = ns.map((n) => f(n.sleep)).filter((x): x is number => x !== null);
      return xs.length >= INSIGHT_CAFFEINE_MIN_NIGHTS_EACH ? mean(xs) : null;
    };
    const durWith = duration(withCaffeine)!;
    const durWithout = duration(withoutCaffeine)!;
    const effWith = known(withCaffeine, (s) => s.efficiency);
    const effWithout = known(withoutCaffeine, (s) => s.efficiency);
    const awWith = known(withCaffeine, (s) => s.awakenings);
    const awWithout = known(withoutCaffeine, (s) => s.awakenings);
    const worse: string[] = [];
    if (durWithout - durWith >= INSIGHT_CAFFEINE_DURATION_DROP_MIN) worse.push(`${formatDuration(durWithout - durWith)} less sleep`);
    if (effWith !== null && effWithout !== null && effWithout - effWith >= INSIGHT_CAFFEINE_EFFICIENCY_DROP) {
      worse.push(`efficiency ${Math.round(effWith * 100)} % instead of ${Math.round(effWithout * 100)} %`);
    }
    if (awWith !== null && awWithout !== null && awWith - awWithout >= INSIGHT_CAFFEINE_AWAKENINGS_RISE) {
      worse.push(`${Math.round((awWith - awWithout) * 10) / 10} more awakenings`);
    }
    if (worse.length > 0) {
      out.push(
        insight(
          'caffeine_before_worse_sleep',
          lastDate(withCaffeine.map((n) => n.date)),
          'warning',
          `Worse sleep after caffeine within ${formatDuration(CAFFEINE_WINDOW_MIN)} of bed`,
          `On the ${withCaffeine.length} nights with ${INSIGHT_LATE_CAFFEINE_MG} mg or more of caffeine in the ` +
            `${formatDuration(CAFFEINE_WINDOW_MIN)} before sleep you had ${worse.join(', ')} than on the ` +
            `${withoutCaffeine.length} nights without. Caffeine even ${formatDuration(CAFFEINE_WINDOW_MIN)} before bed ` +
            'can shorten sleep; it does not change how fast the stomach empties.',
          {
            nightsWithLateCaffeine: withCaffeine.length,
            nightsWithout: withoutCaffeine.length,
            meanSleepMinWith: Math.round(durWith),
            meanSleepMinWithout: Math.round(durWithout),
            meanEfficiencyWith: effWith === null ? null : Math.round(effWith * 100) / 100,
            meanEfficiencyWithout: effWithout === null ? null : Math.round(effWithout * 100) / 100,
            meanAwakeningsWith: awWith === null ? null : Math.round(awWith * 10) / 10,
            meanAwakeningsWithout: awWithout === null ? null : Math.round(awWithout * 10) / 10,
            caffeineThresholdMg: INSIGHT_LATE_CAFFEINE_MG,
          },
        ),
      );
    }
  }

  return out.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : a.kind < b.kind ? -1 : 1));
}

/** The default insights range: the `days` days ending today. */
export function insightsRange(days: number, now: number, settings: EngineSettings): { startDate: string; endDate: string } {
  const endDate = userDay(now, settings);
  return { startDate: addDays(endDate, -(days - 1)), endDate };
}
