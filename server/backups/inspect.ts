import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { CHYME_TABLES } from '../db/connection.js';
import { migrations } from '../db/migrations.js';

/** What `chyme check` and a restore report about a database file. */
export interface DatabaseReport {
  path: string;
  sizeBytes: number;
  schemaVersion: number;
  /** Highest schema version this build knows. */
  supportedVersion: number;
  /** A refused file never gets a report, so a report's integrity is always ok. */
  integrity: 'ok';
  counts: { meals: number; sleep_sessions: number; webhook_subscriptions: number; api_keys: number; events: number; webhook_deliveries_pending: number };
  firstMealAt: number | null;
  lastMealAt: number | null;
}

export type RefusalCode = 'not_found' | 'not_a_database' | 'not_chyme' | 'corrupt' | 'too_new';

/** A file that must not be restored (or checked further), with a message for a person. */
export class DatabaseFileRefused extends Error {
  constructor(readonly code: RefusalCode, message: string) {
    super(message);
    this.name = 'DatabaseFileRefused';
  }
}

export const LATEST_SCHEMA_VERSION = migrations.reduce((max, m) => Math.max(max, m.version), 0);

function count(db: Database.Database, sql: string): number {
  return (db.prepare(sql).pluck().get() as number | null) ?? 0;
}

/** What `PRAGMA integrity_check` found wrong (nothing when the database is whole). */
export function integrityProblems(db: Database.Database): string[] {
  try {
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.length === 1 && rows[0]!.integrity_check === 'ok' ? [] : rows.map((r) => r.integrity_check);
  } catch (err) {
    return [(err as Error).message];
  }
}

/**
 * Opens a database file read-only and checks it is a whole Chyme database this build can open:
 * SQLite, Chyme's tables, `PRAGMA integrity_check` ok, schema version not newer than this build's.
 * Throws DatabaseFileRefused otherwise. Never writes to the file.
 */
export function inspectDatabaseFile(path: string, options: { nativeBinding?: string } = {}): DatabaseReport {
  let sizeBytes: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new DatabaseFileRefused('not_found', `${path} is not a file.`);
    sizeBytes = st.size;
  } catch (err) {
    if (err instanceof DatabaseFileRefused) throw err;
    throw new DatabaseFileRefused('not_found', `Cannot read ${path}: ${(err as Error).message}`);
  }
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}) });
  } catch (err) {
    throw new DatabaseFileRefused('not_a_database', `${path} cannot be opened as a database: ${(err as Error).message}`);
  }
  try {
    let tables: Set<string>;
    let schemaVersion: number;
    try {
      tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
      schemaVersion = db.pragma('user_version', { simple: true }) as number;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_NOTADB') throw new DatabaseFileRefused('not_a_database', `${path} is not an SQLite database.`);
      throw new DatabaseFileRefused('corrupt', `${path} is damaged: ${(err as Error).message}`);
    }
    const missing = CHYME_TABLES.filter((t) => !tables.has(t));
    if (missing.length > 0 || schemaVersion < 1) {
      throw new DatabaseFileRefused('not_chyme', `${path} is an SQLite database but not a Chyme one (missing tables: ${missing.join(', ') || 'none; no schema version'}).`);
    }
    if (schemaVersion > LATEST_SCHEMA_VERSION) {
      throw new DatabaseFileRefused(
        'too_new',
        `${path} was written by a newer Chyme (schema version ${schemaVersion}; this build knows up to ${LATEST_SCHEMA_VERSION}). Update Chyme to use it.`,
      );
    }
    const problems = integrityProblems(db);
    if (problems.length > 0) {
      throw new DatabaseFileRefused('corrupt', `${path} failed SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`);
    }
    const has = (t: string) => tables.has(t);
    return {
      path,
      sizeBytes,
      schemaVersion,
      supportedVersion: LATEST_SCHEMA_VERSION,
      integrity: 'ok',
      counts: {
        meals: count(db, 'SELECT count(*) FROM meals'),
        sleep_sessions: count(db, 'SELECT count(*) FROM sleep_sessions'),
        webhook_subscriptions: has('webhook_subscriptions') ? count(db, 'SELECT count(*) FROM webhook_subscriptions') : 0,
        api_keys: count(db, 'SELECT count(*) FROM api_keys WHERE revoked_ms IS NULL AND internal = 0'),
        events: count(db, 'SELECT count(*) FROM events'),
        webhook_deliveries_pending: has('webhook_deliveries') ? count(db, "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'") : 0,
      },
      firstMealAt: db.prepare('SELECT min(timestamp_ms) FROM meals').pluck().get() as number | null,
      lastMealAt: db.prepare('SELECT max(timestamp_ms) FROM meals').pluck().get() as number | null,
    };
  } finally {
    db.close();
  }
}
