import { existsSync } from 'node:fs';
import { createAppContext, type AppContext } from '../app-context.js';
import { systemClock } from '../clock.js';
import { openDatabase, type Db } from '../db/connection.js';
import { createLogger } from '../logger.js';
import { backupBeforeMigration } from '../backups/index.js';
import { CommandFailed, EXIT } from './usage.js';

/**
 * Opens an existing database for a command (WAL: alongside a running server), runs `fn`, closes
 * it. Commands that read or copy data never create an empty database by mistake.
 */
export async function withExistingDatabase<T>(dbPath: string, fn: (db: Db) => T | Promise<T>): Promise<T> {
  if (!existsSync(dbPath)) {
    throw new CommandFailed(`No Chyme database at ${dbPath}. Pass --db FILE, or start Chyme once to create it.`, EXIT.refused);
  }
  const db = openCommandDatabase(dbPath);
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/** Opens the database for a command; an upgrade it brings keeps a copy of the database as it was. */
export function openCommandDatabase(dbPath: string): Db {
  return openDatabase(dbPath, { beforeMigrate: backupBeforeMigration(dbPath, createLogger(), Date.now) });
}

/** The shared context over a command's database (system clock; log lines on stderr). */
export function commandContext(db: Db): AppContext {
  return createAppContext(db, systemClock, createLogger());
}
