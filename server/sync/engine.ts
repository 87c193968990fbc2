import { mkdirSync } from 'node:fs';
import { getConflicts } from '@automerge/automerge';
import { Counter } from '@automerge/automerge';
import { parseAutomergeUrl, Repo, type AutomergeUrl, type DocHandle, type DocumentId } from '@automerge/automerge-repo';
import type { AppContext } from '../app-context.js';
import {
  CLEAN_STOP_KEY,
  countOutbox,
  countUnconfirmedShards,
  deleteOutboxThrough,
  deleteRow,
  hasOutboxEntry,
  docOfRecord,
  enqueueAll,
  listOutbox,
  listShards,
  readRows,
  recordConflict,
  saveRecordDocs,
  setCapture,
  setShardProjected,
  setShardUnconfirmed,
  upsertRow,
  upsertShard,
  type OutboxEntry,
  type Row,
  type SyncConfig,
} from '../db/sync.js';
import type { Emit } from '../events/bus.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { collectGarbage } from '../memory.js';
import { currentSettings, storeSettings, type SettingsRecord } from '../settings.js';
import { isDeleted, recordIds, recordIn, SCHEMA_VERSION, shardIndexKey, type DocRecord, type RootDoc, type Scalar, type ShardDoc } from './documents.js';
import { ENTITIES, entityByKind, entityOfId, SETTINGS_COLUMNS, type EntityDef, type ProjectedChange } from './entities.js';
import { relayNetwork, type RelayNetwork } from './network.js';
import { FileStorage } from './file-storage.js';
import { fixRepoDefects } from './repo-fixes.js';

/** How many outbox entries go into one round of document changes: an import of up to this many records is one change per shard. */
const OUTBOX_BATCH = 20_000;
/** A shard nobody touched for this long, whose changes the relay has, is dropped from memory. */
const IDLE_UNLOAD_MS = 30_000;
/** How long a shard may take to arrive from the relay before it counts as not available yet. */
const FIND_TIMEOUT_MS = 30_000;
/** The same while following another device's change: the sweep asks again every RETRY_BEHIND_MS. */
const FOLLOW_FIND_TIMEOUT_MS = 10_000;
/**
 * Shards loaded at once only to send changes the relay has not confirmed (after a restart, or a
 * set-up whose command ended first): each goes again once confirmed, so that catching up on ten
 * years does not hold ten years in memory.
 */
const MAX_SENDING = 4;
/** How often the sweep tries again to load a shard a pass could not load. */
const RETRY_BEHIND_MS = 2000;
/**
 * A bulk change touching more shards than this goes out this many at a time (see drainLocked): as
 * many as the relay keeps in memory (relay.ts, DEFAULT_MAX_LOADED_DOCUMENTS), so that a group
 * does not make it drop and reload its own shards.
 */
const PACE_SHARDS = 4;
/** How long a group of a bulk change waits for the relay before the next group goes anyway. */
const PACE_CONFIRM_MS = 30_000;
/** Unloads come in series (a pass, a sweep): one collection after the last of them. */
const COLLECT_AFTER_MS = 2000;
const SWEEP_INTERVAL_MS = 1000;
const LAST_SEEN_INTERVAL_MS = 3600_000;
const debug = process.env.CHYME_SYNC_DEBUG ? (line: string) => process.stderr.write(`sync ${new Date().toISOString().slice(11, 23)}: ${line}\n`) : undefined;
/**
 * How long a document stays loaded after its last change. automerge-repo's DocSynchronizer sends
 * a document's sync messages 100 ms after a change (a throttle); a handle removed from the cache
 * before then leaves that call waiting 60 s for the handle to be ready again, holding the change
 * (its patches and the document) and keeping a one-shot command's process alive meanwhile.
 */
const SETTLE_MS = 250;

export interface EngineOptions {
  /** Where this device keeps its copy of the documents (automerge-repo's NodeFS storage). */
  storageDir: string;
  /** false: no network (set-up before the first connection, tests of one device). */
  connect?: boolean;
  retryMs?: number;
  idleUnloadMs?: number;
  /** Called when connection, pending work or the webhook host may have changed. */
  onStatus?: () => void;
}

interface Loaded {
  handle: DocHandle<ShardDoc>;
  usedMs: number;
}

/**
 * One device's side of sync. SQLite stays the store every read uses; the documents are how changes
 * travel. Two directions, one at a time (a promise chain):
 *
 * - out: every writer's transaction records what it changed in sync_outbox (triggers); drain()
 *   writes those fields into the documents, one change per shard, saves the documents, and only
 *   then forgets the outbox entries. A crash in between repeats the same writes, which change
 *   nothing the second time.
 * - in: a document that changed (from the relay, or at start-up) is projected: every record that
 *   differs from its row is written to SQLite in one transaction, with the same consequences and
 *   events as a local write, while the triggers are off.
 */
export class SyncEngine {
  readonly repo: Repo;
  private readonly storage: FileStorage;
  root!: DocHandle<RootDoc>;
  private readonly network: RelayNetwork | undefined;
  private readonly loaded = new Map<string, Loaded>();
  /** Shards loaded by the sweep only to send them: dropped as soon as the relay confirms them. */
  private readonly sending = new Set<string>();
  /** Shards the sweep found confirmed, whose announcement (announceConfirmed) is queued. */
  private readonly confirming = new Set<string>();
  /** When a pass last left a shard it could not load (null: none left): the sweep tries again. */
  private behindSinceMs: number | null = null;
  private collectTimer: NodeJS.Timeout | undefined;
  private readonly watched = new WeakSet<DocHandle<ShardDoc>>();
  private chain: Promise<unknown> = Promise.resolve();
  private sweepTimer: NodeJS.Timeout | undefined;
  private lastSeenTimer: NodeJS.Timeout | undefined;
  private drainQueued = false;
  private sweepQueued = false;
  private closed = false;
  private readonly seenConflicts = new Set<string>();
  /** True while joining: the history that arrives is not news (no events). */
  private quiet = false;
  lastSyncedMs: number | null = null;
  private rootChecked = false;
  private started = false;

  constructor(
    private readonly app: AppContext,
    readonly config: SyncConfig,
    private readonly options: EngineOptions,
  ) {
    mkdirSync(options.storageDir, { recursive: true });
    this.network = options.connect === false ? undefined : relayNetwork(config.relayUrl, config.relayToken, options.retryMs);
    this.network?.onStatus(() => this.options.onStatus?.());
    this.storage = new FileStorage(options.storageDir);
    this.repo = new Repo({
      storage: this.storage,
      network: this.network ? [this.network.adapter] : [],
      peerId: `chyme-${config.deviceId}-${Math.random().toString(36).slice(2, 8)}` as never,
    });
    fixRepoDefects(this.repo);
  }

  get connected(): boolean {
    return this.network?.connected() ?? false;
  }

  get lastError(): string | null {
    return this.network?.lastError() ?? null;
  }

  /** Creates the root document of a new history (sync set up on this device). */
  createRoot(settings: SettingsRecord, nowMs: number): string {
    const c = this.config;
    this.root = this.repo.create<RootDoc>({
      schema: SCHEMA_VERSION,
      kind: 'chyme.root',
      devices: { [c.deviceId]: { name: c.deviceName, joined_ms: nowMs, last_seen_ms: nowMs } },
      webhook_host: { device_id: c.deviceId, device_name: c.deviceName, since_ms: nowMs },
      settings: settingsRecordToDoc(settings),
      shards: {},
    });
    this.watchRoot();
    return this.root.url;
  }

  /** Finds the root document (from this device's storage, else from the relay). */
  async openRoot(timeoutMs: number): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    this.root = await this.repo.find<RootDoc>(this.config.rootUrl as AutomergeUrl, { signal });
    const doc = this.root.doc();
    if (doc.kind !== 'chyme.root') throw new Error('That document is not a Chyme history.');
    this.watchRoot();
  }

  /** Adds this device to the history's device list. */
  announceDevice(nowMs: number): void {
    const c = this.config;
    this.root.change((d) => {
      const existing = d.devices[c.deviceId];
      if (existing) {
        existing.name = c.deviceName;
        existing.last_seen_ms = nowMs;
      } else d.devices[c.deviceId] = { name: c.deviceName, joined_ms: nowMs, last_seen_ms: nowMs };
    });
  }

  /** Starts the background work of a running service: catch-up, then following both directions. */
  start(): void {
    this.started = true;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    this.lastSeenTimer = setInterval(() => {
      if (!this.closed) this.announceDevice(this.app.clock.now());
    }, LAST_SEEN_INTERVAL_MS);
    this.lastSeenTimer.unref();
    // After a clean stop, the documents this device projected are where it left them: following
    // the counters that moved is enough. After a crash (no clean-stop mark), every shard is checked
    // against SQLite once, which repairs anything a crash could have left half done.
    const clean = readServiceState<boolean>(this.app.db, CLEAN_STOP_KEY) === true;
    writeServiceState(this.app.db, CLEAN_STOP_KEY, false);
    void this.exclusive(async () => {
      await this.drainLocked();
      await this.checkRootLocked(!clean);
      // Start-up's garbage (loading the engine and its wasm, the first exchange with the relay)
      // would otherwise sit in the heap and in malloc's arenas until the traffic moves V8 to collect.
      if (!this.closed) collectGarbage();
    }).catch((err: unknown) => this.app.log.error('sync catch-up failed', { error: String(err) }));
  }

  /** Local writes committed: move them into the documents soon (coalesced). */
  kick(): void {
    // An import's worker is writing (it holds the write gate): its rows go into the documents
    // together once it is done, one change per shard rather than one per chunk it commits.
    if (this.drainQueued || this.closed || this.app.writes.closed) return;
    this.drainQueued = true;
    setImmediate(() => {
      this.drainQueued = false;
      void this.drain().catch((err: unknown) => {
        debug?.(`drain failed: ${err instanceof Error ? err.stack : String(err)}`);
        this.app.log.error('sync: writing changes to the documents failed', { error: String(err) });
      });
    });
  }

  drain(): Promise<void> {
    return this.exclusive(() => this.drainLocked());
  }

  /** Brings every document into SQLite (join, start-up check): all shards, one at a time. */
  reprojectAll(options: { quiet: boolean }): Promise<void> {
    return this.exclusive(async () => {
      this.quiet = options.quiet;
      try {
        await this.drainLocked();
        await this.checkRootLocked(true);
        // Every shard was just checked: the start that follows need not do it again.
        writeServiceState(this.app.db, CLEAN_STOP_KEY, true);
      } finally {
        this.quiet = false;
      }
    });
  }

  /** Records already on this device that no document holds yet (data from before sync was set up). */
  adoptLocalRecords(): Promise<number> {
    return this.exclusive(async () => {
      const n = this.enqueueUnheld();
      await this.drainLocked();
      return n;
    });
  }

  /** Local changes the relay has not confirmed: outbox entries, shards, and the root. */
  pendingCount(): number {
    return countOutbox(this.app.db) + countUnconfirmedShards(this.app.db) + (this.rootConfirmed() ? 0 : 1);
  }

  /** Resolves once the relay has every local change, or after timeoutMs (false). */
  async waitUntilConfirmed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.chain;
      this.sweep();
      if (this.connected && this.pendingCount() === 0) {
        this.lastSyncedMs = this.app.clock.now();
        return true;
      }
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits for the relay connection: false after timeoutMs, or at once when an attempt failed (refused, wrong token). */
  async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.connected) {
      if (Date.now() > deadline || this.closed || this.lastError !== null) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  setWebhookHost(nowMs: number): void {
    const c = this.config;
    this.root.change((d) => {
      d.webhook_host = { device_id: c.deviceId, device_name: c.deviceName, since_ms: nowMs };
    });
  }

  /** Marks this device as gone from the history (it may come back later as a new device). */
  markLeft(nowMs: number): void {
    const c = this.config;
    this.root.change((d) => {
      const dev = d.devices[c.deviceId];
      if (dev) dev.left_ms = nowMs;
      if (d.webhook_host?.device_id === c.deviceId) d.webhook_host = null;
    });
  }

  rootDoc(): RootDoc {
    return this.root.doc();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    clearInterval(this.lastSeenTimer);
    clearTimeout(this.collectTimer);
    await this.chain.catch(() => undefined);
    const flushed = await this.repo.flush().then(
      () => true,
      () => false,
    );
    await this.repo.shutdown().catch(() => undefined);
    // The repo's throttled sync-state saves come after this: nothing more is written (leaving
    // sync removes the folder next).
    this.storage.close();
    if (flushed && this.started) {
      try {
        writeServiceState(this.app.db, CLEAN_STOP_KEY, true);
      } catch {
        // The database is already closed (a command's end): the next start checks every shard.
      }
    }
  }

  // ---- Internals ------------------------------------------------------------------------------

  /**
   * Queues every synced row that no document holds and no outbox entry will bring (data from
   * before sync was set up, or written while the triggers could not see it): it joins this
   * device's shards. Returns how many were queued.
   */
  private enqueueUnheld(): number {
    const unheld = 'id NOT IN (SELECT record_id FROM sync_records) AND id NOT IN (SELECT record_id FROM sync_outbox)';
    let n = 0;
    this.app.bus.write(() => {
      for (const def of ENTITIES) n += enqueueAll(this.app.db, def.kind, def.table, def.where ? `${def.where} AND ${unheld}` : unheld);
    });
    return n;
  }

  /** Runs a projection's writes with the triggers off: what came from the documents is not news for them. */
  private withoutCapture<T>(fn: () => T): T {
    setCapture(this.app.db, false);
    try {
      return fn();
    } finally {
      setCapture(this.app.db, true);
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private watchRoot(): void {
    this.root.on('change', ({ patches }) => {
      if (this.closed) return;
      const touched = new Set(patches.map((p) => p.path[0]));
      debug?.(`root change: ${[...touched].join(',')}`);
      if (touched.has('webhook_host') || touched.has('devices')) this.options.onStatus?.();
      if (touched.has('settings') || touched.has('shards')) {
        void this.exclusive(() => this.checkRootLocked(false)).catch((err: unknown) => this.app.log.error('sync: following the history failed', { error: err instanceof Error ? (err.stack ?? String(err)) : String(err) }));
      }
    });
  }

  private async load(url: string, timeoutMs = FIND_TIMEOUT_MS): Promise<DocHandle<ShardDoc> | undefined> {
    const have = this.loaded.get(url);
    if (have) {
      have.usedMs = Date.now();
      return have.handle;
    }
    let handle: DocHandle<ShardDoc>;
    // Not AbortSignal.timeout: its listener keeps the found document reachable until the timer
    // fires, so a document dropped sooner would stay in memory for the rest of the 30 s.
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(new Error(`not found within ${timeoutMs / 1000} s`)), timeoutMs);
    try {
      handle = await this.repo.find<ShardDoc>(url as AutomergeUrl, { signal: ctrl.signal });
    } catch (err) {
      this.app.log.warn('sync: a document is not available yet', { url, error: String(err) });
      debug?.(`not available: ${url.slice(-6)} ${String(err)}`);
      // The repo keeps a handle it could not fill as "unavailable" and answers every later find
      // with that at once: drop it, so that the next attempt asks the relay again.
      const stale = parseAutomergeUrl(url as AutomergeUrl).documentId;
      if (this.repo.handles[stale]) await this.repo.removeFromCache(stale).catch(() => undefined);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    this.track(url, handle);
    return handle;
  }

  /** Keeps a shard in memory and projects every change that reaches it (from anywhere). */
  private track(url: string, handle: DocHandle<ShardDoc>): void {
    this.loaded.set(url, { handle, usedMs: Date.now() });
    if (this.watched.has(handle)) return;
    this.watched.add(handle);
    // The relay reported new heads (it may now hold this device's change): confirm without
    // waiting for the next sweep, since the other devices hear of the change only then.
    handle.on('remote-heads', () => this.sweepSoon());
    handle.on('change', ({ patches }) => {
      if (this.closed) return;
      const entry = this.loaded.get(url);
      if (entry) entry.usedMs = Date.now();
      const ids = new Set<string>();
      for (const p of patches) if ((p.path[0] === 'records' || p.path[0] === 'deleted') && typeof p.path[1] === 'string') ids.add(p.path[1]);
      if (ids.size === 0) return;
      debug?.(`change in ${url.slice(-6)}: ${[...ids].join(' ')}`);
      void this.exclusive(async () => {
        await this.drainLocked();
        this.project(url, handle.doc(), [...ids]);
      }).catch((err: unknown) => this.app.log.error('sync: applying changes failed', { error: String(err) }));
    });
  }

  /** This device's shard for a key: found in the root, or created and listed there. */
  private ownShard(key: string): string {
    const me = this.config.deviceId;
    const existing = this.root.doc().shards[shardIndexKey(key, me)];
    if (existing) return existing.url;
    const handle = this.repo.create<ShardDoc>({ schema: SCHEMA_VERSION, kind: 'chyme.shard', shard: key, device_id: me, records: {}, deleted: {} });
    this.root.change((d) => {
      d.shards[shardIndexKey(key, me)] = { shard: key, device_id: me, url: handle.url, rev: new Counter(0) };
    });
    upsertShard(this.app.db, { docUrl: handle.url, shardKey: key, deviceId: me });
    setShardProjected(this.app.db, handle.url, 0);
    this.track(handle.url, handle);
    return handle.url;
  }

  private async drainLocked(): Promise<void> {
    const db = this.app.db;
    for (;;) {
      const entries = listOutbox(db, OUTBOX_BATCH);
      if (entries.length === 0) return;
      const maxSeq = entries[entries.length - 1]!.seq;
      debug?.(`drain ${entries.map((e) => `${e.seq}:${e.recordId}:${e.fields}`).join(' ')}`);
      const rows = new Map<string, Row | undefined>();
      const newDocs = new Map<string, string>();
      const byDoc = new Map<string, Array<{ entry: OutboxEntry; def: EntityDef }>>();
      let settingsTouched = false;
      for (const entry of entries) {
        if (entry.entity === 'settings') {
          settingsTouched = true;
          continue;
        }
        const def = entityByKind(entry.entity);
        if (!def) continue;
        if (!rows.has(entry.recordId)) rows.set(entry.recordId, readRows(db, def.table, def.columns, [entry.recordId], def.where).get(entry.recordId));
        const row = rows.get(entry.recordId);
        let url = docOfRecord(db, entry.recordId) ?? newDocs.get(entry.recordId);
        if (!url) {
          // Created and deleted before it reached a document: nothing to tell anyone.
          if (!row) continue;
          url = this.ownShard(def.shardKey(row));
          newDocs.set(entry.recordId, url);
        }
        let list = byDoc.get(url);
        if (!list) byDoc.set(url, (list = []));
        list.push({ entry, def });
      }
      // Where each new record goes is written down before any document changes: a crash after a
      // document took the record (and maybe sent it) must not leave a later deletion or edit of it
      // with no document to go to.
      if (newDocs.size > 0) db.transaction(() => saveRecordDocs(db, newDocs))();
      const now = this.app.clock.now();
      const docs = [...byDoc];
      // A bulk change (set-up adopting a history, an import) goes out a few shards at a time, each
      // group confirmed by the relay and dropped before the next: neither this device nor the
      // relay then holds the whole history in memory at once.
      const paced = docs.length > PACE_SHARDS && this.connected;
      const loadedBefore = new Set(this.loaded.keys());
      for (let i = 0; i < docs.length; i += paced ? PACE_SHARDS : docs.length) {
        const group = docs.slice(i, paced ? i + PACE_SHARDS : docs.length);
        const refused = await this.writeShards(group, rows, now);
        // A record deleted on another device was edited here meanwhile: the deletion wins.
        for (const { url, id } of refused) {
          const handle = this.loaded.get(url)?.handle;
          if (handle) this.project(url, handle.doc(), [id]);
        }
        if (!paced) continue;
        const urls = group.map(([url]) => url);
        await this.waitForRelay(urls, PACE_CONFIRM_MS);
        for (const url of urls) if (!loadedBefore.has(url)) await this.unload(url);
      }
      if (settingsTouched) {
        const local = settingsRecordToDoc(currentSettings(this.app));
        let settingsChanged = false;
        this.root.change((d) => {
          for (const c of SETTINGS_COLUMNS) {
            if (d.settings[c] !== local[c]) {
              d.settings[c] = local[c] ?? null;
              settingsChanged = true;
            }
          }
        });
        if (settingsChanged) await this.repo.flush([this.root.documentId]);
      }
      deleteOutboxThrough(db, maxSeq);
      this.options.onStatus?.();
    }
  }

  /**
   * Writes outbox entries into their shards (one change per shard), moves those shards' counters in
   * the root, and saves both. Returns the edits refused because the record was deleted meanwhile.
   */
  private async writeShards(group: Array<[string, Array<{ entry: OutboxEntry; def: EntityDef }>]>, rows: Map<string, Row | undefined>, now: number): Promise<Array<{ url: string; id: string }>> {
    const db = this.app.db;
    const refused: Array<{ url: string; id: string }> = [];
    const changedDocs: DocumentId[] = [];
    // Unconfirmed before any document changes: a crash after a shard was saved with the change
    // (which a repeated drain then finds unchanged) still leaves it to be sent and announced.
    db.transaction(() => {
      for (const [url] of group) setShardUnconfirmed(db, url, true);
    })();
    for (const [url, list] of group) {
      const handle = await this.load(url);
      if (!handle) throw new Error(`the document ${url} is not available; the changes stay queued`);
      let changed = false;
      handle.change((d) => {
        for (const { entry, def } of list) {
          const outcome = applyToDoc(d, entry, rows.get(entry.recordId), def, now);
          if (outcome === 'refused') refused.push({ url, id: entry.recordId });
          if (outcome === 'changed') changed = true;
        }
      });
      if (changed) changedDocs.push(handle.documentId);
      debug?.(`drained into ${url.slice(-6)} heads=${handle.heads().map((h) => h.slice(0, 6)).join(',')}`);
    }
    await this.repo.flush(changedDocs);
    return refused;
  }

  /**
   * The relay holds these shards as they are here: their counters in the root move now, which
   * tells the other devices to look. Only now, never with the change itself: a device that heard
   * of a change before the relay had it would load the shard, find nothing new, count it as
   * followed and drop it again, and the change would reach it only with the next one.
   */
  private async announceConfirmed(urls: string[]): Promise<void> {
    const db = this.app.db;
    // Looked at again here, in turn: a change drained since the relay's confirmation is not held yet.
    const shards = listShards(db).filter((s) => s.unconfirmed && urls.includes(s.docUrl) && this.relayHoldsLoaded(s.docUrl));
    if (shards.length === 0 || this.closed) return;
    const before = new Map(shards.map((s) => [s.docUrl, this.root.doc().shards[shardIndexKey(s.shardKey, s.deviceId)]?.rev.value ?? 0]));
    this.root.change((d) => {
      for (const s of shards) d.shards[shardIndexKey(s.shardKey, s.deviceId)]?.rev.increment(1);
    });
    // The counter is on disk before the shard counts as confirmed: a crash in between announces
    // it twice, which costs the others one look.
    await this.repo.flush([this.root.documentId]);
    const after = this.root.doc().shards;
    db.transaction(() => {
      for (const s of shards) {
        setShardUnconfirmed(db, s.docUrl, false);
        // Our own change is not news to us, unless another device's change moved the counter too.
        if (s.projectedRev >= before.get(s.docUrl)!) setShardProjected(db, s.docUrl, after[shardIndexKey(s.shardKey, s.deviceId)]?.rev.value ?? 0);
      }
    })();
    debug?.(`confirmed ${shards.map((s) => s.docUrl.slice(-6)).join(' ')}`);
    this.options.onStatus?.();
  }

  /** Waits (at most timeoutMs, and only while connected) until the relay holds these shards as they are here, and announces those it holds. */
  private async waitForRelay(urls: string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const loaded = urls.filter((url) => this.loaded.has(url));
      const held = loaded.filter((url) => this.relayHoldsLoaded(url));
      if (held.length === loaded.length || !this.connected || this.closed || Date.now() > deadline) {
        // What the relay did not confirm in time stays for the sweep to confirm.
        await this.announceConfirmed(held);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Follows the root: settings, and every shard whose counter moved past what this device
   * projected (all of them when `all`), loaded one at a time and dropped again when idle.
   */
  private async checkRootLocked(all: boolean): Promise<void> {
    const doc = this.root.doc();
    // A root that has not arrived whole yet (only its first changes synced) has nothing to follow.
    if (!doc.shards || !doc.settings) return;
    this.projectSettings(doc.settings);
    const known = new Map(listShards(this.app.db).map((s) => [s.docUrl, s]));
    let behind = false;
    // Shards this pass loaded, in order, dropped again once their changes settled.
    const settling: string[] = [];
    for (const entry of Object.values(doc.shards)) {
      await this.unloadSettled(settling, false);
      const rev = entry.rev.value;
      const mine = known.get(entry.url);
      if (!mine) upsertShard(this.app.db, { docUrl: entry.url, shardKey: entry.shard, deviceId: entry.device_id });
      if (!all && mine && mine.projectedRev >= rev) continue;
      const wasLoaded = this.loaded.has(entry.url);
      // Following a change, a shard the relay cannot give yet is asked for again soon (the sweep)
      // rather than waited for; a full pass (a join) waits longer for each.
      const handle = await this.load(entry.url, all ? FIND_TIMEOUT_MS : FOLLOW_FIND_TIMEOUT_MS);
      if (!handle) {
        // Not on the relay yet (its creator's copy is still on the way), or the relay is away:
        // the sweep comes back to it.
        behind = true;
        continue;
      }
      await this.drainLocked();
      debug?.(`check ${entry.url.slice(-6)} ${entry.shard}@${entry.device_id} rev=${rev} projected=${mine?.projectedRev ?? '-'} was=${wasLoaded} heads=${handle.heads().map((h) => h.slice(0, 6)).join(',')} all=${all}`);
      this.project(entry.url, handle.doc(), null);
      // Following a change, the shard counts as followed once this copy is the relay's: the
      // counter moved only after the relay had the change (announceConfirmed), but the copy found
      // here may be this device's older one, still being synced. Until then the sweep looks again.
      // (A full pass is a join, whose shards come from the relay, or a start, which a change of
      // the root then follows.)
      if (!all && this.network && !this.relayHolds(handle)) behind = true;
      else setShardProjected(this.app.db, entry.url, rev);
      // A full pass must not hold ten years in memory: what it loaded goes again soon.
      if (all && !wasLoaded && !(mine?.unconfirmed ?? false)) settling.push(entry.url);
    }
    await this.unloadSettled(settling, true);
    if (all) {
      // Rows written while the triggers could not see them are this device's records too.
      if (this.enqueueUnheld() > 0) await this.drainLocked();
    }
    this.rootChecked = true;
    this.behindSinceMs = behind ? Date.now() : null;
    this.options.onStatus?.();
  }

  private projectSettings(remote: DocRecord): void {
    const before = currentSettings(this.app);
    const local = settingsRecordToDoc(before);
    if (SETTINGS_COLUMNS.every((c) => remote[c] === undefined || remote[c] === local[c])) return;
    debug?.(`settings ${JSON.stringify(remote)}`);
    const next: SettingsRecord = {
      timezone: typeof remote.timezone === 'string' ? remote.timezone : before.timezone,
      dayStart: typeof remote.day_start === 'string' ? remote.day_start : before.dayStart,
      units: remote.units === 'imperial' || remote.units === 'metric' ? remote.units : before.units,
      userId: typeof remote.user_id === 'string' ? remote.user_id : before.userId,
      updatedMs: typeof remote.updated_ms === 'number' ? remote.updated_ms : before.updatedMs,
    };
    this.app.bus.write((emit) => this.withoutCapture(() => storeSettings(this.app, emit, before, next)));
  }

  /** Writes the records of a document that differ from their rows (ids: those; null: all). */
  private project(url: string, doc: ShardDoc, ids: string[] | null): void {
    const app = this.app;
    const db = app.db;
    const list = ids ?? recordIds(doc);
    let savedMeals = false;
    const located: Array<[string, string]> = [];
    app.bus.write((emit) =>
      this.withoutCapture(() => {
        for (const id of list) {
          const def = entityOfId(id);
          const rec = recordIn(doc, id);
          if (!def || !rec) continue;
          located.push([id, url]);
          try {
            const changed = this.projectRecord(def, id, rec, emit);
            if (changed && def.kind === 'saved_meal') savedMeals = true;
            // A merge of concurrent edits: both sides note it (the side whose value won sees no
            // change of its row, only the other value arriving), and so does a full pass.
            if ((changed || ids) && !isDeleted(rec)) this.noteConflicts(def, id, doc.records[id] ?? rec);
          } catch (err) {
            app.log.warn('sync: a record from another device could not be stored', { id, error: String(err) });
          }
        }
        saveRecordDocs(db, located);
      }),
    );
    if (savedMeals) for (const hook of app.hooks.savedMealsChanged) hook();
  }

  private projectRecord(def: EntityDef, id: string, rec: DocRecord, emit: Emit): boolean {
    const app = this.app;
    const db = app.db;
    // A local change the documents do not hold yet is newer than what they say: it goes out first
    // (the outbox), and is never overwritten by the older state here.
    if (hasOutboxEntry(db, id)) return false;
    const current = readRows(db, def.table, def.columns, [id], def.where).get(id);
    debug?.(`project ${id} doc=${isDeleted(rec) ? 'deleted' : 'live'} upd=${String(rec.updated_ms)} row=${current ? String(current.updated_ms) : 'no'}`);
    const announce = !this.quiet && changeTime(rec) >= this.config.enabledMs;
    if (isDeleted(rec)) {
      if (!current) return false;
      const change: ProjectedChange = { id, kind: 'deleted', before: def.snapshot(app, id) };
      deleteRow(db, def.table, id);
      def.after(app, emit, change, announce);
      return true;
    }
    const wanted: Row = { id };
    for (const c of def.columns) wanted[c] = toColumn(rec[c]);
    if (current && def.columns.every((c) => current[c] === wanted[c])) return false;
    const change: ProjectedChange = { id, kind: current ? 'updated' : 'created', before: current ? def.snapshot(app, id) : undefined };
    upsertRow(db, def.table, { ...wanted, ...def.derived?.(app, wanted) });
    def.after(app, emit, change, announce);
    return true;
  }

  private noteConflicts(def: EntityDef, id: string, rec: DocRecord): void {
    for (const field of def.columns) {
      if (field === 'updated_ms') continue;
      const all = getConflicts(rec as never, field);
      if (!all || Object.keys(all).length < 2) continue;
      const kept = rec[field];
      const others = Object.values(all).filter((v) => v !== kept);
      const key = `${id}/${field}/${JSON.stringify(kept)}/${JSON.stringify(others)}`;
      if (this.seenConflicts.has(key)) continue;
      this.seenConflicts.add(key);
      recordConflict(this.app.db, { entity: def.kind, recordId: id, field, kept, others, detectedMs: this.app.clock.now() });
    }
  }

  /** Unloads `urls` from the front while their last change is SETTLE_MS old (all of them: waiting). */
  private async unloadSettled(urls: string[], wait: boolean): Promise<void> {
    while (urls.length > 0) {
      const have = this.loaded.get(urls[0]!);
      if (!wait && have && Date.now() - have.usedMs < SETTLE_MS) return;
      await this.unload(urls.shift()!);
    }
  }

  private async unload(url: string): Promise<void> {
    for (;;) {
      const have = this.loaded.get(url);
      if (!have) return;
      const left = have.usedMs + SETTLE_MS - Date.now();
      if (left <= 0) break;
      await new Promise((r) => setTimeout(r, left));
    }
    const have = this.loaded.get(url)!;
    debug?.(`unload ${url.slice(-6)}`);
    this.loaded.delete(url);
    this.sending.delete(url);
    await this.repo.flush([have.handle.documentId]).catch(() => undefined);
    // The handle's listeners go with it (repo-fixes.ts), this engine's among them.
    await this.repo.removeFromCache(have.handle.documentId).catch(() => undefined);
    this.collectSoon();
  }

  /** One full collection shortly after the last of a series of unloads (see collectGarbage). */
  private collectSoon(): void {
    clearTimeout(this.collectTimer);
    this.collectTimer = setTimeout(() => {
      if (!this.closed) collectGarbage();
    }, COLLECT_AFTER_MS);
    this.collectTimer.unref();
  }

  /** Whether this shard is loaded and the relay holds it as it is here. */
  private relayHoldsLoaded(url: string): boolean {
    const have = this.loaded.get(url);
    return have !== undefined && this.relayHolds(have.handle);
  }

  /** Whether the relay's storage holds this document as it is here (the heads it last reported). */
  private relayHolds(handle: DocHandle<unknown>): boolean {
    const peer = this.repo.peers[0];
    const sid = peer ? this.repo.getStorageIdOfPeer(peer) : undefined;
    return sid !== undefined && sameHeads(handle.getSyncInfo(sid)?.lastHeads, handle.heads());
  }

  private rootConfirmed(): boolean {
    if (!this.root) return true;
    // With no network (a test of one device, a set-up before its first connection) nothing waits.
    return !this.network || this.relayHolds(this.root);
  }

  private sweepSoon(): void {
    if (this.sweepQueued || this.closed) return;
    this.sweepQueued = true;
    setImmediate(() => {
      this.sweepQueued = false;
      this.sweep();
    });
  }

  /** Confirmations from the relay, documents to re-announce, idle documents to drop. */
  private sweep(): void {
    if (this.closed || !this.root) return;
    const db = this.app.db;
    const now = Date.now();
    const idle = this.options.idleUnloadMs ?? IDLE_UNLOAD_MS;
    const shards = listShards(db);
    const held: string[] = [];
    for (const s of shards) {
      const have = this.loaded.get(s.docUrl);
      if (s.unconfirmed && have && !this.confirming.has(s.docUrl) && this.relayHolds(have.handle)) {
        held.push(s.docUrl);
        this.confirming.add(s.docUrl);
      }
      // Changes made while offline (or before a restart) go out once the relay is there, a few
      // shards at a time.
      if (s.unconfirmed && !have && this.connected && !this.sending.has(s.docUrl) && this.sending.size < MAX_SENDING) {
        this.sending.add(s.docUrl);
        void this.exclusive(async () => {
          if (!(await this.load(s.docUrl))) this.sending.delete(s.docUrl);
        });
      }
      if (have && !s.unconfirmed && now - have.usedMs > idle) void this.exclusive(() => this.unload(s.docUrl));
    }
    if (held.length > 0) {
      void this.exclusive(async () => {
        await this.announceConfirmed(held);
        // Loaded only to be sent: gone again once announced.
        for (const url of held) if (this.sending.has(url)) await this.unload(url);
      })
        .catch((err: unknown) => this.app.log.error('sync: announcing changes failed', { error: String(err) }))
        .finally(() => held.forEach((url) => this.confirming.delete(url)));
    }
    // A shard the last pass could not load (not on the relay yet): another pass, every few seconds.
    if (this.behindSinceMs !== null && this.connected && now - this.behindSinceMs > RETRY_BEHIND_MS) {
      this.behindSinceMs = now;
      void this.exclusive(() => this.checkRootLocked(false)).catch((err: unknown) => this.app.log.error('sync: following the history failed', { error: String(err) }));
    }
    // Writers on other connections (an import's worker) do not pass through this process's bus.
    if (countOutbox(db) > 0) this.kick();
    if (this.connected && this.rootChecked && this.pendingCount() === 0) this.lastSyncedMs = this.app.clock.now();
  }
}

function sameHeads(a: readonly string[] | undefined, b: readonly string[]): boolean {
  if (!a || a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((h) => set.has(h));
}

/** Applies one outbox entry to its record in a shard: only the fields that changed, never undeleting. */
function applyToDoc(d: ShardDoc, entry: OutboxEntry, row: Row | undefined, def: EntityDef, nowMs: number): 'changed' | 'unchanged' | 'refused' {
  const id = entry.recordId;
  const rec = d.records[id];
  const gone = isDeleted(rec) || typeof d.deleted?.[id] === 'number';
  if (entry.fields === '-') {
    if (gone) return 'unchanged';
    // Listed as deleted even when this copy has no record: the record may reach it later.
    if (d.deleted) d.deleted[id] = nowMs;
    if (rec) {
      for (const k of Object.keys(rec)) delete rec[k];
      rec.deleted_ms = nowMs;
    } else if (!d.deleted) d.records[id] = { deleted_ms: nowMs };
    return 'changed';
  }
  // Deleted here since: its '-' entry follows in this batch or the next.
  if (!row) return 'unchanged';
  if (gone) return 'refused';
  if (!rec) {
    const fresh: DocRecord = {};
    for (const c of def.columns) fresh[c] = row[c] ?? null;
    d.records[id] = fresh;
    return 'changed';
  }
  const fields = entry.fields === '*' ? def.columns : entry.fields.split(',').filter((c) => def.columns.includes(c));
  let changed = false;
  for (const c of fields) {
    const v = row[c] ?? null;
    if (rec[c] !== v) {
      rec[c] = v;
      changed = true;
    }
  }
  return changed ? 'changed' : 'unchanged';
}

function toColumn(v: Scalar | undefined): string | number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v;
}

function changeTime(rec: DocRecord): number {
  const t = rec.deleted_ms ?? rec.updated_ms ?? rec.created_ms;
  return typeof t === 'number' ? t : 0;
}

export function settingsRecordToDoc(s: SettingsRecord): DocRecord {
  return { timezone: s.timezone, day_start: s.dayStart, units: s.units, user_id: s.userId, updated_ms: s.updatedMs };
}

