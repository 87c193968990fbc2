/**
 * The phone's service worker as built (scripts/phone-service-worker.ts): which files it precaches,
 * that a changed file makes a new version, and that `sw.js` is a classic script (no `import` or
 * `export`) that carries the list. The browser side is test/e2e/phone-offline.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { test } from 'node:test';
import { precacheList, SERVICE_WORKER, writeServiceWorker } from '../../scripts/phone-service-worker.js';

function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-sw-'));
  mkdirSync(join(dir, 'assets'));
  for (const [name, text] of Object.entries({
    'phone.html': '<!doctype html>',
    'manifest.webmanifest': '{}',
    'assets/phone-abc123.js': 'page',
    'assets/sqlite3-def456.wasm': 'wasm',
    'assets/sqlite3-worker1-Bn_Pk-9.js': 'never loaded',
    'assets/sqlite3-opfs-async-proxy-De4.js': 'never loaded',
    '.DS_Store': 'not the app',
    [SERVICE_WORKER]: 'an older sw.js',
  })) writeFileSync(join(dir, name), text);
  return dir;
}

test('precaches every file of the build with its SHA-256, but sw.js, dot files and SQLite’s never-loaded scripts', (t) => {
  const dir = fakeBuild();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const list = precacheList(dir);
  assert.deepEqual(list.files.map((f) => f.url), ['assets/phone-abc123.js', 'assets/sqlite3-def456.wasm', 'manifest.webmanifest', 'phone.html']);
  assert.equal(list.files[0]!.sha256, createHash('sha256').update('page').digest('hex'));
  assert.match(list.version, /^[0-9a-f]{16}$/);
});

test('a change to any file is a new version; the same files are the same version', (t) => {
  const dir = fakeBuild();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const before = precacheList(dir).version;
  assert.equal(precacheList(dir).version, before);
  writeFileSync(join(dir, 'manifest.webmanifest'), '{"name":"Chyme"}');
  assert.notEqual(precacheList(dir).version, before);
});

test('sw.js is a classic script holding the list, and names its cache after the version', async (t) => {
  const dir = fakeBuild();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const list = await writeServiceWorker(dir);
  const code = readFileSync(join(dir, SERVICE_WORKER), 'utf8');
  // Compiles as a script: an `import` or `export` would be a SyntaxError here.
  assert.doesNotThrow(() => new Script(code));
  assert.ok(code.includes(list.version) && list.files.every((f) => code.includes(f.sha256)), 'the list is in the script');
});
