import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { digestiveState } from '../../server/engine/state.js';
import { mealPhases } from '../../server/engine/phases.js';
import { stomachLoadAt, stomachLoadSeries } from '../../server/engine/load.js';
import {
  MAX_CONFIDENCE,
  MAX_DIGESTION_LOOKBACK_MS,
  MAX_OWN_PROCESSING_MIN,
  MIN_SHARED_EMPTYING_SPEED,
  SETTLING_MIN,
} from '../../server/engine/constants.js';
import type { DigestiveStateName } from '../../server/engine/types.js';
import { HOUR, MINUTE, T0, meal, mixedMeal } from './helpers.js';

const settled = { daysWithData: 10 };

describe('the cycle fasted → processing → settling → fasted', () => {
  const lunch = meal(T0, 530); // processing ends at 267.0 min, settling at 317.0 min

  test('every state is reached, in the spec order, as now advances', () => {
    const seen: DigestiveStateName[] = [];
    for (let t = -60; t <= 400; t += 1) {
      const s = digestiveState([lunch], T0 + t * MINUTE, settled).state;
      if (seen[seen.length - 1] !== s) seen.push(s);
    }
    assert.deepEqual(seen, ['fasted', 'processing', 'settling', 'fasted']);
  });

  test('the changes happen at processing end and settling end', () => {
    const p = mealPhases([lunch], settled)[0]!;
    const stateAt = (min: number) => digestiveState([lunch], T0 + min * MINUTE, settled).state;
    assert.equal(stateAt(0), 'processing');
    assert.equal(stateAt(p.processingEndMin - 1), 'processing');
    assert.equal(stateAt(p.processingEndMin + 1), 'settling');
    assert.equal(stateAt(p.settlingEndMin - 1), 'settling');
    assert.equal(stateAt(p.settlingEndMin + 1), 'fasted');
  });

  test('processing: minutes remaining count down to processing end; since is the meal', () => {
    const s = digestiveState([lunch], T0 + 100 * MINUTE, settled);
    assert.equal(s.state, 'processing');
    assert.equal(s.minutesRemaining, 168); // ceil(267.0 − 100)
    assert.equal(s.since, T0);
    assert.equal(s.activeMeals, 1);
    assert.equal(Math.round((s.fastedAt - T0) / MINUTE), 317);
    assert.equal(s.nextChangeAt, s.fastedAt - SETTLING_MIN * MINUTE);
  });

  test('settling: since is the processing end, remaining counts to the fast', () => {
    const s = digestiveState([lunch], T0 + 300 * MINUTE, settled);
    assert.equal(s.state, 'settling');
    assert.equal(s.minutesRemaining, 18); // ceil(317.0 − 300)
    assert.equal(Math.round((s.since - T0) / MINUTE), 267);
    assert.equal(s.fastedAt - s.since, SETTLING_MIN * MINUTE);
    assert.equal(s.activeMeals, 1);
  });

  test('fasted: 0 minutes remaining, since = fasted_at = end of settling, no active meals', () => {
    const s = digestiveState([lunch], T0 + 8 * HOUR, settled);
    assert.equal(s.state, 'fasted');
    assert.equal(s.minutesRemaining, 0);
    assert.equal(s.since, s.fastedAt);
    assert.equal(Math.round((s.fastedAt - T0) / MINUTE), 317);
    assert.equal(s.activeMeals, 0);
    assert.equal(s.nextChangeAt, null);
  });

  test('with no meal at all: fasted for at least the look-back', () => {
    const now = T0;
    const s = digestiveState([], now, settled);
    assert.equal(s.state, 'fasted');
    assert.equal(s.since, now - MAX_DIGESTION_LOOKBACK_MS);
    assert.equal(s.fastedAt, s.since);
  });

  test('an older meal passed along gives the exact fasted-since', () => {
    const old = meal(T0 - 30 * HOUR, 530);
    const s = digestiveState([old], T0, settled);
    assert.equal(Math.round((s.since - old.timestamp) / MINUTE), 317);
  });

  test('a meal logged for later than now does not count yet', () => {
    const s = digestiveState([meal(T0 + HOUR, 500)], T0, settled);
    assert.equal(s.state, 'fasted');
  });
});

describe('what moves the state', () => {
  test('small drinks (< 15 kcal) do not start digestion', () => {
    const drinks = [meal(T0, 0, { description: 'water' }), meal(T0 + 5 * MINUTE, 5, { description: 'black coffee', caffeineMg: 90 })];
    const s = digestiveState(drinks, T0 + 10 * MINUTE, settled);
    assert.equal(s.state, 'fasted');
    assert.equal(s.activeMeals, 0);
  });

  test('a 15 kcal snack does start digestion', () => {
    assert.equal(digestiveState([meal(T0, 15)], T0 + MINUTE, settled).state, 'processing');
  });

  test('a meal during settling moves back to processing, since that meal', () => {
    const lunch = meal(T0, 530);
    const snack = meal(T0 + 290 * MINUTE, 120);
    assert.equal(digestiveState([lunch], T0 + 295 * MINUTE, settled).state, 'settling');
    const s = digestiveState([lunch, snack], T0 + 295 * MINUTE, settled);
    assert.equal(s.state, 'processing');
    assert.equal(s.since, snack.timestamp);
    assert.equal(s.activeMeals, 2);
  });

  test('a meal during processing extends it without changing since', () => {
    const lunch = meal(T0, 530);
    const dessert = meal(T0 + 60 * MINUTE, 300);
    const before = digestiveState([lunch], T0 + 90 * MINUTE, settled);
    const after = digestiveState([lunch, dessert], T0 + 90 * MINUTE, settled);
    assert.equal(after.since, before.since);
    assert.ok(after.minutesRemaining > before.minutesRemaining, 'after.minutesRemaining > before.minutesRemaining');
    assert.ok(after.fastedAt > before.fastedAt, 'after.fastedAt > before.fastedAt');
    assert.equal(after.activeMeals, 2);
  });

  test('minutes remaining is rounded up: never 0 while processing or settling', () => {
    const lunch = meal(T0, 530);
    for (let t = 0; t < 317; t += 7) {
      const s = digestiveState([lunch], T0 + t * MINUTE + 59_999, settled);
      if (s.state !== 'fasted') assert.ok(s.minutesRemaining >= 1, 's.minutesRemaining >= 1');
    }
  });
});

describe('confidence', () => {
  test('never above 0.8', () => {
    const s = digestiveState([mixedMeal(T0, 500, { protein: 0.2, carbs: 0.5, fat: 0.3 }, { fiberG: 6 })], T0 + HOUR, settled);
    assert.ok(s.confidence <= MAX_CONFIDENCE, 's.confidence <= MAX_CONFIDENCE');
    assert.equal(s.confidence, 0.8);
  });

  test('lower when macros are missing, when meals overlap, and while calibrating', () => {
    const complete = mixedMeal(T0, 500, { protein: 0.2, carbs: 0.5, fat: 0.3 }, { fiberG: 6 });
    const base = digestiveState([complete], T0 + HOUR, settled).confidence;
    const noMacros = digestiveState([meal(T0, 500)], T0 + HOUR, settled).confidence;
    const overlap = digestiveState([complete, mixedMeal(T0 + 30 * MINUTE, 300, { protein: 0.2, carbs: 0.5, fat: 0.3 }, { fiberG: 3 })], T0 + HOUR, settled).confidence;
    const calibrating = digestiveState([complete], T0 + HOUR, { daysWithData: 1 }).confidence;
    assert.ok(noMacros < base, 'noMacros < base');
    assert.ok(overlap < base, 'overlap < base');
    assert.ok(calibrating < base, 'calibrating < base');
  });
});

describe('look-back', () => {
  test('the look-back covers the longest possible digestion given the clamps', () => {
    const longestMs = (MAX_OWN_PROCESSING_MIN / MIN_SHARED_EMPTYING_SPEED + SETTLING_MIN) * MINUTE;
    assert.ok(MAX_DIGESTION_LOOKBACK_MS >= longestMs, 'MAX_DIGESTION_LOOKBACK_MS >= longestMs');
  });

  test('a worst case — a huge meal, then a tiny snack slowed by it — settles within the look-back', () => {
    const feast = meal(T0, 10_000, { fatG: 1000, fiberG: 100 });
    const snack = meal(T0 + 5 * MINUTE, 15);
    const s = digestiveState([feast, snack], T0 + 10 * MINUTE, settled);
    assert.ok(s.fastedAt - snack.timestamp <= MAX_DIGESTION_LOOKBACK_MS, 's.fastedAt - snack.timestamp <= MAX_DIGESTION_LOOKBACK_MS');
    assert.ok(s.fastedAt - feast.timestamp <= MAX_DIGESTION_LOOKBACK_MS, 's.fastedAt - feast.timestamp <= MAX_DIGESTION_LOOKBACK_MS');
  });

  test('reading only the look-back window gives the same state as reading a week', () => {
    const week = [] as ReturnType<typeof meal>[];
    for (let d = 0; d < 7; d++) {
      week.push(meal(T0 + d * 24 * HOUR, 450), meal(T0 + d * 24 * HOUR + 4.5 * HOUR, 700), meal(T0 + d * 24 * HOUR + 11 * HOUR, 800));
    }
    for (const hoursIntoLastDay of [0.5, 5, 11.5, 14, 17, 20]) {
      const now = T0 + 6 * 24 * HOUR + hoursIntoLastDay * HOUR;
      const windowed = week.filter((m) => m.timestamp >= now - MAX_DIGESTION_LOOKBACK_MS);
      assert.deepEqual(digestiveState(windowed, now, settled), digestiveState(week, now, settled), `at +${hoursIntoLastDay} h`);
    }
  });
});

describe('stomach load', () => {
  test('half of a single meal is left at its fed end, and 10 % at its processing end', () => {
    const lunch = meal(T0, 530);
    const p = mealPhases([lunch], settled)[0]!;
    assert.ok(Math.abs(stomachLoadAt([lunch], T0 + p.fedEndMin * MINUTE) - 265) < 3, 'Math.abs(stomachLoadAt([lunch], T0 + p.fedEndMin * MINUTE) - 265) < 3');
    assert.ok(Math.abs(stomachLoadAt([lunch], T0 + p.processingEndMin * MINUTE) - 53) < 1, 'Math.abs(stomachLoadAt([lunch], T0 + p.processingEndMin * MINUTE) - 53) < 1');
  });

  test('loads add up when meals overlap and the series falls between meals', () => {
    const a = meal(T0, 400);
    const b = meal(T0 + 60 * MINUTE, 300);
    const justAfterB = stomachLoadAt([a, b], b.timestamp + 1000);
    assert.ok(Math.abs(justAfterB - (stomachLoadAt([a], b.timestamp + 1000) + 300)) < 1, 'Math.abs(justAfterB - (stomachLoadAt([a], b.timestamp + 1000) + 300)) < 1');
    const series = stomachLoadSeries([a], T0, T0 + 5 * HOUR, 10 * MINUTE);
    assert.equal(series.length, 31);
    for (let i = 1; i < series.length; i++) assert.ok(series[i]!.kcal <= series[i - 1]!.kcal, 'series[i]!.kcal <= series[i - 1]!.kcal');
    assert.equal(series[0]!.kcal, 400);
  });
});
