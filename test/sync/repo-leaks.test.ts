import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, describe, test } from 'node:test';
import { Repo, type AutomergeUrl } from '@automerge/automerge-repo';
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs';
import { releaseFoundDocuments } from '../../server/sync/repo-leaks.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Shard {
  records: Record<string, { n: number; text: string }>;
}

/**
 * Whether a document loaded from storage by `repo.find` can be collected once it left the repo's
 * cache. Its JS object is watched through a WeakRef: collections are run until it is gone, for up to
 * 15 s (the repo's own throttled work on a fresh handle must have run first; on a busy machine
 * that takes longer than its nominal 100 ms).
 */
async function releasedAfterUnload(fixed: boolean): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-repo-leaks-'));
  try {
    const writer = new Repo({ storage: new NodeFSStorageAdapter(dir) });
    const created = writer.create<Shard>({ records: {} });
    created.change((d) => {
      for (let i = 0; i < 100; i++) d.records[`m${i}`] = { n: i, text: `meal ${i}` };
    });
    const url = created.url as AutomergeUrl;
    await writer.flush();
    await writer.shutdown();

    const repo = new Repo({ storage: new NodeFSStorageAdapter(dir) });
    if (fixed) releaseFoundDocuments(repo);
    let ref: WeakRef<object>;
    {
      const handle = await repo.find<Shard>(url);
      assert.equal(Object.keys(handle.doc().records).length, 100, 'the document came from storage');
      ref = new WeakRef(handle.doc());
      // The repo's synchronizer sends a changed document 100 ms after the change (a throttle); a
      // handle dropped before that waits for readiness it never regains (the engine's SETTLE_MS).
      await new Promise((r) => setTimeout(r, 300));
      await repo.removeFromCache(handle.documentId);
    }
    const deadline = Date.now() + 15_000;
    for (;;) {
      gc();
      if (ref.deref() === undefined) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sync: documents the repo loads are let go', () => {
  after(() => gc());

  test('a document found and removed from the cache can be collected', async () => {
    assert.equal(await releasedAfterUnload(true), true);
  });

  // The defect this works around, kept visible: if automerge-repo fixes it, this test fails and
  // releaseFoundDocuments can go.
  test('without releaseFoundDocuments, automerge-repo 2.5 keeps every document it loaded', async () => {
    assert.equal(await releasedAfterUnload(false), false);
  });
});
