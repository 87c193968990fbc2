import type { AppContext } from '../app-context.js';
import { neverWaitInBusyHandler, openDatabase, type Db } from '../db/connection.js';
import type { Backups } from './index.js';
import type { BackupFile } from './files.js';
import { inspectDatabaseFile, type DatabaseReport } from './inspect.js';
import { installDatabaseFile } from './restore.js';

/** A second restore while one runs. */
export class RestoreBusyError extends Error {
  constructor() {
    super('A restore is already running; wait for it to finish.');
    this.name = 'RestoreBusyError';
  }
}

export interface RestoreResult {
  /** What the restored file held (checked before anything changed). */
  restoredFrom: DatabaseReport;
  /** The copy of the database as it was just before the restore. */
  safetyBackup: BackupFile;
}

/** What a running service lends a restore: its context and a way to hold and resume its work. */
export interface RestoreHost {
  app: AppContext;
  dbPath: string;
  nativeBinding?: string;
  backups: Backups;
  pause(): Promise<void>;
  reopen(db: Db): void;
  resume(): void;
}

/**
 * Restore through the running service: check the file (refused files change nothing), answer
 * requests with 503 restore_in_progress, hold the dispatcher, scheduler and backups, back up the
 * current database (a failure here aborts with nothing changed), close it, swap the file in
 * atomically, reopen it, let every subsystem drop what it derived from the old one, and resume.
 */
export async function restoreInService(host: RestoreHost, sourcePath: string): Promise<RestoreResult> {
  const binding = host.nativeBinding ? { nativeBinding: host.nativeBinding } : {};
  const restoredFrom = inspectDatabaseFile(sourcePath, binding);
  const { app } = host;
  app.unavailable = { code: 'restore_in_progress', message: 'A backup is being restored into Chyme; try again in a few seconds.' };
  let releaseWrites: (() => void) | undefined;
  let installed = false;
  try {
    await host.pause();
    // An import's worker writes on a connection of its own: the swap waits for its transaction to
    // end, and an import that finishes parsing meanwhile writes into the restored file afterwards.
    // Taken after pause(), which waits for the dispatcher's last turn (held back by a closed gate).
    releaseWrites = await app.writes.acquire();
    const safetyBackup = await host.backups.backupNow('pre-restore');
    app.db.close();
    try {
      installDatabaseFile(sourcePath, host.dbPath, { ...binding, keepAccessFrom: host.dbPath });
      installed = true;
    } finally {
      // Reopened whatever happened: the restored file, or the untouched old one.
      host.reopen(neverWaitInBusyHandler(openDatabase(host.dbPath, binding)));
    }
    app.log.info('database restored', { from: sourcePath, safety_backup: safetyBackup.path });
    return { restoredFrom, safetyBackup };
  } finally {
    releaseWrites?.();
    host.resume();
    app.unavailable = null;
    // Whoever asked for it (the app's Backups card, `chyme restore`, another client), every open
    // event stream hears of it, so each client refreshes what it shows; only now, once requests
    // are answered again.
    if (installed) app.bus.announceRestored();
  }
}
