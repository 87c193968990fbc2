import assert from 'node:assert/strict';
import { test } from 'node:test';
import { constants, mealPhases, overnightScores } from '../../server/engine/index.js';
import { at, meal, mixedMeal, sleep, UTC_SETTINGS } from './helpers.js';

test('a meal at a default (inferred) time is weighed down by INFERRED_TIME_CONFIDENCE_FACTOR, its digestion unchanged', () => {
  const shares = { protein: 0.2, carbs: 0.5, fat: 0.3 };
  const known = mixedMeal(at('2026-05-04', 12, 30), 600, shares, { fiberG: 5 });
  const inferred = mixedMeal(at('2026-05-04', 12, 30), 600, shares, { fiberG: 5, inferredTime: true });
  const [a] = mealPhases([known], { daysWithData: 30 });
  const [b] = mealPhases([inferred], { daysWithData: 30 });
  assert.equal(b!.confidence, Math.round(a!.confidence * constants.INFERRED_TIME_CONFIDENCE_FACTOR * 100) / 100);
  assert.ok(b!.confidence < a!.confidence);
  assert.deepEqual([b!.fedEndMin, b!.processingEndMin, b!.settlingEndMin], [a!.fedEndMin, a!.processingEndMin, a!.settlingEndMin]);
});

test('a nap makes no overnight score, whatever its length; the same sleep as a night does', () => {
  const dinner = meal(at('2026-05-04', 19, 0), 700);
  const start = at('2026-05-04', 23, 0);
  const end = at('2026-05-05', 7, 0);
  const now = at('2026-05-06', 12, 0);
  const [night] = overnightScores({ sleeps: [sleep(start, end)], meals: [dinner], settings: UTC_SETTINGS, now });
  const [nap] = overnightScores({ sleeps: [sleep(start, end, { nap: true })], meals: [dinner], settings: UTC_SETTINGS, now });
  assert.equal(night!.scoreState, 'SCORED');
  assert.equal(nap!.scoreState, 'UNSCORABLE');
  assert.equal(nap!.score, null);
});
