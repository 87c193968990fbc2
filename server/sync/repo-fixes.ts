import type { Repo } from '@automerge/automerge-repo';

/**
 * Mends two defects of automerge-repo 2.5.6 on one repo, for every caller of `find` and
 * `removeFromCache` (this code's and the repo's own synchronizer's alike).
 *
 * 1. `find` lets go of the documents it loads. It races the document it read from storage against
 *    a module-wide promise that never settles (`foreverPromise`, wrapped by `abortable()` when a
 *    signal is given). Each race leaves a reaction on that promise, and the reaction keeps the
 *    loaded document reachable for the life of the process, whether or not the document is later
 *    removed from the repo's cache. Measured: 90 finds of 200-record documents, each removed from
 *    the cache again, kept 36.6 MB after a full collection; with this, 1.4 MB
 *    (nodejs/node#17469 describes the pattern). The way out: give every find a signal of its own
 *    and abort it once the find has settled; the abortable wrapper then settles too and drops its
 *    reactions, the loaded document among them. A find that returned before the document was there
 *    (a state such as "requesting", which the repo's own synchronizer allows) is left alone: its
 *    loading is still under way, and aborting would mark it failed. Nothing was read from storage
 *    for it, so nothing large is kept.
 *
 * 2. `removeFromCache` keeps the stored copy whole. It calls the handle's `unload()`, which swaps
 *    in an empty document and announces it; the repo's save listener then wrote that empty
 *    document as a snapshot over the real one on disk whenever the stored copy was due for
 *    compaction (small, or more incremental than snapshot). Nobody may listen to a handle that is
 *    being dropped: its listeners are removed first.
 */
export function fixRepoDefects(repo: Repo): void {
  const find = repo.find.bind(repo);
  const released = async <T>(id: Parameters<typeof repo.find>[0], options: Parameters<typeof repo.find>[1] = {}) => {
    const own = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, own.signal]) : own.signal;
    // A later turn: the repo's loader resumes from its last race before the abort is seen.
    const release = () => setImmediate(() => own.abort());
    try {
      const handle = await find<T>(id, { ...options, signal });
      if (handle.state === 'ready' || handle.state === 'unavailable' || handle.state === 'deleted') release();
      return handle;
    } catch (err) {
      release();
      throw err;
    }
  };
  repo.find = released;

  const removeFromCache = repo.removeFromCache.bind(repo);
  repo.removeFromCache = (documentId) => {
    repo.handles[documentId]?.removeAllListeners();
    return removeFromCache(documentId);
  };
}
