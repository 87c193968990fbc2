/**
 * The benchmark keeps working: `bench/run.ts` in its smoke mode (a 30-day history, a second of
 * load per request, ten webhook events) must run to the end and write its report. No timing is
 * asserted; the figures of a smoke run mean nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/cli.js';

test('npm run bench runs end to end (smoke mode)', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: ROOT,
    env: { ...process.env, BENCH_SMOKE: '1' },
    encoding: 'utf8',
    timeout: 180_000,
  });
  assert.equal(r.status, 0, `bench/run.ts failed:\n${r.stdout}\n${r.stderr}`);
  const report = readFileSync(join(ROOT, 'bench', 'results', 'smoke.md'), 'utf8');
  for (const part of ['one meal', 'snapshot?days=90', 'Cold start', 'Cold start, empty database', 'bare node:http', 'Fairness', 'Webhook fan-out']) {
    assert.ok(report.includes(part), `the report has ${part}`);
  }
});
