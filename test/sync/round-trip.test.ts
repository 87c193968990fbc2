import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { converged, startSyncedPair, until, type Device, type SyncedPair } from '../helpers/sync.js';

/**
 * Issue 22, "round trip of every synced type within 5 s": a relay process and two `chyme serve`
 * processes. Every change is made through the API on one device and looked for through the API on
 * the other.
 */

const ROUND_TRIP_MS = 5000;
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('sync: two devices through a relay', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair({
      // Both had a life before sync: nothing of it may be lost when they pair.
      async beforePairing(desk, laptop) {
        assert.equal((await desk.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 30 * HOUR), meal_type: 'lunch', description: 'desk before sync', macros: { calories: 610 } })).status, 201);
        assert.equal((await laptop.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 29 * HOUR), meal_type: 'dinner', description: 'laptop before sync', macros: { calories: 720 } })).status, 201);
        assert.equal((await laptop.api('POST', '/v1/sleep/sessions', { start: iso(now - 40 * HOUR), end: iso(now - 32 * HOUR) })).status, 201);
      },
    });
    ({ a, b } = pair);
  });

  after(() => pair?.stop());

  test('pairing merges what both devices had; the status names both devices and the webhook host', async () => {
    const h = (await converged([a, b])) as { meals: Array<{ description: string }>; sleep_sessions: unknown[] };
    assert.deepEqual(h.meals.map((m) => m.description).sort(), ['desk before sync', 'laptop before sync']);
    assert.equal(h.sleep_sessions.length, 1);
    const sa = (await a.api('GET', '/v1/sync')).json;
    const sb = (await b.api('GET', '/v1/sync')).json;
    assert.equal(sa.enabled, true);
    assert.equal(sa.is_webhook_host, true);
    assert.equal(sb.is_webhook_host, false);
    assert.equal(sb.webhook_host.device_name, 'desk');
    assert.deepEqual(sa.peers.map((p: { device_name: string }) => p.device_name).sort(), ['desk', 'laptop']);
    await until('both connected', async () => (await a.api('GET', '/v1/sync')).json.connected && (await b.api('GET', '/v1/sync')).json.connected);
    // The settings come from the history: the laptop took the desk's.
    assert.deepEqual((await b.api('GET', '/v1/settings')).json.timezone, (await a.api('GET', '/v1/settings')).json.timezone);
  });

  /** Waits for `check` on `d` to hold, within the 5 s. */
  const seen = (what: string, d: Device, check: () => Promise<boolean>) => until(`${what} on ${d.name}`, check, ROUND_TRIP_MS);

  test('meals: created, edited and deleted on either device, seen on the other within 5 s', async () => {
    const meal = (await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 2 * HOUR), meal_type: 'snack', description: 'apple', macros: { calories: 95 } })).json;
    await seen('the new meal', b, async () => (await b.api('GET', `/v1/nutrition/meals/${meal.id}`)).status === 200);
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${meal.id}`, { description: 'two apples', macros: { calories: 190 } })).status, 200);
    await seen('the edit', a, async () => {
      const m = (await a.api('GET', `/v1/nutrition/meals/${meal.id}`)).json;
      return m.description === 'two apples' && m.macros.calories === 190;
    });
    assert.equal((await a.api('DELETE', `/v1/nutrition/meals/${meal.id}`)).status, 200);
    await seen('the deletion', b, async () => (await b.api('GET', `/v1/nutrition/meals/${meal.id}`)).status === 404);
  });

  test('sleep: logged on one device, deleted on the other', async () => {
    const s = (await b.api('POST', '/v1/sleep/sessions', { start: iso(now - 20 * HOUR), end: iso(now - 12 * HOUR), efficiency: 0.9 })).json;
    await seen('the night', a, async () => (await a.api('GET', `/v1/sleep/sessions/${s.id}`)).status === 200);
    assert.equal((await a.api('DELETE', `/v1/sleep/sessions/${s.id}`)).status, 200);
    await seen('the deletion', b, async () => (await b.api('GET', `/v1/sleep/sessions/${s.id}`)).status === 404);
  });

  test('custom foods: created, edited and deleted across devices', async () => {
    const f = (await a.api('POST', '/v1/foods', { name: 'Grandma granola', nutrients: { calories: 450, protein_g: 10, carbs_g: 60, fat_g: 18 } })).json;
    await seen('the food', b, async () => (await b.api('GET', `/v1/foods/${f.id}`)).status === 200);
    assert.equal((await b.api('PATCH', `/v1/foods/${f.id}`, { brand: 'Home' })).status, 200);
    await seen('the edit', a, async () => (await a.api('GET', `/v1/foods/${f.id}`)).json.brand === 'Home');
    // Found by search on the other device too (its search index follows).
    const found = (await b.api('GET', '/v1/foods?query=grandma%20granola')).json.data as Array<{ id: string }>;
    assert.ok(found.some((x) => x.id === f.id));
    assert.equal((await a.api('DELETE', `/v1/foods/${f.id}`)).status, 200);
    await seen('the deletion', b, async () => (await b.api('GET', `/v1/foods/${f.id}`)).status === 404);
  });

  test('saved meals: created, edited and deleted across devices', async () => {
    const m = (await b.api('POST', '/v1/nutrition/saved_meals', { name: 'Usual breakfast', meal_type: 'breakfast', foods: [{ name: 'Toast', calories: 180 }] })).json;
    assert.ok(m.id, JSON.stringify(m));
    await seen('the saved meal', a, async () => (await a.api('GET', `/v1/nutrition/saved_meals/${m.id}`)).status === 200);
    assert.equal((await a.api('PATCH', `/v1/nutrition/saved_meals/${m.id}`, { name: 'Weekday breakfast' })).status, 200);
    await seen('the rename', b, async () => (await b.api('GET', `/v1/nutrition/saved_meals/${m.id}`)).json.name === 'Weekday breakfast');
    assert.equal((await b.api('DELETE', `/v1/nutrition/saved_meals/${m.id}`)).status, 200);
    await seen('the deletion', a, async () => (await a.api('GET', `/v1/nutrition/saved_meals/${m.id}`)).status === 404);
  });

  test('settings: each field travels on its own', async () => {
    assert.equal((await a.api('PATCH', '/v1/settings', { units: 'imperial' })).status, 200);
    await seen('units', b, async () => (await b.api('GET', '/v1/settings')).json.units === 'imperial');
    assert.equal((await b.api('PATCH', '/v1/settings', { day_start: '04:00' })).status, 200);
    await seen('day start', a, async () => (await a.api('GET', '/v1/settings')).json.day_start === '04:00');
    assert.equal((await a.api('GET', '/v1/settings')).json.units, 'imperial');
    await converged([a, b]);
  });

  test('both devices start the same month while apart: neither month shard is lost', async () => {
    // Each device creates its own shard of a month nobody used yet, at the same time: both must be
    // listed in the history's index (a map per month, created twice, would keep only one).
    await pair.relay.kill();
    const month = Date.UTC(2019, 2, 10, 12);
    const [ma, mb] = await Promise.all([
      a.api('POST', '/v1/nutrition/meals', { timestamp: iso(month), meal_type: 'lunch', description: 'desk in March 2019', macros: { calories: 300 } }),
      b.api('POST', '/v1/nutrition/meals', { timestamp: iso(month + HOUR), meal_type: 'dinner', description: 'laptop in March 2019', macros: { calories: 400 } }),
    ]);
    assert.equal(ma.status, 201);
    assert.equal(mb.status, 201);
    await pair.relay.restart();
    await until('the desk\'s meal on the laptop', async () => (await b.api('GET', `/v1/nutrition/meals/${ma.json.id}`)).status === 200, 30_000);
    await until('the laptop\'s meal on the desk', async () => (await a.api('GET', `/v1/nutrition/meals/${mb.json.id}`)).status === 200, 30_000);
    await converged([a, b]);
  });

  test('scores follow remote changes: both devices compute the same day', async () => {
    const day = new Date(now - 26 * HOUR).toISOString().slice(0, 10);
    await converged([a, b]);
    const score = async (d: Device) => (await d.api('GET', `/v1/digestion/scores/daily?start_date=${day}&end_date=${day}`)).json;
    const [sa, sb] = await Promise.all([score(a), score(b)]);
    assert.deepEqual(sb, sa);
  });
});
