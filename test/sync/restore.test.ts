import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Device, type SyncedPair, converged, startSyncedPair, until } from '../helpers/sync.js';

/**
 * docs/sync.md "Backups, restore": a restore on a synced computer keeps its set-up, and the synced
 * records follow the history again (a backup is not a way to roll every computer back).
 */

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('sync: restoring a backup on a synced computer', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair();
    ({ a, b } = pair);
  });

  after(() => pair?.stop());

  test('the set-up stays, the synced records come from the history, and sync carries on', async () => {
    const m1 = (await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 5 * HOUR), meal_type: 'lunch', description: 'before the backup', macros: { calories: 500 } })).json;
    await converged([a, b]);
    const backup = await a.api('POST', '/v1/backups');
    assert.equal(backup.status, 201, JSON.stringify(backup.json));

    // After the backup, the laptop edits and adds.
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${m1.id}`, { description: 'edited after the backup' })).status, 200);
    const m2 = (await b.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 4 * HOUR), meal_type: 'snack', description: 'added after the backup', macros: { calories: 150 } })).json;
    await converged([a, b]);

    const restored = await a.api('POST', `/v1/backups/${backup.json.id}/restore`);
    assert.equal(restored.status, 200, JSON.stringify(restored.json));
    const h = (await converged([a, b])) as { meals: Array<{ id: string; description: string }> };
    const byId = new Map(h.meals.map((m) => [m.id, m.description]));
    assert.equal(byId.get(m1.id), 'edited after the backup');
    assert.equal(byId.get(m2.id), 'added after the backup');

    const status = (await a.api('GET', '/v1/sync')).json;
    assert.equal(status.enabled, true);
    assert.equal(status.is_webhook_host, true);
    const onA = (await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 3 * HOUR), meal_type: 'dinner', description: 'after the restore', macros: { calories: 700 } })).json;
    await until('the new meal on the laptop', async () => (await b.api('GET', `/v1/nutrition/meals/${onA.id}`)).status === 200);
  });
});
