import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { prng } from '../helpers/random.js';
import { type Device, type SyncedPair, converged, history, startSyncedPair } from '../helpers/sync.js';

/**
 * Issue 22 (SYNC.md §8 case 4): SIGKILL during sync. A device is killed at a random moment while
 * it takes writes and sends them on; after it starts again no acknowledged write is missing, on it
 * or on the other device, and both show the same history.
 */

const ROUNDS = 3;
/** Writes acknowledged in a round before its kill may come: 3 × 8 > the 20 the test asks for. */
const FIRST_WRITES = 8;

describe('sync: a device killed while syncing', () => {
  let pair: SyncedPair;
  let a: Device;
  let b: Device;
  const now = Date.now();

  before(async () => {
    pair = await startSyncedPair({ env: { CHYME_SYNC_DEBUG: process.env.CHYME_SYNC_DEBUG ?? '' } });
    ({ a, b } = pair);
  });

  after(() => pair?.stop());

  test(`${ROUNDS} kills at random moments lose no acknowledged write`, async () => {
    const random = prng(4022);
    const acknowledged = new Map<string, string>();
    const deleted = new Set<string>();
    /** A deletion cut off by the kill: it may or may not have committed before the process died. */
    const cutOff = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      let stop = false;
      // The kill comes at a random moment after the round's first writes are acknowledged, so a
      // busy machine (slower writes) kills no sooner in the work, only later on the clock.
      let inRound = 0;
      let firstWrites!: () => void;
      const started = new Promise<void>((r) => (firstWrites = r));
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          try {
            const res = await a.api('POST', '/v1/nutrition/meals', {
              timestamp: new Date(now - (round * 500 + i) * 60_000).toISOString(),
              meal_type: 'snack',
              description: `r${round} #${i}`,
              macros: { calories: 10 + i },
            });
            if (res.status === 201) {
              acknowledged.set(res.json.id, res.json.description);
              if (++inRound === FIRST_WRITES) firstWrites();
            }
            // Some edits and deletions too, so that updates and deletions are in flight as well.
            if (res.status === 201 && i % 5 === 4) {
              const ids = [...acknowledged.keys()].filter((id) => !deleted.has(id));
              const id = ids[Math.floor(random() * ids.length)]!;
              cutOff.add(id);
              const del = await a.api('DELETE', `/v1/nutrition/meals/${id}`);
              cutOff.delete(id);
              if (del.status === 200) deleted.add(id);
            }
          } catch {
            firstWrites(); // (a write that failed for another reason ends the round too)
            return; // the process is gone
          }
        }
      })();
      await started;
      await new Promise((r) => setTimeout(r, random() * 1500));
      await a.stop('SIGKILL');
      stop = true;
      await writer;
      await a.restart();
    }
    assert.ok(acknowledged.size > 20, `only ${acknowledged.size} writes were acknowledged`);
    if (process.env.CHYME_SYNC_DEBUG) console.log(a.stderr().split('\n').filter((l) => /failed|Error/.test(l)).slice(0, 20).join('\n'));
    const h = (await converged([a, b], 60_000)) as { meals: Array<{ id: string; description: string }> };
    const have = new Map(h.meals.map((m) => [m.id, m.description]));
    for (const [id, description] of acknowledged) {
      if (deleted.has(id)) assert.equal(have.has(id), false, `${id} was deleted\n${process.env.CHYME_SYNC_DEBUG ? a.stderr().split('\n').filter((l) => l.includes(id)).join('\n') : ''}`);
      else if (cutOff.has(id)) assert.ok(!have.has(id) || have.get(id) === description, `${id} is gone or as it was`);
      else assert.equal(have.get(id), description, `acknowledged meal ${id} (${description}) is on both devices`);
    }
    // Nothing was made up either: every meal on the devices is one that was acknowledged (a write
    // cut off before its answer may or may not have committed: at most one per round; a deletion
    // cut off likewise, above).
    const unacknowledged = h.meals.filter((m) => !acknowledged.has(m.id));
    assert.ok(unacknowledged.length <= ROUNDS, JSON.stringify(unacknowledged));
    // B's copy, read from its own database after a restart, is the same (projection is durable).
    await b.restart();
    assert.deepEqual(await history(b), await history(a));
  });
});
