import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../server/logger.js';
import { createService } from '../server/service.js';
import { startTestService } from './helpers/service.js';

/** Files under `dir` this process holds open (Linux: /proc/self/fd). */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // The fd of the directory listing itself is gone by now.
    }
  }
  return out;
}

test('a taken port rejects with EADDRINUSE and leaves the database closed', { skip: process.platform !== 'linux' }, async () => {
  const holder = await startTestService();
  const dir = mkdtempSync(join(tmpdir(), 'chyme-port-'));
  try {
    const dbPath = join(dir, 'chyme.db');
    await assert.rejects(
      createService({ dbPath, port: holder.service.port, logger: silentLogger, staticDir: null }),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE',
    );
    assert.deepEqual(openFilesUnder(dir), [], 'no handle on the database file is left behind');
    // The caller can try again on another port over the same file.
    const second = await createService({ dbPath, port: 0, logger: silentLogger, staticDir: null });
    assert.notEqual(second.port, holder.service.port);
    await second.stop();
  } finally {
    await holder.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
