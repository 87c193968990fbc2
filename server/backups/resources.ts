import { z } from 'zod';
import { absolutePath, isoDateTime } from '../fields.js';
import { isoUtc } from '../time/tz.js';
import { BACKUP_KINDS, type BackupFile } from './files.js';
import type { BackupStatus } from './index.js';
import type { RestoreResult } from './service-restore.js';
import { defaultBackupFolder, KEEP_DAILY_MAX, KEEP_WEEKLY_MAX, type BackupSettings } from './settings.js';

/** The backup resources the API returns and accepts: schemas (also the OpenAPI document) beside their mappers. */

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const BackupSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('backup'),
      id: z.string().meta({ description: 'The file name in the backup folder, e.g. chyme-20261122T120000000Z-auto.db.' }),
      kind: z.enum(BACKUP_KINDS).meta({ description: 'auto (daily), manual (back up now), pre-migration (the database as it was before a schema upgrade), migration (after a schema upgrade), pre-restore (taken just before a restore), restore-source (a file `chyme restore FILE` copied here to restore it through the running service). Retention prunes only auto copies.' }),
      created_at: isoDateTime,
      size_bytes: z.number().int(),
      path: z.string().meta({ description: 'Absolute path of the file.' }),
    })
    .meta({ id: 'Backup' }),
);

export const BackupSettingsSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('backup_settings'),
      folder: z.string().meta({ description: 'Absolute folder backups are written to.' }),
      default_folder: z.string().meta({ description: 'The folder used when none is chosen: backups/ beside the database.' }),
      folder_is_default: z.boolean(),
      keep_daily: z.number().int().meta({ description: 'The newest backup of each of this many most recent days is kept.' }),
      keep_weekly: z.number().int().meta({ description: 'The newest backup of each of this many most recent weeks is kept.' }),
    })
    .meta({ id: 'BackupSettings' }),
);

export const BackupSettingsUpdateSchema = z.lazy(() =>
  z
    .strictObject({
      folder: absolutePath(4096)
        .nullable()
        .optional()
        .meta({ description: 'An absolute folder, or null for the default. It is created when missing and must be writable by the service (else 400 parameter_invalid).' }),
      keep_daily: z.number().int().min(1).max(KEEP_DAILY_MAX).optional(),
      keep_weekly: z.number().int().min(0).max(KEEP_WEEKLY_MAX).optional(),
    })
    .meta({ id: 'BackupSettingsUpdate' }),
);

export const BackupStatusSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('backup_status'),
      folder: z.string(),
      last_backup: BackupSchema.nullable(),
      last_attempt_at: isoDateTime.nullable(),
      next_due_at: isoDateTime,
      failing: z.boolean().meta({ description: 'True when the last backup attempt failed; last_error says why.' }),
      last_error: z
        .object({
          code: z.enum(['backup_folder_not_writable', 'backup_disk_full', 'backup_check_failed', 'backup_failed']),
          message: z.string(),
          at: isoDateTime,
        })
        .nullable(),
    })
    .meta({ id: 'BackupStatus' }),
);

export const RestoreSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('restore'),
      restored_from: z.object({
        id: z.string(),
        schema_version: z.number().int(),
        meals: z.number().int(),
        sleep_sessions: z.number().int(),
        webhook_subscriptions: z.number().int(),
      }),
      safety_backup: BackupSchema,
    })
    .meta({ id: 'Restore' }),
);

export function backupResource(b: BackupFile): z.infer<typeof BackupSchema> {
  return { object: 'backup', id: b.name, kind: b.kind, created_at: isoUtc(b.createdMs), size_bytes: b.sizeBytes, path: b.path };
}

export function backupSettingsResource(s: BackupSettings, dbPath: string): z.infer<typeof BackupSettingsSchema> {
  const fallback = defaultBackupFolder(dbPath);
  return {
    object: 'backup_settings',
    folder: s.folder ?? fallback,
    default_folder: fallback,
    folder_is_default: s.folder === null,
    keep_daily: s.keepDaily,
    keep_weekly: s.keepWeekly,
  };
}

export function backupStatusResource(s: BackupStatus): z.infer<typeof BackupStatusSchema> {
  return {
    object: 'backup_status',
    folder: s.folder,
    last_backup: s.lastBackup ? backupResource(s.lastBackup) : null,
    last_attempt_at: s.lastAttemptMs === null ? null : isoUtc(s.lastAttemptMs),
    next_due_at: isoUtc(s.nextDueMs),
    failing: s.lastError !== null,
    last_error: s.lastError ? { code: s.lastError.code, message: s.lastError.message, at: isoUtc(s.lastError.atMs) } : null,
  };
}

export function restoreResource(id: string, r: RestoreResult): z.infer<typeof RestoreSchema> {
  const c = r.restoredFrom.counts;
  return {
    object: 'restore',
    restored_from: { id, schema_version: r.restoredFrom.schemaVersion, meals: c.meals, sleep_sessions: c.sleep_sessions, webhook_subscriptions: c.webhook_subscriptions },
    safety_backup: backupResource(r.safetyBackup),
  };
}

