/**
 * The bare floor of bench/http.ts must answer with exactly Chyme's JSON, or the ratio compares
 * unequal work: when the meal resource gains a field, this fails until the floor writes it too.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startFloor, type RunningServer } from '../../bench/floor.js';
import { startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let floor: RunningServer;

before(async () => {
  t = await startTestService();
  const meals = [
    { timestamp: '2026-11-21T08:30:00+01:00', meal_type: 'breakfast', description: 'Oats', foods: [{ name: 'oats', calories: 300 }, { name: 'milk', calories: 120 }] },
    { timestamp: '2026-11-21T13:00:00Z', meal_type: 'lunch', macros: { calories: 650, protein_g: 30, fat_g: 20 }, micros: { sodium_mg: 900, caffeine_mg: 80 } },
    { timestamp: '2026-11-22T07:00:00Z', meal_type: 'snack', macros: { calories: 90 } },
  ];
  for (const body of meals) assert.equal((await t.request('POST', '/v1/nutrition/meals', { body })).status, 201);
  floor = await startFloor(t.dbPath);
});

after(async () => {
  await floor?.stop();
  await t?.stop();
});

test('the floor answers list and one-meal requests with the same JSON as Chyme', async () => {
  const path = '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30&limit=100';
  const chymeList = await t.request('GET', path);
  assert.equal(chymeList.status, 200);
  const floorList = await (await fetch(floor.url + path)).json();
  assert.equal(chymeList.body.data.length, 3);
  assert.deepEqual(floorList, chymeList.body);
  for (const meal of chymeList.body.data as Array<{ id: string }>) {
    const one = `/v1/nutrition/meals/${meal.id}`;
    assert.deepEqual(await (await fetch(floor.url + one)).json(), (await t.request('GET', one)).body);
  }
});
