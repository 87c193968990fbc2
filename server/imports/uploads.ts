import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Where an uploaded export is received before it is parsed: a private folder beside the database,
 * on the disk that holds the person's data. Not the system's temporary folder, which many Linux
 * desktops keep in memory (tmpfs): a 3 GB Apple export there would take 3 GB of RAM for the
 * length of the import. An in-memory database (tests) uses the temporary folder.
 */
const PREFIX = '.chyme-upload-';

function uploadsParent(dbFile: string): string {
  return dbFile === '' || dbFile === ':memory:' ? tmpdir() : dirname(dbFile);
}

/** A new private (0700) folder for one upload; the caller removes it when the import is over. */
export function makeUploadDir(dbFile: string): Promise<string> {
  return mkdtemp(join(uploadsParent(dbFile), PREFIX));
}

/**
 * Removes upload folders a crash left behind (older than `maxAgeMs` by their files' time, so an
 * import under way in another process on the same folder is never touched). Returns how many.
 */
export async function removeStaleUploadDirs(dbFile: string, maxAgeMs: number, nowMs = Date.now()): Promise<number> {
  const parent = uploadsParent(dbFile);
  let removed = 0;
  for (const name of await readdir(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    const path = join(parent, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isDirectory() || nowMs - info.mtimeMs < maxAgeMs) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
