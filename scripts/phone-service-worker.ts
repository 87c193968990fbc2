/**
 * Writes the phone app's service worker, `sw.js`, into a built phone app (build/phone): the list
 * of every file there with its SHA-256, and renderer/src/phone/sw.ts compiled around it. The
 * phone's Vite build runs it last (vite.config.ts), once every file, public ones included, is
 * written; the offline test runs it again on a changed copy to make "a new build".
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

export const SERVICE_WORKER = 'sw.js';

/**
 * SQLite-WASM's package references these, so Vite emits them, but the phone's database (the SAH
 * pool VFS) never loads them: 74 KB gzip that an install would fetch for nothing.
 */
const NEVER_LOADED = /^assets\/sqlite3-(worker1|opfs-async-proxy)-[\w-]+\.js$/;

const SOURCE = fileURLToPath(new URL('../renderer/src/phone/sw.ts', import.meta.url));

export interface PrecacheList {
  version: string;
  files: { url: string; sha256: string }[];
}

function walk(dir: string, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/** Every file the app may load from `dir`, as scope-relative URLs, sorted, each with its hash. */
export function precacheList(dir: string): PrecacheList {
  const files = walk(dir, [])
    .map((full) => relative(dir, full).split(sep).join('/'))
    .filter((url) => url !== SERVICE_WORKER && !NEVER_LOADED.test(url))
    .sort()
    .map((url) => ({ url, sha256: createHash('sha256').update(readFileSync(join(dir, url))).digest('hex') }));
  const version = createHash('sha256').update(JSON.stringify(files)).digest('hex').slice(0, 16);
  return { version, files };
}

/** Writes `dir/sw.js` for the files now in `dir`; answers what it precaches. */
export async function writeServiceWorker(dir: string): Promise<PrecacheList> {
  const list = precacheList(dir);
  const { code } = await transform(readFileSync(SOURCE, 'utf8'), {
    loader: 'ts',
    // A classic script: module service workers are newer than the phones this app serves (Firefox).
    format: 'iife',
    target: 'es2020',
    define: { __CHYME_PRECACHE__: JSON.stringify(list) },
    legalComments: 'none',
  });
  writeFileSync(join(dir, SERVICE_WORKER), code);
  return list;
}
