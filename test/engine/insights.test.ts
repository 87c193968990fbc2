import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { digestionInsights, insightId } from '../../server/engine/insights.js';
import { addDays } from '../../server/time/tz.js';
import type { EngineMeal, EngineSleep, Insight } from '../../server/engine/types.js';
import { UTC_SETTINGS, at, meal, sleep } from './helpers.js';

const START = '2026-05-11';
const END = '2026-05-17'; // 7 days
const NOW = at('2026-05-18', 12);

function insights(meals: EngineMeal[], sleeps: EngineSleep[] = [], range = { startDate: START, endDate: END }): Insight[] {
  return digestionInsights({ ...range, meals, sleeps, settings: UTC_SETTINGS, now: NOW });
}

function kinds(list: Insight[]): string[] {
  return list.map((i) => i.kind).sort();
}

/** A week of days; `dinnerHour(d)` and `bedHour(d)` per day index 0–6. */
function week(options: { dinnerHour?: (d: number) => number; firstHour?: (d: number) => number; bedHour?: (d: number) => number; caffeine?: (d: number) => number; efficiency?: (d: number) => number } = {}) {
  const meals: EngineMeal[] = [];
  const sleeps: EngineSleep[] = [];
  for (let d = -1; d < 7; d++) {
    const date = addDays(START, d);
    const first = options.firstHour?.(d) ?? 8;
    const dinner = options.dinnerHour?.(d) ?? 18.5;
    const bed = options.bedHour?.(d) ?? 23;
    meals.push(meal(at(date, Math.floor(first), (first % 1) * 60), 450, { mealType: 'breakfast' }));
    meals.push(meal(at(date, 12, 30), 700));
    meals.push(meal(at(date, Math.floor(dinner), Math.round((dinner % 1) * 60)), 800, { mealType: 'dinner' }));
    const caffeine = options.caffeine?.(d) ?? 0;
    if (caffeine > 0) meals.push(meal(at(date, Math.floor(bed) - 4), 5, { description: 'espresso', caffeineMg: caffeine }));
    sleeps.push(sleep(at(date, Math.floor(bed), Math.round((bed % 1) * 60)), at(addDays(date, 1), 7), { efficiency: options.efficiency?.(d) ?? 0.9, awakenings: 1 }));
  }
  return { meals, sleeps };
}

describe('insights are derived from the data', () => {
  test('no data, no insight', () => {
    assert.deepEqual(insights([], []), []);
  });

  test('late dinners on 4 of the last 7 nights: a warning carrying its basis', () => {
    // Nights dated in the range are those ending 05-11…05-17, i.e. starting on day −1…5.
    const late = new Set([0, 2, 3, 5]);
    const { meals, sleeps } = week({ dinnerHour: (d) => (late.has(d) ? 21.5 : 18.5) });
    const found = insights(meals, sleeps).find((i) => i.kind === 'late_meal_before_sleep')!;
    assert.ok(found, 'expected a late_meal_before_sleep insight');
    assert.equal(found.severity, 'warning');
    assert.deepEqual(found.basis, { nights: 7, lateNights: 4, medianLateGapMin: 90, medianGapMin: 90, thresholdMin: 180 });
    assert.equal(found.title, 'Late meals on 4 of 7 nights');
    assert.match(found.detail, /1 h 30 min/);
    assert.equal(found.date, '2026-05-17'); // the latest late night (day 5) ended on the 17th
  });

  test('late dinners on 2 of 7 nights are not a pattern', () => {
    const { meals, sleeps } = week({ dinnerHour: (d) => (d === 2 || d === 5 ? 21.5 : 18.5) });
    assert.ok(!kinds(insights(meals, sleeps)).includes('late_meal_before_sleep'), '!kinds(insights(meals, sleeps)).includes(\'late_meal_before_sleep\')');
  });

  test('a steady week earns positive insights and no warnings', () => {
    const { meals, sleeps } = week();
    const list = insights(meals, sleeps);
    assert.ok(list.length > 0, 'list.length > 0');
    assert.ok(list.every((i) => i.severity === 'positive'), kinds(list).join(','));
    assert.ok(kinds(list).includes('meal_gap_before_sleep_kept'), 'kinds(list).includes(\'meal_gap_before_sleep_kept\')');
    assert.ok(kinds(list).includes('compact_eating_window'), 'kinds(list).includes(\'compact_eating_window\')');
    assert.ok(kinds(list).includes('long_overnight_fast'), 'kinds(list).includes(\'long_overnight_fast\')');
  });

  test('eating over more than 14 h on most days, and fasting less than 13 h', () => {
    const { meals, sleeps } = week({ firstHour: () => 6.5, dinnerHour: (d) => (d % 2 === 0 ? 21.5 : 18.5), bedHour: () => 23.9 });
    const list = insights(meals, sleeps);
    const span = list.find((i) => i.kind === 'long_eating_span')!;
    assert.equal(span.basis.longDays, 4); // days 0, 2, 4, 6: 06:30–21:30 = 15 h
    assert.equal(span.basis.days, 7);
    const fast = list.find((i) => i.kind === 'short_overnight_fast')!;
    assert.equal(fast.severity, 'warning');
    assert.equal(fast.basis.shortDays, 7); // 18:30 → 06:30 is 12 h, 21:30 → 06:30 is 9 h
  });

  test('meal times that wander by hours', () => {
    const { meals, sleeps } = week({ firstHour: (d) => (d % 2 ? 6 : 13), dinnerHour: (d) => (d % 2 ? 17 : 23.5), bedHour: () => 23.9 });
    const found = insights(meals, sleeps).find((i) => i.kind === 'irregular_meal_timing')!;
    assert.ok(found, 'found');
    assert.ok((found.basis.midpointSdMin as number) > 120, '(found.basis.midpointSdMin as number) > 120');
  });

  test('caffeine within 6 h of bed before worse sleep', () => {
    const withCaffeine = new Set([0, 2, 4]);
    const { meals, sleeps } = week({
      caffeine: (d) => (withCaffeine.has(d) ? 150 : 0),
      efficiency: (d) => (withCaffeine.has(d) ? 0.72 : 0.9),
    });
    const found = insights(meals, sleeps).find((i) => i.kind === 'caffeine_before_worse_sleep')!;
    assert.ok(found, 'found');
    assert.equal(found.basis.nightsWithLateCaffeine, 3);
    assert.equal(found.basis.nightsWithout, 4);
    assert.equal(found.basis.meanEfficiencyWith, 0.72);
    assert.equal(found.basis.meanEfficiencyWithout, 0.9);
    assert.match(found.detail, /efficiency 72 % instead of 90 %/);
  });

  test('caffeine without worse sleep is no insight', () => {
    const { meals, sleeps } = week({ caffeine: (d) => (d % 2 ? 150 : 0) });
    assert.ok(!kinds(insights(meals, sleeps)).includes('caffeine_before_worse_sleep'), '!kinds(insights(meals, sleeps)).includes(\'caffeine_before_worse_sleep\')');
  });
});

describe('insight ids', () => {
  test('the same insight gets the same id every time, and the id follows kind and date', () => {
    const { meals, sleeps } = week({ dinnerHour: () => 21.5 });
    const a = insights(meals, sleeps);
    const b = insights([...meals].reverse(), [...sleeps].reverse());
    assert.deepEqual(a.map((i) => i.id), b.map((i) => i.id));
    for (const i of a) assert.equal(i.id, insightId(i.kind, i.date));
    assert.notEqual(insightId('late_meal_before_sleep', '2026-05-17'), insightId('late_meal_before_sleep', '2026-05-18'));
    assert.notEqual(insightId('long_eating_span', '2026-05-17'), insightId('late_meal_before_sleep', '2026-05-17'));
    assert.equal(new Set(a.map((i) => i.id)).size, a.length);
  });

  test('a longer range ending on the same evidence keeps the id', () => {
    const { meals, sleeps } = week({ dinnerHour: () => 21.5 });
    const short = insights(meals, sleeps).find((i) => i.kind === 'late_meal_before_sleep')!;
    const longer = insights(meals, sleeps, { startDate: addDays(START, -7), endDate: END }).find((i) => i.kind === 'late_meal_before_sleep')!;
    assert.equal(longer.id, short.id);
  });
});

describe('a meal inside a logged sleep', () => {
  test('is flagged for that night, even once', () => {
    const { meals, sleeps } = week();
    // The night ending on 14 May: a 400 kcal snack at 02:10 inside the 23:00 → 07:00 sleep.
    const snack = meal(at('2026-05-14', 2, 10), 400);
    const list = insights([...meals, snack], sleeps);
    const flagged = list.filter((i) => i.kind === 'meal_during_sleep');
    assert.equal(flagged.length, 1, JSON.stringify(list.map((i) => i.kind)));
    assert.equal(flagged[0]!.date, '2026-05-14');
    assert.equal(flagged[0]!.severity, 'warning');
    assert.equal(flagged[0]!.basis.meals, 1);
    assert.equal(flagged[0]!.basis.kcal, 400);
    assert.match(flagged[0]!.detail, /02:10/);
    assert.equal(kinds(insights(meals, sleeps)).includes('meal_during_sleep'), false);
  });
});
