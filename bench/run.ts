/**
 * `npm run bench`: speed and memory of the API on a seeded database, over real HTTP.
 *
 * Figures are medians of repeated requests, reported as ratios against a baseline measured in the
 * same run (GET /v1/health: the whole HTTP pipeline with no data work), so they compare across
 * machines. The same endpoints are measured on a 1-year and a 5-year history (both longer than any
 * window asked for) to show that what reads a window (state, snapshot) does not grow with history.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createApiKey } from '../server/auth/keys.js';
import { ManualClock } from '../server/clock.js';
import { openDatabase } from '../server/db/connection.js';
import { SCOPES } from '../server/auth/scopes.js';
import { silentLogger } from '../server/logger.js';
import { createService } from '../server/service.js';
import { initSettings } from '../server/settings.js';
import { seedHistory } from './seed.js';

const TIMEZONE = 'Europe/Berlin';
const NOW = Date.UTC(2026, 10, 22, 18, 30); // 19:30 in Berlin, after dinner: digestion in progress
const LAST_DAY = '2026-11-22';
const RUNS = Number(process.env.BENCH_RUNS ?? 40);

const ENDPOINTS: Array<[string, string]> = [
  ['baseline: GET /v1/health', '/v1/health'],
  ['GET /v1/digestion/state', '/v1/digestion/state'],
  ['GET /v1/snapshot?days=7', '/v1/snapshot?days=7'],
  ['GET /v1/snapshot?days=90', '/v1/snapshot?days=90'],
  ['GET /v1/digestion/scores/daily (90 days)', '/v1/digestion/scores/daily?start_date=2026-08-25&end_date=2026-11-22'],
  ['GET /v1/digestion/timeline (7 days)', '/v1/digestion/timeline?start_date=2026-11-16&end_date=2026-11-22&limit=100'],
  ['GET /v1/nutrition/meals (page of 50)', '/v1/nutrition/meals?start_date=2022-01-01&end_date=2026-11-22'],
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function measure(days: number): Promise<{ seeded: { meals: number; sleeps: number }; results: Map<string, number>; rssMb: number; seedMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-'));
  const dbPath = join(dir, 'chyme.db');
  const db = openDatabase(dbPath);
  initSettings(db, NOW, TIMEZONE);
  const t0 = performance.now();
  const seeded = seedHistory(db, { lastDay: LAST_DAY, days, timezone: TIMEZONE });
  const seedMs = performance.now() - t0;
  const secret = createApiKey(db, { name: 'bench', scopes: [...SCOPES], nowMs: NOW }).secret;
  db.close();

  const service = await createService({ dbPath, port: 0, clock: new ManualClock(NOW), logger: silentLogger, staticDir: null, rateLimit: { perSecond: 1e6, burst: 1e6 } });
  const results = new Map<string, number>();
  try {
    for (const [name, path] of ENDPOINTS) {
      const times: number[] = [];
      for (let i = 0; i < RUNS + 5; i++) {
        const start = performance.now();
        const res = await fetch(service.url + path, { headers: { authorization: `Bearer ${secret}` } });
        await res.arrayBuffer();
        const elapsed = performance.now() - start;
        if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
        if (i >= 5) times.push(elapsed); // the first few warm caches and the JIT
      }
      results.set(name, median(times));
    }
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return { seeded, results, rssMb: process.memoryUsage().rss / 1024 / 1024, seedMs };
}

await measure(30); // warm-up: the JIT and caches, so neither measured run pays for them
const small = await measure(365);
const large = await measure(5 * 365);
const baseName = ENDPOINTS[0]![0];

const lines = [
  `Chyme API benchmark — ${new Date().toISOString()} — Node ${process.version}, ${RUNS} runs per endpoint (median)`,
  '',
  `History: 1 year (${small.seeded.meals} meals, ${small.seeded.sleeps} nights) vs 5 years (${large.seeded.meals} meals, ${large.seeded.sleeps} nights; seeded in ${large.seedMs.toFixed(0)} ms)`,
  '',
  '| endpoint | 5 years: median ms | × baseline | 1 year: median ms | 5 years ÷ 1 year |',
  '| --- | ---: | ---: | ---: | ---: |',
];
for (const [name] of ENDPOINTS) {
  const l = large.results.get(name)!;
  const s = small.results.get(name)!;
  lines.push(`| ${name} | ${l.toFixed(2)} | ${(l / large.results.get(baseName)!).toFixed(1)} | ${s.toFixed(2)} | ${(l / s).toFixed(2)} |`);
}
lines.push('', `Resident memory after the 5-year run: ${large.rssMb.toFixed(0)} MB`);
const report = lines.join('\n');
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'latest.md'), `${report}\n`);
