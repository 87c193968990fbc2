import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, describe, test } from 'node:test';
import { Repo, type AutomergeUrl } from '@automerge/automerge-repo';
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs';
import { FileStorage } from '../../server/sync/file-storage.js';
import { fixRepoDefects } from '../../server/sync/repo-fixes.js';

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
  const dir = mkdtempSync(join(tmpdir(), 'chyme-repo-fixes-'));
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
    if (fixed) fixRepoDefects(repo);
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
  // that part of fixRepoDefects can go.
  test('without fixRepoDefects, automerge-repo 2.5 keeps every document it loaded', async () => {
    assert.equal(await releasedAfterUnload(false), false);
  });
});

/**
 * A small document (stored as a snapshot under 1 KB, which the repo compacts on its next save)
 * loaded from storage and dropped from the cache: the records a fresh repo then reads from the same
 * folder, once `wait.ms` has passed or, with `untilWiped`, as soon as they are gone (up to 15 s).
 */
async function storedAfterDrop(fixed: boolean, wait: { untilWiped: true } | { ms: number }): Promise<{ records: number; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-repo-fixes-'));
  const read = async () => {
    const reader = new Repo({ storage: new NodeFSStorageAdapter(dir) });
    try {
      return Object.keys((await reader.find<Shard>(url)).doc().records ?? {}).length;
    } finally {
      await reader.shutdown();
    }
  };
  let url: AutomergeUrl;
  try {
    const writer = new Repo({ storage: new NodeFSStorageAdapter(dir) });
    const created = writer.create<Shard>({ records: {} });
    created.change((d) => {
      for (let i = 0; i < 5; i++) d.records[`m${i}`] = { n: i, text: `meal ${i}` };
    });
    url = created.url;
    await writer.flush();
    await writer.shutdown();

    const repo = new Repo({ storage: new NodeFSStorageAdapter(dir) });
    if (fixed) fixRepoDefects(repo);
    const handle = await repo.find<Shard>(url);
    // As the engine and the relay drop a document: written first, then removed.
    await repo.flush([handle.documentId]);
    const t0 = Date.now();
    await repo.removeFromCache(handle.documentId);
    if ('ms' in wait) {
      await new Promise((r) => setTimeout(r, wait.ms));
      return { records: await read(), ms: Date.now() - t0 };
    }
    for (;;) {
      const records = await read();
      if (records === 0 || Date.now() - t0 > 15_000) return { records, ms: Date.now() - t0 };
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sync: a document dropped from the cache stays whole on disk', () => {
  let wipedAfterMs = 0;

  // The defect this works around, kept visible (and timed, for the test below).
  test('without fixRepoDefects, automerge-repo 2.5 overwrites the stored copy with an empty document', async () => {
    const { records, ms } = await storedAfterDrop(false, { untilWiped: true });
    assert.equal(records, 0);
    wipedAfterMs = ms;
  });

  test('with it, the stored copy keeps every record', async () => {
    // Three times as long as the unmended repo took to wipe it, and at least a second.
    assert.equal((await storedAfterDrop(true, { ms: Math.max(1000, 3 * wipedAfterMs) })).records, 5);
  });
});

describe('sync: the file storage (FileStorage) keeps no copy of what it wrote, and writes nothing once closed', () => {
  /** What the adapter holds in memory (private in its types, a plain object at run time). */
  const cached = (storage: NodeFSStorageAdapter) => Object.keys((storage as unknown as { cache: Record<string, Uint8Array> }).cache);

  // Each counts its writes under way: a repo's flush() resolves before its compaction's writes end.
  // (A mixin: TypeScript asks for a constructor of any arguments.)
  function counting<T extends new (...args: any[]) => NodeFSStorageAdapter>(Adapter: T) {
    return class extends Adapter {
      inflight = 0;
      override async save(key: Parameters<NodeFSStorageAdapter['save']>[0], binary: Uint8Array): Promise<void> {
        this.inflight++;
        try {
          await super.save(key, binary);
        } finally {
          this.inflight--;
        }
      }
    };
  }
  const CountingStock = counting(NodeFSStorageAdapter);
  const CountingFileStorage = counting(FileStorage);

  /** Ten documents created, changed and saved through a repo on `storage`; what the adapter holds once every write ended. */
  async function cachedAfterSaving(storage: InstanceType<ReturnType<typeof counting>>, dir: string): Promise<string[]> {
    const repo = new Repo({ storage });
    const urls: AutomergeUrl[] = [];
    for (let n = 0; n < 10; n++) {
      const handle = repo.create<Shard>({ records: {} });
      handle.change((d) => {
        for (let i = 0; i < 50; i++) d.records[`m${i}`] = { n: i, text: `meal ${i}` };
      });
      urls.push(handle.url);
    }
    await repo.flush();
    await repo.shutdown();
    for (const deadline = Date.now() + 15_000; storage.inflight > 0; ) {
      if (Date.now() > deadline) throw new Error('the writes did not end within 15 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Whatever is (or is not) cached, the documents are whole on disk.
    const reader = new Repo({ storage: new FileStorage(dir) });
    for (const url of urls) assert.equal(Object.keys((await reader.find<Shard>(url)).doc().records).length, 50);
    await reader.shutdown();
    return cached(storage);
  }

  test('the stock adapter keeps every chunk it saved in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chyme-file-storage-'));
    try {
      assert.ok((await cachedAfterSaving(new CountingStock(dir), dir)).length >= 10);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('FileStorage holds none once written, and the documents load back whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chyme-file-storage-'));
    try {
      assert.deepEqual(await cachedAfterSaving(new CountingFileStorage(dir), dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('after close(), a late save neither makes the removed folder again nor fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chyme-file-storage-'));
    const folder = join(dir, 'device.sync');
    const key = ['3C7vfSp5DiFvAuwcBgpXugyzyTy8', 'sync-state', 'peer'];
    try {
      // The stock adapter: a save after the folder was removed makes it again.
      await new NodeFSStorageAdapter(folder).save(key, new Uint8Array([1]));
      rmSync(folder, { recursive: true, force: true });
      await new NodeFSStorageAdapter(folder).save(key, new Uint8Array([2]));
      assert.equal(existsSync(folder), true);
      rmSync(folder, { recursive: true, force: true });

      const storage = new FileStorage(folder);
      storage.close();
      await storage.save(key, new Uint8Array([3]));
      await storage.remove(key);
      assert.equal(existsSync(folder), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
