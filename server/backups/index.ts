import { rmSync } from 'node:fs';
import type { AppContext } from '../app-context.js';
import { schemaVersion, type Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { hasMeals } from '../db/meals.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { hasSleep } from '../db/sleep.js';
import { countSubscriptions } from '../db/webhook-subscriptions.js';
import { currentSettings } from '../settings.js';
import { backupsToPrune, listBackups, type BackupFile, type BackupKind } from './files.js';
import { backupFolder, readBackupSettings, saveBackupSettings, type BackupSettings } from './settings.js';
import { BackupError, writeBackup, writeBackupSync, type BackupErrorCode } from './write.js';

export { BackupError, type BackupErrorCode } from './write.js';
export type { BackupFile, BackupKind } from './files.js';

/** One automatic backup a day, by the service's clock. */
export const BACKUP_INTERVAL_MS = 24 * 3600_000;
/** After a failed automatic backup, the next try comes this much later (not every check). */
export const BACKUP_RETRY_MS = 3600_000;
/** How often the service looks whether a backup is due. */
export const BACKUP_CHECK_INTERVAL_MS = 60_000;

const LAST_ERROR_KEY = 'backups.last_error';
const SCHEMA_KEY = 'backups.schema_version';

export interface BackupFailure {
  code: BackupErrorCode;
  message: string;
  atMs: number;
}

export interface BackupStatus {
  folder: string;
  lastBackup: BackupFile | null;
  lastAttemptMs: number | null;
  lastError: BackupFailure | null;
  nextDueMs: number;
}

export interface BackupsOptions {
  dbPath: string;
  nativeBinding?: string;
  /** How often to look whether a backup is due (default 60 s); tests call tick() instead. */
  checkIntervalMs?: number;
  /** Take automatic (daily, after-migration) backups; default true. */
  automatic?: boolean;
}

export interface Backups {
  name: 'backups';
  folder(): string;
  list(): BackupFile[];
  status(): BackupStatus;
  settings(): BackupSettings;
  updateSettings(next: BackupSettings): BackupSettings;
  /** Takes a backup now (queued behind one already running); throws BackupError. */
  backupNow(kind?: BackupKind): Promise<BackupFile>;
  /** Takes the automatic backup when one is due; resolves with it, or undefined when none was due. */
  tick(): Promise<BackupFile | undefined>;
  start(): void;
  stop(): Promise<void>;
  pause(): Promise<void>;
  resume(): void;
}

/**
 * Automatic, checked backups of the database into the user's backup folder (default `backups/`
 * beside the database): once a day and after a migration, each written by writeBackup (temporary
 * name, integrity check, fsync, rename), then retention keeps N daily and M weekly copies. The
 * folder is the list of backups. A failure is recorded (and shown in the app) and retried hourly.
 */
export function createBackups(app: AppContext, options: BackupsOptions): Backups {
  const checkEvery = options.checkIntervalMs ?? BACKUP_CHECK_INTERVAL_MS;
  const automatic = options.automatic ?? true;
  let timer: NodeJS.Timeout | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let lastAttemptMs: number | null = null;
  let lastError: BackupFailure | null = null;
  let paused = false;

  const folder = () => backupFolder(app.db, options.dbPath);

  function remember(key: string, value: unknown): void {
    try {
      writeServiceState(app.db, key, value);
    } catch (err) {
      // The database itself may be what is failing (disk full); the status stays in memory.
      app.log.warn('could not record the backup status', { error: String(err) });
    }
  }

  function prune(dir: string): void {
    const s = readBackupSettings(app.db);
    for (const old of backupsToPrune(listBackups(dir), s.keepDaily, s.keepWeekly, currentSettings(app).timezone)) {
      rmSync(old.path, { force: true });
    }
  }

  async function run(kind: BackupKind): Promise<BackupFile> {
    const dir = folder();
    const now = app.clock.now();
    lastAttemptMs = now;
    try {
      const file = await writeBackup(app.db, dir, kind, now, options.nativeBinding ? { nativeBinding: options.nativeBinding } : {});
      lastError = null;
      remember(LAST_ERROR_KEY, null);
      remember(SCHEMA_KEY, schemaVersion(app.db));
      try {
        prune(dir);
      } catch (err) {
        app.log.warn('could not remove old backups', { folder: dir, error: String(err) });
      }
      app.log.info('backup written', { file: file.path, kind, bytes: file.sizeBytes });
      return file;
    } catch (err) {
      const failure = err instanceof BackupError ? err : new BackupError('backup_failed', String(err));
      lastError = { code: failure.code, message: failure.message, atMs: now };
      remember(LAST_ERROR_KEY, lastError);
      app.log.error('backup failed', { folder: dir, code: failure.code, error: failure.message });
      throw failure;
    }
  }

  function enqueue(kind: BackupKind): Promise<BackupFile> {
    const next = queue.then(() => run(kind));
    queue = next.catch(() => undefined);
    return next;
  }

  function newestBackup(): BackupFile | null {
    try {
      return listBackups(folder())[0] ?? null;
    } catch {
      return null;
    }
  }

  /** Nothing to protect yet in a database with no meals, sleep or webhooks. */
  function holdsUserData(): boolean {
    return hasMeals(app.db) || hasSleep(app.db) || countSubscriptions(app.db) > 0;
  }

  function nextDueMs(): number {
    const last = newestBackup();
    const due = last ? last.createdMs + BACKUP_INTERVAL_MS : app.clock.now();
    return lastError && lastAttemptMs !== null ? Math.max(due, lastAttemptMs + BACKUP_RETRY_MS) : due;
  }

  async function tick(): Promise<BackupFile | undefined> {
    if (paused || !holdsUserData() || app.clock.now() < nextDueMs()) return undefined;
    return enqueue('auto');
  }

  function loop(): void {
    tick().catch(() => undefined); // recorded in the status by run()
  }

  function startTimer(): void {
    if (!automatic) return;
    timer = setInterval(loop, checkEvery);
    timer.unref();
  }

  return {
    name: 'backups',
    folder,
    list: () => listBackups(folder()),
    status: () => ({ folder: folder(), lastBackup: newestBackup(), lastAttemptMs, lastError, nextDueMs: nextDueMs() }),
    settings: () => readBackupSettings(app.db),
    updateSettings(next) {
      saveBackupSettings(app.db, next);
      return readBackupSettings(app.db);
    },
    backupNow: (kind = 'manual') => enqueue(kind),
    tick,
    start() {
      lastError = readServiceState<BackupFailure | null>(app.db, LAST_ERROR_KEY) ?? null;
      lastAttemptMs = lastError?.atMs ?? null;
      if (automatic) {
        // After a migration (the schema moved since the last backup), take one at once.
        const backedUpAt = readServiceState<number>(app.db, SCHEMA_KEY);
        if (backedUpAt !== undefined && backedUpAt < schemaVersion(app.db)) enqueue('migration').catch(() => undefined);
        else loop();
      }
      startTimer();
    },
    async pause() {
      paused = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await queue;
    },
    resume() {
      paused = false;
      lastError = readServiceState<BackupFailure | null>(app.db, LAST_ERROR_KEY) ?? lastError;
      startTimer();
    },
    async stop() {
      paused = true;
      if (timer) clearInterval(timer);
      await queue;
    },
  };
}

/**
 * For openDatabase's beforeMigrate: a copy of the database exactly as it was before an upgrade
 * changes its schema (kind pre-migration, never pruned), so a bad upgrade can be undone. Should
 * the copy fail, the upgrade goes on (each migration is transactional) and the failure is logged.
 */
export function backupBeforeMigration(
  dbPath: string,
  log: Logger,
  nowMs: () => number,
  options: { nativeBinding?: string } = {},
): (db: Db, fromVersion: number) => void {
  return (db, fromVersion) => {
    const dir = backupFolder(db, dbPath);
    try {
      const file = writeBackupSync(db, dir, 'pre-migration', nowMs(), options);
      log.info('backed up before upgrading the database', { file: file.path, from_version: fromVersion });
    } catch (err) {
      log.error('could not back up before upgrading the database; upgrading anyway', { folder: dir, error: String((err as Error)?.message ?? err) });
    }
  };
}
