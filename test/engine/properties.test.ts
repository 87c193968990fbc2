import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mealPhases } from '../../server/engine/phases.js';
import { digestiveState } from '../../server/engine/state.js';
import { stomachLoadAt } from '../../server/engine/load.js';
import { MAX_CONFIDENCE, MIN_SHARED_EMPTYING_SPEED, SETTLING_MIN } from '../../server/engine/constants.js';
import { FLOOR_OTHERS_PER_KCAL, runStomach, sharedClockSpeed } from '../../server/engine/stomach.js';
import { digestiveKinetics } from '../../server/engine/episodes.js';
import type { EngineMeal, MealType } from '../../server/engine/types.js';
import { HOUR, MINUTE, T0 } from './helpers.js';

const DESCRIPTIONS = ['mixed meal', 'protein shake', 'orange juice', 'oatmeal with milk', 'steak and fries', 'water', 'black coffee', 'salad', ''];
const FOOD_NAMES = ['smoothie', 'bagel', 'milk', 'rice', 'chicken', 'latte', 'apple'];

/** Any meal the API accepts (CONTRACT §6 bounds), within `spanMin` minutes after T0. */
function mealArbitrary(id: string, spanMin: number): fc.Arbitrary<EngineMeal> {
  const grams = fc.option(fc.double({ min: 0, max: 2000, noNaN: true }), { nil: null });
  return fc.record({
    id: fc.constant(id),
    timestamp: fc.integer({ min: 0, max: spanMin * 60 }).map((s) => T0 + s * 1000),
    mealType: fc.constantFrom<MealType>('breakfast', 'lunch', 'dinner', 'snack'),
    description: fc.constantFrom(...DESCRIPTIONS),
    calories: fc.option(fc.oneof(fc.double({ min: 0, max: 10_000, noNaN: true }), fc.integer({ min: 0, max: 40 })), { nil: null }),
    proteinG: grams,
    carbsG: grams,
    fatG: grams,
    fiberG: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
    sodiumMg: fc.constant(null),
    caffeineMg: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
    foods: fc.array(fc.record({ name: fc.constantFrom(...FOOD_NAMES), calories: fc.integer({ min: 0, max: 800 }) }), { maxLength: 3 }),
  });
}

function mealsArbitrary(maxMeals: number, spanMin: number): fc.Arbitrary<EngineMeal[]> {
  return fc.integer({ min: 1, max: maxMeals }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => mealArbitrary(`meal_${i}`, spanMin))));
}

const opts = { daysWithData: 5 };

describe('properties', () => {
  test('phases are always whole minutes with 0 < fed < processing < settling, for any meals', () => {
    fc.assert(
      fc.property(mealsArbitrary(6, 12 * 60), (meals) => {
        for (const p of mealPhases(meals, opts)) {
          for (const v of [p.fedEndMin, p.processingEndMin, p.settlingEndMin]) assert.ok(Number.isInteger(v), 'Number.isInteger(v)');
          assert.ok(0 < p.fedEndMin, `fed ${p.fedEndMin}`);
          assert.ok(p.fedEndMin < p.processingEndMin, `fed ${p.fedEndMin} processing ${p.processingEndMin}`);
          assert.ok(p.processingEndMin < p.settlingEndMin, 'p.processingEndMin < p.settlingEndMin');
          assert.ok(p.settlingEndMin - p.processingEndMin >= SETTLING_MIN, `settling ${p.settlingEndMin} processing ${p.processingEndMin}`);
          assert.equal(p.totalProcessingMin, p.settlingEndMin);
          assert.ok(p.confidence > 0 && p.confidence <= MAX_CONFIDENCE, 'p.confidence > 0 && p.confidence <= MAX_CONFIDENCE');
        }
      }),
      { numRuns: 300 },
    );
  });

  test('adding a meal never makes the stomach empty sooner (fasted_at is monotone)', () => {
    fc.assert(
      fc.property(mealsArbitrary(5, 10 * 60), mealArbitrary('meal_extra', 10 * 60), (meals, extra) => {
        const now = T0 + 10 * HOUR;
        const before = digestiveState(meals, now, opts);
        const after = digestiveState([...meals, extra], now, opts);
        assert.ok(after.fastedAt >= before.fastedAt, `fasted_at ${after.fastedAt} < ${before.fastedAt}`);
      }),
      { numRuns: 300 },
    );
  });

  test('adding a meal never leaves less in the stomach at any moment', () => {
    fc.assert(
      fc.property(
        mealsArbitrary(4, 6 * 60),
        mealArbitrary('meal_extra', 6 * 60),
        fc.integer({ min: 0, max: 16 * 60 }),
        (meals, extra, minute) => {
          const t = T0 + minute * MINUTE;
          assert.ok(stomachLoadAt([...meals, extra], t) >= stomachLoadAt(meals, t) - 1e-9, 'stomachLoadAt([...meals, extra], t) >= stomachLoadAt(meals, t) - 1e-9');
        },
      ),
      { numRuns: 200 },
    );
  });

  test("the timeline agrees with the state at every moment of a meal's phases", () => {
    fc.assert(
      fc.property(mealsArbitrary(4, 8 * 60), (meals) => {
        for (const p of mealPhases(meals, opts)) {
          // Minutes are rounded, so stay 2 min clear of each boundary.
          const processingUntil = p.mealTime + (p.processingEndMin - 2) * MINUTE;
          if (processingUntil > p.mealTime) {
            const s = digestiveState(meals, processingUntil, opts);
            assert.equal(s.state, 'processing', `meal ${p.mealId} at processing_end − 2 min`);
          }
          const s = digestiveState(meals, p.mealTime + (p.settlingEndMin - 2) * MINUTE, opts);
          assert.notEqual(s.state, 'fasted', `meal ${p.mealId} at settling_end − 2 min`);
        }
      }),
      { numRuns: 150 },
    );
  });

  test('the state is consistent with the timeline of the same meals', () => {
    fc.assert(
      fc.property(mealsArbitrary(4, 8 * 60), fc.integer({ min: 0, max: 20 * 60 }), (meals, minute) => {
        const now = T0 + minute * MINUTE;
        const eaten = meals.filter((m) => m.timestamp <= now);
        const s = digestiveState(eaten, now, opts);
        const entries = mealPhases(eaten, opts);
        // fasted_at is the latest settling end of the meals eaten so far (to rounding of the minute).
        const latestSettlingEnd = Math.max(...entries.map((p) => p.mealTime + p.settlingEndMin * MINUTE));
        if (entries.length > 0) assert.ok(Math.abs(s.fastedAt - latestSettlingEnd) <= MINUTE, 'Math.abs(s.fastedAt - latestSettlingEnd) <= MINUTE');
        if (s.state === 'fasted') {
          assert.equal(s.minutesRemaining, 0);
          assert.equal(s.activeMeals, 0);
        } else {
          assert.ok(s.minutesRemaining >= 1, 's.minutesRemaining >= 1');
          assert.ok(s.activeMeals >= 1, 's.activeMeals >= 1');
          assert.ok(s.since <= now && now < s.fastedAt, 's.since <= now && now < s.fastedAt');
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('the shared stomach takes the floor speed without Math.pow only where pow would give it', () => {
  test('others above FLOOR_OTHERS_PER_KCAL times a meal: its clock speed is exactly the floor', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-3, max: 10_000, noNaN: true }), fc.double({ min: 0, max: 1e-3, noNaN: true }), (kcal, above) => {
        const speed = sharedClockSpeed(kcal, kcal * FLOOR_OTHERS_PER_KCAL * (1 + above));
        assert.equal(speed, MIN_SHARED_EMPTYING_SPEED);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('a congested stomach proved at the floor from load bounds runs bit for bit as the exact steps', () => {
  test('any meals, sparse or crowded into minutes: the same run, trajectories included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 240 }), fc.integer({ min: 1, max: 1440 }), fc.integer(), (count, spanMin, seed) => {
        const meals = fc.sample(mealArbitrary('m', spanMin), { numRuns: count, seed }).map((m, i) => ({ ...m, id: `m${String(i).padStart(3, '0')}` }));
        const kinetics = digestiveKinetics(meals);
        const bounded = runStomach(kinetics, { recordTrajectories: true });
        const exact = runStomach(kinetics, { recordTrajectories: true, boundLoads: false });
        assert.equal(JSON.stringify(bounded), JSON.stringify(exact));
      }),
      { numRuns: 60 },
    );
  });
});
