import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as Automerge from '@automerge/automerge';
import type { ShardDoc } from '../../server/sync/documents.js';
import { rawPeer, type RawPeer } from '../helpers/raw-peer.js';
import { pair, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';

/**
 * Issue 22 / SYNC.md §8 case 7, "version skew": a newer Chyme writes a field this version does not
 * know into a meal's record; an edit of that meal on a device running this version must keep it
 * (a device only writes the fields it changed), and no API answer shows it. The newer version is
 * played by a raw peer of the history (test/helpers/raw-peer.ts) on the sealed relay.
 */

const iso = (ms: number) => new Date(ms).toISOString();

describe('sync: a field from a newer version survives an older device\'s edit', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let raw: RawPeer;
  let code: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-skew-'));
    relay = await startRelay(join(dir, 'relay'));
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    code = await pair(relay, a, b);
    raw = await rawPeer(code);
  });

  after(async () => {
    raw?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await relay?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('future_field is kept through an edit on B and appears in no answer', async () => {
    const timestamp = Date.UTC(2026, 5, 14, 12, 30);
    const created = await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(timestamp), meal_type: 'lunch', description: 'lentil soup', macros: { calories: 420 } });
    assert.equal(created.status, 201);
    const mealId = created.json.id as string;
    await until('the meal on B', async () => (await b.api('GET', `/v1/nutrition/meals/${mealId}`)).status === 200);
    await until('A has nothing pending', async () => (await a.api('GET', '/v1/sync')).json.pending_changes === 0);

    // The meal is in A's shard of its month, which the raw peer finds by its content.
    const find = async () => {
      for (const [oid, { name, doc }] of await raw.pullAll()) if ((doc as ShardDoc).records?.[mealId]) return { oid, name, doc: doc as Automerge.Doc<ShardDoc> };
      return undefined;
    };
    const found = await until('the meal in a shard the relay holds', find);
    assert.match(found.name, /^shard:meals\/2026-06:dev_/);
    const before = Automerge.getHeads(found.doc);
    const changed = Automerge.change(Automerge.clone(found.doc), (d) => {
      d.records[mealId]!.future_field = 'kept';
    });
    // The relay has the newer version's change (acknowledged) before the older device edits.
    await raw.push(found.oid, found.name, changed, before);

    const edited = await b.api('PATCH', `/v1/nutrition/meals/${mealId}`, { description: 'lentil soup with bread' });
    assert.equal(edited.status, 200);
    const rec = await until(
      'the raw peer sees B\'s description',
      async () => {
        const now = await find();
        const r = now?.doc.records[mealId];
        // Strings are immutable strings in documents (String() reads them).
        return String(r?.description) === 'lentil soup with bread' ? r : undefined;
      },
      30_000,
    );
    assert.equal(rec.future_field, 'kept');
    assert.equal(rec.calories, 420);

    const answerA = await until('A has B\'s edit', async () => {
      const r = (await a.api('GET', `/v1/nutrition/meals/${mealId}`)).json;
      return r.description === 'lentil soup with bread' ? r : undefined;
    });
    const answerB = (await b.api('GET', `/v1/nutrition/meals/${mealId}`)).json;
    assert.deepEqual(answerB, answerA);
    for (const answer of [answerA, answerB, (await b.api('GET', '/v1/export')).json, (await a.api('GET', '/v1/export')).json]) {
      const text = JSON.stringify(answer);
      assert.ok(!text.includes('future_field') && !text.includes('"kept"'), text.slice(0, 300));
    }
  });
});
