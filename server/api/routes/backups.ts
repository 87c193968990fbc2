import { z } from 'zod';
import { BackupError, type Backups } from '../../backups/index.js';
import { BACKUP_NAME, folderProblem } from '../../backups/files.js';
import { DatabaseFileRefused } from '../../backups/inspect.js';
import {
  BackupSchema,
  backupResource,
  BackupSettingsSchema,
  backupSettingsResource,
  BackupSettingsUpdateSchema,
  BackupStatusSchema,
  backupStatusResource,
  RestoreSchema,
  restoreResource,
} from '../../backups/resources.js';
import { DatabaseInUseError } from '../../backups/restore.js';
import { RestoreBusyError, type RestoreResult } from '../../backups/service-restore.js';
import type { BackupSettings } from '../../backups/settings.js';
import { ApiError, errors } from '../errors.js';
import { defineRoute, type RouteDef } from '../route.js';
import { ErrorSchema, listOf } from '../schemas.js';

/**
 * A backup's id is its file name; the pattern documents that shape but is not enforced: like any
 * other unknown id (CONTRACT §4), a name that is not in the list names nothing and is a 404. Only a
 * listed file is ever opened, so a path in the id reaches no file.
 */
const BackupId = z.object({
  id: z.string().meta({ description: 'A backup id from GET /v1/backups.', example: 'chyme-20261122T030000000Z-auto.db', pattern: BACKUP_NAME.source }),
});

/** A restore's refusals and conflicts as API errors (docs/api.md lists the codes). */
function restoreError(err: unknown): ApiError | undefined {
  if (err instanceof DatabaseFileRefused) {
    if (err.code === 'not_found') return errors.resourceMissing('backup');
    const code = err.code === 'too_new' ? 'backup_too_new' : err.code === 'corrupt' ? 'backup_corrupt' : 'backup_not_chyme';
    return new ApiError(400, 'invalid_request_error', code, err.message, 'id');
  }
  if (err instanceof RestoreBusyError) return errors.conflict('restore_in_progress', err.message);
  if (err instanceof DatabaseInUseError) return errors.conflict('database_in_use', err.message);
  if (err instanceof BackupError) return errors.unavailable(err.code, `Nothing was restored: the safety backup of the current data failed. ${err.message}`, 60);
  return undefined;
}

export interface BackupRouteDeps {
  backups: Backups;
  dbPath: string;
  restore(sourcePath: string): Promise<RestoreResult>;
}

/** /v1/backups: the list, "back up now", status, settings and restore (all admin). */
export function backupRoutes({ backups, dbPath, restore }: BackupRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/backups',
      operationId: 'listBackups',
      summary: 'List the backups in the backup folder, newest first',
      tag: 'Backups',
      access: 'admin',
      responses: { 200: { description: 'Every backup (has_more is always false)', schema: listOf(BackupSchema, 'BackupList') } },
      handler: () => ({ body: { object: 'list', data: backups.list().map(backupResource), has_more: false } }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/backups',
      operationId: 'createBackup',
      summary: 'Back up now',
      description:
        'Takes a consistent copy with SQLite\'s online backup API, checks it (integrity_check), and renames it into the backup folder. Retention then prunes old automatic and manual copies. A failure is a 503 whose code says why (backup_folder_not_writable, backup_disk_full, backup_check_failed, backup_failed) and is shown in GET /v1/backups/status.',
      tag: 'Backups',
      access: 'admin',
      responses: { 201: { description: 'The new backup', schema: BackupSchema }, 503: { description: 'The backup failed', schema: ErrorSchema } },
      async handler() {
        try {
          return { status: 201, body: backupResource(await backups.backupNow('manual')) };
        } catch (err) {
          if (err instanceof BackupError) throw errors.unavailable(err.code, err.message, 60);
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/backups/status',
      operationId: 'getBackupStatus',
      summary: 'The last backup, the next one due, and whether backups are failing',
      tag: 'Backups',
      access: 'admin',
      responses: { 200: { description: 'Backup status', schema: BackupStatusSchema } },
      handler: () => ({ body: backupStatusResource(backups.status()) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/backups/settings',
      operationId: 'getBackupSettings',
      summary: 'Read the backup folder and retention',
      tag: 'Backups',
      access: 'admin',
      responses: { 200: { description: 'Backup settings', schema: BackupSettingsSchema } },
      handler: () => ({ body: backupSettingsResource(backups.settings(), dbPath) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/backups/settings',
      operationId: 'updateBackupSettings',
      summary: 'Change the backup folder and retention',
      description: 'A new folder is created when missing and must be writable (else 400 parameter_invalid on folder). Backups already taken stay where they are.',
      tag: 'Backups',
      access: 'admin',
      body: BackupSettingsUpdateSchema,
      responses: { 200: { description: 'The new settings', schema: BackupSettingsSchema }, 400: { description: 'Invalid', schema: ErrorSchema } },
      handler({ body }) {
        const current = backups.settings();
        const next: BackupSettings = {
          folder: body.folder === undefined ? current.folder : body.folder,
          keepDaily: body.keep_daily ?? current.keepDaily,
          keepWeekly: body.keep_weekly ?? current.keepWeekly,
        };
        if (next.folder !== null && next.folder !== current.folder) {
          const problem = folderProblem(next.folder);
          if (problem) throw errors.parameterInvalid('folder', `Cannot use this backup folder: ${problem}.`);
        }
        return { body: backupSettingsResource(backups.updateSettings(next), dbPath) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/backups/{id}/restore',
      operationId: 'restoreBackup',
      summary: 'Restore a backup into the running service',
      description:
        'Checks the backup (a Chyme database, integrity_check ok, schema version not newer than this build), backs up the current database (kind pre-restore), then swaps the backup in and reopens it. Meanwhile other requests get 503 restore_in_progress. A refused file changes nothing: 400 backup_corrupt, backup_not_chyme or backup_too_new.',
      tag: 'Backups',
      access: 'admin',
      params: BackupId,
      responses: {
        200: { description: 'Restored', schema: RestoreSchema },
        400: { description: 'The file was refused; nothing changed', schema: ErrorSchema },
        404: { description: 'No such backup: the id is not in GET /v1/backups (resource_missing)', schema: ErrorSchema },
        409: { description: 'A restore is already running, or another program has the database open', schema: ErrorSchema },
      },
      async handler({ params }) {
        const backup = backups.list().find((b) => b.name === params.id);
        if (!backup) throw errors.resourceMissing('backup', params.id);
        try {
          return { body: restoreResource(backup.name, await restore(backup.path)) };
        } catch (err) {
          throw restoreError(err) ?? err;
        }
      },
    }),
  ];
}
