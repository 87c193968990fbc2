import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Repo, type AutomergeUrl, type DocHandle } from '@automerge/automerge-repo';
import { shardIndexKey, type RootDoc, type ShardDoc } from '../../server/sync/documents.js';
import { RelayClient } from '../../server/sync/relay-client.js';
import { pair, startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';

/**
 * Issue 22 / SYNC.md §8 case 7, "version skew": a newer Chyme writes a field this version does not
 * know into a meal's record; an edit of that meal on a device running this version must keep it
 * (a device only writes the fields it changed), and no API answer shows it. The newer version is
 * played by a raw automerge-repo client on the relay.
 */

const iso = (ms: number) => new Date(ms).toISOString();

describe('sync: a field from a newer version survives an older device\'s edit', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let raw: Repo;
  let code: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-skew-'));
    relay = await startRelay(join(dir, 'relay'));
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    code = await pair(relay, a, b);
    raw = new Repo({ network: [new RelayClient(relay.url, relay.token, { retryIntervalMs: 200 })] });
  });

  after(async () => {
    await raw?.shutdown().catch(() => undefined);
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

    // The root's URL is in the pairing code; the meal is in A's shard of its month.
    const { root: rootUrl } = JSON.parse(Buffer.from(code.slice('chyme-sync:'.length), 'base64url').toString('utf8')) as { root: string };
    const root = await raw.find<RootDoc>(rootUrl as AutomergeUrl, { signal: AbortSignal.timeout(20_000) });
    const aDevice = (await a.api('GET', '/v1/sync')).json.device_id as string;
    const entry = await until('A\'s shard of June 2026 in the root', () =>
      root.doc().shards[shardIndexKey('meals/2026-06', aDevice)],
    );
    const shard: DocHandle<ShardDoc> = await raw.find<ShardDoc>(entry.url as AutomergeUrl, { signal: AbortSignal.timeout(20_000) });
    await until('the meal in the shard', () => shard.doc().records[mealId]?.description === 'lentil soup');
    const revBefore = entry.rev.value;
    shard.change((d) => {
      d.records[mealId]!.future_field = 'kept';
    });
    // The relay has the newer version's change before the older device edits.
    await until('the relay has the change', () => {
      const peer = raw.peers[0];
      const sid = peer && raw.getStorageIdOfPeer(peer);
      const heads = sid && shard.getSyncInfo(sid)?.lastHeads;
      return heads !== undefined && heads.length === shard.heads().length && heads.every((h) => shard.heads().includes(h));
    });

    const edited = await b.api('PATCH', `/v1/nutrition/meals/${mealId}`, { description: 'lentil soup with bread' });
    assert.equal(edited.status, 200);
    await until('the raw client sees B\'s description', () => shard.doc().records[mealId]?.description === 'lentil soup with bread', 30_000);
    const rec = shard.doc().records[mealId]!;
    assert.equal(rec.future_field, 'kept');
    assert.equal(rec.calories, 420);
    // The newer client bumped nothing; B's edit moved the shard's counter as every edit does.
    await until('B\'s edit bumped the shard\'s counter', () => root.doc().shards[shardIndexKey('meals/2026-06', aDevice)]!.rev.value > revBefore);

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
