/**
 * The sync benchmark keeps working: `bench/sync.ts` with tiny sizes (SYNC_SMOKE=1: 300 meals,
 * 50 nights, 20 writes a round, 10 propagation samples, seconds of steady state) must run to the
 * end against a real relay and real `chyme sync init|join` and `chyme serve` processes, verify that
 * the joined device holds the whole history, and write its report with figures. No timing is
 * asserted; the figures of a smoke run mean nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/cli.js';

test('bench/sync.ts runs end to end with tiny sizes and writes its figures', { timeout: 240_000 }, () => {
  const results = join(ROOT, 'bench', 'results', 'sync-smoke.md');
  rmSync(results, { force: true });
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/sync.ts'], {
    cwd: ROOT,
    env: { ...process.env, SYNC_SMOKE: '1', SYNC_MEALS: '300', SYNC_NIGHTS: '50', SYNC_WRITES: '20', SYNC_PROPAGATION: '10' },
    encoding: 'utf8',
    timeout: 220_000,
  });
  assert.equal(r.status, 0, `bench/sync.ts failed:\n${r.stdout}\n${r.stderr}`);
  const report = readFileSync(results, 'utf8');
  const row = (label: string): string => {
    const line = report.split('\n').find((l) => l.startsWith('| ') && l.includes(label));
    assert.ok(line, `the report has a row for ${label}:\n${report}`);
    return line;
  };
  // Each figure is a number, not NaN or n/a (a sampler that read nothing would print those).
  assert.match(row('`chyme sync join CODE` on a fresh B'), /\| \d+\.\d s \|/);
  assert.match(row('resident memory during the join'), /\| \d+ MB, \d+ MB/);
  assert.match(row('B afterwards'), /\| 300 meals, 50 nights \|/);
  assert.match(row('sync on: RSS max idle'), /\| \d+ MB \/ \d+ MB/);
  assert.match(row('the same file, sync off'), /\| \d+ MB \/ \d+ MB/);
  assert.match(row('20 meal writes, p50 per write, sync on ÷ off'), /\| \d+\.\d\d× \(/);
  assert.match(row('meal.created on B'), /of 10 \| \d+ \/ \d+ \/ \d+ \/ \d+ ms \|/);
  assert.match(row('B holds A'), /\| [\d,]+ \| equal \| yes \|/);
  assert.ok(!/NaN|n\/a/.test(report), `no figure is missing:\n${report}`);
});
