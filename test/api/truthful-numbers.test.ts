import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { statePayloads } from '../../server/mqtt/entities.js';
import { readMqttConfig } from '../../server/mqtt/config.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';

// Issue 28, items 2 and 3, over real HTTP: unknown stays unknown, and what Today reads is true.
const iso = (ms: number) => new Date(ms).toISOString();
const TODAY = iso(TEST_NOW).slice(0, 10);
const at = (h: number, m = 0) => Date.parse(`${TODAY}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00Z`);

/** MQTT's calories_today payload as the client would publish it now. */
function caloriesToday(t: TestService) {
  const states = statePayloads(t.service.app, readMqttConfig(t.service.app));
  return JSON.parse(states.get([...states.keys()].find((k) => k.endsWith('/calories_today'))!)!);
}

describe('what Today reads is true (issue 28.3)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ now: at(9), timezone: 'UTC' });
  });
  after(() => t.stop());

  test('a fresh database: today has no score and every component is neutral, not 100 "Optimal"', async () => {
    const r = await t.request('GET', `/v1/digestion/scores/daily?start_date=${TODAY}&end_date=${TODAY}`);
    assert.equal(r.status, 200, r.text);
    const day = r.body.data[0];
    assert.equal(day.score_state, 'PENDING');
    assert.equal(day.score, null);
    assert.equal(day.level, null);
    for (const c of Object.values(day.components) as { contribution: string }[]) assert.equal(c.contribution, 'neutral');
  });

  test('one 500 kcal meal at 19:33: finish eating by 20:00, and no eating window running into the night', async () => {
    t.clock.set(at(19, 33));
    const r = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: iso(at(19, 33)), meal_type: 'dinner', macros: { calories: 500 } } });
    assert.equal(r.status, 201, r.text);
    t.clock.set(at(19, 40));
    const w = (await t.request('GET', '/v1/digestion/windows')).body;
    assert.equal(Date.parse(w.tonight.finish_eating_by), at(20));
    const kinds = w.next_meal_suggestions.map((s: { kind: string }) => s.kind);
    assert.ok(!kinds.includes('eating_window_close'), `suggestions: ${kinds.join(', ')}`);
    const day = (await t.request('GET', `/v1/digestion/scores/daily?start_date=${TODAY}&end_date=${TODAY}`)).body.data[0];
    assert.equal(typeof day.score, 'number', 'a meal logged today is data');
  });
});

describe('unknown stays unknown (issue 28.2)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ now: at(12), timezone: 'UTC' });
  });
  after(() => t.stop());

  test('calories only: the resource keeps numbers (the spec) with null sources; CSV and MQTT leave them out', async () => {
    const only = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: iso(at(8)), meal_type: 'breakfast', macros: { calories: 400 } } });
    assert.equal(only.status, 201, only.text);
    assert.equal(only.body.macros.protein_g, 0);
    assert.equal(only.body.nutrient_sources.protein_g, null);
    const bare = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: iso(at(11)), meal_type: 'lunch', description: 'soup from the canteen' } });
    assert.equal(bare.status, 201, bare.text);
    assert.equal(bare.body.calories_source, 'macros');

    const csv = (await t.request('GET', '/v1/export/meals.csv')).text.trim().split('\r\n');
    const header = csv[0]!.split(',');
    const row = (id: string) => csv.find((l) => l.startsWith(id))!.split(',');
    const col = (name: string) => header.indexOf(name);
    assert.equal(row(only.body.id)[col('calories')], '400');
    assert.equal(row(only.body.id)[col('protein_g')], '', 'protein nobody gave is an empty cell');
    assert.equal(row(bare.body.id)[col('calories')], '', 'calories derived from nothing are unknown, not 0');

    const calories = caloriesToday(t);
    assert.equal(calories.calories, 400);
    assert.equal(calories.meals, 2);
    assert.equal(calories.meals_without_calories, 1);
  });

  test('a meal logged for later counts in calories today once its time comes', async () => {
    const later = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: iso(at(14)), meal_type: 'snack', macros: { calories: 200 } } });
    assert.equal(later.status, 201, later.text);
    assert.equal(caloriesToday(t).calories, 400, 'not eaten yet at 12:00');
    t.clock.set(at(14, 1));
    assert.equal(caloriesToday(t).calories, 600);
    assert.equal(caloriesToday(t).meals, 3);
  });
});
