/**
 * `npm run bench` (meal writes): what one meal write costs as its day fills up, and whether an hour
 * of many meals stalls the event loop (issue 28, item 8).
 *
 * The real service in this process (createService, a fresh file per case, a manual clock at noon
 * of the measured day), every request over real HTTP on 127.0.0.1. For a day already holding 5
 * and 200 meals: the median time of a POST /v1/nutrition/meals into that day. The day of 5 is the
 * baseline; the report gives the day of 200 as a ratio to it (target ≤ 3×). Then 200 meals logged
 * within one hour of one day, one after another: the longest single write and the longest
 * event-loop pause meanwhile (monitorEventLoopDelay; target < 100 ms). Nothing is asserted; the
 * figures go to stdout and bench/results/meal-writes.md. BENCH_SMOKE=1 runs it tiny.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createApiKey } from '../server/auth/keys.js';
import { SCOPES } from '../server/auth/scopes.js';
import { ManualClock } from '../server/clock.js';
import { silentLogger } from '../server/logger.js';
import { createService } from '../server/service.js';
import { percentile } from './stats.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const DAY_SIZES = SMOKE ? [5, 20] : [5, 200];
const WRITES = SMOKE ? 5 : 40;
const HOUR_MEALS = SMOKE ? 20 : 200;
/** Noon UTC of the measured day; the meals are that day's, in UTC. */
const NOON = Date.UTC(2026, 10, 18, 12);

interface Case {
  post(timestampMs: number, description: string): Promise<number>;
  stop(): Promise<void>;
}

async function startCase(): Promise<Case> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-writes-'));
  const clock = new ManualClock(NOON + 12 * 3600_000);
  const service = await createService({ dbPath: join(dir, 'chyme.db'), port: 0, timezone: 'UTC', clock, logger: silentLogger, staticDir: null, foodsWarmUpMs: null, deferredStartMs: 0, rateLimit: { perSecond: 1e6, burst: 1e6 } });
  const key = createApiKey(service.app.db, { name: 'bench', scopes: [...SCOPES], nowMs: clock.now() }).secret;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return {
    async post(timestampMs, description) {
      const body = JSON.stringify({ timestamp: new Date(timestampMs).toISOString(), meal_type: 'snack', description, macros: { calories: 150, protein_g: 5, carbs_g: 20, fat_g: 4, fiber_g: 2 } });
      const started = performance.now();
      const res = await fetch(`${service.url}/v1/nutrition/meals`, { method: 'POST', headers, body });
      await res.arrayBuffer();
      const ms = performance.now() - started;
      if (res.status !== 201) throw new Error(`POST answered ${res.status}`);
      return ms;
    },
    async stop() {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Median time of a write into a day that already holds `mealsInDay` meals (spread over its hours). */
async function writeIntoDay(mealsInDay: number): Promise<{ p50: number; p99: number }> {
  const c = await startCase();
  try {
    const dayStart = NOON - 12 * 3600_000;
    for (let i = 0; i < mealsInDay; i++) await c.post(dayStart + Math.floor(((i + 0.5) * 86_400_000) / (mealsInDay + WRITES)), `seed ${i}`);
    const times: number[] = [];
    for (let i = 0; i < WRITES; i++) {
      times.push(await c.post(NOON + i * 60_000, `measured ${i}`));
    }
    return { p50: percentile(times, 50), p99: percentile(times, 99) };
  } finally {
    await c.stop();
  }
}

/**
 * `HOUR_MEALS` meals within one hour, one after another: the longest write and event-loop pause.
 * The service is warmed up first by one meal three days before (outside the hour's look-back): a
 * fresh service's first write compiles its code paths and runs beside the deferred start-up work,
 * which is start-up's cost, reported apart as `firstWriteMs`.
 */
async function hourOfMeals(): Promise<{ maxWriteMs: number; maxPauseMs: number; p50: number; firstWriteMs: number }> {
  const c = await startCase();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  try {
    const firstWriteMs = await c.post(NOON - 3 * 86_400_000, 'warm-up');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const times: number[] = [];
    loop.enable();
    for (let i = 0; i < HOUR_MEALS; i++) times.push(await c.post(NOON + Math.floor((i * 3600_000) / HOUR_MEALS), `hour ${i}`));
    loop.disable();
    return { maxWriteMs: Math.max(...times), maxPauseMs: loop.max / 1e6, p50: percentile(times, 50), firstWriteMs };
  } finally {
    await c.stop();
  }
}

const rows: string[] = [];
const [baseSize, bigSize] = DAY_SIZES as [number, number];
const base = await writeIntoDay(baseSize);
const big = await writeIntoDay(bigSize);
const hour = await hourOfMeals();
const ratio = big.p50 / base.p50;
rows.push(`| write into a day of ${baseSize} meals (baseline) | ${base.p50.toFixed(2)} ms | ${base.p99.toFixed(2)} ms | 1.00× |`);
rows.push(`| write into a day of ${bigSize} meals | ${big.p50.toFixed(2)} ms | ${big.p99.toFixed(2)} ms | ${ratio.toFixed(2)}× (target ≤ 3×) |`);
const report = [
  '# Meal writes as the day fills up',
  '',
  `POST /v1/nutrition/meals, ${WRITES} writes per case, in-process service over HTTP on 127.0.0.1.`,
  '',
  '| case | p50 | p99 | p50 vs baseline |',
  '| --- | --- | --- | --- |',
  ...rows,
  '',
  `${HOUR_MEALS} meals within one hour: p50 ${hour.p50.toFixed(2)} ms a write, longest write ${hour.maxWriteMs.toFixed(1)} ms, longest event-loop pause ${hour.maxPauseMs.toFixed(1)} ms (target < 100 ms); a fresh service's first write (before the hour) ${hour.firstWriteMs.toFixed(1)} ms.`,
  '',
].join('\n');
process.stdout.write(report);
const resultsDir = join(import.meta.dirname, 'results');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, 'meal-writes.md'), report);
