import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { digestionWindows } from '../../server/engine/windows.js';
import { digestiveState } from '../../server/engine/state.js';
import { mealKinetics } from '../../server/engine/meal-model.js';
import { addDays } from '../../server/time/tz.js';
import type { EngineMeal, EngineSettings, EngineSleep, MealSuggestionKind } from '../../server/engine/types.js';
import { MINUTE, UTC_SETTINGS, at, meal, sleep } from './helpers.js';

const DAY = '2026-05-20';

function windows(meals: EngineMeal[], now: number, sleeps: EngineSleep[] = []) {
  return digestionWindows({ meals, sleeps, settings: UTC_SETTINGS, now, daysWithData: 10 });
}

function suggestion(w: ReturnType<typeof windows>, kind: MealSuggestionKind) {
  return w.nextMealSuggestions.find((s) => s.kind === kind);
}

describe('sleep_ready_at', () => {
  test('a big dinner: the stomach is 75 % empty later than 3 h after eating', () => {
    const dinner = meal(at(DAY, 19), 800);
    const w = windows([dinner], at(DAY, 20));
    const quarterLeft = mealKinetics(dinner)!.sleepReadyOwnMin; // ≈ 253 min
    assert.ok(quarterLeft > 180, 'quarterLeft > 180');
    assert.equal(w.sleepReadyAt, Math.round(dinner.timestamp + quarterLeft * MINUTE));
  });

  test('a small snack: 3 h after eating decides', () => {
    const snack = meal(at(DAY, 19), 100);
    const w = windows([snack], at(DAY, 20));
    assert.ok(mealKinetics(snack)!.sleepReadyOwnMin < 180, 'mealKinetics(snack)!.sleepReadyOwnMin < 180');
    assert.equal(w.sleepReadyAt, snack.timestamp + 180 * MINUTE);
  });

  test('a later small snack after a big dinner moves it', () => {
    const dinner = meal(at(DAY, 19), 800);
    const snack = meal(at(DAY, 22), 150);
    const without = windows([dinner], at(DAY, 22, 30));
    const withSnack = windows([dinner, snack], at(DAY, 22, 30));
    assert.ok(withSnack.sleepReadyAt >= snack.timestamp + 180 * MINUTE, 'withSnack.sleepReadyAt >= snack.timestamp + 180 * MINUTE');
    assert.ok(withSnack.sleepReadyAt > without.sleepReadyAt, 'withSnack.sleepReadyAt > without.sleepReadyAt');
  });

  test('drinks under 15 kcal do not move it', () => {
    const dinner = meal(at(DAY, 19), 800);
    const tea = meal(at(DAY, 22), 2, { description: 'herbal tea' });
    assert.equal(windows([dinner, tea], at(DAY, 22, 30)).sleepReadyAt, windows([dinner], at(DAY, 22, 30)).sleepReadyAt);
  });

  test('with no digestive meal in the last 24 h it is now; fasted_at matches the state', () => {
    const now = at(DAY, 10);
    const w = windows([meal(now - 30 * 60 * MINUTE, 500)], now);
    assert.equal(w.sleepReadyAt, now);
    assert.equal(w.calculatedAt, now);
    const dinner = meal(at(DAY, 19), 800);
    assert.equal(windows([dinner], at(DAY, 20)).fastedAt, digestiveState([dinner], at(DAY, 20), { daysWithData: 10 }).fastedAt);
  });
});

describe('next meal suggestions', () => {
  test('latest dinner = usual bedtime − 3 h (23:00 when no night is logged)', () => {
    const w = windows([meal(at(DAY, 8), 400)], at(DAY, 12));
    const s = suggestion(w, 'latest_dinner')!;
    assert.equal(s.at, at(DAY, 20));
    assert.equal(s.basis.bedtimeSource, 'default');
    assert.match(s.reason, /20:00/);
    assert.match(s.reason, /assumed/);
  });

  test('latest dinner follows the learned bedtime', () => {
    const nights = [1, 2, 3].map((d) => sleep(at(addDays(DAY, -d), 22), at(addDays(DAY, -d + 1), 6)));
    const s = suggestion(windows([], at(DAY, 12), nights), 'latest_dinner')!;
    assert.equal(s.at, at(DAY, 19));
    assert.equal(s.basis.nights, 3);
  });

  test('no latest-dinner suggestion once that time has passed', () => {
    assert.equal(suggestion(windows([], at(DAY, 21)), 'latest_dinner'), undefined);
  });

  test("eating window closes 12 h after today's first meal", () => {
    const w = windows([meal(at(DAY, 7, 30), 400), meal(at(DAY, 12), 600)], at(DAY, 13));
    const s = suggestion(w, 'eating_window_close')!;
    assert.equal(s.at, at(DAY, 19, 30));
    assert.equal(s.basis.firstMealAt, at(DAY, 7, 30));
    assert.equal(suggestion(windows([], at(DAY, 13)), 'eating_window_close'), undefined);
  });

  test('no eating-window close after the latest dinner: one meal at 19:33 never suggests eating until 07:33', () => {
    const w = windows([meal(at(DAY, 19, 33), 500)], at(DAY, 19, 40));
    assert.equal(suggestion(w, 'latest_dinner')!.at, at(DAY, 20));
    assert.equal(w.tonight?.finishEatingBy, at(DAY, 20));
    assert.equal(suggestion(w, 'eating_window_close'), undefined);
    // Breakfast at 09:00 closes the window at 21:00, after the 20:00 latest dinner: that one counts.
    assert.equal(suggestion(windows([meal(at(DAY, 9), 400)], at(DAY, 12)), 'eating_window_close'), undefined);
    // Whatever the first meal, no suggestion to stop eating lies after bedtime − 3 h.
    for (let h = 5; h < 23; h++) {
      const ws = windows([meal(at(DAY, h), 400)], at(DAY, h, 10));
      for (const s of ws.nextMealSuggestions) if (s.kind !== 'earliest_first_meal') assert.ok(s.at <= at(DAY, 20), `${s.kind} after a meal at ${h}:00`);
    }
  });

  test("today's first meal is the first whose day is today, by where it was eaten", () => {
    // 20:30 UTC the day before, eaten at +10:00 (06:30 there): today's. 00:30 UTC today eaten at
    // −02:00 (22:30 the day before there): yesterday's, though after today's start in UTC.
    const abroad = meal(at(addDays(DAY, -1), 20, 30), 400, { utcOffsetMin: 600 });
    const west = meal(at(DAY, 0, 30), 400, { utcOffsetMin: -120 });
    const s = suggestion(windows([abroad, west, meal(at(DAY, 7), 500)], at(DAY, 8)), 'eating_window_close')!;
    assert.equal(s.basis.firstMealAt, abroad.timestamp);
    assert.match(s.reason, /^Your first meal today was at 06:30;/);
    const s2 = suggestion(windows([west, meal(at(DAY, 7), 500)], at(DAY, 10)), 'eating_window_close')!;
    assert.equal(s2.basis.firstMealAt, at(DAY, 7));
  });

  test('a snack in last night is not today’s first meal', () => {
    const w = windows([meal(at(DAY, 3), 250), meal(at(DAY, 7, 30), 400)], at(DAY, 9));
    assert.equal(suggestion(w, 'eating_window_close')!.basis.firstMealAt, at(DAY, 7, 30));
  });

  test('after an evening meal: earliest first meal for a 13 h fast; not after lunch', () => {
    const dinner = meal(at(DAY, 19), 700);
    const s = suggestion(windows([dinner], at(DAY, 21)), 'earliest_first_meal')!;
    assert.equal(s.at, at(addDays(DAY, 1), 8));
    assert.equal(suggestion(windows([meal(at(DAY, 12), 700)], at(DAY, 13)), 'earliest_first_meal'), undefined);
  });

  test('suggestions are in time order and all lie ahead', () => {
    const now = at(DAY, 12);
    const w = windows([meal(at(DAY, 8), 400)], now);
    assert.ok(w.nextMealSuggestions.length >= 2, 'w.nextMealSuggestions.length >= 2');
    for (let i = 0; i < w.nextMealSuggestions.length; i++) {
      assert.ok(w.nextMealSuggestions[i]!.at > now, 'w.nextMealSuggestions[i]!.at > now');
      if (i > 0) assert.ok(w.nextMealSuggestions[i]!.at >= w.nextMealSuggestions[i - 1]!.at, 'w.nextMealSuggestions[i]!.at >= w.nextMealSuggestions[i - 1]!.at');
    }
  });
});

describe('tonight: once the person is up, the windows speak of the coming night', () => {
  const YESTERDAY = addDays(DAY, -1);

  test('at 7 AM after a logged night: tonight’s bedtime and the latest time to finish eating, not last night’s "ready"', () => {
    const dinner = meal(at(YESTERDAY, 20), 700);
    const night = sleep(at(YESTERDAY, 23, 2), at(DAY, 6, 40));
    const w = windows([dinner], at(DAY, 7), [night]);
    // The stomach has been ready since last night; that alone is what the morning card used to say.
    assert.ok(w.sleepReadyAt < at(DAY, 0));
    assert.ok(w.tonight, 'tonight is known once the logged night has ended');
    assert.equal(w.tonight.wokeAt, night.end);
    assert.equal(w.tonight.wokeSource, 'sleep');
    // One logged night teaches the bedtime: 23:02 tonight, so finish eating by 20:02.
    assert.equal(w.tonight.bedtimeAt, at(DAY, 23, 2));
    assert.equal(w.tonight.bedtimeSource, 'learned');
    assert.equal(w.tonight.finishEatingBy, at(DAY, 20, 2));
    assert.equal(w.tonight.sleepReadyAt, null, 'nothing eaten since waking');
    assert.equal(suggestion(w, 'latest_dinner')!.at, w.tonight.finishEatingBy);
  });

  test('with nothing logged, the default night 23:00 → 07:00: before 07:00 it is still night, from 07:00 it is tonight', () => {
    const dinner = meal(at(YESTERDAY, 20), 700);
    assert.equal(windows([dinner], at(DAY, 6, 59)).tonight, null);
    const w = windows([dinner], at(DAY, 7));
    assert.equal(w.tonight?.wokeAt, at(DAY, 7));
    assert.equal(w.tonight?.wokeSource, 'default');
    assert.equal(w.tonight?.bedtimeAt, at(DAY, 23));
    assert.equal(w.tonight?.bedtimeSource, 'default');
    assert.equal(w.tonight?.finishEatingBy, at(DAY, 20));
    // Still tonight at 22:30; from the usual bedtime on it is the night again.
    assert.equal(windows([dinner], at(DAY, 22, 30)).tonight?.bedtimeAt, at(DAY, 23));
    assert.equal(windows([dinner], at(DAY, 23, 30)).tonight, null);
  });

  test('the wake time is learned from the logged nights’ ends', () => {
    const nights = [2, 3, 4].map((d) => sleep(at(addDays(DAY, -d), 22, 30), at(addDays(DAY, -d + 1), 6)));
    // Nothing logged for last night: the usual 06:00 has passed at 06:30.
    const w = windows([], at(DAY, 6, 30), nights);
    assert.equal(w.tonight?.wokeAt, at(DAY, 6));
    assert.equal(w.tonight?.wokeSource, 'learned');
    assert.equal(w.tonight?.finishEatingBy, at(DAY, 19, 30));
    assert.equal(windows([], at(DAY, 5, 50), nights).tonight, null);
  });

  test('a bedtime after midnight: at 00:30 the person is still up and tonight’s bedtime is 01:30', () => {
    const nights = [1, 2, 3].map((d) => sleep(at(addDays(DAY, -d + 1), 1, 30), at(addDays(DAY, -d + 1), 9, 30)));
    const w = windows([], at(DAY, 0, 30), nights.slice(1));
    assert.equal(w.tonight?.bedtimeAt, at(DAY, 1, 30));
    assert.equal(w.tonight?.finishEatingBy, at(DAY, 22, 30) - 24 * 60 * MINUTE);
  });

  test('it moves as meals are logged: what is eaten since waking gives tonight’s sleep-ready time', () => {
    const night = sleep(at(YESTERDAY, 23), at(DAY, 7));
    const breakfast = meal(at(DAY, 8), 400);
    const w = windows([breakfast], at(DAY, 9), [night]);
    assert.equal(w.tonight?.sleepReadyAt, w.sleepReadyAt);
    assert.ok(w.tonight!.sleepReadyAt! >= breakfast.timestamp + 180 * MINUTE);
    // A meal after the latest time moves it past the bedtime.
    const late = meal(at(DAY, 21, 30), 600);
    const evening = windows([breakfast, late], at(DAY, 21, 45), [night]);
    assert.ok(evening.tonight!.sleepReadyAt! > evening.tonight!.bedtimeAt);
    assert.equal(evening.tonight!.finishEatingBy, at(DAY, 20));
  });

  test('a day start after midnight does not change which night is coming', () => {
    const late: EngineSettings = { timezone: 'Europe/Berlin', dayStart: '04:00' };
    // 07:30 Berlin (05:30 UTC in May): up by the default 07:00, bed at 23:00 Berlin = 21:00 UTC.
    const w = digestionWindows({ meals: [], sleeps: [], settings: late, now: at(DAY, 5, 30), daysWithData: 10 });
    assert.equal(w.tonight?.wokeAt, at(DAY, 5));
    assert.equal(w.tonight?.bedtimeAt, at(DAY, 21));
  });
});
