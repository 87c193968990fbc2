import { join } from 'node:path';
import type { StorageKey } from '@automerge/automerge-repo';
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs';

/**
 * automerge-repo's file storage (storage-nodefs 2.5) with two defects mended, for the engine and
 * the relay alike.
 *
 * 1. It kept every chunk it ever saved in memory, for the life of the process: `save` puts the
 *    bytes in `cache` (which `load` reads first) and only `remove` takes them out. A relay that
 *    received a ten-year history, or a device that joined one through a running service, held a
 *    copy of every document it stored. Here a chunk stays cached only while its write is under way,
 *    so that a load in the meantime still finds it; afterwards the file is the copy.
 * 2. It wrote after the repo had shut down: the repo saves sync states on a throttle, a moment
 *    after `shutdown()` resolved. Leaving sync removes this device's folder right after; a late
 *    write then either made the folder again or failed on it (ENOENT, an unhandled rejection that
 *    ended `chyme sync leave` with status 1). After `close()` nothing is written or removed any
 *    more; what was not written is sync state, which the next exchange rebuilds.
 */
export class FileStorage extends NodeFSStorageAdapter {
  #closed = false;

  /** No write or removal from now on (call after the repo's shutdown). */
  close(): void {
    this.#closed = true;
  }

  override async save(key: StorageKey, binary: Uint8Array): Promise<void> {
    if (this.#closed) return;
    try {
      await super.save(key, binary);
    } finally {
      // Keyed as the stock adapter keys it; a newer save of the same key keeps its own entry.
      // (`cache` is private in the adapter's types, and a plain object at run time.)
      const cache = (this as unknown as { cache: Record<string, Uint8Array> }).cache;
      const cacheKey = join(...key);
      if (cache[cacheKey] === binary) delete cache[cacheKey];
    }
  }

  override async remove(key: StorageKey): Promise<void> {
    if (this.#closed) return;
    await super.remove(key);
  }

  override async removeRange(keyPrefix: StorageKey): Promise<void> {
    if (this.#closed) return;
    await super.removeRange(keyPrefix);
  }
}
