import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Repo, type AutomergeUrl } from '@automerge/automerge-repo';
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs';
import Database from 'better-sqlite3';
import { type RootDoc, type ShardDoc } from '../../server/sync/documents.js';
import { converged, startSyncedPair, until, type Device, type SyncedPair } from '../helpers/sync.js';

/**
 * When the other devices hear of a change. A device learns that a shard changed from its counter in
 * the root document; the counter must move only once the relay holds the shard's change. Were it to
 * move with the change, another device could hear of the change before the relay had it, load its
 * own older copy of the shard, find nothing new, count the shard as followed, and miss the change
 * until the next one (seen as the partition test not converging on a busy machine).
 *
 * Observed on the device's own storage, read by a repo of the test's own while the device is
 * stopped: a change made while the relay is down is in the shard, and the root's counter has not
 * moved; once the relay has it, the counter has.
 */

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The root's counter of the shard that holds `recordId`, and whether that shard holds it, from a stopped device's storage. */
async function storedCounter(d: Device, rootUrl: AutomergeUrl, recordId: string, other: string): Promise<{ rev: number; has: boolean; hasOther: boolean }> {
  const repo = new Repo({ storage: new NodeFSStorageAdapter(`${d.dbPath}.sync`) });
  try {
    const root = (await repo.find<RootDoc>(rootUrl)).doc();
    for (const entry of Object.values(root.shards)) {
      const shard = (await repo.find<ShardDoc>(entry.url as AutomergeUrl)).doc();
      if (shard.records?.[recordId]) return { rev: entry.rev.value, has: true, hasOther: Boolean(shard.records[other]) };
    }
    throw new Error(`no stored shard of ${d.name} holds ${recordId}`);
  } finally {
    await repo.shutdown();
  }
}

function outboxSize(d: Device): number {
  const db = new Database(d.dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM sync_outbox').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('sync: other devices hear of a change once the relay holds it', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  let rootUrl: AutomergeUrl;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair();
    ({ a, b } = pair);
  });

  after(() => pair?.stop());

  test("a change made while the relay is down moves the shard's counter only after the relay has it", async () => {
    const meal = (description: string) => a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 2 * HOUR), meal_type: 'snack', description, macros: { calories: 120 } });
    const first = (await meal('before the cut')).json as { id: string };
    await converged([a, b]);
    await until('A has nothing pending', async () => (await a.api('GET', '/v1/sync')).json.pending_changes === 0);
    const code = (await a.api('GET', '/v1/sync/pairing-code')).json.pairing_code as string;
    rootUrl = (JSON.parse(Buffer.from(code.slice('chyme-sync:'.length), 'base64url').toString()) as { root: AutomergeUrl }).root;
    await a.stop();
    const before = await storedCounter(a, rootUrl, first.id, '');
    await a.restart();

    await pair.relay.kill();
    await until('A sees the relay gone', async () => (await a.api('GET', '/v1/sync')).json.connected === false);
    const offline = (await meal('while the relay is down')).json as { id: string };
    await until('the change in the documents', () => outboxSize(a) === 0);
    await a.stop();
    const cut = await storedCounter(a, rootUrl, first.id, offline.id);
    assert.equal(cut.hasOther, true, 'the offline change is in its shard');
    assert.equal(cut.rev, before.rev, 'the counter has not moved while the relay could not have the change');

    await pair.relay.restart();
    await a.restart();
    await until('B has the offline meal', async () => (await b.api('GET', `/v1/nutrition/meals/${offline.id}`)).status === 200, 30_000);
    await until('A has nothing pending', async () => (await a.api('GET', '/v1/sync')).json.pending_changes === 0, 30_000);
    await a.stop();
    const confirmed = await storedCounter(a, rootUrl, first.id, offline.id);
    assert.ok(confirmed.rev > before.rev, `the counter moved once the relay had the change (${before.rev} → ${confirmed.rev})`);
    await a.restart();
    await converged([a, b]);
  });
});
