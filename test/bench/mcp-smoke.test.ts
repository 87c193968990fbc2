/**
 * The MCP benchmark keeps working: `bench/mcp.ts` in its smoke mode (a 30-day history, a second
 * of load per request) must run to the end and write its report with the ratio. No timing is
 * asserted; the figures of a smoke run mean nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/cli.js';

test('bench/mcp.ts runs end to end (smoke mode) and prints the MCP/REST ratio', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/mcp.ts'], {
    cwd: ROOT,
    env: { ...process.env, BENCH_SMOKE: '1' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `bench/mcp.ts failed:\n${r.stdout}\n${r.stderr}`);
  const report = readFileSync(join(ROOT, 'bench', 'results', 'mcp-smoke.md'), 'utf8');
  assert.match(report, /GET \/v1\/digestion\/state/);
  assert.match(report, /Ratio MCP\/REST: p50 [\d.]+×, mean [\d.]+×, CPU per request [\d.]+×/);
});
