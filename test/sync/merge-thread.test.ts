import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import * as A from '@automerge/automerge';
import type { ShardDoc } from '../../server/sync/documents.js';
import type { MergeInput } from '../../server/sync/merge-doc.js';
import { threadMerger } from '../../server/sync/merge-thread.js';
import { inThreadMerger } from '../../server/sync/merger.js';

/**
 * The service merges the shards it receives in a worker thread (merge-thread.ts), the phone and
 * the CLI on the engine's thread (inThreadMerger): both must give the engine the same answer, the
 * worker's only in plain values, for a document new here, one merged into the stored copy, one
 * with bytes that are no change, and a same-field clash.
 */

const s = (v: string) => new A.ImmutableString(v);
const shard = A.change(A.init<ShardDoc>(), (d) => {
  Object.assign(d, { schema: 2, kind: 'chyme.shard', shard: 'meals/2026-01', device_id: 'dev_a', records: {}, deleted: {} });
});
const month = A.change(A.clone(shard), (d) => {
  for (let i = 0; i < 50; i++) d.records[`meal_${i}`] = { id: s(`meal_${i}`), description: s(`meal ${i}`), calories: i };
});
const stored = A.save(month);
// Two devices edit meal_1's calories while apart, and one deletes meal_2.
const left = A.change(A.clone(month), (d) => {
  d.records.meal_1!.calories = 999;
  d.deleted!.meal_2 = 5;
});
const right = A.change(A.load<ShardDoc>(stored), (d) => {
  d.records.meal_1!.calories = 111;
  d.records.meal_3!.description = s('edited');
});
const incoming = [A.saveSince(left, A.getHeads(month)), A.saveSince(right, A.getHeads(month))];

const worker = threadMerger();
after(() => worker.close());

const input = (over: Partial<MergeInput>): MergeInput => ({ oid: 'doc', chunks: [], synced: [], checks: [], appendable: false, conflicts: true, ...over });

test('a shard merged in the worker gives what a merge on the engine thread gives', async () => {
  const cases: MergeInput[] = [
    input({ chunks: [stored], conflicts: false }),
    input({ stored, storedHeads: JSON.stringify([...A.getHeads(month)].sort()), chunks: incoming, appendable: true }),
    input({ stored, chunks: [incoming[0]!, new Uint8Array([1, 2, 3]), incoming[1]!] }),
  ];
  for (const c of cases) {
    const here = await inThreadMerger.merge(c);
    const there = await worker.merge(c);
    assert.ok(here.doc, 'the engine thread returns its copy');
    assert.equal(there.doc, undefined, 'a worker keeps its copy');
    assert.deepEqual(there.output, here.output);
  }
  const merged = (await worker.merge(cases[1]!)).output;
  assert.deepEqual(merged.view!.ids.sort(), ['meal_1', 'meal_2', 'meal_3']);
  assert.deepEqual(merged.view!.records.meal_2, { deleted_ms: 5 });
  assert.equal(merged.view!.records.meal_3!.description, 'edited');
  assert.deepEqual(merged.view!.conflicts.meal_1?.map(([f, v]) => [f, [...v].sort()]), [['calories', [111, 999]]]);
  // Appended to the stored copy, the changes load to the merged document.
  assert.ok(merged.appended);
  const reloaded = A.load<ShardDoc>(new Uint8Array([...stored, ...merged.bytes!]));
  assert.deepEqual([...A.getHeads(reloaded)].sort(), merged.after);
});

test("a drain's change in the worker: the stored bytes and the push hold the rows, appended changes load onto the stored copy", async () => {
  const columns = ['id', 'description', 'calories'];
  const edits = (from: number, to: number, calories: number) =>
    Array.from({ length: to - from }, (_, k) => ({ recordId: `meal_${from + k}`, fields: '*', row: { id: `meal_${from + k}`, description: `meal ${from + k}`, calories }, columns }));
  const base = { oid: 'doc_b', name: 'shard:meals/2026-01:dev_a', deviceId: 'dev_a', nowMs: 1, appendable: false, push: { syncedHeads: '[]', snapshotBytes: 0 }, snapshotRefused: false };
  const first = (await worker.change!({ ...base, edits: edits(0, 20, 1) })).output;
  assert.ok(first.changed);
  assert.equal(first.push!.whole, true, 'a first push is the whole document');
  const saved = A.load<ShardDoc>(first.bytes!);
  assert.equal(Object.keys(saved.records).length, 20);
  assert.deepEqual(first.push!.body, first.bytes, 'saved once, for both');
  // Ten rows more (five of them edits): the changes since the stored heads, appended.
  const second = (await worker.change!({ ...base, stored: first.bytes, storedHeads: first.heads, edits: edits(15, 25, 2), appendable: true, push: { syncedHeads: first.heads, snapshotBytes: first.bytes!.length } })).output;
  assert.ok(second.appended);
  const both = A.load<ShardDoc>(new Uint8Array([...first.bytes!, ...second.bytes!]));
  assert.equal(JSON.stringify([...A.getHeads(both)].sort()), second.heads);
  assert.equal(Object.keys(both.records).length, 25);
  assert.equal(both.records.meal_17!.calories, 2);
  // Nothing new: unchanged, nothing to store.
  const third = (await worker.change!({ ...base, stored: A.save(both), storedHeads: second.heads, edits: edits(20, 25, 2), push: { syncedHeads: second.heads, snapshotBytes: 0 } })).output;
  assert.equal(third.changed, false);
  assert.equal(third.bytes, undefined);
});

test('a worker that was closed starts again at the next merge', async () => {
  await worker.close();
  const { output } = await worker.merge(input({ chunks: [stored] }));
  assert.equal(output.view!.ids.length, 50);
});
