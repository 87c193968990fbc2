import * as A from '@automerge/automerge';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import { nextTurn, SLICE_MS } from '../next-turn.js';
import {
  addDocTail,
  appendDoc,
  docStorage,
  countDirtyDocs,
  countOutbox,
  countPendingChanges,
  CURSOR_KEY,
  deleteOutboxSeqs,
  docPushState,
  deleteRow,
  docOfRecord,
  enqueueAll,
  getDoc,
  hasOutboxEntry,
  listDirtyDocs,
  listDocsToCompact,
  listOutboxNewest,
  listUnprojectedDocs,
  markDocResend,
  markDocSnapshot,
  markDocPushed,
  markDocSynced,
  maxOutboxSeq,
  readRows,
  recordConflict,
  recordIntegrityProblem,
  saveDoc,
  saveRecordDocs,
  setCapture,
  setDocProjected,
  upsertRow,
  type DocRow,
  type OutboxEntry,
  type Row,
  type SyncConfig,
} from '../db/sync.js';
import { relaxedCommit } from '../db/commit.js';
import { derivedCacheOf } from '../digestion/cache.js';
import type { Emit } from '../events/bus.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { currentSettings, storeSettings, type SettingsRecord } from '../settings.js';
import { IntegrityError, type ChunkKind, type HistoryKeys } from './crypto.js';
import { savedDocHeads } from './saved-heads.js';
import { applyToDoc, initialDoc, newShard, pushBodyOf, recordsView, scalarOf, viewOf, type Prepared, type RecordsView } from './merge-doc.js';
import { inThreadMerger, type DocMerger } from './merger.js';
import { isDeleted, isShardOf, ROOT_NAME, SCHEMA_VERSION, shardName, type DocRecord, type DocValue, type RootDoc, type Scalar, type ShardDoc } from './documents.js';
import { ENTITIES, entityByKind, entityOfId, SETTINGS_COLUMNS, type ChangedTimes, type EntityDef, type ProjectedChange } from './entities.js';
import { MAX_OWN_SEQS, MAX_PULL_OIDS } from './protocol.js';
import type { RelayConnection } from './relay-client.js';

/**
 * How many outbox entries go into one round of document changes (newest first). Bounded so that a
 * round holds a few dozen documents in memory, not ten years of them (set-up on a ten-year history
 * peaked at 563 MB with 20,000), and so that a round a live edit cuts short wasted little reading.
 */
const OUTBOX_BATCH = 1_000;
/** Records in one Automerge change of a drain at most (the slice adapts to how long the last one took). */
const MAX_SLICE_RECORDS = 500;
/**
 * A drain follows local writes once they pause this long (a burst goes into the documents
 * together)… or, in a burst whose writes come further apart than that (each one slower on a busy
 * machine), once they pause for half again the last gap between two, up to DRAIN_QUIET_MAX_MS: a
 * burst of 30–60 ms writes was drained one write at a time, each drain an Automerge change, its
 * commits and a sealed push that the next write waited behind.
 */
const DRAIN_QUIET_MS = 50;
const DRAIN_QUIET_MAX_MS = 200;
/** …and during a long burst at least this often. */
const DRAIN_MAX_DELAY_MS = 500;
/** A drain's change of a document touching at most this many records is a live edit: its push goes first. */
const LIVE_RECORDS = 8;
/**
 * Bulk work goes to the merger's worker (the service's): a drain's change of a document not in
 * memory with more than LIVE_RECORDS records, or in a round or pull of more than this many
 * documents (an import adding a few records to each of the months the device had: loading each
 * held the importing device's thread for 0.3–1.5 s); a merge of a snapshot or of more than
 * BULK_MERGE_BYTES; and, while the worker runs (bulk work is under way: an import arrives one or
 * two months a pull), any document not in memory. Otherwise a live edit's document is loaded here
 * once and stays in memory for the next (merging a meal into it takes a few milliseconds), and
 * the worker, which ends when idle, is not kept in memory by a steady trickle of meals.
 */
const BULK_DOCS = 2;
const BULK_MERGE_BYTES = 4096;
/** Documents kept in memory (the root is always): a device catching up on ten years never holds them all. */
const CACHE_DOCS = 8;
/** Pushes in flight at once (one per document). */
const PUSHES_IN_FLIGHT = 8;
/**
 * A document's relay tail is compacted into a snapshot once it outgrows half the snapshot, and at
 * least half this many bytes: a tiny document is not compacted on every edit, and at rest what the
 * relay holds of any document stays within 1.5× its snapshot, or this floor (criterion 5: after
 * 1,000 edits, at most twice a fresh save). A floor of 2 KB let a small document's tail reach
 * twice its snapshot for good once the edits stopped.
 */
const COMPACT_FLOOR_BYTES = 1024;
/** How often a connected device tells the others it is there (sealed, never stored by the relay). */
const PRESENCE_INTERVAL_MS = 30_000;
const LAST_SEEN_INTERVAL_MS = 3600_000;
const PRESENCE_NAME = 'presence';
/** How often the engine looks for work nobody announced (an import's worker writes on its own connection), and retries after a failure. */
const RETRY_MS = 1000;
/**
 * A join fetches the documents older than the current weeks this many stored bytes at a time,
 * newest first: small enough that the phone holds little of the history at once, large enough that
 * a ten-year history is a few dozen round trips.
 */
const JOIN_BATCH_BYTES = 256 * 1024;
/** How far back a join looks for the months and years its documents are named after. */
const JOIN_FIRST_YEAR = 1970;
const debug = process.env.CHYME_SYNC_DEBUG ? (line: string) => process.stderr.write(`sync ${new Date().toISOString().slice(11, 23)}: ${line}\n`) : undefined;
/** What the engine is doing (traced with CHYME_SYNC_DEBUG): a stall of the thread names the step that ran last. */
let step = 'idle';
const note = debug ? (what: string) => (step = what) : () => undefined;
if (debug) {
  // Stalls of the service's thread over 100 ms, with the engine's step when it began and the CPU
  // the process used meanwhile (far less than the stall: the machine was busy with others).
  let last = performance.now();
  let cpu = process.cpuUsage();
  let during = step;
  setInterval(() => {
    const now = performance.now();
    const used = process.cpuUsage(cpu);
    if (now - last > 110) debug(`stall ${Math.round(now - last - 10)} ms, cpu ${Math.round((used.user + used.system) / 1000)} ms (engine: ${during} .. ${step})`);
    last = now;
    cpu = process.cpuUsage();
    during = step;
  }, 10).unref();
}

export interface EngineOptions {
  /** The connection to the relay (none: one-device tests, a set-up before its first connection). */
  connection?: (handlers: ConnectionHandlers) => RelayConnection;
  /** Called when connection, pending work or the webhook host may have changed. */
  onStatus?: () => void;
  /** Where shards from the relay are merged (the engine's thread when not given); the engine closes it. */
  merger?: DocMerger;
}

export interface ConnectionHandlers {
  onChunk: (seq: number, oid: string, kind: ChunkKind, sealed: Uint8Array) => void;
  onEnd: (seq: number) => void;
  onNotify: (seq: number) => void;
  onHeard: (sealed: Uint8Array) => void;
  onDocs: (seq: number, docs: Array<[oid: string, bytes: number]>) => void;
}

/**
 * How far a first join has come (joinNewestFirst). `recent`: the root and the current weeks are
 * arriving; `older`: those are in (Today is right) and older months arrive, newest first; `done`.
 * The bytes are the relay's stored bytes of the documents applied so far and of all of them.
 */
export interface JoinProgress {
  phase: 'recent' | 'older' | 'done';
  appliedBytes: number;
  totalBytes: number;
}

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (err: Error) => void;
}

interface Cached {
  name: string;
  doc: A.Doc<unknown>;
  usedMs: number;
}

/** A chunk of a pull, opened: its document's name and body, or why it could not be. */
interface Opened {
  ch: Incoming;
  name?: string;
  body?: Uint8Array;
  error?: unknown;
}

/** An outbox entry a drain writes into a document, with what it is. */
interface DrainEdit {
  entry: OutboxEntry;
  def: EntityDef;
}

interface Incoming {
  seq: number;
  oid: string;
  kind: ChunkKind;
  sealed: Uint8Array;
}

const headsText = (heads: A.Heads): string => JSON.stringify([...heads].sort());

/**
 * One device's side of sync. SQLite stays the store every read uses; the documents are how changes
 * travel, sealed, through the relay. Work on the documents runs one step at a time (a promise chain):
 *
 * - out: every writer's transaction records what it changed in sync_outbox (triggers); drain()
 *   writes those fields into the documents, one change per document, and stores the documents and
 *   forgets the outbox entries in one transaction. The pusher then sends each changed document's
 *   new changes (saveSince the heads the relay holds), sealed, and marks them sent once the relay
 *   acknowledges them as stored: a change is sent until it is acknowledged, never lost, never looped.
 * - in: the relay streams every chunk after this device's cursor; each is opened (a chunk that
 *   fails authentication is skipped and reported), merged into this device's copy, stored, and the
 *   records that changed are projected into SQLite a hundred at a time, with the consequences and
 *   events of a local write, while the triggers are off. The cursor moves once all is stored.
 */
export class SyncEngine {
  private root!: A.Doc<RootDoc>;
  private readonly rootOid: Promise<string>;
  private readonly cache = new Map<string, Cached>();
  private readonly connection: RelayConnection | undefined;
  private readonly merger: DocMerger;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly seenConflicts = new Set<string>();
  /** True while joining: the history that arrives is not news (no events). */
  private quiet = false;
  lastSyncedMs: number | null = null;
  /**
   * False until start() or catchUp(): a device joining connects first (a wrong key is refused
   * before anything is written), and takes the relay's history only once it is ready for it.
   */
  private following = false;
  /** Chunks of the pull under way, applied in order. */
  private incoming: Incoming[] = [];
  /** A pull's chunks are streaming in. */
  private pulling = false;
  /** Complete pulls not applied yet, and the latest seq they reach (the next pull starts after it). */
  private fetched: Array<{ chunks: Incoming[]; endSeq: number }> = [];
  private fetchedTo = 0;
  /** Raised when an apply fails: what was fetched after it is dropped, and fetched again. */
  private generation = 0;
  private pullGeneration = 0;
  /** The latest seq the relay has told of; a pull follows while it is past the cursor. */
  private relaySeq = 0;
  /** This device's own chunks (seq → document) the cursor has not passed: a pull need not apply them again, and a snapshot covers them. */
  private readonly ownSeqs = new Map<number, string>();
  private readonly inFlight = new Set<string>();
  private pushQueued = false;
  private readonly presence = new Map<string, number>();
  private presenceTimer: ReturnType<typeof setInterval> | undefined;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;
  private lastSeenTimer: ReturnType<typeof setInterval> | undefined;
  /** Resolves the waiters of a pull that reached the relay's latest seq. */
  private caughtUp: Array<() => void> = [];
  /** A quiet projection (a join) changed records: the derived data is told once, after the pull. */
  private quietChanges = false;
  /** While a document of many records is projected: what its slices changed, announced once after the last (projectRecords). */
  private untold: ChangedTimes | undefined;
  /** The next push of documents a drain changed (preparePush). */
  private readonly prepared = new Map<string, Prepared>();
  /** Documents whose snapshot the relay refused: their changes go as changes until the next pull. */
  private readonly snapshotRefused = new Set<string>();
  /** Records a projection passed over because a local change of theirs was in the outbox. */
  private readonly heldBack = new Set<string>();
  /** Documents holding a live edit: pushed before the bulk ones. */
  private readonly urgent = new Set<string>();
  /** The drain local writes asked for, and when the first of them did (performance.now()). */
  private kickTimer: ReturnType<typeof setTimeout> | undefined;
  private kickedSince: number | undefined;
  private lastKick = -Infinity;
  /** Records per Automerge change in a drain's next slice. */
  private sliceRecords = 16;
  /** A drain gave the chain up to a pull: it goes on once that is applied. */
  private drainAfter = false;
  /** Woken when a pull has been fetched: a wait beside a merge in the worker (whileMerging). */
  private onFetched: (() => void) | undefined;
  /** A first join is fetching the history newest first: no pull of everything meanwhile. */
  private joining = false;
  private triedNewestFirst = false;
  /** A join's pulls of listed documents, in the order asked (the relay answers a connection's pulls in order). */
  private targeted: Array<Waiter<Incoming[]> & { chunks: Incoming[] }> = [];
  /** The answer awaited to an index. */
  private docsWaiter: Waiter<{ seq: number; docs: Array<[string, number]> }> | null = null;
  /** A first join's progress (null before one). */
  joinProgress: JoinProgress | null = null;

  constructor(
    private readonly app: AppContext,
    readonly config: SyncConfig,
    private readonly keys: HistoryKeys,
    private readonly options: EngineOptions = {},
  ) {
    this.rootOid = keys.oid(ROOT_NAME);
    this.merger = options.merger ?? inThreadMerger;
    this.connection = options.connection?.({
      onChunk: (seq, oid, kind, sealed) => (this.targeted[0]?.chunks ?? this.incoming).push({ seq, oid, kind, sealed }),
      onEnd: (seq) => {
        const targeted = this.targeted.shift();
        if (targeted) {
          targeted.resolve(targeted.chunks);
          return;
        }
        this.pulling = false;
        // A pull that began before an apply failed brings chunks after ones that were not applied.
        if (this.pullGeneration !== this.generation) {
          this.pullSoon();
          return;
        }
        this.fetched.push({ chunks: this.incoming, endSeq: seq });
        this.onFetched?.();
        this.incoming = [];
        this.fetchedTo = Math.max(this.fetchedTo, seq);
        void this.exclusive(() => this.applyFetched()).catch((err: unknown) => {
          // Nothing past the cursor counts as applied: the same chunks come again with the next pull
          // (after a database another program locked, say).
          this.generation++;
          this.fetched = [];
          this.fetchedTo = 0;
          this.fail('applying changes from the relay failed; trying again shortly', err);
          setTimeout(() => this.pullSoon(), RETRY_MS).unref();
        });
        // What was announced meanwhile is fetched while this is applied.
        this.pullSoon();
      },
      onNotify: (seq) => {
        this.relaySeq = Math.max(this.relaySeq, seq);
        this.pullSoon();
        this.pushSoon();
        this.sayPresence();
        options.onStatus?.();
      },
      onHeard: (sealed) => void this.heard(sealed),
      onDocs: (seq, docs) => {
        const waiter = this.docsWaiter;
        this.docsWaiter = null;
        waiter?.resolve({ seq, docs });
      },
    });
    this.connection?.onStatus(() => {
      if (!this.connection?.connected) {
        this.pulling = false;
        const why = new Error('the connection to the relay closed');
        for (const t of this.targeted.splice(0)) t.reject(why);
        this.docsWaiter?.reject(why);
        this.docsWaiter = null;
      }
      options.onStatus?.();
    });
  }

  get connected(): boolean {
    return this.connection?.connected ?? false;
  }

  get lastError(): string | null {
    return this.connection?.status.lastError ?? null;
  }

  /** When another device was last heard from (presence notes while both are connected). */
  heardFrom(deviceId: string): number | undefined {
    return this.presence.get(deviceId);
  }

  /** Starts following the relay (and sending). */
  connect(): void {
    this.connection?.start();
  }

  /** Creates the root document of a new history (sync set up on this device). */
  async createRoot(settings: SettingsRecord, nowMs: number): Promise<void> {
    const c = this.config;
    const oid = await this.rootOid;
    let doc = initialDoc<RootDoc>(oid, { schema: SCHEMA_VERSION, kind: 'chyme.root', devices: {}, webhook_host: null, settings: {} });
    doc = A.change(doc, (d) => {
      d.devices[c.deviceId] = { name: c.deviceName, joined_ms: nowMs, last_seen_ms: nowMs };
      d.webhook_host = { device_id: c.deviceId, device_name: c.deviceName, since_ms: nowMs };
      Object.assign(d.settings, settingsRecordToDoc(settings));
    });
    this.root = doc;
    this.app.db.transaction(() => this.store(oid, ROOT_NAME, doc, { dirty: true, unprojected: false }))();
  }

  /** Opens the root from this device's copy; false when it has none yet (a join before its pull). */
  async openRoot(): Promise<boolean> {
    const oid = await this.rootOid;
    const row = getDoc(this.app.db, oid);
    if (!row) return false;
    const doc = A.load<RootDoc>(row.bytes);
    if (doc.kind !== 'chyme.root') throw new Error('That document is not a Chyme history.');
    this.root = doc;
    return true;
  }

  /** Adds this device to the history's device list (or marks it there again, after leaving). */
  announceDevice(nowMs: number): Promise<void> {
    const c = this.config;
    return this.changeRoot((d) => {
      const existing = d.devices[c.deviceId];
      if (existing) {
        existing.name = c.deviceName;
        existing.last_seen_ms = nowMs;
        if (existing.left_ms !== undefined) delete existing.left_ms;
      } else d.devices[c.deviceId] = { name: c.deviceName, joined_ms: nowMs, last_seen_ms: nowMs };
    });
  }

  setWebhookHost(nowMs: number): Promise<void> {
    const c = this.config;
    return this.changeRoot((d) => {
      d.webhook_host = { device_id: c.deviceId, device_name: c.deviceName, since_ms: nowMs };
    });
  }

  /** Marks this device as gone from the history (it may come back later). */
  markLeft(nowMs: number): Promise<void> {
    const c = this.config;
    return this.changeRoot((d) => {
      const dev = d.devices[c.deviceId];
      if (dev) dev.left_ms = nowMs;
      if (d.webhook_host?.device_id === c.deviceId) d.webhook_host = null;
    });
  }

  rootDoc(): RootDoc {
    if (!this.root) throw new Error('the history has not arrived yet');
    return this.root;
  }

  /** Starts the background work of a running service: repair, catch-up, then following both directions. */
  start(): void {
    this.following = true;
    this.lastSeenTimer = setInterval(() => {
      if (!this.closed) void this.announceDevice(this.app.clock.now()).catch(() => undefined);
    }, LAST_SEEN_INTERVAL_MS);
    this.lastSeenTimer.unref();
    this.presenceTimer = setInterval(() => this.sayPresence(), PRESENCE_INTERVAL_MS);
    this.presenceTimer.unref();
    this.sweepTimer = setInterval(() => {
      if (this.closed) return;
      try {
        // Writers on other connections (an import's worker) do not pass through this process's
        // bus; a drain or push that failed (a locked database) is tried again.
        if (countOutbox(this.app.db) > 0) this.kick();
        if (this.inFlight.size === 0 && countDirtyDocs(this.app.db) > 0) this.pushSoon();
        this.pullSoon();
      } catch {
        // A locked database: the next tick looks again.
      }
    }, RETRY_MS);
    this.sweepTimer.unref();
    void this.exclusive(async () => {
      // Changes that arrived before a crash but were not all written to SQLite yet.
      for (const oid of listUnprojectedDocs(this.app.db)) {
        const row = getDoc(this.app.db, oid);
        if (row) await this.projectDoc(oid, A.load(row.bytes));
      }
      await this.drainLocked();
    }).catch((err: unknown) => this.fail('sync catch-up failed', err));
    this.connect();
    this.pushSoon();
  }

  /** Local writes committed: move them into the documents soon (coalesced). */
  kick(): void {
    // An import's worker is in one of its transactions (it holds the write gate): the drain waits
    // for the gate to open. Its rows go into the documents once the import is whole (db/sync.ts
    // DRAINABLE); writes made between its transactions are drained as usual.
    if (this.closed || this.app.writes.closed) return;
    // Once writes pause (DRAIN_QUIET_MS, longer in a burst of slow writes), and at least every DRAIN_MAX_DELAY_MS during a burst:
    // a drain (an Automerge change, its commits, a sealed push and its acknowledgement) is work the
    // next request would otherwise wait behind, and one drain takes a burst's writes together.
    const now = performance.now();
    const gap = now - this.lastKick;
    this.lastKick = now;
    const quiet = gap < DRAIN_QUIET_MAX_MS ? Math.min(DRAIN_QUIET_MAX_MS, Math.max(DRAIN_QUIET_MS, 1.5 * gap)) : DRAIN_QUIET_MS;
    this.kickedSince ??= now;
    const due = Math.min(now + quiet, this.kickedSince + DRAIN_MAX_DELAY_MS);
    clearTimeout(this.kickTimer);
    this.kickTimer = setTimeout(() => {
      this.kickTimer = undefined;
      this.kickedSince = undefined;
      if (this.closed) return;
      void this.drain().catch((err: unknown) => this.fail('writing changes to the documents failed', err));
    }, Math.max(0, due - now));
  }

  drain(): Promise<void> {
    return this.exclusive(() => this.drainLocked());
  }

  /** Records already on this device that no document holds yet (data from before sync was set up). */
  adoptLocalRecords(): Promise<number> {
    return this.exclusive(async () => {
      const n = this.enqueueUnheld();
      await this.drainLocked();
      return n;
    });
  }

  /**
   * Waits until this device has everything the relay held when it asked (a join, a catch-up); false
   * after timeoutMs or when the connection failed. `quiet`: what arrives is not news (a join).
   */
  async catchUp(timeoutMs: number, options: { quiet: boolean }): Promise<boolean> {
    this.quiet = options.quiet;
    // A first join takes the history newest first; the pull below then brings what came after.
    const newestFirst = options.quiet && this.connected && !this.triedNewestFirst && this.cursor() === 0;
    this.joining = newestFirst;
    this.following = true;
    try {
      if (newestFirst) {
        this.triedNewestFirst = true;
        await this.exclusive(() => this.joinNewestFirst())
          .catch((err: unknown) => {
            // A relay from before the index, or a connection lost: the whole pull below (after the
            // cursor, which moved only if all of it arrived) brings what is missing.
            debug?.(`newest first: ${String(err)}`);
            this.app.log.warn('sync: fetching the history newest first failed; fetching the rest whole', { error: String(err) });
          })
          .finally(() => (this.joining = false));
      }
      const done = new Promise<boolean>((resolve) => {
        this.caughtUp.push(() => resolve(true));
        setTimeout(() => resolve(false), timeoutMs).unref();
      });
      this.pullSoon();
      const ok = await done;
      await this.chain;
      return ok;
    } finally {
      this.quiet = false;
    }
  }

  /** Local changes the relay has not confirmed: outbox entries and documents with unsent changes. */
  pendingCount(): number {
    return countPendingChanges(this.app.db);
  }

  /**
   * Resolves once the relay has every local change and this device has pulled past its own chunks,
   * or after timeoutMs (false). Which chunks are this device's own is known only to the process that
   * pushed them (ownSeqs): a command that exited before its cursor passed them (\`sync init\` of ten
   * years: 135 chunks) left \`chyme serve\` to download and merge its whole history again at its
   * first start, the service stalling for 0.3–2.4 s at a time for half a minute on a loaded machine.
   */
  async waitUntilConfirmed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.chain;
      const confirmed = this.connected && this.pendingCount() === 0;
      if (confirmed && (this.ownSeqs.size === 0 || Date.now() > deadline)) {
        this.lastSyncedMs = this.app.clock.now();
        return true;
      }
      if (confirmed) {
        // A set-up's command follows the relay only for this pull.
        this.following = true;
        this.pullSoon();
      } else this.pushSoon();
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits for the relay's welcome: false after timeoutMs, or at once when an attempt failed (refused, wrong key). */
  async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.connected) {
      if (Date.now() > deadline || this.closed || this.lastError !== null) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.presenceTimer);
    clearInterval(this.sweepTimer);
    clearInterval(this.lastSeenTimer);
    clearTimeout(this.kickTimer);
    await this.chain.catch(() => undefined);
    this.connection?.stop();
    await this.merger.close();
    for (const w of this.caughtUp.splice(0)) w();
  }

  // ---- Internals ------------------------------------------------------------------------------

  private fail(what: string, err: unknown): void {
    debug?.(`${what}: ${err instanceof Error ? err.stack : String(err)}`);
    this.app.log.error(`sync: ${what}`, { error: err instanceof Error ? err.message : String(err) });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn).finally(() => note('idle'));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Queues every synced row that no document holds and no outbox entry will bring. Returns how many. */
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

  /**
   * Stores a document's state (inside the caller's transaction) and keeps it in the cache: the
   * changes since `since` appended when those are the stored heads, else the whole document.
   */
  private store(oid: string, name: string, doc: A.Doc<unknown>, flags: { dirty: boolean; unprojected: boolean }, since?: A.Heads, whole?: Uint8Array): void {
    const heads = headsText(A.getHeads(doc));
    const stored = since ? docStorage(this.app.db, oid) : undefined;
    const append = since !== undefined && stored !== undefined && stored.heads === headsText(since) && stored.bytes < 2 * stored.baseBytes + 4096;
    this.storeBytes(oid, name, heads, flags, append ? A.saveSince(doc, since) : (whole ?? A.save(doc)), append);
    this.remember(oid, name, doc);
  }

  /** Stores a document's bytes: the changes since the stored heads, appended, or the whole of it. */
  private storeBytes(oid: string, name: string, heads: string, flags: { dirty: boolean; unprojected: boolean }, bytes: Uint8Array, appended: boolean): void {
    if (appended) appendDoc(this.app.db, { oid, changes: bytes, heads, ...flags });
    else saveDoc(this.app.db, { oid, name, bytes, heads, ...flags });
  }

  private remember(oid: string, name: string, doc: A.Doc<unknown>): void {
    this.cache.delete(oid);
    this.cache.set(oid, { name, doc, usedMs: Date.now() });
    while (this.cache.size > CACHE_DOCS) this.cache.delete(this.cache.keys().next().value!);
  }

  /** This device's copy of a document (the cache, else SQLite), or undefined when it has none. */
  private load(oid: string): Cached | undefined {
    const have = this.cache.get(oid);
    if (have) return have;
    const row = getDoc(this.app.db, oid);
    if (!row) return undefined;
    const loaded = { name: row.name, doc: A.load(row.bytes), usedMs: Date.now() };
    this.remember(oid, row.name, loaded.doc);
    return loaded;
  }

  private async changeRoot(fn: (d: RootDoc) => void): Promise<void> {
    await this.exclusive(async () => {
      const oid = await this.rootOid;
      const before = A.getHeads(this.root).join();
      const next = A.change(this.root, fn);
      this.root = next;
      if (A.getHeads(next).join() === before) return;
      this.app.db.transaction(() => this.store(oid, ROOT_NAME, next, { dirty: true, unprojected: false }))();
    });
    this.options.onStatus?.();
    this.pushSoon();
  }

  /**
   * Moves outbox entries into the documents, newest first: a round reads the newest OUTBOX_BATCH
   * entries, groups them by document and writes the newest documents first (this month's shard,
   * where a meal just logged is, before the years an import brought). Each document is changed in
   * slices of SLICE_MS and stored with the end of its own entries in one transaction (a crash
   * leaves the document and its entries together, or neither); its push starts at once. A live
   * edit committed meanwhile (a newer entry) ends the round after the document under way: the next
   * round begins with it, and the bulk rest follows.
   */
  private async drainLocked(): Promise<void> {
    const db = this.app.db;
    this.drainAfter = false;
    for (;;) {
      if (!this.root) return;
      const entries = listOutboxNewest(db, OUTBOX_BATCH);
      if (entries.length === 0) return;
      const top = entries[0]!.seq;
      debug?.(`drain ${entries.length} entries`);
      note(`drain: reading ${entries.length} rows`);
      const rows = new Map<string, Row | undefined>();
      const newDocs = new Map<string, string>();
      const byDoc = new Map<string, { name: string; list: DrainEdit[]; seqs: number[] }>();
      /** Entries with nothing to write (created and deleted before they reached a document): forgotten with the first document. */
      let idle: number[] = [];
      const settingsSeqs: number[] = [];
      let slice = performance.now();
      for (const entry of entries) {
        if (performance.now() - slice > SLICE_MS) {
          await nextTurn();
          slice = performance.now();
        }
        if (entry.entity === 'settings') {
          settingsSeqs.push(entry.seq);
          continue;
        }
        const def = entityByKind(entry.entity);
        if (!def) {
          idle.push(entry.seq);
          continue;
        }
        if (!rows.has(entry.recordId)) rows.set(entry.recordId, readRows(db, def.table, def.columns, [entry.recordId], def.where).get(entry.recordId));
        const row = rows.get(entry.recordId);
        let oid = docOfRecord(db, entry.recordId) ?? newDocs.get(entry.recordId);
        let name: string | undefined;
        if (!oid) {
          // Created and deleted before it reached a document: nothing to tell anyone.
          if (!row) {
            idle.push(entry.seq);
            continue;
          }
          name = shardName(def.shardKey(row), this.config.deviceId);
          oid = await this.keys.oid(name);
          newDocs.set(entry.recordId, oid);
        }
        let group = byDoc.get(oid);
        if (!group) {
          // Not loaded for its name: a month an import adds to is loaded where it is changed (below).
          name ??= this.cache.get(oid)?.name ?? docPushState(db, oid)?.name;
          if (!name) {
            // A record whose document this device no longer has (cannot happen: documents are never deleted while synced).
            idle.push(entry.seq);
            continue;
          }
          byDoc.set(oid, (group = { name, list: [], seqs: [] }));
        }
        group.list.push({ entry, def });
        group.seqs.push(entry.seq);
      }
      const now = this.app.clock.now();
      const refused: Array<{ oid: string; id: string }> = [];
      const rootOid = await this.rootOid;
      if (settingsSeqs.length > 0) {
        const local = settingsRecordToDoc(currentSettings(this.app));
        const rootBefore = A.getHeads(this.root).join();
        const next = A.change(this.root, (d) => {
          for (const c of SETTINGS_COLUMNS) if (d.settings[c] !== local[c]) d.settings[c] = local[c] ?? null;
        });
        this.root = next;
        await this.app.writes.writable({ limitMs: Infinity });
        relaxedCommit(db, () => {
          if (A.getHeads(next).join() !== rootBefore) this.store(rootOid, ROOT_NAME, next, { dirty: true, unprojected: false });
          deleteOutboxSeqs(db, [...settingsSeqs, ...idle]);
        });
        idle = [];
        this.pushSoon();
      }
      const order = [...byDoc.keys()].sort((x, y) => shardAge(byDoc.get(x)!.name) - shardAge(byDoc.get(y)!.name));
      for (const oid of order) {
        const { name, list, seqs } = byDoc.get(oid)!;
        if (list.length > LIVE_RECORDS && this.yieldToPull()) continue;
        note(`drain: changing ${name} (${list.length})`);
        const elsewhere = this.merger.change && !this.cache.has(oid) && (list.length > LIVE_RECORDS || byDoc.size > BULK_DOCS || this.merger.warm);
        const { changed, store } = elsewhere ? await this.changeElsewhere(oid, name, list, rows, now, refused) : await this.changeHere(oid, name, list, rows, now, refused);
        const mine = [...newDocs].filter(([, o]) => o === oid);
        await this.app.writes.writable({ limitMs: Infinity });
        note(`drain: storing ${name}`);
        // Not waiting for the disk (relaxedCommit): a power cut that undoes this commit brings the
        // outbox rows back with it, and the same entries are drained again.
        relaxedCommit(db, () => {
          saveRecordDocs(db, mine);
          if (changed) store();
          deleteOutboxSeqs(db, idle.length > 0 ? [...seqs, ...idle] : seqs);
        });
        idle = [];
        // A live edit's document (a few records) goes out before the bulk ones waiting to be sent.
        if (changed && list.length <= LIVE_RECORDS) this.urgent.add(oid);
        if (changed) this.pushSoon();
        await nextTurn();
        if (maxOutboxSeq(db) > top) break;
      }
      if (idle.length > 0) relaxedCommit(db, () => deleteOutboxSeqs(db, idle));
      // A record deleted on another device was edited here meanwhile: the deletion wins. And a
      // record a projection held back for its local change now gets the other fields that arrived.
      const again = new Map<string, string[]>();
      for (const { oid, id } of refused) again.set(oid, [...(again.get(oid) ?? []), id]);
      for (const id of this.heldBack) {
        const oid = docOfRecord(db, id);
        if (oid && !hasOutboxEntry(db, id)) {
          again.set(oid, [...(again.get(oid) ?? []), id]);
          this.heldBack.delete(id);
        }
      }
      note('drain: projecting held-back records');
      for (const [oid, ids] of again) {
        const doc = this.load(oid)?.doc as A.Doc<ShardDoc> | undefined;
        if (doc) await this.projectRecords(oid, viewOf(doc, ids, true));
      }
      this.options.onStatus?.();
      this.pushSoon();
      if (this.drainAfter) return;
      // This round read every drainable entry, so what is there now was committed while it ran:
      // a burst of writes, whose kick drains it together once the writes pause. Taking it at once
      // drained such a burst one write per round (a change, a store, a push and its acknowledgement
      // each: 304 of 361 rounds in the write bench held one entry, and a write with sync on cost
      // 1.3–1.5× one with sync off).
      if (entries.length < OUTBOX_BATCH && this.kickTimer !== undefined) return;
    }
  }

  /**
   * While the worker merges a document (an import's month from another device, 0.4-3.6 s at load
   * 9-11), pulls fetched meanwhile are applied here (`take`) instead of after it: a meal logged on
   * another device merges on this thread into this month's document, which the worker's merge
   * does not touch. Nothing else runs on the chain meanwhile (the drain waits for the document's
   * end), and `take` leaves the document under way to after it.
   */
  private async whileMerging(merging: Promise<unknown>, take: () => Promise<void>): Promise<void> {
    let ended = false;
    const end = merging.then(
      () => void (ended = true),
      () => void (ended = true),
    );
    try {
      while (!ended && !this.closed) {
        if (this.fetched.length > 0) await take();
        else await Promise.race([end, new Promise<void>((resolve) => (this.onFetched = resolve))]);
      }
    } finally {
      this.onFetched = undefined;
    }
  }

  /**
   * Whether the drain leaves a bulk document (an import's month) for a pull fetched meanwhile (a
   * meal logged on another device): the pull is applied first, the drain giving the chain up (or
   * returning to the pull that called it, which applies it in between) and going on after it. A
   * live edit's document is still changed (its meal waits for no one). Asked before each bulk
   * document, not after one: a pull waited for a whole bulk document (1-3 s on a loaded machine)
   * each time, and an import's rounds, ended by the entries it commits all the time, never
   * reached the question (a meal logged elsewhere waited 13-21 s, test/sync/bulk.test.ts).
   */
  private yieldToPull(): boolean {
    if (this.fetched.length === 0) return false;
    this.drainAfter = true;
    return true;
  }

  /**
   * A drain's change of one document on this thread, in slices: Automerge takes a few
   * milliseconds per record on a busy machine, and an import's month is a hundred records or
   * more. The cache holds the newest state (Automerge outdates the one before a change). Returns
   * whether it changed, and its store (storeForPush, in the caller's transaction).
   */
  private async changeHere(oid: string, name: string, list: DrainEdit[], rows: Map<string, Row | undefined>, now: number, refused: Array<{ oid: string; id: string }>): Promise<{ changed: boolean; store: () => void }> {
    const have = this.load(oid);
    let doc = (have?.doc as A.Doc<ShardDoc> | undefined) ?? newShard(oid, name, this.config.deviceId);
    const beforeHeads = A.getHeads(doc);
    for (let i = 0; i < list.length; ) {
      const t0 = performance.now();
      const part = list.slice(i, i + this.sliceRecords);
      doc = A.change(doc, (d) => {
        for (const { entry, def } of part) {
          if (applyToDoc(d, entry, rows.get(entry.recordId), def.columns, now) === 'refused') refused.push({ oid, id: entry.recordId });
        }
      });
      this.remember(oid, name, doc);
      this.adaptSlice(part.length, performance.now() - t0);
      i += part.length;
      if (i < list.length) await nextTurn();
    }
    const changed = !have || A.getHeads(doc).join() !== beforeHeads.join();
    return { changed, store: () => this.storeForPush(oid, name, doc, have ? beforeHeads : undefined) };
  }

  /**
   * A bulk change of a document not in memory (an import's month), in the merger's worker: loading
   * the month, changing it and saving it held this thread for 200–1,500 ms. The worker returns what
   * to store and push; this thread's copy is not kept (the worker keeps its own).
   */
  private async changeElsewhere(oid: string, name: string, list: DrainEdit[], rows: Map<string, Row | undefined>, now: number, refused: Array<{ oid: string; id: string }>): Promise<{ changed: boolean; store: () => void }> {
    const db = this.app.db;
    const row = getDoc(db, oid);
    const storage = row ? docStorage(db, oid) : undefined;
    const { output } = await this.merger.change!({
      oid,
      name,
      deviceId: this.config.deviceId,
      stored: row?.bytes,
      storedHeads: row?.heads,
      edits: list.map(({ entry, def }) => ({ recordId: entry.recordId, fields: entry.fields, row: rows.get(entry.recordId), columns: def.columns })),
      nowMs: now,
      appendable: storage !== undefined && storage.bytes < 2 * storage.baseBytes + 4096,
      push: docPushState(db, oid) ?? { syncedHeads: '[]', snapshotBytes: 0 },
      snapshotRefused: this.snapshotRefused.has(oid),
    });
    for (const id of output.refused) refused.push({ oid, id });
    return {
      changed: output.changed,
      store: () => {
        this.storeBytes(oid, name, output.heads, { dirty: true, unprojected: false }, output.bytes!, output.appended);
        this.prepared.set(oid, output.push!);
      },
    };
  }

  /** Sizes the next slice of records from how long this one took (a busy machine gets smaller slices). */
  private adaptSlice(records: number, ms: number): void {
    this.sliceRecords = Math.max(2, Math.min(MAX_SLICE_RECORDS, Math.floor((records * SLICE_MS) / Math.max(ms, 1))));
  }

  // ---- Out: the pusher ------------------------------------------------------------------------

  /**
   * Stores a document a drain changed, and what its next push sends, computed while the drain
   * holds it in memory: a bulk change touches more documents than the cache keeps, and loading
   * each again to push it cost more than the change itself. A bulk change is saved whole once,
   * for both (A.save of a month is a slice of work of its own).
   */
  private storeForPush(oid: string, name: string, doc: A.Doc<unknown>, since: A.Heads | undefined): void {
    // A document new here has no row yet: its first push is the whole of it, as stored.
    const state = docPushState(this.app.db, oid) ?? { syncedHeads: '[]', snapshotBytes: 0 };
    const push = this.pushBody(oid, state, doc);
    this.store(oid, name, doc, { dirty: true, unprojected: false }, since, push.whole ? push.body : undefined);
    this.prepared.set(oid, push);
  }

  /**
   * What a push of a document sends. A first push is the whole document (compact); later ones the
   * changes the relay lacks, or the whole document again as a snapshot when those changes are
   * half its size or more: compacted at once, instead of a tail of change chunks (larger than a
   * save of the same records) that every device joining later downloads, merges and compacts.
   */
  private pushBody(oid: string, row: Pick<DocRow, 'syncedHeads' | 'snapshotBytes'>, doc: A.Doc<unknown>): Prepared {
    return pushBodyOf(doc, row, this.snapshotRefused.has(oid));
  }


  private pushSoon(): void {
    if (this.pushQueued || this.closed) return;
    this.pushQueued = true;
    setImmediate(() => {
      this.pushQueued = false;
      this.pushSome();
    });
  }

  /**
   * Sends the unsent changes of documents, a few at a time, without holding the chain: a push only
   * reads a document's stored state, and its acknowledgement only records what the relay holds.
   */
  private pushSome(): void {
    const conn = this.connection;
    if (!conn?.connected || this.closed || !this.root) return;
    const db = this.app.db;
    const dirty = listDirtyDocs(db);
    // A live edit's document first, and past the limit: it waits for no bulk push not yet sent.
    const urgent = dirty.filter((oid) => this.urgent.has(oid));
    for (const oid of urgent.length > 0 ? [...urgent, ...dirty.filter((o) => !this.urgent.has(o))] : dirty) {
      const isUrgent = this.urgent.delete(oid);
      if (this.inFlight.size >= PUSHES_IN_FLIGHT && !isUrgent) return;
      if (this.inFlight.has(oid)) continue;
      const row = docPushState(db, oid);
      if (!row) continue;
      this.inFlight.add(oid);
      note(`push: ${row.name}`);
      void (async () => {
        const ready = this.prepared.get(oid);
        this.prepared.delete(oid);
        const push = ready && ready.heads === row.heads && ready.since === row.syncedHeads ? ready : this.pushBody(oid, row, this.cache.get(oid)?.doc ?? A.load(getDoc(db, oid)!.bytes));
        const sealed = await this.keys.seal(oid, push.kind, row.name, push.body);
        let seq: number;
        try {
          // A snapshot covers what this device has merged: the chunks up to its cursor, and its own after it.
          if (push.kind === 'snapshot') {
            const covers = this.cursor();
            seq = await conn.push(oid, 'snapshot', sealed, covers, this.ownAfter(oid, covers));
          } else seq = await conn.push(oid, 'change', sealed);
        } catch (err) {
          // Refused (another device's snapshot covers more than this device has pulled): the
          // changes go as changes until the next pull.
          if (push.kind === 'snapshot' && conn.connected) this.snapshotRefused.add(oid);
          throw err;
        }
        this.ownOnRelay(seq, oid);
        // An import's worker may hold the database: the note waits for it rather than failing
        // (which would send the same chunk again).
        await this.app.writes.writable({ limitMs: Infinity });
        // Losing this note to a power cut only sends the same changes again. A whole save is what
        // a snapshot holds: only the changes after it are a tail to compact.
        relaxedCommit(db, () => {
          markDocPushed(db, oid, push.since, push.heads, push.whole ? 0 : sealed.length);
          if (push.whole) markDocSnapshot(db, oid, sealed.length);
        });
        debug?.(`pushed ${row.name} (${push.kind}) seq=${seq} ${sealed.length} B`);
      })()
        .catch((err: unknown) => debug?.(`push of ${row.name} failed: ${String(err)}`))
        .finally(() => {
          this.inFlight.delete(oid);
          if (this.pendingCount() === 0 && this.inFlight.size === 0 && this.connected && !this.pulling && this.relaySeq <= this.cursor()) this.lastSyncedMs = this.app.clock.now();
          this.options.onStatus?.();
          // More to send (changed meanwhile, or past the in-flight limit): go on; else the pull
          // past this device's own chunks, after which compaction may cover them.
          if (countDirtyDocs(db) > this.inFlight.size) this.pushSoon();
          else {
            this.pullSoon();
            this.compactSoon();
          }
        });
    }
  }

  /**
   * The relay stored one of this device's chunks at `seq`. The relay tells only the other
   * connections: without a pull past its own chunks, a device that writes alone never compacts
   * them (compactSoon waits for the cursor to reach the relay's latest seq). The pull skips
   * applying them again (ownSeqs).
   */
  private ownOnRelay(seq: number, oid: string): void {
    this.ownSeqs.set(seq, oid);
    this.relaySeq = Math.max(this.relaySeq, seq);
  }

  /**
   * This device's own chunks of `oid` past `covers`, which a snapshot of its copy holds (a copy
   * only grows): the snapshot covers them too. Another device's chunk past the cursor it does not
   * cover: this device has not merged it (the relay keeps it live).
   */
  private ownAfter(oid: string, covers: number): number[] {
    const own: number[] = [];
    for (const [seq, o] of this.ownSeqs) if (o === oid && seq > covers) own.push(seq);
    return own.slice(-MAX_OWN_SEQS);
  }

  /**
   * Client compaction: a document whose tail of chunks on the relay has outgrown half its snapshot
   * gets a new sealed snapshot covering everything up to this device's cursor. The relay drops the
   * covered chunks after its grace period. Another device's shard is left to that device until its
   * tail has outgrown the whole snapshot (that device is away, or gone): every device counts the
   * same tail, so they all compacted it on the same chunk, and each then merged the others'
   * snapshots (a stall of 200–600 ms on a loaded machine every few meals, A → B's slowest samples).
   */
  private compactSoon(): void {
    const conn = this.connection;
    if (!conn?.connected || this.closed || this.pulling || this.relaySeq > this.cursor()) return;
    const db = this.app.db;
    for (const oid of listDocsToCompact(db, COMPACT_FLOOR_BYTES)) {
      if (this.inFlight.has(oid) || this.inFlight.size >= PUSHES_IN_FLIGHT) continue;
      const row = getDoc(db, oid);
      if (!row) continue;
      const owned = row.name === ROOT_NAME || isShardOf(row.name, this.config.deviceId);
      if (!owned && row.tailBytes <= row.snapshotBytes) continue;
      this.inFlight.add(oid);
      const covers = this.cursor();
      note(`compact: ${row.name}`);
      void (async () => {
        // Saved whole: the stored bytes may be a save followed by appended changes.
        const sealed = await this.keys.seal(oid, 'snapshot', row.name, A.save(this.cache.get(oid)?.doc ?? A.load(row.bytes)));
        const seq = await conn.push(oid, 'snapshot', sealed, covers, this.ownAfter(oid, covers));
        this.ownOnRelay(seq, oid);
        markDocSnapshot(db, oid, sealed.length);
        debug?.(`snapshot of ${row.name} seq=${seq} covers=${covers} ${sealed.length} B`);
      })()
        .catch((err: unknown) => debug?.(`snapshot of ${row.name} refused: ${String(err)}`))
        .finally(() => this.inFlight.delete(oid));
    }
  }

  // ---- In: pulls ------------------------------------------------------------------------------

  private cursor(): number {
    return readServiceState<number>(this.app.db, CURSOR_KEY) ?? 0;
  }

  private pullSoon(): void {
    const conn = this.connection;
    if (!conn?.connected || this.pulling || this.joining || this.closed || !this.following) return;
    // After what is fetched already: a pull still being applied has those chunks.
    const after = Math.max(this.cursor(), this.fetchedTo);
    if (this.relaySeq <= after && this.caughtUp.length === 0) return;
    this.pulling = true;
    this.pullGeneration = this.generation;
    this.incoming = [];
    debug?.(`pull after ${after}`);
    conn.pull(after);
  }

  /** Applies the next complete pull fetched (unless a longer one before it took it in already). */
  private async applyFetched(): Promise<void> {
    const batch = this.fetched.shift();
    if (batch) await this.applyIncoming(batch);
    if (this.drainAfter) {
      this.drainAfter = false;
      await this.drainLocked();
    }
  }

  /**
   * Opens a pull's chunks and groups them by document, with the order to apply them in: the root
   * first (a join needs the history's settings before its records), then the newest documents
   * (this month's shards, where a meal just logged elsewhere is, before the years an import
   * brought: Today is right first). Also the bytes of this device's own changes, by document
   * (merged already: not applied again; own snapshots hold nothing it lacks either).
   */
  private async openPull(chunks: Incoming[]): Promise<{ opened: Map<string, Opened[]>; order: string[]; ownBytes: Map<string, number> }> {
    const db = this.app.db;
    const byDoc = new Map<string, Incoming[]>();
    const ownBytes = new Map<string, number>();
    for (const ch of chunks) {
      if (this.ownSeqs.has(ch.seq)) {
        if (ch.kind === 'change') ownBytes.set(ch.oid, (ownBytes.get(ch.oid) ?? 0) + ch.sealed.length);
        continue;
      }
      let list = byDoc.get(ch.oid);
      if (!list) byDoc.set(ch.oid, (list = []));
      list.push(ch);
    }
    const rootOid = await this.rootOid;
    // Opened first (cheap, and the names are sealed): the order needs them.
    const opened = new Map<string, Opened[]>();
    const names = new Map<string, string>();
    for (const [oid, list] of byDoc) {
      const out: Opened[] = [];
      for (const ch of list) {
        try {
          const o = await this.keys.open(oid, ch.kind, ch.sealed);
          // The name is sealed too: a document is only ever the one its id was derived from.
          if ((await this.keys.oid(o.name)) !== oid) throw new IntegrityError('it names another document');
          out.push({ ch, name: o.name, body: o.body });
          names.set(oid, o.name);
        } catch (err) {
          out.push({ ch, error: err });
        }
      }
      opened.set(oid, out);
      if (!names.has(oid)) names.set(oid, this.cache.get(oid)?.name ?? getDoc(db, oid)?.name ?? '');
    }
    const order = [...byDoc.keys()].sort((a, b) => (a === rootOid ? -1 : b === rootOid ? 1 : shardAge(names.get(a)!) - shardAge(names.get(b)!)));
    return { opened, order, ownBytes };
  }

  /**
   * Applies a complete pull: merges and stores each document's chunks, then projects. A pull
   * fetched meanwhile (a change announced while a long catch-up is applied) goes in between two
   * documents, so a meal just logged elsewhere does not wait for the rest: its documents are
   * applied at once, except those still waiting in this pull, whose new chunks join their list
   * (a document's chunks are merged in order). The cursor moves past both at the end.
   */
  private async applyIncoming(batch: { chunks: Incoming[]; endSeq: number }): Promise<void> {
    const db = this.app.db;
    let endSeq = batch.endSeq;
    note(`pull: opening ${batch.chunks.length} chunks`);
    const { opened, order, ownBytes } = await this.openPull(batch.chunks);
    for (const [k, oid] of order.entries()) {
      if (this.closed) return;
      const waiting = new Set(order.slice(k + 1));
      // Chunks of the document under way, from a pull applied while the worker merges it: after it.
      const after: Opened[] = [];
      let afterOwn = 0;
      const takeLive = async (busy?: string) => {
        for (let live = this.fetched.shift(); live && !this.closed; live = this.fetched.shift()) {
          endSeq = Math.max(endSeq, live.endSeq);
          const more = await this.openPull(live.chunks);
          for (const o of more.order) {
            if (waiting.has(o)) {
              opened.get(o)!.push(...more.opened.get(o)!);
              ownBytes.set(o, (ownBytes.get(o) ?? 0) + (more.ownBytes.get(o) ?? 0));
            } else if (o === busy) {
              after.push(...more.opened.get(o)!);
              afterOwn += more.ownBytes.get(o) ?? 0;
            } else await this.applyDoc(o, more.opened.get(o)!, more.ownBytes.get(o) ?? 0, more.order.length);
          }
          debug?.(`applied a pull of ${live.chunks.length} chunks up to ${live.endSeq} ${busy ? 'during a merge in the worker' : 'in between'}`);
        }
      };
      await this.applyDocAndYield(oid, opened.get(oid)!, ownBytes.get(oid) ?? 0, order.length, (merging) => this.whileMerging(merging, () => takeLive(oid)));
      if (after.length > 0 && !this.closed) await this.applyDoc(oid, after, afterOwn, order.length);
      await takeLive();
    }
    if (this.closed) return;
    this.tellQuietChanges();
    relaxedCommit(db, () => writeServiceState(db, CURSOR_KEY, Math.max(this.cursor(), endSeq)));
    for (const s of this.ownSeqs.keys()) if (s <= endSeq) this.ownSeqs.delete(s);
    this.snapshotRefused.clear();
    debug?.(`pulled ${batch.chunks.length} chunks up to ${endSeq}`);
    if (this.relaySeq <= endSeq) {
      for (const w of this.caughtUp.splice(0)) w();
      if (this.pendingCount() === 0) this.lastSyncedMs = this.app.clock.now();
    }
    this.options.onStatus?.();
    this.pullSoon();
    this.pushSoon();
    this.compactSoon();
  }

  /**
   * Applies one document of a pull. Then, between two documents, the service answers requests,
   * and local writes made meanwhile go out without waiting for the rest of a long catch-up.
   */
  private async applyDocAndYield(oid: string, chunks: Opened[], ownBytes: number, pullDocs: number, whileMerging?: (merging: Promise<unknown>) => Promise<void>): Promise<void> {
    await this.applyDoc(oid, chunks, ownBytes, pullDocs, whileMerging);
    await new Promise((r) => setImmediate(r));
    if (countOutbox(this.app.db) > 0 && !this.app.writes.closed) await this.drainLocked();
  }

  /** A quiet projection (a join) changed records: the derived data is told once, now. */
  private tellQuietChanges(): void {
    if (!this.quietChanges) return;
    this.quietChanges = false;
    this.app.bus.write((emit) => notifyDataChanged(this.app, emit));
  }

  // ---- A first join: newest first -------------------------------------------------------------

  /**
   * Takes a history this device does not have yet newest first, so that Today is right long before
   * ten years have arrived. The relay cannot order anything (its ids are opaque), but the device can
   * name them: a document's id is derived from its name (crypto.ts), and shard names are the
   * creating device and a month or year (documents.ts). So: the relay lists the documents it holds
   * (`index`); the root comes first (the settings, and the devices the shards are named after);
   * then the device derives the ids of every device's shards month by month back from now, and
   * fetches (`pull` of listed documents) the current weeks with the foods and saved meals, then
   * older months newest first, JOIN_BATCH_BYTES at a time, then what it could not name (a newer
   * version's documents). Each batch is applied and projected before the next is asked for, with
   * the service answering between two documents. The cursor moves to the index's seq at the end:
   * everything stored up to it has arrived; what came later comes with the next pull.
   */
  private async joinNewestFirst(): Promise<void> {
    const conn = this.connection;
    if (!conn?.connected) throw new Error('not connected');
    const index = await new Promise<{ seq: number; docs: Array<[string, number]> }>((resolve, reject) => {
      this.docsWaiter = { resolve, reject };
      conn.index();
    });
    const rootOid = await this.rootOid;
    const sizes = new Map(index.docs);
    // The device that set sync up has not sent the root yet: the pull of everything waits for it.
    if (!sizes.has(rootOid)) throw new Error('the history has no root document on the relay yet');
    const progress: JoinProgress = { phase: 'recent', appliedBytes: 0, totalBytes: [...sizes.values()].reduce((a, b) => a + b, 0) };
    this.joinProgress = progress;
    const fetch = (oids: string[]) => {
      if (oids.length === 0) return Promise.resolve([]);
      const chunks = new Promise<Incoming[]>((resolve, reject) => {
        this.targeted.push({ resolve, reject, chunks: [] });
        conn.pull(0, oids);
      });
      // Awaited later (or never, when the join fails first): not an unhandled rejection meanwhile.
      chunks.catch(() => undefined);
      return chunks;
    };
    const apply = async (oids: string[], chunks: Incoming[]) => {
      if (oids.length === 0) return;
      const { opened, order, ownBytes } = await this.openPull(chunks);
      for (const oid of order) {
        if (this.closed) throw new Error('sync stopped');
        await this.applyDocAndYield(oid, opened.get(oid)!, ownBytes.get(oid) ?? 0, order.length);
      }
      for (const oid of oids) progress.appliedBytes += sizes.get(oid) ?? 0;
      this.tellQuietChanges();
      debug?.(`newest first: ${oids.length} documents, ${progress.appliedBytes}/${progress.totalBytes} B`);
      this.options.onStatus?.();
    };
    await apply([rootOid], await fetch([rootOid]));
    const batches = await this.joinPlan(sizes, rootOid);
    // One batch ahead: the next is on its way while this one is applied (the relay reads and sends
    // it meanwhile), so the device does not wait a round trip and the relay's reading between two
    // batches; no more, so that the device holds at most two batches of the history at once.
    let next = fetch(batches[0]!);
    for (const [k, oids] of batches.entries()) {
      const chunks = await next;
      next = fetch(batches[k + 1] ?? []);
      await apply(oids, chunks);
      // The first batch is the current weeks (joinPlan), empty or not.
      progress.phase = 'older';
    }
    const db = this.app.db;
    relaxedCommit(db, () => writeServiceState(db, CURSOR_KEY, Math.max(this.cursor(), index.seq)));
    this.relaySeq = Math.max(this.relaySeq, index.seq);
    progress.phase = 'done';
  }

  /**
   * The batches of a join after the root: [the current weeks, then older ones newest first, then
   * the documents it cannot name]. Names are tried month by month back from next month (a meal
   * dated ahead), for every device the root lists, until every listed document is named.
   */
  private async joinPlan(sizes: Map<string, number>, rootOid: string): Promise<string[][]> {
    const devices = Object.keys(this.root?.devices ?? {});
    const unnamed = new Set([...sizes.keys()].filter((oid) => oid !== rootOid));
    const named: Array<{ oid: string; age: number }> = [];
    const look = async (key: string, age: number) => {
      for (const device of devices) {
        const oid = await this.keys.oid(shardName(key, device));
        if (unnamed.delete(oid)) named.push({ oid, age });
      }
    };
    await look('foods', 0);
    await look('saved_meals', 0);
    const now = new Date(this.app.clock.now());
    // Months counted back from next month (age 0); sleep is kept per year, named at its year's latest month visited.
    for (let age = 0, y = now.getUTCFullYear(), m = now.getUTCMonth() + 1; unnamed.size > 0 && y >= JOIN_FIRST_YEAR; age++) {
      if (age === 0 && ++m > 12) [y, m] = [y + 1, 1];
      if (age === 0 || m === 12) await look(`sleep/${y}`, age);
      await look(`meals/${y}-${String(m).padStart(2, '0')}`, age);
      if (--m < 1) [y, m] = [y - 1, 12];
    }
    // Next, this and last month (a week may start in it), and this year's sleep.
    const RECENT_AGE = 2;
    const recent = named.filter((d) => d.age <= RECENT_AGE).map((d) => d.oid);
    const batches: string[][] = [recent];
    let batch: string[] = [];
    let bytes = 0;
    const add = (oid: string) => {
      batch.push(oid);
      bytes += sizes.get(oid) ?? 0;
      if (bytes >= JOIN_BATCH_BYTES || batch.length >= MAX_PULL_OIDS) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
    };
    for (const d of named.filter((d) => d.age > RECENT_AGE).sort((a, b) => a.age - b.age)) add(d.oid);
    for (const oid of unnamed) add(oid);
    if (batch.length > 0) batches.push(batch);
    return batches;
  }

  /**
   * `pullDocs`: how many documents the pull brought (many: an import, whose merges are bulk work).
   * `whileMerging`, given the worker's merge of this document under way: what this thread does
   * meanwhile (applying a pull fetched since, whose documents are others), resolving once both
   * have ended. The store and projection of this document follow it, on this thread as always.
   */
  private async applyDoc(oid: string, chunks: Opened[], ownBytes: number, pullDocs: number, whileMerging?: (merging: Promise<unknown>) => Promise<void>): Promise<void> {
    const db = this.app.db;
    const isRoot = oid === (await this.rootOid);
    const tLoad = debug ? performance.now() : 0;
    const cached = this.cache.get(oid);
    let row = getDoc(db, oid);
    let name = cached?.name ?? row?.name;
    const synced = JSON.parse(row?.syncedHeads ?? '[]') as string[];
    const accepted: Array<{ ch: Incoming; body: Uint8Array }> = [];
    for (const { ch, name: chunkName, body, error } of chunks) {
      const refused = error ?? (name !== undefined && chunkName !== name ? new IntegrityError('it names another document') : undefined);
      if (refused !== undefined) this.skipChunk(oid, ch, refused);
      else {
        name = chunkName!;
        accepted.push({ ch, body: body! });
      }
    }
    if (name === undefined) return;
    // A snapshot of exactly the state this device holds (another device compacted what both
    // have) brings nothing: the document is neither loaded nor merged for it.
    const holds = cached ? headsText(A.getHeads(cached.doc)) : row?.heads;
    const snapHeads = new Map(accepted.filter((a) => a.ch.kind === 'snapshot').map((a) => [a, savedDocHeads(a.body)] as const));
    const held = new Set(
      accepted.filter((a) => {
        const heads = snapHeads.get(a);
        return holds !== undefined && heads !== undefined && headsText(heads) === holds;
      }),
    );
    const toMerge = accepted.filter((a) => !held.has(a));
    const merging = toMerge.length > 0 || !row;
    note(`apply: merging ${toMerge.length} chunks of ${name}`);
    const t0 = debug ? performance.now() : 0;
    // The root stays on this thread (this.root is it); a shard is merged where the merger merges
    // (a worker, for the service: loading, merging, saving and diffing a month another device
    // imported held this thread for up to 1.5 s). The merger stores nothing: this thread does.
    let merged: Awaited<ReturnType<DocMerger['merge']>> | undefined;
    if (merging) {
      const storage = row ? docStorage(db, oid) : undefined;
      const appendable = !!storage && storage.heads === holds && storage.bytes < 2 * storage.baseBytes + 4096;
      const bulk = toMerge.some((a) => a.ch.kind === 'snapshot') || toMerge.reduce((n, a) => n + a.body.length, 0) > BULK_MERGE_BYTES || (!cached && (pullDocs > BULK_DOCS || this.merger.warm));
      const merger = isRoot || !bulk ? inThreadMerger : this.merger;
      const job = merger.merge(
        {
          oid,
          stored: row?.bytes,
          storedHeads: row?.heads,
          chunks: toMerge.map((a) => a.body),
          synced,
          checks: synced.length === 0 ? [] : toMerge.flatMap((a, index) => (a.ch.kind === 'snapshot' ? [{ index, heads: snapHeads.get(a) }] : [])),
          appendable,
          conflicts: !this.quiet,
        },
        isRoot ? this.root : cached?.doc,
      );
      if (whileMerging && merger !== inThreadMerger) await whileMerging(job);
      merged = await job;
      // Acknowledgements (and pulls applied while the worker merged) may have arrived meanwhile:
      // what the row says now is what counts below.
      row = getDoc(db, oid);
    }
    const t1 = debug ? performance.now() : 0;
    const out = merged?.output;
    const before = out ? out.before : cached ? [...A.getHeads(cached.doc)].sort() : (JSON.parse(holds!) as string[]);
    const after = out ? out.after : before;
    const changed = before.join() !== after.join();
    const applied = new Set([...(out?.applied.map((i) => toMerge[i]!) ?? []), ...held]);
    for (const s of out?.skipped ?? []) this.skipChunk(oid, toMerge[s.index]!.ch, new Error(s.message));
    const checked = new Map((out?.snapshots ?? []).map((s) => [toMerge[s.index]!, s] as const));
    let tail = 0;
    let snapshot: { bytes: number; heads: A.Heads; lacksOurs: boolean } | undefined;
    for (const [i, a] of accepted.filter((x) => applied.has(x)).entries()) {
      const { ch } = a;
      // A document this device first hears of starts with its snapshot, or with the first push
      // of the device that made it (a whole save): either is what a snapshot would hold, and
      // only the chunks after it are a tail to compact.
      if (ch.kind === 'snapshot' || (i === 0 && !row)) {
        tail = 0;
        const check = checked.get(a);
        snapshot = { bytes: ch.sealed.length, heads: check?.heads ?? [], lacksOurs: check?.lacksOurs ?? false };
        // The same chunk fetched twice (a join's pull of listed documents, then the pull after its
        // cursor) brings nothing the second time, and is not a second chunk on the relay.
      } else if (changed) tail += ch.sealed.length;
    }
    if (debug) {
      const kinds = accepted.map((a) => `${held.has(a) ? 'held ' : ''}${a.ch.kind[0]}${a.body.length}`).join(' ');
      debug(`apply ${name}: ${cached ? 'cached' : row ? 'stored' : 'new'}, chunks ${kinds}; merge ${merged?.doc ? 'here' : merging ? 'in the worker' : 'none'} ${Math.round(t1 - t0)} ms (read ${Math.round(t0 - tLoad)} ms)`);
    }
    note(`apply: storing ${name}`);
    // The merger's copy is the newest: the cache keeps it, or forgets the one it had (outdated now).
    if (merged?.doc) this.remember(oid, name, merged.doc);
    else if (merging) this.cache.delete(oid);
    if (isRoot && merged?.doc) this.root = merged.doc as A.Doc<RootDoc>;
    const view = out?.view;
    // A join (quiet: no events, nothing local to hold back but what the outbox holds) projects a
    // shard in the transaction that stores it, whole: one commit per document instead of one per
    // 25 ms slice and two more around them. On the phone every commit writes and flushes the
    // journal and the pages to OPFS; the service still answers between two documents.
    const projectNow = changed && this.quiet && view !== undefined;
    let savedMeals = false;
    // An import's worker holding the database is waited for here, not met by the commit (which
    // would fail the whole pull). From here to the commit nothing else runs.
    await this.app.writes.writable({ limitMs: Infinity });
    // What came from the relay is still there if a power cut undoes this commit: the cursor
    // (written after it) goes back too, and the same chunks come again.
    relaxedCommit(db, () => {
      if (out?.bytes) this.storeBytes(oid, name!, headsText(after), { dirty: false, unprojected: changed }, out.bytes, out.appended);
      if (snapshot) {
        markDocSnapshot(db, oid, snapshot.bytes);
        // A snapshot made without some of this device's acknowledged changes (a device that had
        // not seen them): they are sent again, so that they cannot be lost with the covered chunks.
        if (snapshot.lacksOurs) markDocResend(db, oid, headsText(snapshot.heads));
      }
      // A snapshot empties the tail, but it does not cover this device's own changes that came in
      // the same pull (those after it, and maybe those before, which its covers may not reach):
      // they count again, or they would stay on the relay uncovered until the tail grew anew.
      const addTail = tail + (snapshot ? ownBytes : 0);
      if (addTail > 0) addDocTail(db, oid, addTail);
      // What arrived is on the relay: unless this device has changes of its own not sent yet, the relay holds all of it.
      if (!row?.dirty && !snapshot?.lacksOurs) markDocSynced(db, oid, headsText(after), 0);
      if (projectNow) {
        note(`apply: projecting ${name} whole`);
        savedMeals = this.projectSlice(oid, view, 0, Infinity).savedMeals;
        setDocProjected(db, oid);
      }
    });
    if (debug) debug(`stored ${name} in ${Math.round(performance.now() - t1)} ms`);
    if (savedMeals) for (const hook of this.app.hooks.savedMealsChanged) hook();
    if (!changed || projectNow) return;
    if (isRoot) {
      note(`apply: diff of ${name}`);
      this.projectRoot(before.length === 0 ? null : A.diff(this.root, before, after));
    } else if (view) await this.projectRecords(oid, view);
    setDocProjected(db, oid);
  }

  private skipChunk(oid: string, ch: Incoming, err: unknown): void {
    const problem = err instanceof IntegrityError ? `A chunk failed authentication: ${err.message}.` : `A chunk could not be read: ${(err as Error)?.message ?? String(err)}.`;
    this.app.log.warn('sync: skipped a chunk from the relay', { seq: ch.seq, problem });
    recordIntegrityProblem(this.app.db, { oid, relaySeq: ch.seq, problem, detectedMs: this.app.clock.now() });
  }

  /** Projects every record of a document (one a crash left unprojected), then marks it projected. */
  private async projectDoc(oid: string, doc: A.Doc<unknown>): Promise<void> {
    if ((doc as { kind?: unknown }).kind === 'chyme.root') {
      this.root = doc as A.Doc<RootDoc>;
      this.projectRoot(null);
    } else if ((doc as { kind?: unknown }).kind === 'chyme.shard') {
      await this.projectRecords(oid, recordsView(doc as ShardDoc, null, true));
    }
    setDocProjected(this.app.db, oid);
  }

  private projectRoot(patches: A.Patch[] | null): void {
    const doc = this.root;
    if (!doc.settings) return;
    this.projectSettings(doc.settings);
    if (!patches || patches.some((p) => p.path[0] === 'settings')) {
      for (const field of SETTINGS_COLUMNS) this.noteConflict('settings', 'settings', field, Object.values(A.getConflicts(doc.settings as never, field) ?? {}).map((v) => scalarOf(v) ?? null), doc.settings[field]);
    }
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

  /**
   * Writes the records of a document that differ from their rows, one transaction per slice of
   * SLICE_MS (at least one record): a month an import brought takes a second or more on a busy
   * machine, and the service answers requests between two slices.
   */
  private async projectRecords(oid: string, view: RecordsView): Promise<void> {
    const app = this.app;
    const ids = view.ids;
    // A month another device imported is many slices on a busy machine: the digestion
    // announcements (the state and windows of now, tens of milliseconds each) follow its last
    // slice once, in a transaction of their own, instead of lengthening every slice; the
    // derived-data cache is still told at each commit. A live edit (a few records) is announced
    // in its own slice.
    this.untold = ids.length > LIVE_RECORDS ? { mealTimes: [], sleepEnds: [] } : undefined;
    try {
      for (let i = 0; i < ids.length; ) {
        if (this.closed) return;
        // An import's worker holds the database: this waits for it instead of failing.
        await app.writes.writable({ limitMs: Infinity });
        note(`project: from record ${i} of ${ids.length} of ${oid.slice(0, 6)}`);
        const slice = this.projectSlice(oid, view, i, SLICE_MS);
        i = slice.next;
        if (slice.savedMeals) for (const hook of app.hooks.savedMealsChanged) hook();
        if (i < ids.length) await nextTurn();
      }
    } finally {
      const untold = this.untold;
      this.untold = undefined;
      if (untold && (untold.mealTimes.length > 0 || untold.sleepEnds.length > 0) && !this.closed) {
        await nextTurn();
        await app.writes.writable({ limitMs: Infinity });
        note(`project: announcing ${oid.slice(0, 6)}`);
        app.bus.write((emit) => notifyDataChanged(app, emit, untold));
      }
    }
  }

  /** What a projection slice changed, told now (in its transaction), or the cache now and the rest after the document (untold). */
  private tellChanged(emit: Emit, touched: ChangedTimes): void {
    if (!this.untold) return notifyDataChanged(this.app, emit, touched);
    derivedCacheOf(this.app)?.invalidate(touched);
    this.untold.mealTimes.push(...touched.mealTimes);
    this.untold.sleepEnds.push(...touched.sleepEnds);
  }

  /**
   * Projects ids from `from` on, in one write (the caller's transaction, if it holds one), until
   * budgetMs has passed (at least one record). Returns where it stopped, and whether saved meals
   * changed (their hooks are the caller's to call, once committed).
   */
  private projectSlice(oid: string, view: RecordsView, from: number, budgetMs: number): { next: number; savedMeals: boolean } {
    const app = this.app;
    const ids = view.ids;
    let i = from;
    let savedMeals = false;
    const t0 = performance.now();
    app.bus.write((emit) =>
      this.withoutCapture(() => {
        const located: Array<[string, string]> = [];
        const touched: ChangedTimes = { mealTimes: [], sleepEnds: [] };
        while (i < ids.length) {
          const id = ids[i++]!;
          const def = entityOfId(id);
          const rec = view.records[id];
          if (def && rec) {
            located.push([id, oid]);
            try {
              const outcome = this.projectRecord(def, id, rec, emit, touched);
              if (outcome !== 'same' && outcome !== 'held' && def.kind === 'saved_meal') savedMeals = true;
              // A clash needs two writes of one field: a record this device is only now given
              // (created here) has none of its own, so only records it had are looked at. The
              // side whose value won sees no change of its row ('same'), only the other arriving.
              if ((outcome === 'updated' || outcome === 'same') && !isDeleted(rec)) this.noteConflicts(def, id, rec, view.conflicts[id]);
            } catch (err) {
              app.log.warn('sync: a record from another device could not be stored', { id, error: String(err) });
            }
          }
          if (performance.now() - t0 > budgetMs) break;
        }
        saveRecordDocs(app.db, located);
        // A join's history is told to the derived data once, at the end of its catch-up.
        if (this.quiet) this.quietChanges = true;
        else if (touched.mealTimes.length > 0 || touched.sleepEnds.length > 0) this.tellChanged(emit, touched);
      }),
    );
    return { next: i, savedMeals };
  }

  private projectRecord(def: EntityDef, id: string, rec: DocRecord, emit: Emit, touched: ChangedTimes): 'created' | 'updated' | 'deleted' | 'same' | 'held' {
    const app = this.app;
    const db = app.db;
    // A local change the documents do not hold yet is newer than what they say: it goes out first
    // (the outbox), and is never overwritten by the older state here. Other fields that arrived
    // are projected once the drain has written the local change into the document.
    if (hasOutboxEntry(db, id)) {
      this.heldBack.add(id);
      return 'held';
    }
    const current = readRows(db, def.table, def.columns, [id], def.where).get(id);
    const announce = !this.quiet && changeTime(rec) >= this.config.enabledMs;
    if (isDeleted(rec)) {
      if (!current) return 'same';
      const change: ProjectedChange = { id, kind: 'deleted', before: def.snapshot(app, id) };
      deleteRow(db, def.table, id);
      def.after(app, emit, change, announce, touched);
      return 'deleted';
    }
    const wanted: Row = { id };
    for (const c of def.columns) wanted[c] = toColumn(rec[c]);
    if (current && def.columns.every((c) => current[c] === wanted[c])) return 'same';
    const change: ProjectedChange = { id, kind: current ? 'updated' : 'created', before: current ? def.snapshot(app, id) : undefined };
    upsertRow(db, def.table, { ...wanted, ...def.derived?.(app, wanted) });
    def.after(app, emit, change, announce, touched);
    return change.kind;
  }

  private noteConflicts(def: EntityDef, id: string, rec: DocRecord, clashes: RecordsView['conflicts'][string] | undefined): void {
    for (const [field, values] of clashes ?? []) {
      if (def.columns.includes(field)) this.noteConflict(def.kind, id, field, values, scalarOf(rec[field]));
    }
  }

  /** A field with more than one value (`all`, every side's): listed once, with the value kept. */
  private noteConflict(entity: string, id: string, field: string, all: Scalar[], kept: unknown): void {
    if (all.length < 2) return;
    const others = all.filter((v) => v !== kept);
    const key = `${id}/${field}/${JSON.stringify(kept)}/${JSON.stringify(others)}`;
    if (this.seenConflicts.has(key)) return;
    this.seenConflicts.add(key);
    recordConflict(this.app.db, { entity, recordId: id, field, kept, others, detectedMs: this.app.clock.now() });
  }

  // ---- Presence -------------------------------------------------------------------------------

  private sayPresence(): void {
    const conn = this.connection;
    if (!conn?.connected || this.closed) return;
    void (async () => {
      const oid = await this.keys.oid(PRESENCE_NAME);
      const body = new TextEncoder().encode(JSON.stringify({ device_id: this.config.deviceId, at: this.app.clock.now() }));
      conn.say(await this.keys.seal(oid, 'change', PRESENCE_NAME, body));
    })().catch(() => undefined);
  }

  private async heard(sealed: Uint8Array): Promise<void> {
    try {
      const oid = await this.keys.oid(PRESENCE_NAME);
      const { body } = await this.keys.open(oid, 'change', sealed);
      const note = JSON.parse(new TextDecoder().decode(body)) as { device_id?: unknown };
      if (typeof note.device_id === 'string') {
        const first = !this.presence.has(note.device_id);
        this.presence.set(note.device_id, this.app.clock.now());
        // A device that just came tells the others, and hears from them in turn.
        if (first) this.sayPresence();
        this.options.onStatus?.();
      }
    } catch {
      // A note that does not open is ignored: presence is a courtesy, not data.
    }
  }
}

/**
 * Sorts document names newest first: `shard:meals/2026-11:…` and `shard:sleep/2026:…` by their
 * month or year (a document not yet known here, whose name arrives sealed, sorts last).
 */
function shardAge(name: string): number {
  const m = /^shard:\w+\/(\d{4})(?:-(\d\d))?:/.exec(name);
  if (!m) return name === '' ? Number.MAX_SAFE_INTEGER : 0;
  return -(Number(m[1]) * 12 + Number(m[2] ?? 12));
}

function toColumn(d: DocValue | undefined): string | number | null {
  const v = scalarOf(d);
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
