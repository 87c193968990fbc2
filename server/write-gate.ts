import { systemClock, type Clock } from './clock.js';

/** How long a request's write waits for another program's lock before 503 storage_busy (docs/api.md). */
export const STORAGE_BUSY_LIMIT_MS = 5000;
/** How often a waiting write looks at the lock again: first soon (most locks are short), then less often. */
const LOCK_POLL_MS = [5, 10, 25, 50, 100] as const;

/**
 * Another program held the database's write lock for longer than the limit; nothing was written.
 * Carries SQLite's code, so it is answered as every SQLITE_BUSY is (503 storage_busy, Retry-After).
 */
export class StorageBusyError extends Error {
  readonly code = 'SQLITE_BUSY';
  constructor(waitedMs: number) {
    super(`another program held the database locked for ${waitedMs} ms (SQLITE_BUSY)`);
    this.name = 'StorageBusyError';
  }
}

export interface WriteGateOptions {
  /** Whether another connection holds SQLite's write lock now, without waiting (db/connection.ts writeLockHeldElsewhere). */
  lockHeldElsewhere?: () => boolean;
  clock?: Clock;
  /** How long writable() waits for another program's lock (default STORAGE_BUSY_LIMIT_MS). */
  limitMs?: number;
}

/**
 * A holder that writes in many short transactions (acquireBulk): the gate is closed only for each
 * of them, and no other holder comes between its first and its last.
 */
export interface BulkTurns {
  /** Closes the gate for one transaction, after the writers waiting at it had their turn. */
  take(): Promise<void>;
  /** Opens the gate: that transaction has ended. */
  give(): void;
  /** The last one has ended: opens the gate and lets the next holder in. Call exactly once. */
  end(): void;
}

/**
 * Keeps the service's own writers away from SQLite's write lock while another connection holds it
 * for long: an import writes its thousands of rows from its worker thread, on a connection of its
 * own, in transactions of ~25 ms (acquireBulk), this thread's writers going between them; another
 * program (a sync tool, a script, the CLI) may hold it for as long as it likes.
 *
 * Why a gate: a write on this thread that met that lock would wait in SQLite's busy handler, which
 * sleeps synchronously, so the whole API would stop answering until the import committed. Instead
 * the API holds back requests that may write (anything but GET, HEAD and OPTIONS) and the
 * background writers (the webhook dispatcher, the digestion scheduler) skip their turn until the
 * gate opens; reads go on, seeing the database as it was before the import (WAL). A writer the gate
 * does not know of is still correct, only slow: it waits in the busy handler as before.
 *
 * Nothing on this thread holds a transaction across an `await`, so when a holder's acquire()
 * resolves, no write of this connection is under way.
 */
export class WriteGate {
  private holder: Promise<void> | undefined;
  private opened: (() => void) | undefined;
  /** Set from a holder's acquire() (or acquireBulk()) to its end: holders take turns. */
  private owner: Promise<void> | undefined;
  private readonly lockHeldElsewhere: () => boolean;
  private readonly clock: Clock;
  private readonly limitMs: number;

  constructor(options: WriteGateOptions = {}) {
    this.lockHeldElsewhere = options.lockHeldElsewhere ?? (() => false);
    this.clock = options.clock ?? systemClock;
    this.limitMs = options.limitMs ?? STORAGE_BUSY_LIMIT_MS;
  }

  /** True while another connection is (or is about to be) writing for a holder. */
  get closed(): boolean {
    return this.holder !== undefined;
  }

  /**
   * True when a write on this thread would have to wait now: the gate is closed, or another
   * connection holds SQLite's write lock. Background writers (scheduler, dispatcher, housekeeping)
   * skip their turn on it and try again later. Never waits.
   */
  get blocked(): boolean {
    return this.holder !== undefined || this.lockHeldElsewhere();
  }

  /**
   * Resolves once a write can start at once: the gate is open and no other connection holds the
   * write lock. Waits on the event loop (timers), so reads and everything else go on meanwhile.
   * Waiting for the gate (this service's own import) has no limit; waiting for another program's
   * lock rejects with StorageBusyError once it has lasted `limitMs` (default: the documented 5 s)
   * since `sinceMs` (default: when it was first seen). Write in the same continuation, before
   * anything else can take the lock; background writers pass `limitMs: Infinity`.
   */
  async writable(options: { sinceMs?: number; limitMs?: number } = {}): Promise<void> {
    const limitMs = options.limitMs ?? this.limitMs;
    let started = options.sinceMs;
    for (let attempt = 0; ; attempt++) {
      if (this.holder) {
        await this.open();
        started = undefined; // this service's import held it: another program's lock is timed afresh
        continue;
      }
      if (!this.lockHeldElsewhere()) return;
      const now = this.clock.now();
      started ??= now;
      if (now - started >= limitMs) throw new StorageBusyError(now - started);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LOCK_POLL_MS[Math.min(attempt, LOCK_POLL_MS.length - 1)]);
        // A background writer's endless wait must not keep a stopping process alive.
        if (limitMs === Infinity) timer.unref();
      });
    }
  }

  /** Resolves once the gate is open (at once when it is); check `closed` first to skip the promise. */
  async open(): Promise<void> {
    // Another holder may take the gate between one opening and this continuation.
    while (this.holder) await this.holder;
  }

  /**
   * Closes the gate for the caller alone (holders take turns) and resolves with the function that
   * opens it again. Call that exactly once, after the other connection's transaction has ended.
   */
  async acquire(): Promise<() => void> {
    // The check and the taking run in one continuation, so two waiters cannot both take it.
    while (this.owner) await this.owner;
    const disown = this.own();
    this.close();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The next holder's continuation first: it closes the gate again before writers get past.
      disown();
      this.reopen();
    };
  }

  /**
   * Like acquire(), for a writer on another connection that writes in many short transactions (an
   * import): other holders (another import, a restore) wait until its end(), but the gate is
   * closed only during each of its transactions, so this thread's writers go between them.
   */
  async acquireBulk(): Promise<BulkTurns> {
    while (this.owner) await this.owner;
    const disown = this.own();
    let ended = false;
    return {
      take: async () => {
        // A macrotask first: the writers that give() released (their continuations are
        // microtasks) and the requests that arrived meanwhile write before the gate closes again.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (!ended) this.close();
      },
      give: () => this.reopen(),
      end: () => {
        if (ended) return;
        ended = true;
        disown();
        this.reopen();
      },
    };
  }

  /** Becomes the holder (call when there is none); returns what ends that. */
  private own(): () => void {
    let disowned!: () => void;
    this.owner = new Promise<void>((resolve) => (disowned = resolve));
    return () => {
      this.owner = undefined;
      disowned();
    };
  }

  private close(): void {
    if (this.holder) return;
    this.holder = new Promise<void>((resolve) => (this.opened = resolve));
  }

  private reopen(): void {
    const opened = this.opened;
    this.holder = undefined;
    this.opened = undefined;
    opened?.();
  }
}
