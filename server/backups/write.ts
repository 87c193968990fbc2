import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../db/connection.js';
import { backupFileName, partialFileName, removePartialFiles, type BackupFile, type BackupKind } from './files.js';
import { integrityProblems } from './inspect.js';

export type BackupErrorCode = 'backup_folder_not_writable' | 'backup_disk_full' | 'backup_check_failed' | 'backup_failed';

/** A backup that could not be made, with a code the API and the app report. */
export class BackupError extends Error {
  constructor(readonly code: BackupErrorCode, message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

function describe(err: unknown, dir: string): BackupError {
  if (err instanceof BackupError) return err;
  const code = (err as { code?: string }).code ?? '';
  const detail = (err as Error)?.message ?? String(err);
  if (['EACCES', 'EPERM', 'EROFS', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'ENOTDIR', 'EEXIST'].includes(code)) {
    return new BackupError('backup_folder_not_writable', `The backup folder ${dir} is not writable (${detail}). Choose another folder or fix its permissions.`);
  }
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') {
    return new BackupError('backup_disk_full', `The disk holding the backup folder ${dir} is full (${detail}). Free some space or choose another folder.`);
  }
  return new BackupError('backup_failed', `The backup into ${dir} failed: ${detail}`);
}

function fsyncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename durable: the directory entry itself is flushed (not possible on Windows). */
export function fsyncDir(dir: string): void {
  if (process.platform === 'win32') return;
  fsyncPath(dir, 'r');
}

/** Where a backup being taken goes: its temporary name, and the final one it gets once checked. */
interface Target {
  dir: string;
  name: string;
  kind: BackupKind;
  createdMs: number;
  partialPath: string;
  finalPath: string;
}

function prepareTarget(dir: string, kind: BackupKind, nowMs: number): Target {
  // A backup holds everything the database does (webhook secrets among it): only its owner may
  // read it, whatever the umask (a folder Chyme creates is private too).
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  removePartialFiles(dir);
  // Two backups in the same millisecond (a restore's safety copy right after a manual one) must
  // not overwrite each other: the later one takes the next free millisecond.
  let createdMs = nowMs;
  while (existsSync(join(dir, backupFileName(createdMs, kind)))) createdMs++;
  const name = backupFileName(createdMs, kind);
  return { dir, name, kind, createdMs, partialPath: join(dir, partialFileName(name)), finalPath: join(dir, name) };
}

/** Checks the copy, makes it one private self-contained file, flushes it and renames it into place. */
function finishBackup(t: Target, options: { nativeBinding?: string }): BackupFile {
  chmodSync(t.partialPath, 0o600);
  const copy = new Database(t.partialPath, options.nativeBinding ? { nativeBinding: options.nativeBinding } : {});
  try {
    copy.pragma('journal_mode = DELETE');
    const problems = integrityProblems(copy);
    if (problems.length > 0) {
      throw new BackupError('backup_check_failed', `The copy failed SQLite's integrity check (${problems.slice(0, 3).join('; ')}); it was discarded.`);
    }
  } finally {
    copy.close();
  }
  fsyncPath(t.partialPath, 'r+');
  renameSync(t.partialPath, t.finalPath);
  fsyncDir(t.dir);
  return { name: t.name, path: t.finalPath, kind: t.kind, createdMs: t.createdMs, sizeBytes: statSync(t.finalPath).size };
}

function discard(t: Target | undefined, dir: string, err: unknown): never {
  try {
    if (t) rmSync(t.partialPath, { force: true });
  } catch {
    // the folder may be unreadable too; the next backup removes the leftover
  }
  throw describe(err, dir);
}

/**
 * Takes a consistent copy of the live database with SQLite's online backup API (writers carry on
 * meanwhile), into a temporary name in `dir`; checks the copy with `PRAGMA integrity_check`,
 * switches it to a single-file journal, flushes it to disk and only then renames it to its final
 * name (and flushes the folder). A crash at any moment leaves either no backup or a whole one.
 */
export async function writeBackup(
  db: Db,
  dir: string,
  kind: BackupKind,
  nowMs: number,
  options: { nativeBinding?: string } = {},
): Promise<BackupFile> {
  let target: Target | undefined;
  try {
    target = prepareTarget(dir, kind, nowMs);
    await db.backup(target.partialPath);
    return finishBackup(target, options);
  } catch (err) {
    return discard(target, dir, err);
  }
}

/**
 * The same, synchronously (VACUUM INTO), for the moment before a migration: the database is
 * being opened and nothing else runs yet.
 */
export function writeBackupSync(db: Db, dir: string, kind: BackupKind, nowMs: number, options: { nativeBinding?: string } = {}): BackupFile {
  let target: Target | undefined;
  try {
    target = prepareTarget(dir, kind, nowMs);
    db.prepare('VACUUM INTO ?').run(target.partialPath);
    return finishBackup(target, options);
  } catch (err) {
    return discard(target, dir, err);
  }
}
