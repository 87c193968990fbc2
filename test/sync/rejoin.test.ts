import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { converged, startSyncedPair, until, type Device, type SyncedPair } from '../helpers/sync.js';

/**
 * Issue 27, "nothing on either side is dropped" for edits too: a device that leaves sync, edits,
 * and joins the same history again merges its edits field by field with those made elsewhere
 * meanwhile, and a same-field clash is listed, as for any two devices. Settings clash the same
 * way. And the status tells when another device was last seen while both are connected.
 */

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface Conflict {
  record_type: string;
  record_id: string;
  record_label: string | null;
  field: string;
}

async function conflicts(d: Device): Promise<Conflict[]> {
  return (await d.api('GET', '/v1/sync')).json.conflicts as Conflict[];
}

describe('sync: leaving, editing apart and joining again', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  let code: string;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair();
    ({ a, b } = pair);
    code = (await a.api('GET', '/v1/sync/pairing-code')).json.pairing_code as string;
  });

  after(() => pair?.stop());

  test('a connected device is seen now: last_seen_at of the other device is within the last minute', async () => {
    const seen = await until('B sees A as recently seen', async () => {
      const peers = (await b.api('GET', '/v1/sync')).json.peers as Array<{ this_device: boolean; last_seen_at: string | null }>;
      const other = peers.find((p) => !p.this_device);
      return other?.last_seen_at && Date.now() - Date.parse(other.last_seen_at) < 60_000 ? other.last_seen_at : undefined;
    });
    assert.ok(seen);
  });

  test('edits made while apart merge field by field on rejoin, and a same-field clash is listed', async () => {
    const created = await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 3 * HOUR), meal_type: 'lunch', description: 'rejoin soup', macros: { calories: 400 } });
    assert.equal(created.status, 201);
    const id = created.json.id as string;
    await until('the meal on B', async () => (await b.api('GET', `/v1/nutrition/meals/${id}`)).status === 200);

    const left = await b.api('POST', '/v1/sync/leave');
    assert.equal(left.status, 200, JSON.stringify(left.json));
    assert.equal(left.json.enabled, false);

    // Apart: different fields, and one field on both.
    assert.equal((await b.api('PATCH', `/v1/nutrition/meals/${id}`, { macros: { calories: 999 }, meal_type: 'dinner' })).status, 200);
    assert.equal((await a.api('PATCH', `/v1/nutrition/meals/${id}`, { description: 'rejoin soup, from A', meal_type: 'snack' })).status, 200);
    await until('A has nothing pending', async () => (await a.api('GET', '/v1/sync')).json.pending_changes === 0);

    const joined = await b.api('POST', '/v1/sync/join', { pairing_code: code, name: 'laptop again' });
    assert.equal(joined.status, 200, JSON.stringify(joined.json));
    await converged([a, b]);
    const meal = (await a.api('GET', `/v1/nutrition/meals/${id}`)).json;
    assert.equal(meal.description, 'rejoin soup, from A', "A's edit survives");
    assert.equal(meal.macros.calories, 999, "B's edit made while apart survives");
    assert.ok(['dinner', 'snack'].includes(meal.meal_type), meal.meal_type);
    const listed = await until('the meal_type clash listed on a device', async () => {
      for (const d of [a, b]) {
        const c = (await conflicts(d)).find((x) => x.record_id === id && x.field === 'meal_type');
        if (c) return c;
      }
      return undefined;
    });
    assert.equal(listed.record_type, 'meal');
    assert.match(listed.record_label ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d · rejoin soup, from A$/);
  });

  test('day start set on both while the relay is down: both end with one value and the clash is listed', async () => {
    await pair.relay.kill();
    await until('both see the relay gone', async () => !(await a.api('GET', '/v1/sync')).json.connected && !(await b.api('GET', '/v1/sync')).json.connected);
    assert.equal((await a.api('PATCH', '/v1/settings', { day_start: '04:00' })).status, 200);
    assert.equal((await b.api('PATCH', '/v1/settings', { day_start: '03:00' })).status, 200);
    await pair.relay.restart();
    const value = await until('both settle on one day start', async () => {
      const [sa, sb] = await Promise.all([a.api('GET', '/v1/settings'), b.api('GET', '/v1/settings')]);
      return sa.json.day_start === sb.json.day_start && (await a.api('GET', '/v1/sync')).json.pending_changes === 0 && (await b.api('GET', '/v1/sync')).json.pending_changes === 0
        ? (sa.json.day_start as string)
        : undefined;
    }, 30_000);
    assert.ok(['03:00', '04:00'].includes(value));
    const clash = await until('the settings clash listed on a device', async () => {
      for (const d of [a, b]) {
        const c = (await conflicts(d)).find((x) => x.record_type === 'settings' && x.field === 'day_start');
        if (c) return c;
      }
      return undefined;
    });
    assert.equal(clash.record_label, 'Settings');
  });
});
