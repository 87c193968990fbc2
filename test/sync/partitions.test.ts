import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { prng } from '../helpers/random.js';
import { type Device, type RelayProcess, type SyncedPair, converged, history, startSyncedPair, until } from '../helpers/sync.js';

/**
 * Issue 22 (SYNC.md §8 cases 2 and 3): partitions and the merge oracle. The relay process is killed,
 * both devices change things while apart, the relay comes back, and both devices must end with
 * equal histories (the export, sorted) and equal scores.
 */

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const CYCLES = Number(process.env.SYNC_PARTITION_CYCLES ?? 20);
const OPS_PER_SIDE = 12;
const SEED = Number(process.env.SYNC_SEED ?? 22);

describe('sync: partitions and concurrent edits', () => {
  let pair: SyncedPair;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair();
    ({ relay, a, b } = pair);
  });

  after(() => pair?.stop());

  const meal = async (d: Device, description: string, calories: number, hoursAgo = 3) => {
    const r = await d.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - hoursAgo * HOUR), meal_type: 'lunch', description, macros: { calories } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    return r.json as { id: string };
  };

  test('the merge oracle: other fields both survive, one field ends with one value everywhere, a delete beats an edit', async () => {
    const m1 = await meal(a, 'soup', 300);
    const m2 = await meal(a, 'bread', 200, 4);
    const m3 = await meal(b, 'cake', 450, 5);
    await converged([a, b]);

    await relay.kill();
    // Different fields of m1 on each side.
    assert.equal((await a.api('PATCH', `/v1/nutrition/meals/${m1.id}`, { macros: { calories: 350 } })).status, 200);
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${m1.id}`, { description: 'tomato soup' })).status, 200);
    // The same field of m2 on each side.
    assert.equal((await a.api('PATCH', `/v1/nutrition/meals/${m2.id}`, { description: 'rye bread' })).status, 200);
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${m2.id}`, { description: 'sourdough' })).status, 200);
    // m3 deleted on one side while edited on the other.
    assert.equal((await a.api('DELETE', `/v1/nutrition/meals/${m3.id}`)).status, 200);
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${m3.id}`, { description: 'carrot cake', macros: { calories: 500 } })).status, 200);
    // Settings: different fields.
    assert.equal((await a.api('PATCH', '/v1/settings', { units: 'imperial' })).status, 200);
    assert.equal((await b.api('PATCH', '/v1/settings', { day_start: '03:00' })).status, 200);
    await relay.restart();

    const h = (await converged([a, b])) as { meals: Array<{ id: string; description: string; macros: { calories: number } }>; settings: Record<string, string> };
    const byId = new Map(h.meals.map((m) => [m.id, m]));
    assert.equal(byId.get(m1.id)?.description, 'tomato soup');
    assert.equal(byId.get(m1.id)?.macros.calories, 350);
    assert.ok(['rye bread', 'sourdough'].includes(byId.get(m2.id)!.description), byId.get(m2.id)!.description);
    assert.equal(byId.has(m3.id), false, 'the deleted meal stays deleted');
    assert.equal(h.settings.units, 'imperial');
    assert.equal(h.settings.day_start, '03:00');
    // The concurrent edit of one field is shown (on at least one side: the side that lost sees it arrive).
    const conflicts = [...(await a.api('GET', '/v1/sync')).json.conflicts, ...(await b.api('GET', '/v1/sync')).json.conflicts];
    assert.ok(conflicts.some((c: { record_id: string; field: string }) => c.record_id === m2.id && c.field === 'description'), JSON.stringify(conflicts));

    // The deleted meal never comes back: not by a later edit, not after both restart.
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${m3.id}`, { description: 'again' })).status, 404);
    await Promise.all([a.restart(), b.restart()]);
    await converged([a, b]);
    assert.equal((await a.api('GET', `/v1/nutrition/meals/${m3.id}`)).status, 404);
    assert.equal((await b.api('GET', `/v1/nutrition/meals/${m3.id}`)).status, 404);
  });

  test(`${CYCLES} partitions with seeded random edits on both sides end with equal histories and scores`, async () => {
    const random = prng(SEED);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    let ops = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await relay.kill();
      for (const d of [a, b]) {
        const h = (await history(d)) as { meals: Array<{ id: string }>; sleep_sessions: Array<{ id: string }> };
        const meals = h.meals.map((m) => m.id);
        const nights = h.sleep_sessions.map((s) => s.id);
        for (let i = 0; i < OPS_PER_SIDE; i++, ops++) {
          const r = random();
          if (r < 0.3 || meals.length === 0) {
            const m = await meal(d, `c${cycle} ${d.name} ${i}`, Math.round(50 + random() * 900), 1 + random() * 200);
            meals.push(m.id);
          } else if (r < 0.65) {
            const id = pick(meals);
            const body = pick([{ description: `edit ${cycle}.${i} on ${d.name}` }, { macros: { calories: Math.round(random() * 1000) } }, { meal_type: pick(['breakfast', 'lunch', 'dinner', 'snack']) }, { timestamp: iso(now - (1 + random() * 200) * HOUR) }]);
            const res = await d.api('PATCH', `/v1/nutrition/meals/${id}`, body);
            assert.ok(res.status === 200 || res.status === 404, JSON.stringify(res.json));
          } else if (r < 0.8) {
            const id = meals.splice(Math.floor(random() * meals.length), 1)[0]!;
            const res = await d.api('DELETE', `/v1/nutrition/meals/${id}`);
            assert.ok(res.status === 200 || res.status === 404);
          } else if (r < 0.93 || nights.length === 0) {
            const end = now - Math.floor(random() * 60) * 24 * HOUR - Math.floor(random() * 12) * HOUR;
            const res = await d.api('POST', '/v1/sleep/sessions', { start: iso(end - (5 + random() * 4) * HOUR), end: iso(end) });
            // Overlapping nights are refused by the API: that is a valid outcome of a random write.
            assert.ok(res.status === 201 || res.status === 409, JSON.stringify(res.json));
            if (res.status === 201) nights.push(res.json.id);
          } else {
            const id = nights.splice(Math.floor(random() * nights.length), 1)[0]!;
            const res = await d.api('DELETE', `/v1/sleep/sessions/${id}`);
            assert.ok(res.status === 200 || res.status === 404);
          }
        }
      }
      if (cycle % 5 === 4) assert.equal((await pick([a, b]).api('PATCH', '/v1/settings', { units: pick(['metric', 'imperial']) })).status, 200);
      await relay.restart();
      await converged([a, b], 60_000);
    }
    assert.ok(ops >= CYCLES * OPS_PER_SIDE * 2);
    // Scores are derived on each device from the same history: equal too.
    const day = new Date(now - 30 * HOUR).toISOString().slice(0, 10);
    const scores = async (d: Device) => (await d.api('GET', `/v1/digestion/scores/daily?start_date=${new Date(now - 10 * 24 * HOUR).toISOString().slice(0, 10)}&end_date=${day}`)).json;
    await until('equal scores', async () => JSON.stringify(await scores(a)) === JSON.stringify(await scores(b)));
  });
});
