/**
 * server/native/malloc-trim.c, as `npm run build` leaves it: on Linux with glibc it is built, the
 * service loads it, and trim() really gives back memory that malloc held free. Each check runs in
 * a fresh process, since the tuning is process-wide.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
const addon = join(root, 'build', 'native', 'malloc-trim.node');
const glibc = process.platform === 'linux' && !!(process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;

test('on Linux with glibc, the build makes the addon', { skip: !glibc && 'not Linux with glibc' }, () => {
  assert.ok(existsSync(addon), `${addon} (npm run build:server runs server/native/build.mjs)`);
});

test('trim() gives back the free memory malloc kept: 64 MB freed behind a live block', { skip: !glibc && 'not Linux with glibc' }, () => {
  // 64k blocks of 1 KB from the heap (below any mmap threshold), all freed but the last, which
  // pins the heap's top: free() alone cannot shrink it, malloc_trim can (free pages inside).
  const script = `
    const { readFileSync } = require('node:fs');
    const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    const m = require(${JSON.stringify(addon)});
    if (m.tune() !== true) throw new Error('tune() failed');
    let blocks = [];
    for (let i = 0; i < 65536; i++) blocks.push(Buffer.allocUnsafeSlow(1024).fill(1));
    const pin = blocks.at(-1);
    blocks = null;
    // Array buffers' memory is freed by V8's sweeper after the collection, on its own time.
    const settle = (n) => { gc(); if (n) setTimeout(() => settle(n - 1), 50); else measure(); };
    const measure = () => {
      const held = rss();
      m.trim();
      const after = rss();
      console.log(JSON.stringify({ held, after, pin: pin.length }));
    };
    settle(6);
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })) as { held: number; after: number };
  console.log(`held ${out.held.toFixed(1)} MB, after trim ${out.after.toFixed(1)} MB`);
  assert.ok(out.held - out.after > 32, `RSS ${out.held.toFixed(1)} MB before trim(), ${out.after.toFixed(1)} MB after`);
});

test('the service loads it: `chyme serve` maps the addon', { skip: !glibc && 'not Linux with glibc' }, () => {
  const script = `
    const { useCompactHeap } = await import(${JSON.stringify(join(root, 'build', 'server', 'memory.js'))});
    useCompactHeap();
    const { readFileSync } = await import('node:fs');
    console.log(readFileSync('/proc/self/maps', 'utf8').includes('malloc-trim.node'));
    process.exit(0);
  `;
  assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(), 'true');
});
