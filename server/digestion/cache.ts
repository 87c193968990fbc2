import type { AppContext, DataChange } from '../app-context.js';
import type { Db } from '../db/connection.js';
import { dataVersion } from '../db/sql-api.js';
import { lowerBound, StomachMemo, type InstantWindow } from '../engine/index.js';

/**
 * The derived-data cache: the engine's results (a day's score, a day's overnight scores, a day's
 * timeline, a range's insights) computed once and kept true by writes and by time.
 *
 * Each entry remembers
 * - the input windows the engine declared for it (server/engine/days.ts): the meals and sleep
 *   sessions it was computed from are exactly the rows in those windows;
 * - a stamp of every other input it depends on (zone, day start, calibration), checked on read;
 * - `validUntil`: the first instant at which time passing alone could change it (the next meal or
 *   sleep end in its windows still in the future, or the end of today), Infinity once every
 *   instant in its windows is in the past. An entry is valid from the moment it was computed to
 *   then; should the clock ever go back (a test's clock, a corrected system clock), everything is
 *   dropped, since no entry was computed for that earlier time.
 *
 * An entry is dropped when a write touches its windows (DataChange instants, see app-context.ts),
 * on 'everything', when its stamp no longer matches, once `validUntil` has passed, or when another
 * connection changed the file (PRAGMA data_version). So a read can always trust what it is served:
 * stale derived data would be a correctness bug.
 *
 * An import's worker writes on a connection of its own, a transaction every ~25 ms, and says what
 * each changed (server/imports: foreignWriteBegins before it may write, foreignWriteCommitted
 * with the instants once it has): its commits drop only the entries whose windows hold those
 * instants, where any other connection's drops everything, so reads during an import are not all
 * computed afresh. Between the two, a commit seen but not yet described makes the cache unusable
 * (computed from the rows, nothing kept) rather than wrong. SQLite cannot say whose commit
 * data_version counted: another program committing in the moment between the worker's commit and
 * its report is taken for the worker's.
 *
 * Entries are neither served nor stored while a write transaction is open: a write's own
 * announcements read the uncommitted rows fresh, and nothing derived from rows that might still
 * roll back is ever kept.
 */

export interface CachedEntry<T> {
  value: T;
  meals: InstantWindow;
  sleeps: InstantWindow;
  validUntil: number;
  stamp: string;
}

/** Above this many entries the oldest are dropped (about 25 years of days of every kind). */
const MAX_ENTRIES = 40_000;

export class DerivedCache {
  private readonly entries = new Map<string, CachedEntry<unknown>>();
  private dataVersion: number | undefined;
  /** Between foreignWriteBegins and foreignWriteCommitted: another connection may commit, and say what later. */
  private foreignWriting = false;
  private latestNow = -Infinity;
  /** Grows whenever entries are dropped by a write, another connection or time going back. */
  generation = 0;
  /**
   * The last few stomach runs by their exact input (engine/state.ts), for the state and the
   * windows, which mostly run the same meals (a write's announcements, the scheduler's every
   * second). Keyed by the whole input, so no write makes an entry wrong and a write transaction
   * may use it too; dropped with everything else.
   */
  readonly stomachs = new StomachMemo();

  constructor(private readonly db: Db) {}

  /** False inside a write transaction: then reads compute from the rows and keep nothing. */
  usable(now: number): boolean {
    if (this.db.inTransaction) return false;
    if (now < this.latestNow) this.clear();
    this.latestNow = now;
    // data_version changes when another connection (an import's worker, the CLI, a restore tool)
    // commits to the file.
    const version = dataVersion(this.db);
    if (version !== this.dataVersion) {
      // The worker's commit, whose instants are on their way: nothing is served or kept until then.
      if (this.foreignWriting) return false;
      this.clear();
      this.dataVersion = version;
    }
    return true;
  }

  /**
   * Another connection (an import's worker) may commit now, and will say what it changed. Any
   * commit seen before this is not its own (it writes only once told to, after this call).
   */
  foreignWriteBegins(): void {
    if (!this.db.inTransaction) {
      const version = dataVersion(this.db);
      if (version !== this.dataVersion) {
        this.clear();
        this.dataVersion = version;
      }
    }
    this.foreignWriting = true;
  }

  /**
   * That connection's transaction is over (committed or not) and changed `change`: the entries it
   * touches are dropped, and the file's data_version, as read now, is taken as explained.
   */
  foreignWriteCommitted(change: DataChange): void {
    this.foreignWriting = false;
    this.invalidate(change);
    if (!this.db.inTransaction) this.dataVersion = dataVersion(this.db);
  }

  get<T>(key: string, stamp: string, now: number): T | undefined {
    if (this.db.inTransaction) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.stamp !== stamp || now >= entry.validUntil) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, entry: CachedEntry<T>): void {
    if (this.db.inTransaction) return;
    if (this.entries.size >= MAX_ENTRIES) {
      let drop = MAX_ENTRIES / 10;
      for (const k of this.entries.keys()) {
        this.entries.delete(k);
        if (--drop === 0) break;
      }
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  /** Drops every entry whose input windows contain an instant the write changed. */
  invalidate(change: DataChange): void {
    if (change === 'everything') {
      this.clear();
      return;
    }
    // Sorted: an import's transaction reports a hundred instants or more, and each entry's window is looked up.
    const meals = [...(change.mealTimes ?? [])].sort((x, y) => x - y);
    const sleeps = [...(change.sleepEnds ?? [])].sort((x, y) => x - y);
    if (meals.length === 0 && sleeps.length === 0) return;
    this.generation++;
    const inside = (w: InstantWindow, sorted: readonly number[]) => {
      const i = lowerBound(sorted, w.from);
      return i < sorted.length && sorted[i]! <= w.to;
    };
    for (const [key, entry] of this.entries) {
      if (inside(entry.meals, meals) || inside(entry.sleeps, sleeps)) this.entries.delete(key);
    }
  }

  private clear(): void {
    this.entries.clear();
    this.stomachs.clear();
    this.generation++;
  }

  /** Every live key (tests compare each cached value with a fresh computation). */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  peek<T>(key: string): CachedEntry<T> | undefined {
    return this.entries.get(key) as CachedEntry<T> | undefined;
  }
}

const caches = new WeakMap<AppContext, DerivedCache>();

/**
 * Gives the service a derived-data cache, invalidated through the one path every writer already
 * takes (notifyDataChanged → app.hooks.afterDataChange). Without it (unit tests that build a bare
 * AppContext) every read computes from the rows.
 */
export function attachDerivedCache(app: AppContext): DerivedCache {
  const cache = new DerivedCache(app.db);
  caches.set(app, cache);
  app.hooks.afterDataChange.push((_emit, change) => caches.get(app)?.invalidate(change));
  // A restore swapped the database under the service: nothing derived from the old file holds.
  app.hooks.databaseReplaced.push(() => caches.set(app, new DerivedCache(app.db)));
  return cache;
}

/** The cache to read through now, or undefined (none attached, or inside a write transaction). */
export function usableCache(app: AppContext, now: number): DerivedCache | undefined {
  const cache = caches.get(app);
  return cache?.usable(now) ? cache : undefined;
}

export function derivedCacheOf(app: AppContext): DerivedCache | undefined {
  return caches.get(app);
}

/** The first instant of `sorted` inside window `w` and after `now`, or Infinity. */
export function nextInstantIn(sorted: readonly number[], w: InstantWindow, now: number): number {
  const i = lowerBound(sorted, Math.max(now + 1, w.from));
  return i < sorted.length && sorted[i]! <= w.to ? sorted[i]! : Infinity;
}
