/**
 * Chyme's HTTP stack against the floor: the same list-meals (30 days, limit 100) and one-meal
 * requests, on the same seeded file, in the same run, each server in its own process, autocannon
 * with 10 connections. The budget (issue 9): Chyme's p50 within 1.5× of the floor's for both.
 * Writes bench/results/http.md. BENCH_SECONDS sets the measured seconds per run (default 3).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../server/auth/keys.js';
import { openDatabase } from '../server/db/connection.js';
import { initSettings } from '../server/settings.js';
import { runLoad, startServerProcess, type LoadResult } from './load.js';
import { seedHistory } from './seed.js';

const TIMEZONE = 'Europe/Berlin';
const NOW = Date.UTC(2026, 10, 22, 18, 30);
const LAST_DAY = '2026-11-22';
const P50_BUDGET = 1.5;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const root = join(import.meta.dirname, '..');

const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-http-'));
const dbPath = join(dir, 'chyme.db');
const db = openDatabase(dbPath);
initSettings(db, NOW, TIMEZONE);
const seeded = seedHistory(db, { lastDay: LAST_DAY, days: 365, timezone: TIMEZONE });
const secret = createApiKey(db, { name: 'bench', scopes: ['nutrition:read'], nowMs: NOW }).secret;
const mealId = (db.prepare('SELECT id FROM meals WHERE day = ? LIMIT 1').get(LAST_DAY) as { id: string }).id;
db.close();

const ENDPOINTS = [
  { name: 'list meals (30 days, limit 100)', path: '/v1/nutrition/meals?start_date=2026-10-24&end_date=2026-11-22&limit=100' },
  { name: 'one meal', path: `/v1/nutrition/meals/${mealId}` },
];

const chyme = await startServerProcess('bench/chyme-server.ts', [dbPath, String(NOW)], root);
const floor = await startServerProcess('bench/floor.ts', [dbPath], root);
const rows: Array<{ name: string; chyme: LoadResult; floor: LoadResult }> = [];
try {
  for (const e of ENDPOINTS) {
    const c = await runLoad({ url: chyme.url + e.path, headers: { authorization: `Bearer ${secret}` }, durationSec: SECONDS, pid: chyme.pid });
    const f = await runLoad({ url: floor.url + e.path, durationSec: SECONDS, pid: floor.pid });
    if (c.failures > 0 || f.failures > 0) throw new Error(`${e.name}: ${c.failures} failed requests on Chyme, ${f.failures} on the floor`);
    rows.push({ name: e.name, chyme: c, floor: f });
  }
} finally {
  await chyme.stop();
  await floor.stop();
  rmSync(dir, { recursive: true, force: true });
}

const lines = [
  `Chyme vs a bare node:http + better-sqlite3 floor — ${new Date().toISOString()} — Node ${process.version}`,
  `autocannon, 10 connections, ${SECONDS} s per run after 2 s of warm-up; a year of history (${seeded.meals} meals)`,
  '',
  '| request | Chyme p50 ms | floor p50 ms | p50 ratio (budget 1.5×) | Chyme p99 ms | floor p99 ms | Chyme req/s | floor req/s | Chyme CPU µs/req | floor CPU µs/req | CPU ratio |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
let over = false;
for (const r of rows) {
  // autocannon reports whole milliseconds; a p50 of 0 ms is taken as 1 ms so the ratio stays defined.
  const ratio = Math.max(r.chyme.p50, 1) / Math.max(r.floor.p50, 1);
  if (ratio > P50_BUDGET) over = true;
  lines.push(
    `| ${r.name} | ${r.chyme.p50} | ${r.floor.p50} | ${ratio.toFixed(2)}${ratio > P50_BUDGET ? ' **over**' : ''} | ${r.chyme.p99} | ${r.floor.p99} | ${r.chyme.rps.toFixed(0)} | ${r.floor.rps.toFixed(0)} | ${r.chyme.cpuPerRequestUs!.toFixed(0)} | ${r.floor.cpuPerRequestUs!.toFixed(0)} | ${(r.chyme.cpuPerRequestUs! / r.floor.cpuPerRequestUs!).toFixed(2)} |`,
  );
}
lines.push('', over ? 'OVER BUDGET: Chyme p50 is more than 1.5× the floor for at least one request.' : 'Within budget: Chyme p50 ≤ 1.5× the floor for both requests.');
const report = lines.join('\n');
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'http.md'), `${report}\n`);
