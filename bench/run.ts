/**
 * `npm run bench` (API part): the whole stack measured from outside against its floor, in one run.
 *
 * On generated 1-, 5- and 10-year histories (each imported in one POST /v1/import to the real
 * `chyme serve`, in seconds), the real `chyme serve` (built CLI, own process) and a bare node:http +
 * better-sqlite3 floor (bench/floor.ts, same file, same JSON) are loaded with autocannon at 10
 * connections. For every request: requests/s, p50, p99, the single-request time (sequential, on
 * a kept-alive connection), the server CPU time per request, and for the meal reads the ratios to
 * the floor measured in the same run. Then cold start (spawn → first 200; on an empty database also
 * against a bare node:http + better-sqlite3 server in the same run, bench/cold-start.ts), resident memory after
 * the load, the 1 → 10-year growth, the event loop's fairness (state while first-time 90-day fills
 * run) and the webhook fan-out (bench/webhooks.ts). Nothing is asserted: the report is written to
 * bench/results/latest.md. BENCH_SECONDS sets the seconds of load per request (default 3);
 * BENCH_SMOKE=1 runs everything tiny (npm test does, so the bench keeps working).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { openDatabase } from '../server/db/connection.js';
import { initSettings } from '../server/settings.js';
import { addDays, dayOf } from '../server/time/tz.js';
import { loadResultOf, runLoad, startServerProcess, type LoadResult } from './load.js';
import { historyImportDocument } from './seed.js';
import { seedThroughImport, type SeedFigures } from './seed-hold.js';
import { coldStartReport, coldStartVsBare } from './cold-start.js';
import { benchKey, cpuMsOf, rssOf, startServe, type Serve } from './serve.js';
import { fanOutReport, fanOutRuns } from './webhooks.js';

const SMOKE = process.env.BENCH_SMOKE === '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1 : 3));
const WARMUP = SMOKE ? 1 : 1;
const TIMEZONE = 'Europe/Berlin';
const ROOT = join(import.meta.dirname, '..');
/** Histories measured (days); the smoke run uses one small one. */
const HISTORIES = SMOKE ? [30] : [365, 5 * 365, 10 * 365];
const SINGLE_RUNS = SMOKE ? 5 : 60;
const COLD_STARTS = SMOKE ? 1 : 5;

// The real CLI runs on the system clock, so the history ends today.
const today = dayOf(Date.now(), TIMEZONE, 0);

interface Endpoint {
  name: string;
  path: (mealId: string) => string;
  /** The floor answers it too (the meal reads). */
  floor?: boolean;
  target: string;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'list meals (30 days, limit 100)', path: () => `/v1/nutrition/meals?start_date=${addDays(today, -29)}&end_date=${today}&limit=100`, floor: true, target: 'p50 ≤ 1.2× floor' },
  { name: 'one meal', path: (id) => `/v1/nutrition/meals/${id}`, floor: true, target: 'p50 ≤ 1.5× floor' },
  { name: 'digestion/state', path: () => '/v1/digestion/state', target: '≥ 3,000 req/s; < 1 ms alone' },
  { name: 'scores/daily (30 days)', path: () => `/v1/digestion/scores/daily?start_date=${addDays(today, -29)}&end_date=${today}`, target: '≥ 1,000 req/s; < 3 ms alone' },
  { name: 'snapshot?days=7', path: () => '/v1/snapshot?days=7', target: '≥ 500 req/s; < 5 ms alone' },
  { name: 'snapshot?days=90', path: () => '/v1/snapshot?days=90', target: '≥ 100 req/s; < 20 ms alone; p99 < 5× p50' },
];

interface Row {
  load: LoadResult;
  singleMs: number;
  cpuUsPerRequest: number;
  floor?: { load: LoadResult; singleMs: number; cpuUsPerRequest: number };
}

interface HistoryResult {
  days: number;
  meals: number;
  nights: number;
  seed: SeedFigures;
  rows: Map<string, Row>;
  coldStartMs: number;
  coldStarts: number[];
  rssMb: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median time of sequential requests on one kept-alive connection (after a few unmeasured). */
async function singleRequestMs(url: string, headers: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SINGLE_RUNS + 5; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
    if (i >= 5) times.push(performance.now() - t);
  }
  return median(times);
}

async function measureServer(url: string, pid: number, headers: Record<string, string>) {
  const singleMs = await singleRequestMs(url, headers);
  const cpu0 = cpuMsOf(pid);
  const load = await runLoad({ url, headers, durationSec: SECONDS, warmupSec: WARMUP });
  // The warm-up's requests are not in `load.requests`: count CPU over the measured part only by
  // scaling with the measured share of time (warm-up and measured run at the same rate).
  const cpuMs = (cpuMsOf(pid) - cpu0) * (SECONDS / (SECONDS + WARMUP));
  if (load.failures > 0) throw new Error(`${url}: ${load.failures} failed requests`);
  return { load, singleMs, cpuUsPerRequest: (cpuMs * 1000) / load.requests };
}

/**
 * A fresh database with `days` of history, seeded the way a person's history arrives: one
 * `POST /v1/import` to the real `chyme serve` (the issue asks for it; seconds for 10 years).
 */
async function seed(days: number): Promise<{ dbPath: string; dir: string; meals: number; nights: number; seed: SeedFigures; mealId: string; secret: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-'));
  const dbPath = join(dir, 'chyme.db');
  const db = openDatabase(dbPath);
  initSettings(db, Date.now(), TIMEZONE);
  db.close();
  const secret = benchKey(dbPath);
  const doc = historyImportDocument({ lastDay: today, days, timezone: TIMEZONE });
  const figures = await seedThroughImport(dbPath, secret, doc);
  const check = openDatabase(dbPath);
  try {
    const meals = (check.prepare('SELECT count(*) AS n FROM meals').get() as { n: number }).n;
    const nights = (check.prepare('SELECT count(*) AS n FROM sleep_sessions').get() as { n: number }).n;
    const mealId = (check.prepare('SELECT id FROM meals WHERE day = ? LIMIT 1').get(addDays(today, -1)) as { id: string }).id;
    return { dbPath, dir, meals, nights, seed: figures, mealId, secret };
  } finally {
    check.close();
  }
}

/** Spawn → first 200 of GET /v1/digestion/state, `COLD_STARTS` times (median). */
async function coldStarts(dbPath: string, secret: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    const serve = await startServe(dbPath);
    for (;;) {
      const res = await fetch(`${serve.url}/v1/digestion/state`, { headers: { authorization: `Bearer ${secret}` } });
      await res.arrayBuffer();
      if (res.status === 200) break;
    }
    out.push(performance.now() - serve.startedAt);
    await serve.stop();
  }
  return out;
}

async function measureHistory(days: number): Promise<HistoryResult & { fairness?: Fairness }> {
  const seeded = await seed(days);
  const secret = seeded.secret;
  const headers = { authorization: `Bearer ${secret}` };
  const rows = new Map<string, Row>();
  let serve: Serve | undefined;
  const floor = await startServerProcess('bench/floor.ts', [seeded.dbPath], ROOT);
  try {
    const cold = await coldStarts(seeded.dbPath, secret);
    serve = await startServe(seeded.dbPath);
    for (const e of ENDPOINTS) {
      const path = e.path(seeded.mealId);
      const row: Row = await measureServer(serve.url + path, serve.pid, headers);
      if (e.floor) row.floor = await measureServer(floor.url + path, floor.pid, {});
      rows.set(e.name, row);
    }
    const rssMb = serve.rssMb();
    const fairness = days === HISTORIES[HISTORIES.length - 1] ? await measureFairness(serve, headers, days) : undefined;
    return {
      days,
      meals: seeded.meals,
      nights: seeded.nights,
      seed: seeded.seed,
      rows,
      coldStartMs: median(cold),
      coldStarts: cold,
      rssMb,
      ...(fairness ? { fairness } : {}),
    };
  } finally {
    await serve?.stop();
    await floor.stop();
    rmSync(seeded.dir, { recursive: true, force: true });
  }
}

interface Fairness {
  alone: LoadResult;
  withFills: LoadResult;
  fills: LoadResult;
  withSnapshots: LoadResult;
  snapshots: LoadResult;
  rssAfterMb: number;
}

/**
 * The state's latency alone, then while 90-day score ranges at scattered points of the history
 * are requested (mostly first-time fills: the costliest derived-data work there is), then while
 * 90-day snapshots are requested (the largest answer there is: ~330 meals and their timeline).
 */
async function measureFairness(serve: Serve, headers: Record<string, string>, days: number): Promise<Fairness> {
  const state = { url: `${serve.url}/v1/digestion/state`, connections: 5, duration: SECONDS, headers };
  const alone = await autocannon(state);
  const windows = Array.from({ length: 400 }, (_, i) => {
    const end = addDays(today, -((i * 997) % Math.max(1, days - 90)));
    return { path: `/v1/digestion/scores/daily?start_date=${addDays(end, -89)}&end_date=${end}` };
  });
  const [withFills, fills] = await Promise.all([
    autocannon(state),
    autocannon({ url: serve.url, connections: 5, duration: SECONDS, headers, requests: windows }),
  ]);
  const [withSnapshots, snapshots] = await Promise.all([
    autocannon(state),
    autocannon({ url: `${serve.url}/v1/snapshot?days=90`, connections: 5, duration: SECONDS, headers }),
  ]);
  return {
    alone: loadResultOf(alone),
    withFills: loadResultOf(withFills),
    fills: loadResultOf(fills),
    withSnapshots: loadResultOf(withSnapshots),
    snapshots: loadResultOf(snapshots),
    rssAfterMb: rssOf(serve.pid),
  };
}

// ---- Run -------------------------------------------------------------------------------------

const started = performance.now();
const results: Array<HistoryResult & { fairness?: Fairness }> = [];
for (const days of HISTORIES) results.push(await measureHistory(days));
const hooks = await fanOutRuns(SMOKE);
const coldVsBare = await coldStartVsBare(SMOKE ? 1 : 8);

// ---- Report ----------------------------------------------------------------------------------

const f2 = (x: number) => x.toFixed(2);
const years = (d: number) => (d >= 365 ? `${Math.round(d / 365)} year${d >= 730 ? 's' : ''}` : `${d} days`);
const lines: string[] = [
  `Chyme API benchmark — ${new Date().toISOString()} — Node ${process.version}, ${SECONDS} s of autocannon load per request (10 connections) after ${WARMUP} s of warm-up${SMOKE ? ' — SMOKE RUN, figures meaningless' : ''}`,
  '',
  'Histories: ' + results.map((r) => `${years(r.days)} (${r.meals} meals, ${r.nights} nights, imported through POST /v1/import in ${(r.seed.seedMs / 1000).toFixed(1)} s)`).join('; '),
  '',
  'While each history was imported, the state was asked for one request at a time (the import is read and written in a worker; the thread that answers must stay free): ' +
    results.map((r) => `${years(r.days)}: ${r.seed.stateCount} answered, p50 ${r.seed.stateP50Ms.toFixed(1)} / p99 ${r.seed.stateP99Ms.toFixed(1)} / max ${r.seed.stateMaxMs.toFixed(1)} ms`).join('; ') + '.',
];
for (const r of results) {
  lines.push('', `### ${years(r.days)} of history`, '');
  lines.push('| request | req/s | p50 ms | p99 ms | alone ms | CPU µs/req | floor req/s | floor p50 | floor alone ms | floor CPU µs/req | × floor (alone) | × floor (CPU) | target |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const e of ENDPOINTS) {
    const row = r.rows.get(e.name)!;
    const fl = row.floor;
    lines.push(
      `| ${e.name} | ${row.load.rps.toFixed(0)} | ${row.load.p50} | ${row.load.p99} | ${f2(row.singleMs)} | ${row.cpuUsPerRequest.toFixed(0)} | ` +
        (fl
          ? `${fl.load.rps.toFixed(0)} | ${fl.load.p50} | ${f2(fl.singleMs)} | ${fl.cpuUsPerRequest.toFixed(0)} | ${f2(row.singleMs / fl.singleMs)} | ${f2(row.cpuUsPerRequest / fl.cpuUsPerRequest)} |`
          : '| | | | | |') +
        ` ${e.target} |`,
    );
  }
  lines.push('', `Cold start (spawn → first 200 of /v1/digestion/state): median ${r.coldStartMs.toFixed(0)} ms (${r.coldStarts.map((x) => x.toFixed(0)).join(', ')}). Resident memory after the load: ${r.rssMb.toFixed(0)} MB.`);
  if (r.fairness) {
    const fa = r.fairness;
    lines.push(
      '',
      `Fairness: GET /v1/digestion/state at 5 connections alone: p50 ${fa.alone.p50} ms, p99 ${fa.alone.p99} ms (${fa.alone.rps.toFixed(0)} req/s); ` +
        `while 5 more connections request 90-day score ranges scattered over the history (first-time fills, ${fa.fills.rps.toFixed(0)} req/s, p99 ${fa.fills.p99} ms): ` +
        `p50 ${fa.withFills.p50} ms, p99 ${fa.withFills.p99} ms (${fa.withFills.rps.toFixed(0)} req/s); ` +
        `while 5 more connections request 90-day snapshots (${fa.snapshots.rps.toFixed(0)} req/s, p50 ${fa.snapshots.p50} ms, p99 ${fa.snapshots.p99} ms): ` +
        `p50 ${fa.withSnapshots.p50} ms, p99 ${fa.withSnapshots.p99} ms (${fa.withSnapshots.rps.toFixed(0)} req/s). Memory after: ${fa.rssAfterMb.toFixed(0)} MB.`,
    );
  }
}
if (results.length > 1) {
  const first = results[0]!;
  const last = results[results.length - 1]!;
  lines.push('', `### Growth, ${years(first.days)} → ${years(last.days)}`, '', '| request | alone ms | ratio | req/s | ratio |', '| --- | ---: | ---: | ---: | ---: |');
  for (const e of ENDPOINTS) {
    const a = first.rows.get(e.name)!;
    const b = last.rows.get(e.name)!;
    lines.push(`| ${e.name} | ${f2(a.singleMs)} → ${f2(b.singleMs)} | ${f2(b.singleMs / a.singleMs)} | ${a.load.rps.toFixed(0)} → ${b.load.rps.toFixed(0)} | ${f2(b.load.rps / a.load.rps)} |`);
  }
  lines.push('', `Cold start ${first.coldStartMs.toFixed(0)} → ${last.coldStartMs.toFixed(0)} ms; memory ${first.rssMb.toFixed(0)} → ${last.rssMb.toFixed(0)} MB.`);
}
lines.push('', coldStartReport(coldVsBare));
lines.push('', ...fanOutReport(hooks));
lines.push('', `Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.`);

const report = lines.join('\n');
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', SMOKE ? 'smoke.md' : 'latest.md'), `${report}\n`);
