import { statSync } from 'node:fs';
import { createAppContext, type AppContext } from '../app-context.js';
import { systemClock } from '../clock.js';
import { isReadOnlyFile, openDatabase, type Db } from '../db/connection.js';
import { createLogger } from '../logger.js';
import { backupBeforeMigration } from '../backups/index.js';
import { getSettings } from '../db/settings.js';
import { initSettings } from '../settings.js';
import { CommandFailed, EXIT } from './usage.js';

/** Size of the file at path, or undefined when there is none. */
function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Opens an existing database for a command (WAL: alongside a running server), runs `fn`, closes
 * it. Commands that read or copy data never create a database by mistake: a missing or empty file
 * is refused, and left as it was.
 */
export async function withExistingDatabase<T>(dbPath: string, fn: (db: Db) => T | Promise<T>): Promise<T> {
  const db = openCommandDatabase(dbPath, { create: false });
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/**
 * Opens the database for a command. A missing or empty file is initialised only with `create`
 * (otherwise refused, exit 5); any other file must be a Chyme database (openDatabase refuses the
 * rest unchanged). A read-only file is opened read-only: reading commands work, a write fails as
 * SQLITE_READONLY. An upgrade it brings keeps a copy of the database as it was.
 */
export function openCommandDatabase(dbPath: string, options: { create: boolean } = { create: true }): Db {
  const size = fileSize(dbPath);
  if (!options.create && !size) {
    const why = size === 0 ? ' (the file is empty)' : '';
    throw new CommandFailed(`No Chyme database at ${dbPath}${why}. Pass --db FILE, or start Chyme once to create it.`, EXIT.refused);
  }
  const readonly = size !== undefined && isReadOnlyFile(dbPath);
  if (readonly && !size) throw new CommandFailed(`${dbPath} is empty and read-only, so no database can be made there. Make it writable, or pass another --db FILE.`, EXIT.failed);
  const db = openDatabase(dbPath, {
    readonly,
    // A command's connection lives for a moment: refreshing the planner's statistics is the
    // long-running server's job (and would wait for a writer's lock).
    optimize: false,
    beforeMigrate: backupBeforeMigration(dbPath, createLogger(), Date.now),
  });
  // A new database is made whole, as the first start makes it (an export needs the settings).
  if (!size) {
    try {
      initSettings(db, Date.now());
    } catch (err) {
      db.close();
      throw err;
    }
  }
  return db;
}

/**
 * The settings row a database made by an earlier `chyme keys create` (never served) lacks: made
 * now, as the first start would. A read-only file cannot get it.
 */
export function ensureSettings(db: Db, dbPath: string): void {
  if (getSettings(db)) return;
  if (db.readonly) throw new CommandFailed(`${dbPath} has no settings yet and is read-only. Make it writable, then retry.`, EXIT.failed);
  initSettings(db, Date.now());
}

/** The shared context over a command's database (system clock; log lines on stderr). */
export function commandContext(db: Db): AppContext {
  return createAppContext(db, systemClock, createLogger());
}
