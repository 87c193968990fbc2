import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mealDay, mealMinuteInUserDay, userDayBounds, dailyScoreInputWindows, stateInputWindow, timelineInputWindow } from '../../server/engine/days.js';
import { dailyScore, dailyScores } from '../../server/engine/daily.js';
import { MAX_DIGESTION_LOOKBACK_MS } from '../../server/engine/constants.js';
import type { EngineSettings } from '../../server/engine/types.js';
import { HOUR, meal } from './helpers.js';

const berlin: EngineSettings = { timezone: 'Europe/Berlin', dayStart: '04:00' };

describe('user days across DST (Europe/Berlin, day start 04:00)', () => {
  test('a meal at 00:30 local on the spring-forward night belongs to the previous day', () => {
    // 2026-03-29 00:30 CET (UTC+1) = 2026-03-28T23:30Z; clocks jump 02:00 → 03:00 later that night.
    const m = meal(Date.UTC(2026, 2, 28, 23, 30), 400);
    assert.equal(mealDay(m, berlin), '2026-03-28');
  });

  test('a meal at 00:30 local on the fall-back night belongs to the previous day', () => {
    // 2026-10-25 00:30 CEST (UTC+2) = 2026-10-24T22:30Z; clocks fall back 03:00 → 02:00 later.
    assert.equal(mealDay(meal(Date.UTC(2026, 9, 24, 22, 30), 400), berlin), '2026-10-24');
    // 04:30 CET that morning (03:30Z) is after the day start: the new day.
    assert.equal(mealDay(meal(Date.UTC(2026, 9, 25, 3, 30), 400), berlin), '2026-10-25');
    // 03:59 local (CET, 02:59Z) is still the previous day.
    assert.equal(mealDay(meal(Date.UTC(2026, 9, 25, 2, 59), 400), berlin), '2026-10-24');
  });

  test('DST days are 23 and 25 hours long from day start to day start', () => {
    const spring = userDayBounds('2026-03-28', berlin);
    const autumn = userDayBounds('2026-10-24', berlin);
    assert.equal((spring.end - spring.start) / HOUR, 23);
    assert.equal((autumn.end - autumn.start) / HOUR, 25);
    assert.equal(spring.start, Date.UTC(2026, 2, 28, 3, 0)); // 04:00 CET
  });

  test("the 00:30 meal is scored on the previous day: it is that day's last meal and it is late", () => {
    const dinner = meal(Date.UTC(2026, 2, 28, 17, 0), 600); // 18:00 CET
    const lateSnack = meal(Date.UTC(2026, 2, 28, 23, 30), 400); // 00:30 CET on the 29th
    const now = Date.UTC(2026, 3, 2, 12, 0);
    const day = dailyScore({ date: '2026-03-28', meals: [dinner, lateSnack], sleeps: [], settings: berlin, now, daysWithData: 3 });
    const next = dailyScore({ date: '2026-03-29', meals: [dinner, lateSnack], sleeps: [], settings: berlin, now, daysWithData: 3 });
    assert.equal(day.basis.lastMealAt, lateSnack.timestamp);
    assert.equal(day.basis.lateKcal, 400);
    assert.equal(day.scoreState, 'SCORED');
    assert.equal(next.basis.firstMealAt, null);
    assert.equal(next.scoreState, 'UNSCORABLE');
  });
});

describe('input windows for the API', () => {
  test('state reads exactly the look-back', () => {
    const now = Date.UTC(2026, 4, 4, 12);
    assert.deepEqual(stateInputWindow(now), { from: now - MAX_DIGESTION_LOOKBACK_MS, to: now });
  });

  test('daily scores read the 14 days before the range and the day and night after it', () => {
    const w = dailyScoreInputWindows('2026-05-10', '2026-05-12', { timezone: 'UTC', dayStart: '00:00' });
    assert.ok(w.meals.from <= Date.UTC(2026, 3, 26), 'w.meals.from <= Date.UTC(2026, 3, 26)');
    // A meal eaten at another offset (up to 26 h from the zone's clock) can belong to the last day.
    assert.equal(w.meals.to, Date.UTC(2026, 4, 14, 2));
    assert.ok(w.sleeps.to >= Date.UTC(2026, 4, 14), 'w.sleeps.to >= Date.UTC(2026, 4, 14)');
  });

  test('timeline reads the meals of its days wherever they were eaten (26 h either side), and a look-back on both sides', () => {
    const w = timelineInputWindow('2026-05-10', '2026-05-10', { timezone: 'UTC', dayStart: '00:00' });
    assert.equal(w.from, Date.UTC(2026, 4, 7, 22));
    assert.equal(w.to, Date.UTC(2026, 4, 13, 2));
  });
});

describe('meals eaten at another offset (travel)', () => {
  const settings = { timezone: 'Europe/Berlin', dayStart: '00:00' };
  // 23:30 in California on 21 Nov is 08:30 on 22 Nov in Berlin.
  const californiaDinner = { ...meal(Date.UTC(2026, 10, 22, 7, 30), 650), utcOffsetMin: -8 * 60 };

  test('the meal keeps the day and clock time of where it was eaten', () => {
    assert.equal(mealDay(californiaDinner, settings), '2026-11-21');
    assert.equal(mealMinuteInUserDay(californiaDinner, settings), 23 * 60 + 30);
    assert.equal(mealDay({ ...californiaDinner, utcOffsetMin: null }, settings), '2026-11-22', 'without an offset the zone decides');
  });

  test('daily scores count it on that day, as a late meal', () => {
    const now = Date.UTC(2026, 10, 23, 12);
    const scores = dailyScores({
      startDate: '2026-11-21',
      endDate: '2026-11-22',
      meals: [californiaDinner],
      sleeps: [],
      settings,
      now,
      firstLoggedDays: ['2026-11-21'],
    });
    assert.equal(scores[0]!.scoreState, 'SCORED', '21 Nov has the meal');
    assert.equal(scores[1]!.scoreState, 'UNSCORABLE', '22 Nov has nothing');
    assert.ok(scores[0]!.components.circadian.value < 60, `a 23:30 dinner is late: ${scores[0]!.components.circadian.value}`);
  });
});
