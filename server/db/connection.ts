import Database from 'better-sqlite3';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseTooNewError, migrate, schemaVersion } from './migrate.js';
import { migrations as allMigrations, type Migration } from './migrations.js';
import type { SqlDatabase } from './sql-api.js';

/** A connection of the service: better-sqlite3's, a superset of the SQL API the table modules use. */
export type Db = Database.Database;
// Checked here so that a change of either type that breaks the table modules on Node fails to compile.
const nodeImplementsSqlApi = (db: Db): SqlDatabase => db;
void nodeImplementsSqlApi;

// The CLI, backups and tests take these from the Node connection's module, as before the move.
export { DatabaseTooNewError, migrate, schemaVersion };

/**
 * A file that is not a Chyme database: another program's SQLite database, or not SQLite at all.
 * Nothing was written to it; `code` is SQLite's (SQLITE_NOTADB) when it is not SQLite.
 */
export class NotChymeDatabaseError extends Error {
  constructor(readonly path: string, readonly detail: string, readonly code?: string) {
    super(`${path} is not a Chyme database (${detail}); nothing was changed. Check --db, or move the file away to start a new database there.`);
    this.name = 'NotChymeDatabaseError';
  }
}

/** A database file this process may not write (no write permission); nothing was changed. */
export class DatabaseReadOnlyError extends Error {
  readonly code = 'SQLITE_READONLY';
  constructor(readonly path: string) {
    super(`${path} is read-only (SQLITE_READONLY); nothing was changed. Make the file and its folder writable (chmod u+w), then retry.`);
    this.name = 'DatabaseReadOnlyError';
  }
}

/**
 * The tables every Chyme database has had since schema version 1. With a schema version of 1 or
 * more they are what makes a file a Chyme database (databases made before Chyme recorded anything
 * else of its own must keep opening).
 */
export const CHYME_TABLES = ['settings', 'meals', 'sleep_sessions', 'api_keys', 'events', 'service_state'] as const;

/**
 * True when this process must not write the file: it has no write permission bit at all (honoured
 * even for root, who could write it anyway: somebody marked it read-only), or no write access.
 */
export function isReadOnlyFile(path: string): boolean {
  try {
    if ((statSync(path).mode & 0o222) === 0) return true;
    accessSync(path, constants.W_OK);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EACCES' || (err as NodeJS.ErrnoException).code === 'EROFS' || (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface OpenOptions {
  /** Path to a better-sqlite3 native addon built for another ABI (Electron). */
  nativeBinding?: string;
  readonly?: boolean;
  migrations?: Migration[];
  /**
   * Runs once before the first pending migration of a database that already has a schema (an
   * upgrade), e.g. to keep a copy of it as it was. Not run for a new, empty file.
   */
  beforeMigrate?: (db: Db, fromVersion: number) => void;
  /**
   * Refreshes the query planner's statistics at open (default true). A second, short-lived
   * connection to a file the service already opened (an import's worker) skips it.
   */
  optimize?: boolean;
}

/**
 * Opens (creating if needed) the Chyme database and brings its schema up to date.
 *
 * - WAL: readers never block the writer, so the CLI can create keys while the server runs.
 * - synchronous=FULL: every committed transaction is on disk before the call returns. Chyme's
 *   writes are human-rate (meals, settings), so the fsync cost is small, and "a logged meal is
 *   never lost on power failure" is worth it. The webhook dispatcher's attempt records are the
 *   exception (relaxedCommit): they come by the thousand and losing one only repeats a delivery.
 * - busy_timeout: a second process (CLI) waits for the writer instead of failing (5 s; the
 *   running service's connection waits on the event loop instead, see neverWaitInBusyHandler).
 */
const STATEMENT_CACHE_LIMIT = 500;

/** How long a connection waits for another one's write lock (docs/api.md: storage_busy after 5 s). */
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * For the running service's connection, once its start-up writes are done: a write that meets
 * another connection's lock fails at once (SQLITE_BUSY) instead of waiting in SQLite's busy
 * handler, which sleeps on the only thread and so stopped every request. Its writers wait on the
 * event loop instead (write-gate.ts) and background writers try again later.
 */
export function neverWaitInBusyHandler(db: Db): Db {
  db.pragma('busy_timeout = 0');
  return db;
}

/**
 * SQLite's page cache for a connection, in KiB. better-sqlite3 builds SQLite with 16 MB
 * (SQLITE_DEFAULT_CACHE_SIZE=-16000), and the cache only fills: on a long-running server it grew
 * with every page the history and the webhook outbox touched, which the soak run saw as the main
 * thread's malloc heap rising ~0.6 MB a minute for 15 minutes (page cache, by heaptrack;
 * docs/performance.md, "Memory"). The pages that matter are few (the indexes' upper levels,
 * the recent days; derived data is cached above SQLite), and a page the cache lacks is one read
 * from the OS's file cache.
 */
export const PAGE_CACHE_KIB = 4096;

/**
 * Makes db.prepare reuse a statement per SQL text. Compiling a statement cost more than running
 * it for the API's small reads (a tenth of a one-meal request's CPU). Safe because no module
 * iterates a statement or switches its mode (pluck, raw, expand), which would leak to the next
 * user of the same text; SQLite re-prepares a cached statement itself after a schema change.
 */
function cacheStatements(db: Db): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      if (cache.size >= STATEMENT_CACHE_LIMIT) cache.clear(); // SQL built with a varying number of placeholders
      statement = prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  }) as Db['prepare'];
}

/**
 * Refuses, before anything is written, a file that is neither new nor a Chyme database. "New" is
 * a missing or empty file, or an SQLite database without a single schema object and version 0:
 * only those are initialised. Reads only (SQLite writes nothing to answer these queries).
 */
function refuseForeignFile(db: Db, path: string): void {
  let names: string[];
  let version: number;
  try {
    names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    version = schemaVersion(db);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB') throw new NotChymeDatabaseError(path, `not an SQLite database file: ${code}`, code);
    throw err;
  }
  if (names.length === 0 && version === 0) {
    const objects = db.prepare('SELECT count(*) FROM sqlite_master').pluck().get() as number;
    if (objects === 0) return;
  }
  const tables = new Set(names);
  if (version >= 1 && CHYME_TABLES.every((t) => tables.has(t))) return;
  const shown = names.filter((n) => !n.startsWith('sqlite_')).slice(0, 5);
  const more = names.length > shown.length ? ', …' : '';
  throw new NotChymeDatabaseError(path, shown.length === 0 ? 'an SQLite database without Chyme\'s tables' : `an SQLite database with the tables ${shown.join(', ')}${more}`);
}

export function openDatabase(path: string, options: OpenOptions = {}): Db {
  const onDisk = path !== ':memory:';
  const creating = onDisk && !options.readonly && !existsSync(path);
  const binding = options.nativeBinding ? { nativeBinding: options.nativeBinding } : {};
  if (onDisk && !creating && !options.readonly && isReadOnlyFile(path)) {
    // Another program's file says so even when read-only; a read-only Chyme database is refused
    // here, before SQLite opens it for writing and fails at some later write.
    try {
      const probe = new Database(path, { readonly: true, ...binding });
      try {
        refuseForeignFile(probe, path);
      } finally {
        probe.close();
      }
    } catch (err) {
      if (err instanceof NotChymeDatabaseError) throw err;
    }
    throw new DatabaseReadOnlyError(path);
  }
  // A shared computer: the history is the owner's alone. Folders made here are 0700 and a new
  // database file 0600 (SQLite gives its -wal and -shm files the database file's mode).
  if (onDisk) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { ...binding, ...(options.readonly ? { readonly: true } : {}) });
  try {
    if (creating && process.platform !== 'win32') chmodSync(path, 0o600);
    db.pragma(`busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
    if (onDisk) refuseForeignFile(db, path);
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
    }
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    const list = options.migrations ?? allMigrations;
    // A read-only connection cannot bring an older schema up to date (nor back it up first).
    if (options.readonly && onDisk && schemaVersion(db) < list.reduce((max, m) => Math.max(max, m.version), 0)) throw new DatabaseReadOnlyError(path);
    migrate(db, list, options.beforeMigrate);
    // Keeps the query planner's statistics current (SQLite's recommendation for long-lived
    // connections: this mask at open, plain optimize periodically). Without them SQLite sorted a
    // five-year meal history to page it instead of walking the time index (35 ms vs 1.5 ms).
    if (!options.readonly && options.optimize !== false) db.pragma('optimize = 0x10002');
    cacheStatements(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

export { relaxedCommit } from './commit.js';

/** True for SQLite's "another connection holds the lock" (SQLITE_BUSY and its extended codes). */
export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/**
 * True when another connection (another program, an import's worker) holds the database's write
 * lock right now, so a write here would have to wait. Takes the lock and lets it go at once
 * (BEGIN IMMEDIATE, ROLLBACK: no page is written); call it only on a connection whose busy
 * timeout is 0, or it waits that long when the answer is yes. False inside this connection's own
 * transaction, and for read-only and in-memory databases (no other connection can hold them).
 */
export function writeLockHeldElsewhere(db: Db): boolean {
  if (!db.open || db.inTransaction || db.readonly || db.memory) return false;
  try {
    db.prepare('BEGIN IMMEDIATE').run();
  } catch (err) {
    if (isBusyError(err)) return true;
    throw err;
  }
  db.prepare('ROLLBACK').run();
  return false;
}

// In sql-api.ts, so that what runs on the phone's connection too does not load better-sqlite3.
export { dataVersion } from './sql-api.js';
