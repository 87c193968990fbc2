import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as A from '@automerge/automerge';
import { savedDocHeads } from '../../server/sync/saved-heads.js';

test("a saved document's heads are read from its chunk header as Automerge gives them; other bytes are not read", () => {
  const base = A.from<{ records: Record<string, unknown> }>({ records: {} });
  const left = A.change(A.clone(base), (d) => {
    d.records.a = { text: new A.ImmutableString('x'.repeat(5000)), n: 1 };
  });
  const right = A.change(A.clone(base), (d) => {
    d.records.b = { n: 2 };
  });
  const merged = A.merge(A.clone(left), right);
  assert.equal(A.getHeads(merged).length, 2);
  for (const doc of [A.init(), base, left, right, merged]) {
    assert.deepEqual(savedDocHeads(A.save(doc)), [...A.getHeads(doc)].sort());
  }
  // Incremental changes, a truncated save and other bytes: undefined (the caller loads them instead).
  assert.equal(savedDocHeads(A.saveSince(merged, A.getHeads(base))), undefined);
  assert.equal(savedDocHeads(A.save(merged).subarray(0, 40)), undefined);
  assert.equal(savedDocHeads(new Uint8Array([1, 2, 3])), undefined);
});
