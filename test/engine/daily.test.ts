import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dailyScore, dailyScores } from '../../server/engine/daily.js';
import { levelOf, contributionOf } from '../../server/engine/scoring.js';
import { analyseNight } from '../../server/engine/overnight.js';
import { DAILY_WEIGHTS } from '../../server/engine/constants.js';
import { addDays } from '../../server/time/tz.js';
import type { DailyScore, EngineMeal, EngineSleep } from '../../server/engine/types.js';
import { UTC_SETTINGS, at, meal, sleep } from './helpers.js';

const settings = UTC_SETTINGS;
const DAY = '2026-05-20';
const NOW_LATER = at('2026-05-25', 12);

/** Breakfast, lunch, dinner at the given UTC hours on a date. */
function dayOfMeals(date: string, hours: [number, number, number] = [8, 12.5, 18.5], kcal: [number, number, number] = [450, 700, 800]): EngineMeal[] {
  return hours.map((h, i) => meal(at(date, Math.floor(h), Math.round((h % 1) * 60)), kcal[i]!, { mealType: (['breakfast', 'lunch', 'dinner'] as const)[i]! }));
}

function history(days: number, endDate: string, hours?: [number, number, number]): EngineMeal[] {
  const out: EngineMeal[] = [];
  for (let d = days - 1; d >= 0; d--) out.push(...dayOfMeals(addDays(endDate, -d), hours));
  return out;
}

function score(date: string, meals: EngineMeal[], options: { now?: number; sleeps?: EngineSleep[]; daysWithData?: number } = {}): DailyScore {
  return dailyScore({ date, meals, sleeps: options.sleeps ?? [], settings, now: options.now ?? NOW_LATER, daysWithData: options.daysWithData ?? 15 });
}

describe('score states', () => {
  const meals = history(15, DAY);

  test('today is PENDING with a provisional integer score', () => {
    const s = score(DAY, meals, { now: at(DAY, 20) });
    assert.equal(s.scoreState, 'PENDING');
    assert.ok(Number.isInteger(s.score) && s.score! >= 0 && s.score! <= 100, 'Number.isInteger(s.score) && s.score! >= 0 && s.score! <= 100');
    assert.equal(s.level, levelOf(s.score!));
  });

  test('the provisional score only uses what has been eaten by now', () => {
    const atNoon = score(DAY, meals, { now: at(DAY, 13) });
    assert.equal(atNoon.basis.lastMealAt, at(DAY, 12, 30));
  });

  test('a finished day with meals is SCORED', () => {
    const s = score(DAY, meals);
    assert.equal(s.scoreState, 'SCORED');
    assert.ok(Number.isInteger(s.score), 'Number.isInteger(s.score)');
    assert.notEqual(s.level, null);
  });

  test('today with nothing logged yet is PENDING with no score (no data), until its first meal or sleep', () => {
    const today = addDays(DAY, 1);
    const now = at(today, 9);
    for (const before of [[], meals]) {
      const empty = score(today, before, { now });
      assert.equal(empty.scoreState, 'PENDING');
      assert.equal(empty.score, null, `with ${before.length} meals before today`);
      assert.equal(empty.level, null);
      for (const c of Object.values(empty.components)) assert.equal(c.contribution, 'neutral');
    }
    const slept = score(today, [], { now, sleeps: [sleep(at(DAY, 23), at(today, 7))] });
    assert.equal(typeof slept.score, 'number', 'a night that ended today is data');
    const ate = score(today, [meal(at(today, 8), 400)], { now });
    assert.equal(typeof ate.score, 'number', 'a meal today is data');
  });

  test('a past day with no meals is UNSCORABLE: score and level null, components numeric and neutral', () => {
    const gap = meals.filter((m) => m.timestamp < at(DAY, 0) || m.timestamp >= at(addDays(DAY, 1), 0));
    assert.ok(gap.length > 0 && gap.length < meals.length, 'gap.length > 0 && gap.length < meals.length');
    const s = score(DAY, gap);
    assert.equal(s.scoreState, 'UNSCORABLE');
    assert.equal(s.score, null);
    assert.equal(s.level, null);
    for (const c of Object.values(s.components)) {
      assert.equal(typeof c.value, 'number');
      assert.ok(c.value >= 0 && c.value <= 100, 'c.value >= 0 && c.value <= 100');
      // No data is neither praise nor blame (fasted ratio and circadian read 100 with nothing eaten).
      assert.equal(c.contribution, 'neutral');
    }
  });

  test('a day with only a glass of water logged is SCORED, not UNSCORABLE', () => {
    const water = [meal(at(DAY, 9), 0, { description: 'water' })];
    assert.equal(score(DAY, water).scoreState, 'SCORED');
  });

  test('a day that has not started is PENDING without a score', () => {
    const s = score('2026-05-30', meals);
    assert.equal(s.scoreState, 'PENDING');
    assert.equal(s.score, null);
  });

  test('calibrating while fewer than 2 days have data, with lower confidence', () => {
    const one = score(DAY, dayOfMeals(DAY), { daysWithData: 1 });
    const two = score(DAY, dayOfMeals(DAY), { daysWithData: 2 });
    assert.equal(one.calibrating, true);
    assert.equal(two.calibrating, false);
    assert.ok(one.confidence < two.confidence, 'one.confidence < two.confidence');
  });

  test('dailyScores counts days with data through each day', () => {
    const first = '2026-05-18';
    const scores = dailyScores({
      startDate: first,
      endDate: '2026-05-20',
      meals: [...dayOfMeals('2026-05-19'), ...dayOfMeals('2026-05-20')],
      sleeps: [],
      settings,
      now: NOW_LATER,
      firstLoggedDays: ['2026-05-19', '2026-05-20'],
    });
    assert.deepEqual(scores.map((s) => [s.date, s.scoreState, s.calibrating]), [
      ['2026-05-18', 'UNSCORABLE', true],
      ['2026-05-19', 'SCORED', true],
      ['2026-05-20', 'SCORED', false],
    ]);
  });
});

describe('levels and contributions', () => {
  test('level thresholds: optimal ≥ 85, good 70–84, fair 60–69, pay_attention < 60', () => {
    assert.deepEqual([100, 85, 84, 70, 69, 60, 59, 0].map(levelOf), [
      'optimal', 'optimal', 'good', 'good', 'fair', 'fair', 'pay_attention', 'pay_attention',
    ]);
  });

  test('contribution thresholds: positive ≥ 85, neutral 60–84, attention < 60', () => {
    assert.deepEqual([85, 84, 60, 59].map(contributionOf), ['positive', 'neutral', 'neutral', 'attention']);
  });

  test('the score is the weighted sum of the components', () => {
    const s = score(DAY, history(15, DAY));
    const c = s.components;
    const expected = Math.round(
      DAILY_WEIGHTS.overnight * c.overnight.value +
        DAILY_WEIGHTS.fastedRatio * c.fastedRatio.value +
        DAILY_WEIGHTS.regularity * c.regularity.value +
        DAILY_WEIGHTS.circadian * c.circadian.value,
    );
    assert.equal(s.score, expected);
    assert.ok(Math.abs(Object.values(DAILY_WEIGHTS).reduce((a, b) => a + b, 0) - 1) < 1e-12, 'Math.abs(Object.values(DAILY_WEIGHTS).reduce((a, b) => a + b, 0) - 1) < 1e-12');
  });
});

describe('components follow the data', () => {
  test('circadian: a big dinner at 21:30 needs attention, the same dinner at 18:00 is positive', () => {
    const late = score(DAY, [...history(14, addDays(DAY, -1)), ...dayOfMeals(DAY, [8, 12.5, 21.5])]);
    const early = score(DAY, [...history(14, addDays(DAY, -1)), ...dayOfMeals(DAY, [8, 12.5, 18])]);
    assert.equal(late.components.circadian.contribution, 'attention');
    assert.equal(late.basis.lateSharePct, 41); // 800 of 1950 kcal
    assert.equal(early.components.circadian.contribution, 'positive');
    assert.ok(late.score! < early.score!, 'late.score! < early.score!');
  });

  test('circadian: meals within 3 h of a logged sleep count as late even before 20:00', () => {
    const meals = [...history(14, addDays(DAY, -1)), ...dayOfMeals(DAY, [8, 12.5, 19])];
    const earlyNight = sleep(at(DAY, 21, 30), at(addDays(DAY, 1), 6));
    const withSleep = score(DAY, meals, { sleeps: [earlyNight] });
    const without = score(DAY, meals);
    assert.equal(withSleep.basis.lateKcal, 800);
    assert.equal(without.basis.lateKcal, 0);
  });

  test('fasted_ratio: a 14.5 h eating span after a short night fast is worse than a 10 h span after a long one', () => {
    const loose = score(DAY, [meal(at(addDays(DAY, -1), 22), 500), ...dayOfMeals(DAY, [7, 13, 21.5])]);
    const tight = score(DAY, [meal(at(addDays(DAY, -1), 18), 500), ...dayOfMeals(DAY, [9, 13, 19])]);
    assert.equal(loose.basis.eatingSpanMin, 870);
    assert.equal(loose.basis.overnightFastMin, 540);
    assert.equal(tight.basis.overnightFastMin, 900);
    assert.equal(loose.components.fastedRatio.contribution, 'attention');
    assert.equal(tight.components.fastedRatio.contribution, 'positive');
  });

  test('fasted_ratio: with nothing logged the day before, the fast is unknown and only the span counts', () => {
    const s = score(DAY, dayOfMeals(DAY, [9, 13, 19]));
    assert.equal(s.basis.overnightFastMin, null);
    assert.equal(s.components.fastedRatio.value, 100); // 10 h span
  });

  test('regularity: midpoints that wander by hours need attention; steady ones are positive', () => {
    const steady = score(DAY, history(15, DAY));
    const wandering: EngineMeal[] = [];
    for (let d = 14; d >= 0; d--) {
      const shift = d % 2 === 0 ? 0 : 5; // alternate 08–18:30 and 13–23:30
      wandering.push(...dayOfMeals(addDays(DAY, -d), [8 + shift, 12.5 + shift, 18.5 + shift]));
    }
    const irregular = score(DAY, wandering);
    assert.equal(steady.basis.midpointSdMin, 0);
    assert.equal(steady.components.regularity.contribution, 'positive');
    assert.ok((irregular.basis.midpointSdMin as number) > 120, '(irregular.basis.midpointSdMin as number) > 120');
    assert.equal(irregular.components.regularity.contribution, 'attention');
  });
});

describe('overnight component', () => {
  const before = addDays(DAY, -1);
  const base = history(14, addDays(DAY, -2));

  test('with a logged night it is that night\'s overnight score', () => {
    const meals = [...base, ...dayOfMeals(before), ...dayOfMeals(DAY)];
    const night = sleep(at(before, 23), at(DAY, 7), { efficiency: 0.9, awakenings: 1 });
    const s = score(DAY, meals, { sleeps: [night] });
    assert.equal(s.overnightSource, 'sleep');
    assert.equal(s.basis.overnightSleepId, night.id);
    assert.equal(s.components.overnight.value, analyseNight(night.start, meals, night).score);
  });

  test('without a logged night it is estimated from the last meal and the usual bedtime — not a constant', () => {
    const earlyDinner = score(DAY, [...base, ...dayOfMeals(before, [8, 12.5, 18]), ...dayOfMeals(DAY)]);
    const lateDinner = score(DAY, [...base, ...dayOfMeals(before, [8, 12.5, 22]), ...dayOfMeals(DAY)]);
    assert.equal(earlyDinner.overnightSource, 'estimated');
    assert.equal(earlyDinner.basis.overnightBedtimeSource, 'default');
    assert.equal(earlyDinner.basis.overnightBedtime, at(before, 23));
    assert.equal(earlyDinner.components.overnight.contribution, 'positive'); // 5 h before 23:00
    assert.equal(lateDinner.components.overnight.contribution, 'attention'); // 1 h before 23:00
    assert.ok(earlyDinner.components.overnight.value > lateDinner.components.overnight.value, 'earlyDinner.components.overnight.value > lateDinner.components.overnight.value');
  });

  test('the estimate uses the bedtime learned from logged nights (circular mean of start times)', () => {
    const meals = [...base, ...dayOfMeals(before, [8, 12.5, 19.5]), ...dayOfMeals(DAY)];
    // Nights logged earlier, starting 20:30–21:30: usual bedtime 21:00. The night before DAY is not logged.
    const nights = [3, 4, 5, 6].map((d, i) => sleep(at(addDays(DAY, -d), 20, 30 + i * 20), at(addDays(DAY, -d + 1), 5)));
    const learned = score(DAY, meals, { sleeps: nights });
    const assumed = score(DAY, meals);
    assert.equal(learned.basis.overnightBedtimeSource, 'learned');
    assert.equal(learned.basis.overnightBedtime, at(before, 21, 0));
    assert.equal(learned.components.overnight.contribution, 'attention'); // dinner 19:30, bed ~21:00
    assert.equal(assumed.components.overnight.contribution, 'positive'); // dinner 19:30, bed 23:00
  });

  test('an estimated overnight lowers the confidence', () => {
    const meals = [...base, ...dayOfMeals(before), ...dayOfMeals(DAY)];
    const logged = score(DAY, meals, { sleeps: [sleep(at(before, 23), at(DAY, 7))] });
    const estimated = score(DAY, meals);
    assert.ok(estimated.confidence < logged.confidence, 'estimated.confidence < logged.confidence');
  });
});

describe('eating in the night (issue 19: a night-eating day scored 100)', () => {
  test('700 kcal at 01:30 and at 03:30, nothing else: late eating, and neither day Optimal', () => {
    const meals = [meal(at(DAY, 1, 30), 700), meal(at(DAY, 3, 30), 700)];
    const s = score(DAY, meals, { daysWithData: 1 });
    // After the usual bedtime (23:00, none logged) and before the night's end: the gap to bed is 0.
    assert.equal(s.components.overnight.contribution, 'attention');
    assert.notEqual(s.level, 'optimal');
    // The night's eating belongs to the evening before (see eatingDay): all of its calories are late.
    const before = score(addDays(DAY, -1), meals, { daysWithData: 1 });
    assert.equal(before.scoreState, 'SCORED');
    assert.equal(before.components.circadian.value, 0);
    assert.equal(before.basis.lateKcal, 1400);
    assert.equal(before.basis.lastMealAt, at(DAY, 3, 30));
    assert.notEqual(before.level, 'optimal');
  });

  test('without a logged night, an early breakfast is morning, not night eating', () => {
    const prev = addDays(DAY, -1);
    const meals = [meal(at(prev, 8), 450), meal(at(prev, 12, 30), 700), meal(at(prev, 18, 30), 700), meal(at(DAY, 6, 15), 450), meal(at(DAY, 12, 30), 700), meal(at(DAY, 18), 600)];
    const s = score(DAY, meals);
    assert.equal(s.components.overnight.value, 100);
    assert.equal(s.basis.lateKcal, 0);
  });

  test('a meal inside the logged night is late eating of the evening before, and last night for the day', () => {
    const prev = addDays(DAY, -1);
    // Sleep logged 23:00 → 07:00 with a snack at 00:20 inside it; the day's own meals are early.
    const meals = [meal(at(prev, 19), 700), meal(at(DAY, 0, 20), 400), meal(at(DAY, 8), 450), meal(at(DAY, 12, 30), 700), meal(at(DAY, 18), 450)];
    const sleeps = [sleep(at(prev, 23), at(DAY, 7))];
    const s = score(DAY, meals, { sleeps });
    assert.equal(s.basis.lateKcal, 0);
    assert.equal(s.basis.firstMealAt, at(DAY, 8));
    assert.equal(s.components.overnight.contribution, 'attention');
    const before = score(prev, meals, { sleeps });
    assert.equal(before.basis.lateKcal, 400);
    assert.equal(before.basis.eatingSpanMin, 5 * 60 + 20);
  });

  test('issue 28: one snack in the night is not the morning’s first meal and does not make the morning harsh', () => {
    const regular = history(14, addDays(DAY, -1));
    const snack = meal(at(DAY, 3), 250);
    const atSeven = score(DAY, [...regular, snack], { now: at(DAY, 7) });
    assert.equal(atSeven.basis.firstMealAt, null, 'the snack opens no eating window today');
    assert.equal(atSeven.components.overnight.contribution, 'attention', 'it is last night’s eating');
    assert.equal(atSeven.components.fastedRatio.value, 100);
    assert.equal(atSeven.components.circadian.value, 100);
    assert.ok(atSeven.score! >= 60, `score at 07:00 ${atSeven.score}`);
    const breakfast = meal(at(DAY, 8), 450);
    const atNine = score(DAY, [...regular, snack, breakfast], { now: at(DAY, 9) });
    assert.equal(atNine.basis.firstMealAt, breakfast.timestamp);
    assert.equal(atNine.basis.eatingSpanMin, 0);
    // The fast before breakfast really was 5 h: the snack ended it.
    assert.equal(atNine.basis.overnightFastMin, 5 * 60);
    const yesterday = score(addDays(DAY, -1), [...regular, snack], { now: at(DAY, 9) });
    assert.equal(yesterday.basis.lastMealAt, snack.timestamp);
    assert.equal(yesterday.basis.lateKcal, 250);
  });
});
