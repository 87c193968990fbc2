import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { overnightScores, baselineOf, mealGapScore } from '../../server/engine/overnight.js';
import { usualBedtime, usualWakeTime, wakeAfter, circularMeanMinute } from '../../server/engine/bedtime.js';
import { addDays } from '../../server/time/tz.js';
import type { EngineMeal, EngineSleep, OvernightScore } from '../../server/engine/types.js';
import { UTC_SETTINGS, at, meal, sleep } from './helpers.js';

const settings = UTC_SETTINGS;
const NOW = at('2026-06-01', 12);

function scoresFor(sleeps: EngineSleep[], meals: EngineMeal[]): OvernightScore[] {
  return overnightScores({ sleeps, meals, settings, now: NOW });
}

describe('features of one night', () => {
  const dinner = meal(at('2026-05-20', 19), 800, { caffeineMg: 0 });
  const espresso = meal(at('2026-05-20', 18), 5, { description: 'espresso', caffeineMg: 120 });
  const night = sleep(at('2026-05-20', 23), at('2026-05-21', 6, 30), { efficiency: 0.88, awakenings: 2 });
  const [s] = scoresFor([night], [dinner, espresso]);

  test('date is the day the sleep ended; sleep and last meal are reported', () => {
    assert.equal(s!.date, '2026-05-21');
    assert.deepEqual(s!.sleep, { start: night.start, end: night.end, durationMin: 450 });
    assert.equal(s!.lastMealAt, dinner.timestamp); // the 5 kcal espresso is not a meal for digestion
  });

  test('features carry their measures', () => {
    const f = s!.features;
    assert.equal(f.last_meal_gap_min!.value, 240);
    assert.equal(f.late_calories!.value, 0); // 19:00 is exactly 4 h before
    assert.equal(f.late_caffeine_mg!.value, 120); // the espresso counts for caffeine
    assert.equal(f.sleep_duration_min!.value, 450);
    assert.equal(f.sleep_efficiency!.value, 0.88);
    assert.equal(f.awakenings!.value, 2);
    assert.equal(f.late_caffeine_mg!.contribution, 'attention');
  });

  test('efficiency and awakenings are left out when not logged', () => {
    const [bare] = scoresFor([sleep(night.start, night.end)], [dinner]);
    assert.equal(bare!.features.sleep_efficiency, undefined);
    assert.equal(bare!.features.awakenings, undefined);
    assert.ok(bare!.confidence < s!.confidence, 'bare!.confidence < s!.confidence');
  });

  test('sleep duration: 7 h or more is positive, under 6 h needs attention', () => {
    const contribution = (hours: number) =>
      scoresFor([sleep(at('2026-05-20', 23), at('2026-05-20', 23) + hours * 3600_000)], [dinner])[0]!.features.sleep_duration_min!.contribution;
    assert.equal(contribution(8), 'positive');
    assert.equal(contribution(7), 'positive');
    assert.equal(contribution(6.5), 'neutral');
    assert.equal(contribution(5.5), 'attention');
  });

  test('scored, with an integer score and its level', () => {
    assert.equal(s!.scoreState, 'SCORED');
    assert.ok(Number.isInteger(s!.score), 'Number.isInteger(s!.score)');
  });
});

describe('gap from last meal to sleep (reflux and night-waking figures)', () => {
  test('≥ 3 h is positive, < 3 h needs attention', () => {
    const gapContribution = (gapMin: number) => {
      const night = sleep(at('2026-05-20', 23), at('2026-05-21', 7));
      const [s] = scoresFor([night], [meal(night.start - gapMin * 60_000, 600)]);
      return s!.features.last_meal_gap_min!.contribution;
    };
    assert.equal(gapContribution(240), 'positive');
    assert.equal(gapContribution(180), 'positive');
    assert.equal(gapContribution(179), 'attention');
    assert.equal(gapContribution(60), 'attention');
  });

  test('the gap score steps at 3 h and is full at 4 h', () => {
    assert.ok(mealGapScore(179) < 60, 'mealGapScore(179) < 60');
    assert.equal(mealGapScore(180), 85);
    assert.equal(mealGapScore(240), 100);
    assert.equal(mealGapScore(0), 0);
  });

  test('a late dinner lowers the night score', () => {
    const night = sleep(at('2026-05-20', 23), at('2026-05-21', 7));
    const [early] = scoresFor([night], [meal(at('2026-05-20', 18, 30), 800)]);
    const [late] = scoresFor([night], [meal(at('2026-05-20', 22), 800)]);
    assert.ok(late!.score! < early!.score!, 'late!.score! < early!.score!');
    assert.equal(late!.features.late_calories!.value, 800);
  });

  test('no meal in the day before sleep: gap reported as 1440 min and last meal null', () => {
    const [s] = scoresFor([sleep(at('2026-05-20', 23), at('2026-05-21', 7))], []);
    assert.equal(s!.lastMealAt, null);
    assert.equal(s!.features.last_meal_gap_min!.value, 1440);
  });
});

describe('baseline and deviation', () => {
  test('the first night has no baseline and no deviation', () => {
    const [s] = scoresFor([sleep(at('2026-05-20', 23), at('2026-05-21', 7))], [meal(at('2026-05-20', 19), 600)]);
    assert.deepEqual(s!.baseline, { score: null, days: 0 });
    assert.equal(s!.deviation, null);
  });

  test('baseline is the weighted mean of earlier nights and deviation is score − baseline', () => {
    const nights: EngineSleep[] = [];
    const meals: EngineMeal[] = [];
    // Five nights with a 4 h gap, then one with a 1 h gap.
    for (let d = 0; d < 6; d++) {
      const date = addDays('2026-05-10', d);
      nights.push(sleep(at(date, 23), at(addDays(date, 1), 7)));
      meals.push(meal(at(date, d < 5 ? 19 : 22), 700));
    }
    const scores = scoresFor(nights, meals);
    assert.equal(scores.length, 6);
    const last = scores[5]!;
    const earlier = scores.slice(0, 5).map((s) => s.score!).reverse();
    assert.equal(last.baseline.days, 5);
    assert.equal(last.baseline.score, baselineOf(earlier).score);
    assert.equal(last.deviation, last.score! - last.baseline.score!);
    assert.ok(last.deviation! < 0, 'the late night is below its baseline');
    assert.equal(scores[1]!.baseline.days, 1);
  });

  test('weights halve every 7 nights back', () => {
    // 100 last night, 0 the night before: weights 1 and 0.5^(1/7), so the most recent counts most.
    assert.equal(baselineOf([100, 0]).score, Math.round(100 / (1 + Math.pow(0.5, 1 / 7))));
    assert.equal(baselineOf([]).score, null);
    assert.equal(baselineOf(Array(20).fill(80)).days, 14);
  });

  test('nights more than 14 days earlier do not count', () => {
    const old = sleep(at('2026-05-01', 23), at('2026-05-02', 7));
    const recent = sleep(at('2026-05-20', 23), at('2026-05-21', 7));
    const scores = scoresFor([old, recent], [meal(at('2026-05-01', 19), 500), meal(at('2026-05-20', 19), 500)]);
    assert.equal(scores[1]!.baseline.days, 0);
  });

  test('a nap is UNSCORABLE and stays out of baselines', () => {
    const nap = sleep(at('2026-05-20', 14), at('2026-05-20', 15));
    const night = sleep(at('2026-05-20', 23), at('2026-05-21', 7));
    const scores = scoresFor([nap, night], [meal(at('2026-05-20', 12), 600), meal(at('2026-05-20', 19), 600)]);
    assert.equal(scores[0]!.scoreState, 'UNSCORABLE');
    assert.equal(scores[0]!.score, null);
    assert.equal(scores[0]!.level, null);
    assert.equal(scores[1]!.baseline.days, 0);
  });

  test('a session that has not ended yet is PENDING', () => {
    const ongoing = sleep(NOW - 3600_000 * 5, NOW + 3600_000 * 2);
    assert.equal(scoresFor([ongoing], [])[0]!.scoreState, 'PENDING');
  });

  test('the date range filters output but earlier nights still feed the baseline', () => {
    const nights = [0, 1, 2].map((d) => sleep(at(addDays('2026-05-10', d), 23), at(addDays('2026-05-11', d), 7)));
    const scores = overnightScores({ sleeps: nights, meals: [], settings, now: NOW, startDate: '2026-05-13', endDate: '2026-05-13' });
    assert.equal(scores.length, 1);
    assert.equal(scores[0]!.baseline.days, 2);
  });
});

describe('usual bedtime', () => {
  test('circular mean across midnight: 23:30 and 00:30 average to 00:00', () => {
    assert.equal(circularMeanMinute([23 * 60 + 30, 30])!.minuteOfDay, 0);
  });

  test('learned from nights of the last 14 days, else 23:00', () => {
    const nights = [1, 2, 3].map((d) => sleep(at(addDays('2026-05-20', -d), 22, 30), at(addDays('2026-05-20', -d + 1), 6, 30)));
    assert.deepEqual(usualBedtime(nights, settings, at('2026-05-20', 12)), { minuteOfDay: 22 * 60 + 30, source: 'learned', nights: 3 });
    assert.deepEqual(usualBedtime([], settings, at('2026-05-20', 12)), { minuteOfDay: 23 * 60, source: 'default', nights: 0 });
    assert.equal(usualBedtime(nights, settings, at('2026-06-30', 12)).source, 'default');
  });

  test('bedtime is learned on the local clock', () => {
    const nyc = { timezone: 'America/New_York', dayStart: '00:00' };
    // 03:00Z in May is 23:00 EDT.
    const nights = [1, 2].map((d) => sleep(at(addDays('2026-05-20', -d), 3), at(addDays('2026-05-20', -d), 11)));
    assert.equal(usualBedtime(nights, nyc, at('2026-05-20', 12)).minuteOfDay, 23 * 60);
  });

  test('the wake time is learned from the same nights’ ends, else 8 h after the bedtime', () => {
    const nights = [1, 2, 3].map((d) => sleep(at(addDays('2026-05-20', -d), 22, 30), at(addDays('2026-05-20', -d + 1), 6, 10)));
    assert.deepEqual(usualWakeTime(nights, settings, at('2026-05-20', 12)), { minuteOfDay: 6 * 60 + 10, source: 'learned', nights: 3 });
    assert.deepEqual(usualWakeTime([], settings, at('2026-05-20', 12)), { minuteOfDay: 7 * 60, source: 'default', nights: 0 });
  });

  test('a night’s end is the first wake-time clock after its bedtime, across a DST change', () => {
    const berlin = { timezone: 'Europe/Berlin', dayStart: '00:00' };
    // 23:00 on 24 Oct 2026 in Berlin (21:00Z, CEST); the clocks go back at 03:00, so 07:00 CET is 06:00Z.
    assert.equal(wakeAfter(Date.UTC(2026, 9, 24, 21), 7 * 60, berlin), Date.UTC(2026, 9, 25, 6));
    // A bedtime after midnight wakes the same date.
    assert.equal(wakeAfter(at('2026-05-20', 1), 9 * 60, settings), at('2026-05-20', 9));
  });
});

describe('eating inside a logged sleep (issue 19: the night was scored from lunch)', () => {
  test('meals at 23:40 and 00:20 inside a night logged 23:00 → 07:00 are the last meal, a gap of 0 and late calories', () => {
    const day = '2026-05-20';
    const next = addDays(day, 1);
    const meals = [meal(at(day, 13), 700), meal(at(day, 23, 40), 600), meal(at(next, 0, 20), 400)];
    const night = sleep(at(day, 23), at(next, 7));
    const [s] = overnightScores({ sleeps: [night], meals, settings: UTC_SETTINGS, now: at(next, 12) });
    assert.equal(s!.lastMealAt, at(next, 0, 20));
    assert.equal(s!.features.last_meal_gap_min!.value, 0);
    assert.equal(s!.features.late_calories!.value, 1000);
    assert.equal(s!.features.last_meal_gap_min!.contribution, 'attention');
    assert.equal(s!.mealsDuringSleep, 2);
    assert.ok(s!.score! < 60, `score ${s!.score}`);
  });

  test('a breakfast in the last hour before the logged wake time is breakfast, not eating in the night', () => {
    const day = '2026-05-20';
    const next = addDays(day, 1);
    const night = sleep(at(day, 23), at(next, 7));
    const [s] = overnightScores({ sleeps: [night], meals: [meal(at(day, 19), 700), meal(at(next, 6, 10), 400)], settings: UTC_SETTINGS, now: at(next, 12) });
    assert.equal(s!.lastMealAt, at(day, 19));
    assert.equal(s!.mealsDuringSleep, 0);
    // An hour and more before it, the night has it.
    const [earlier] = overnightScores({ sleeps: [night], meals: [meal(at(day, 19), 700), meal(at(next, 5, 55), 400)], settings: UTC_SETTINGS, now: at(next, 12) });
    assert.equal(earlier!.mealsDuringSleep, 1);
  });

  test('a meal after the sleep ended is breakfast, not part of the night', () => {
    const day = '2026-05-20';
    const next = addDays(day, 1);
    const night = sleep(at(day, 23), at(next, 7));
    const [s] = overnightScores({ sleeps: [night], meals: [meal(at(day, 19), 700), meal(at(next, 7, 30), 400)], settings: UTC_SETTINGS, now: at(next, 12) });
    assert.equal(s!.lastMealAt, at(day, 19));
    assert.equal(s!.features.last_meal_gap_min!.value, 240);
    assert.equal(s!.mealsDuringSleep, 0);
  });
});
