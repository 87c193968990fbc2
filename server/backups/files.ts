import { accessSync, constants, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dayOf } from '../time/tz.js';

/**
 * Backup files and their names. A backup is `chyme-YYYYMMDDTHHMMSSmmmZ-KIND.db` in the backup
 * folder; the name carries when and why it was taken, so the folder itself is the list (no
 * bookkeeping in the database that a restore could contradict). A backup being written has a
 * name starting with a dot and ending in `.partial`: a crash mid-backup leaves only such a file,
 * which never looks complete and is removed by the next backup.
 */

export const BACKUP_KINDS = ['auto', 'manual', 'pre-migration', 'migration', 'pre-restore', 'restore-source'] as const;
export type BackupKind = (typeof BACKUP_KINDS)[number];

/**
 * Kinds retention may delete: only the automatic daily copies. Copies the user asked for
 * (manual), the one taken after a schema upgrade and the one taken before a restore are kept until
 * the user deletes them, so "back up now" never silently removes this morning's automatic copy.
 */
const PRUNABLE: ReadonlySet<BackupKind> = new Set(['auto']);

/** A backup's file name, which is also its id in the API. */
export const BACKUP_NAME = /^chyme-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-(auto|manual|pre-migration|migration|pre-restore|restore-source)\.db$/;
/** A backup being written, and the journal SQLite keeps beside it while checking it. */
const PARTIAL = /^\.chyme-.*\.partial(-journal|-wal|-shm)?$/;

export interface BackupFile {
  /** The file name, which is also the backup's id in the API. */
  name: string;
  path: string;
  kind: BackupKind;
  createdMs: number;
  sizeBytes: number;
}

export function backupFileName(createdMs: number, kind: BackupKind): string {
  const stamp = new Date(createdMs).toISOString().replace(/[-:]/g, '').replace('.', '');
  return `chyme-${stamp}-${kind}.db`;
}

export function partialFileName(finalName: string): string {
  return `.${finalName}.partial`;
}

export function parseBackupName(name: string): { createdMs: number; kind: BackupKind } | undefined {
  const m = BACKUP_NAME.exec(name);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms, kind] = m;
  const createdMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms));
  return Number.isNaN(createdMs) ? undefined : { createdMs, kind: kind as BackupKind };
}

/** Backups in a folder, newest first. A missing folder (or a file where it should be) has none. */
export function listBackups(dir: string): BackupFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
  const out: BackupFile[] = [];
  for (const name of names) {
    const parsed = parseBackupName(name);
    if (!parsed) continue;
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (st.isFile()) out.push({ name, path, ...parsed, sizeBytes: st.size });
    } catch {
      // deleted while listing
    }
  }
  return out.sort((a, b) => b.createdMs - a.createdMs || (a.name < b.name ? 1 : -1));
}

/** Removes leftovers of backups a crash interrupted. */
export function removePartialFiles(dir: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (PARTIAL.test(name)) rmSync(join(dir, name), { force: true });
}

/** Monday of the ISO week holding a YYYY-MM-DD day: the key of a weekly copy. */
function weekOf(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

/**
 * Which backups retention removes: it keeps the newest backup of each of the last `keepDaily`
 * days that have one, and the newest of each of the last `keepWeekly` weeks (days in the user's
 * time zone), like restic's --keep-daily/--keep-weekly. Only automatic copies are ever removed.
 */
export function backupsToPrune(backups: readonly BackupFile[], keepDaily: number, keepWeekly: number, timezone: string): BackupFile[] {
  const prunable = backups.filter((b) => PRUNABLE.has(b.kind)).sort((a, b) => b.createdMs - a.createdMs);
  const keep = new Set<string>();
  const days = new Set<string>();
  const weeks = new Set<string>();
  for (const b of prunable) {
    const day = dayOf(b.createdMs, timezone);
    if (!days.has(day) && days.size < keepDaily) {
      days.add(day);
      keep.add(b.name);
    }
    const week = weekOf(day);
    if (!weeks.has(week) && weeks.size < keepWeekly) {
      weeks.add(week);
      keep.add(b.name);
    }
  }
  return prunable.filter((b) => !keep.has(b.name));
}

/** Why a folder cannot take backups (created when missing), or undefined when it can. */
export function folderProblem(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (err) {
    return `${dir} is not a writable folder (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
}
