import Database from 'better-sqlite3';
import { copyFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createApiKey } from '../../auth/keys.js';
import { SCOPES } from '../../auth/scopes.js';
import { revokeApiKey } from '../../db/api-keys.js';
import { BackupError } from '../../backups/index.js';
import { DatabaseFileRefused, inspectDatabaseFile, type DatabaseReport } from '../../backups/inspect.js';
import { runningServer, type ServerInstance } from '../../backups/instance.js';
import { DatabaseInUseError, installDatabaseFile } from '../../backups/restore.js';
import { backupFolder } from '../../backups/settings.js';
import { writeBackup } from '../../backups/write.js';
import { DatabaseReadOnlyError, isReadOnlyFile, type Db } from '../../db/connection.js';
import { openCommandDatabase } from '../context.js';
import { CommandFailed, dbPathFrom, EXIT, parseFlags, type Command } from '../usage.js';

export const restoreCommand: Command = {
  name: 'restore',
  usage: ['chyme restore FILE [--db FILE]'],
  run: restore,
};

function summary(r: DatabaseReport): string {
  return `${r.counts.meals} meals, ${r.counts.sleep_sessions} sleep sessions, ${r.counts.webhook_subscriptions} webhook subscriptions, schema version ${r.schemaVersion}`;
}

/**
 * Through the running server: the file is copied into its backup folder (kind restore-source) and
 * the server restores that copy (POST /v1/backups/{id}/restore) with a key made for this call alone.
 */
async function restoreThroughServer(db: Db, dbPath: string, server: ServerInstance, source: string): Promise<string> {
  const sourceDb = new Database(source, { readonly: true, fileMustExist: true });
  let staged;
  try {
    staged = await writeBackup(sourceDb, backupFolder(db, dbPath), 'restore-source', Date.now());
  } finally {
    sourceDb.close();
  }
  // The secret lives only in this process. On success the key stays behind only in the safety
  // copy (the restored database never had it); on failure it is revoked below.
  const { key, secret } = createApiKey(db, { name: 'chyme restore (one call)', scopes: [...SCOPES], nowMs: Date.now(), internal: true });
  // The server can swap the file only once no other connection holds it.
  db.close();
  let restored = false;
  try {
    const res = await fetch(`${server.url}/v1/backups/${encodeURIComponent(staged.name)}/restore`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      signal: AbortSignal.timeout(120_000),
    });
    const body = (await res.json()) as { safety_backup?: { path: string }; error?: { code: string; message: string } };
    if (!res.ok) {
      const refused = res.status === 400;
      throw new CommandFailed(`The running Chyme refused the restore (${body.error?.code}): ${body.error?.message}`, refused ? EXIT.refused : EXIT.failed);
    }
    restored = true;
    return body.safety_backup!.path;
  } finally {
    if (!restored) {
      const again = openCommandDatabase(dbPath);
      try {
        revokeApiKey(again, key.id, Date.now());
      } finally {
        again.close();
      }
    }
  }
}

/** With no server running: back up the current database, then swap the file in. */
async function restoreOffline(db: Db, dbPath: string, source: string): Promise<string> {
  // Another program holding a write lock would go on writing into the replaced file: wait for
  // the lock like any writer (SQLITE_BUSY after the busy timeout), and replace nothing without it.
  db.exec('BEGIN IMMEDIATE');
  db.exec('ROLLBACK');
  const safety = await writeBackup(db, backupFolder(db, dbPath), 'pre-restore', Date.now());
  db.close();
  installDatabaseFile(source, dbPath, { keepAccessFrom: dbPath });
  return safety.path;
}

/**
 * Why the current Chyme database is damaged, or undefined when it is whole. A file that is not a
 * Chyme database at all (another program's, or not SQLite) is refused: it is nobody's backup to
 * replace.
 */
function currentDamage(dbPath: string): string | undefined {
  try {
    inspectDatabaseFile(dbPath);
    return undefined;
  } catch (err) {
    if (!(err instanceof DatabaseFileRefused)) throw err;
    if (err.code === 'corrupt') return err.message;
    if (err.code === 'not_chyme' || err.code === 'not_a_database') {
      throw new CommandFailed(`Refused, nothing changed: ${err.message} Check --db; restore replaces only a Chyme database.`, EXIT.refused);
    }
    return undefined;
  }
}

/** Moves a damaged database (and its write-ahead log) aside under a name that says so. */
function keepDamagedFile(dbPath: string): string {
  const stamp = new Date().toISOString().replace(/[-:.]/g, '');
  const kept = `${dbPath}.damaged-${stamp}`;
  copyFileSync(dbPath, kept);
  for (const suffix of ['-wal', '-shm']) {
    if (!existsSync(dbPath + suffix)) continue;
    if (suffix === '-wal') copyFileSync(dbPath + suffix, kept + suffix);
    rmSync(dbPath + suffix);
  }
  return kept;
}

/**
 * `chyme restore FILE`: checks FILE (a whole Chyme database no newer than this build), backs up the
 * current database, then swaps FILE in: through the running server when there is one, directly
 * otherwise. A refused file changes nothing.
 */
async function restore(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, { db: { type: 'string' } }, true);
  if (positionals.length !== 1) throw new CommandFailed('restore needs exactly one FILE: chyme restore FILE [--db FILE]', EXIT.usage);
  const source = resolve(positionals[0]!);
  const dbPath = resolve(dbPathFrom(values));
  if (source === dbPath) throw new CommandFailed(`${source} is the database itself; name a backup to restore.`, EXIT.refused);
  let report: DatabaseReport;
  try {
    report = inspectDatabaseFile(source);
  } catch (err) {
    if (err instanceof DatabaseFileRefused) throw new CommandFailed(`Refused, nothing changed: ${err.message}`, EXIT.refused);
    throw err;
  }
  // No database yet (no file, or an empty one): nothing to protect, the file simply becomes the database.
  if (!existsSync(dbPath) || statSync(dbPath).size === 0) {
    installDatabaseFile(source, dbPath);
    process.stdout.write(`Restored ${source} (${summary(report)}) into ${dbPath}.\n`);
    return;
  }
  // A damaged database cannot be backed up through SQLite: its bytes are kept aside as they are.
  const damage = currentDamage(dbPath);
  // The swap would replace the file, whatever its mode says: refused like any other write.
  if (isReadOnlyFile(dbPath)) throw new DatabaseReadOnlyError(dbPath);
  if (damage) {
    const kept = keepDamagedFile(dbPath);
    installDatabaseFile(source, dbPath);
    process.stdout.write(
      `Restored ${source} (${summary(report)}) into ${dbPath}.\nThe database it replaced was damaged (${damage}); its bytes were kept as:\n${kept}\n`,
    );
    return;
  }
  const db = openCommandDatabase(dbPath);
  let safetyPath: string;
  try {
    const server = runningServer(db);
    safetyPath = server ? await restoreThroughServer(db, dbPath, server, source) : await restoreOffline(db, dbPath, source);
  } catch (err) {
    if (err instanceof BackupError) throw new CommandFailed(`Nothing was restored: the safety backup of the current data failed. ${err.message}`, EXIT.failed);
    if (err instanceof DatabaseInUseError) throw new CommandFailed(err.message, EXIT.failed);
    throw err;
  } finally {
    if (db.open) db.close();
  }
  process.stdout.write(`Restored ${source} (${summary(report)}) into ${dbPath}.\nThe data it replaced was saved first to:\n${safetyPath}\n`);
}
