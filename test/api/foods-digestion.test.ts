// Issue 8 item 7: fibre, fat and protein from foods feed the digestion engine. A meal logged from
// foods moves the timeline and the state as MODEL.md says: at equal calories a fried meal (over
// 30 % of energy from fat, factor up to 1.4) empties later than rice, and knowing the macros and
// fibre raises the confidence over the same calories typed in alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';

const FRIED_DRUMSTICK = 'food_usda_05067'; // Chicken drumstick, meat and skin, fried in batter: 268 kcal, 15.75 g fat per 100 g
const WHITE_RICE = 'food_usda_20045'; // Rice, white, long-grain, cooked: 130 kcal, 0.28 g fat per 100 g
const FRIED_GRAMS = 200; // 536 kcal
const RICE_GRAMS = (268 * FRIED_GRAMS) / 130; // the same 536 kcal
const MEAL_TIME = '2026-11-22T08:00:00Z';

interface Timeline {
  meal_id: string;
  total_processing_min: number;
  phases: { fed_end_min: number; processing_end_min: number; settling_end_min: number };
  confidence: number;
}

async function logAndRead(t: TestService, foods: unknown[]): Promise<{ meal: any; timeline: Timeline }> {
  const meal = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: MEAL_TIME, meal_type: 'breakfast', foods } });
  assert.equal(meal.status, 201, meal.text);
  const list = await t.request('GET', '/v1/digestion/timeline?start_date=2026-11-22&end_date=2026-11-22');
  const timeline = list.body.data.find((e: Timeline) => e.meal_id === meal.body.id);
  assert.ok(timeline, 'the meal has a timeline entry');
  return { meal: meal.body, timeline };
}

describe('meals from foods drive the digestion model', () => {
  const services: TestService[] = [];
  const start = async () => {
    const t = await startTestService({ now: TEST_NOW - 4 * 3600_000 }); // 08:00 UTC, the meal time
    services.push(t);
    return t;
  };
  let fried: { meal: any; timeline: Timeline };
  let rice: { meal: any; timeline: Timeline };
  let typed: { meal: any; timeline: Timeline };
  let friedService: TestService;
  let riceService: TestService;

  before(async () => {
    friedService = await start();
    riceService = await start();
    const typedService = await start();
    fried = await logAndRead(friedService, [{ food_id: FRIED_DRUMSTICK, quantity: FRIED_GRAMS, unit: 'g' }]);
    rice = await logAndRead(riceService, [{ food_id: WHITE_RICE, quantity: RICE_GRAMS, unit: 'g' }]);
    typed = await logAndRead(typedService, [{ name: 'fried chicken', calories: fried.meal.macros.calories }]);
  });
  after(async () => {
    for (const t of services) await t.stop();
  });

  test('the macros the engine reads come from the foods', () => {
    assert.equal(fried.meal.macros.calories, 536);
    assert.equal(rice.meal.macros.calories, 536);
    assert.equal(fried.meal.macros.fat_g, 31.5);
    assert.ok(rice.meal.macros.fat_g < 2);
    assert.equal(typed.meal.macros.fat_g, 0, 'typed calories alone: fat unknown (reads 0)');
    assert.equal(typed.meal.nutrient_sources.fat_g, null);
  });

  test('at equal calories the fried meal empties later than rice', () => {
    // MODEL.md: fat over 30 % of energy slows emptying (factor 1 + 0.6·(share − 0.3)): 53 % here → ×1.14 on
    // the emptying term, plus protein's ×1.03; the lag is the same at equal calories. About half an hour.
    assert.ok(
      fried.timeline.total_processing_min - rice.timeline.total_processing_min >= 20,
      `fried ${fried.timeline.total_processing_min} min vs rice ${rice.timeline.total_processing_min} min`,
    );
    assert.ok(fried.timeline.phases.processing_end_min > rice.timeline.phases.processing_end_min);
    assert.ok(fried.timeline.phases.fed_end_min > rice.timeline.phases.fed_end_min);
    // Without the macros the engine cannot apply the fat factor: the typed-in meal empties like plain energy.
    assert.ok(fried.timeline.total_processing_min > typed.timeline.total_processing_min);
  });

  test('knowing macros and fibre from foods raises the confidence over calories alone', () => {
    assert.ok(fried.timeline.confidence > typed.timeline.confidence, `${fried.timeline.confidence} vs ${typed.timeline.confidence}`);
  });

  test('between the two processing ends, the rice eater is past processing and the fried-meal eater is not', async () => {
    const between = (rice.timeline.phases.processing_end_min + fried.timeline.phases.processing_end_min) / 2;
    for (const t of [friedService, riceService]) t.clock.set(Date.parse(MEAL_TIME) + between * 60_000);
    const friedState = (await friedService.request('GET', '/v1/digestion/state')).body.state;
    const riceState = (await riceService.request('GET', '/v1/digestion/state')).body.state;
    assert.equal(friedState, 'processing');
    assert.notEqual(riceState, 'processing');
  });
});
