import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 19 item 6: one rule for a meal's day, whatever the time zone setting says now. A meal's
 * day is the date on the clock where it was eaten (its utc_offset_min), honouring day_start; a
 * later change of time zone does not move it. The meals list, the timeline and the daily scores
 * all place it there.
 */
describe("a meal's day after a time zone change", () => {
  let t: TestService;
  before(async () => {
    // 02:00 in New York on 26 November.
    t = await startTestService({ timezone: 'Europe/Berlin', now: Date.UTC(2026, 10, 26, 7, 0) });
  });
  after(() => t.stop());

  async function placed(id: string, day: string) {
    const prev = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const meals = (await t.request('GET', `/v1/nutrition/meals?start_date=${day}&end_date=${day}`)).body.data.map((m: any) => m.id);
    const timeline = (await t.request('GET', `/v1/digestion/timeline?start_date=${day}&end_date=${day}`)).body.data.map((e: any) => e.meal_id);
    const timelineBefore = (await t.request('GET', `/v1/digestion/timeline?start_date=${prev}&end_date=${prev}`)).body.data.map((e: any) => e.meal_id);
    const mealsBefore = (await t.request('GET', `/v1/nutrition/meals?start_date=${prev}&end_date=${prev}`)).body.data.map((m: any) => m.id);
    const snapshot = (await t.request('GET', '/v1/snapshot?days=2&include=meals,timeline')).body;
    return {
      inMeals: meals.includes(id),
      inTimeline: timeline.includes(id),
      inDayBefore: mealsBefore.includes(id) || timelineBefore.includes(id),
      snapshotDay: snapshot.nutrition.meals.find((m: any) => m.id === id)?.day,
    };
  }

  test('a meal eaten at 00:20 in Berlin on 26 Nov stays on 26 Nov in the meals, the timeline and the scores once the zone is New York', async () => {
    const berlin = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-26T00:20:00+01:00', meal_type: 'snack', description: 'Berlin midnight toast', macros: { calories: 300 } },
    });
    assert.equal(berlin.status, 201, berlin.text);
    assert.equal(berlin.body.day, '2026-11-26');
    assert.equal((await t.request('PATCH', '/v1/settings', { body: { timezone: 'America/New_York' } })).status, 200);
    const ny = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-26T01:00:00-05:00', meal_type: 'snack', description: 'New York 1 AM', macros: { calories: 200 } },
    });
    assert.equal(ny.body.day, '2026-11-26');

    assert.equal((await t.request('GET', `/v1/nutrition/meals/${berlin.body.id}`)).body.day, '2026-11-26');
    assert.deepEqual(await placed(berlin.body.id, '2026-11-26'), { inMeals: true, inTimeline: true, inDayBefore: false, snapshotDay: '2026-11-26' });
    // Newest first, by instant: the New York meal (06:00Z) before the Berlin one (23:20Z the day before).
    const list = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-26&end_date=2026-11-26')).body.data.map((m: any) => m.id);
    assert.deepEqual(list, [ny.body.id, berlin.body.id]);

    // The meals stay on 26 Nov; the toast, eaten in the night before 26 Nov began, belongs to 25
    // Nov's eating window (docs/model.md, "Eating in the night"), so 25 Nov is scored too.
    const scores = (await t.request('GET', '/v1/digestion/scores/daily?start_date=2026-11-25&end_date=2026-11-26')).body.data;
    assert.equal(scores[0].score_state, 'SCORED');
    assert.equal(scores[1].score_state, 'PENDING');
  });

  test('the farthest offsets apart (+14:00 eaten, Pacific/Pago_Pago now: 25 h) still place a meal on its day everywhere', async () => {
    // Eaten at 00:30 on 20 Nov in Kiritimati (+14): 10:30 UTC on 19 Nov, 23:30 on 18 Nov in Pago Pago.
    const early = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-20T00:30:00+14:00', meal_type: 'breakfast', description: 'Kiritimati', macros: { calories: 400 } },
    });
    // Eaten at 23:30 on 20 Nov in Pago Pago (-11): 10:30 UTC on 21 Nov, 00:30 on 22 Nov at +14.
    const late = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-20T23:30:00-11:00', meal_type: 'dinner', description: 'Pago Pago', macros: { calories: 600 } },
    });
    assert.equal(early.body.day, '2026-11-20');
    assert.equal(late.body.day, '2026-11-20');
    for (const zone of ['Pacific/Pago_Pago', 'Pacific/Kiritimati', 'UTC']) {
      assert.equal((await t.request('PATCH', '/v1/settings', { body: { timezone: zone } })).status, 200);
      const timeline = (await t.request('GET', '/v1/digestion/timeline?start_date=2026-11-20&end_date=2026-11-20')).body.data.map((e: any) => e.meal_id);
      assert.deepEqual(timeline.sort(), [early.body.id, late.body.id].sort(), zone);
      const meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-20&end_date=2026-11-20')).body.data.map((m: any) => m.id);
      assert.deepEqual(meals.sort(), [early.body.id, late.body.id].sort(), zone);
      const [score] = (await t.request('GET', '/v1/digestion/scores/daily?start_date=2026-11-20&end_date=2026-11-20')).body.data;
      assert.equal(score.score_state, 'SCORED', zone);
    }
  });
});
