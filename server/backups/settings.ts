import { dirname, join } from 'node:path';
import type { Db } from '../db/connection.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';

/** The user's backup choices, kept in the database they protect. */
export interface BackupSettings {
  /** Absolute folder; null means the default, a `backups/` folder beside the database. */
  folder: string | null;
  keepDaily: number;
  keepWeekly: number;
}

/** A week of daily copies and a month of weekly ones: small, and enough to go back past a bad week. */
export const BACKUP_DEFAULTS: BackupSettings = { folder: null, keepDaily: 7, keepWeekly: 4 };
export const KEEP_DAILY_MAX = 365;
export const KEEP_WEEKLY_MAX = 520;

const SETTINGS_KEY = 'backups.settings';

export function defaultBackupFolder(dbPath: string): string {
  return join(dirname(dbPath), 'backups');
}

export function readBackupSettings(db: Db): BackupSettings {
  return { ...BACKUP_DEFAULTS, ...readServiceState<Partial<BackupSettings>>(db, SETTINGS_KEY) };
}

export function saveBackupSettings(db: Db, settings: BackupSettings): void {
  writeServiceState(db, SETTINGS_KEY, settings);
}

export function backupFolder(db: Db, dbPath: string): string {
  return readBackupSettings(db).folder ?? defaultBackupFolder(dbPath);
}
