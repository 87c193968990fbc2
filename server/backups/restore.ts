import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { openDatabase, type Db } from '../db/connection.js';
import { fsyncDir } from './write.js';

/** Another process still has the database open, so swapping the file under it is refused. */
export class DatabaseInUseError extends Error {
  constructor(dbPath: string) {
    super(
      `Another program still has ${dbPath} open (its write-ahead log ${dbPath}-wal is present), so the file was not replaced. ` +
        'Stop the other Chyme (or the command using it) and try again.',
    );
    this.name = 'DatabaseInUseError';
  }
}

function walInUse(dbPath: string): boolean {
  const wal = `${dbPath}-wal`;
  return existsSync(wal) && statSync(wal).size > 0;
}

/**
 * A restore brings back data, not old credentials: the API keys (the desktop app's own among
 * them) and browser sign-ins in force now replace those in the restored copy, so nothing that
 * works now stops working, and no key revoked since the backup comes back. Both databases are
 * at this build's schema here, so their tables have the same columns.
 */
function keepAccess(restored: Db, currentPath: string): void {
  restored.prepare('ATTACH DATABASE ? AS current').run(currentPath);
  try {
    restored.transaction(() => {
      for (const table of ['api_keys', 'ui_tokens']) {
        restored.exec(`DELETE FROM main.${table}; INSERT INTO main.${table} SELECT * FROM current.${table};`);
      }
    })();
  } finally {
    restored.exec('DETACH DATABASE current');
  }
}

/**
 * Makes the (already checked) database at `sourcePath` the one at `dbPath`: a compact copy of the
 * source (VACUUM INTO reads through the source's own write-ahead log), migrated to this build's
 * schema, given the current access (keepAccessFrom), flushed, then renamed over the database in
 * one atomic step. Until that rename the
 * current database is untouched. The caller must have closed its own connection first; a write-
 * ahead log left by anyone else means the file is in use, and nothing is replaced.
 */
export function installDatabaseFile(
  sourcePath: string,
  dbPath: string,
  options: { nativeBinding?: string; keepAccessFrom?: string } = {},
): void {
  const staging = `${dbPath}.restoring`;
  rmSync(staging, { force: true });
  rmSync(`${staging}-wal`, { force: true });
  rmSync(`${staging}-shm`, { force: true });
  const binding = options.nativeBinding ? { nativeBinding: options.nativeBinding } : {};
  try {
    const source = new Database(sourcePath, { readonly: true, fileMustExist: true, ...binding });
    try {
      source.prepare('VACUUM INTO ?').run(staging);
    } finally {
      source.close();
    }
    // Brings an older backup up to this build's schema now, so a failed migration fails here,
    // before anything is replaced.
    const migrated = openDatabase(staging, binding);
    try {
      if (options.keepAccessFrom) keepAccess(migrated, options.keepAccessFrom);
      migrated.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      migrated.close();
    }
    const fd = openSync(staging, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (walInUse(dbPath)) throw new DatabaseInUseError(dbPath);
    // The restored file gets the permissions the database had (private unless the user chose otherwise).
    chmodSync(staging, existsSync(dbPath) ? statSync(dbPath).mode & 0o777 : 0o600);
    renameSync(staging, dbPath);
    fsyncDir(dirname(dbPath));
    // The old file's shared-memory index must not be mistaken for the new file's.
    rmSync(`${dbPath}-shm`, { force: true });
  } finally {
    rmSync(staging, { force: true });
    rmSync(`${staging}-wal`, { force: true });
    rmSync(`${staging}-shm`, { force: true });
  }
}
