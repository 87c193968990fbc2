import { existsSync, statSync } from 'node:fs';
import { listBackups } from '../../backups/files.js';
import { DatabaseFileRefused, inspectDatabaseFile, type DatabaseReport } from '../../backups/inspect.js';
import { runningServer } from '../../backups/instance.js';
import { backupFolder } from '../../backups/settings.js';
import Database from 'better-sqlite3';
import { readServiceState } from '../../db/service-state.js';
import { isoUtc } from '../../time/tz.js';
import { CommandFailed, dbPathFrom, EXIT, parseFlags, type Command } from '../usage.js';

export const checkCommand: Command = {
  name: 'check',
  usage: ['chyme check [--json] [--db FILE]'],
  run: check,
};

interface Extras {
  backupFolder: string;
  lastBackup: { path: string; created_at: string } | null;
  backupFailing: { code: string; message: string } | null;
  runningServer: string | null;
}

/** Facts about backups and a running server, read without writing anything. */
function extras(dbPath: string): Extras {
  // Raw and read-only: check never migrates or writes anything.
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const folder = backupFolder(db, dbPath);
    const last = listBackups(folder)[0];
    const failing = readServiceState<{ code: string; message: string } | null>(db, 'backups.last_error') ?? null;
    return {
      backupFolder: folder,
      lastBackup: last ? { path: last.path, created_at: isoUtc(last.createdMs) } : null,
      backupFailing: failing ? { code: failing.code, message: failing.message } : null,
      runningServer: runningServer(db)?.url ?? null,
    };
  } finally {
    db.close();
  }
}

function describe(r: DatabaseReport, x: Extras): string {
  const c = r.counts;
  const span = r.firstMealAt === null ? 'no meals yet' : `meals from ${isoUtc(r.firstMealAt)} to ${isoUtc(r.lastMealAt!)}`;
  return [
    `Database ${r.path}: integrity check ok, schema version ${r.schemaVersion} (this build: ${r.supportedVersion}), ${r.sizeBytes} bytes.`,
    `Holds ${c.meals} meals, ${c.sleep_sessions} sleep sessions, ${c.webhook_subscriptions} webhook subscriptions (${c.webhook_deliveries_pending} deliveries pending), ${c.api_keys} API keys, ${c.events} events; ${span}.`,
    x.lastBackup ? `Last backup ${x.lastBackup.created_at}: ${x.lastBackup.path}` : `No backups yet in ${x.backupFolder}.`,
    ...(x.backupFailing ? [`Backups are failing (${x.backupFailing.code}): ${x.backupFailing.message}`] : []),
    x.runningServer ? `Chyme is running on it at ${x.runningServer}.` : 'No Chyme is running on it.',
  ].join('\n');
}

/** `chyme check`: SQLite's integrity check and a summary of what the database holds. Writes nothing. */
function check(argv: string[]): void {
  const { values } = parseFlags(argv, { json: { type: 'boolean' }, db: { type: 'string' } });
  const dbPath = dbPathFrom(values);
  if (!existsSync(dbPath)) throw new CommandFailed(`No Chyme database at ${dbPath}.`, EXIT.refused);
  if (statSync(dbPath).size === 0) throw new CommandFailed(`No Chyme database at ${dbPath} (the file is empty).`, EXIT.refused);
  let report: DatabaseReport;
  try {
    report = inspectDatabaseFile(dbPath);
  } catch (err) {
    if (err instanceof DatabaseFileRefused) {
      const hint = err.code === 'corrupt' ? ' Restore a backup with: chyme restore FILE' : '';
      const sentence = /[.)]$/.test(err.message) ? err.message : `${err.message}.`;
      throw new CommandFailed(`${sentence}${hint}`, err.code === 'too_new' ? EXIT.tooNew : EXIT.refused);
    }
    throw err;
  }
  const x = extras(dbPath);
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          object: 'database_check',
          path: report.path,
          integrity: report.integrity,
          schema_version: report.schemaVersion,
          supported_schema_version: report.supportedVersion,
          size_bytes: report.sizeBytes,
          counts: report.counts,
          first_meal_at: report.firstMealAt === null ? null : isoUtc(report.firstMealAt),
          last_meal_at: report.lastMealAt === null ? null : isoUtc(report.lastMealAt),
          backup_folder: x.backupFolder,
          last_backup: x.lastBackup,
          backups_failing: x.backupFailing,
          running_server: x.runningServer,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  process.stdout.write(`${describe(report, x)}\n`);
}
