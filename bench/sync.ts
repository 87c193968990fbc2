/**
 * Sync in `npm run bench` (issue 22), with real parts only: a real `chyme relay`, the real
 * `chyme sync init|join` commands and real `chyme serve` processes, all on 127.0.0.1.
 *
 * 1. Joining a device to a ten-year history: device A's file is seeded directly (SYNC_MEALS meals,
 *    default 15,000, and SYNC_NIGHTS nights of sleep, default 3,600), `chyme sync init` on A, then
 *    `chyme sync join CODE` on a fresh file B. Timed, and the resident memory of the command, and
 *    of the relay, sampled every 100 ms (and the command's peak from getrusage at its exit).
 *    Targets: the join under 60 s, no process above 200 MB. B must then hold exactly A's meals and
 *    nights (counts and checksums), or the bench fails.
 * 2. Steady state: `chyme serve` on A (synced) and on a copy of A's file made before sync was set
 *    up (sync off: the baseline), idle for SYNC_IDLE_S (default 15) seconds, then a light load
 *    (a meal write a second, four state reads a second) for SYNC_STEADY_S (default 60) seconds.
 *    Target: A under 120 MB resident.
 * 3. The cost of sync on a meal write: two rounds of SYNC_WRITES (default 1,000) POST
 *    /v1/nutrition/meals, each awaited, on A and on the copy (sync off), taking turns in blocks of
 *    50; the ratio of the medians of the rounds' p50 and totals. Target ≤ 1.3×.
 * 4. Propagation: `chyme serve` on B too; once B holds all of A's meals (its catch-up with what A
 *    wrote since the join, timed on its own), a meal written on A, timed until B's event stream
 *    (/v1/events/stream) announces meal.created with its id; SYNC_PROPAGATION samples (default
 *    200), one after the other. Target: p99 under 1 s on loopback.
 *
 * 5. A bulk import beside live meals (issue 27): SYNC_IMPORT_DAYS (default 730) days of history
 *    imported on A through POST /v1/imports while A and B each log a meal every 2 s and read the
 *    digestive state every 100 ms. Each live meal is timed until it is in the other device's file,
 *    and every request on each device is timed. Targets: each meal within 5 s, no request over 200 ms.
 *
 * SYNC_JOIN_ONLY=1 stops after the join. SYNC_JOIN_BASELINE_CLI=<an earlier build's build/server/cli/main.js>
 * sets up a copy of A's file with that build too (a history of its own on the same relay) and
 * joins it, SYNC_JOIN_ROUNDS (default 2) times each, taking turns with this build on fresh files:
 * the ratios of the medians are the before/after of the same run. SYNC_BENCH_STDERR=1 prints each
 * command's stderr (with CHYME_SYNC_DEBUG=1, what its engine did); SYNC_BENCH_LOG_DIR=<dir> keeps every
 * child's whole stderr there (the servers' too), one file per process.
 *
 * SYNC_SMOKE=1 makes every size tiny (the smoke test) and writes bench/results/sync-smoke.md
 * instead of bench/results/sync.md. Every child is stopped at the end, and killed on a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Db } from '../server/db/connection.js';
import { openDatabase } from '../server/db/connection.js';
import { initSettings } from '../server/settings.js';
import { dayOf } from '../server/time/tz.js';
import { historyImportDocument, insertHistory, syncBenchHistory } from './seed.js';
import { benchKey, CLI } from './serve.js';
import { percentile } from './stats.js';

const SMOKE = process.env.SYNC_SMOKE === '1';
/** A size from the environment: a whole number ≥ min, or a clear error (a typo must not pass as 0). */
function size(name: string, full: number, smoke: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return SMOKE ? smoke : full;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number ≥ ${min}, not ${JSON.stringify(raw)}`);
  return n;
}
const MEALS = size('SYNC_MEALS', 15_000, 300);
const NIGHTS = size('SYNC_NIGHTS', 3_600, 50);
const IDLE_S = size('SYNC_IDLE_S', 15, 1);
const STEADY_S = size('SYNC_STEADY_S', 60, 2);
const WRITES = size('SYNC_WRITES', 1000, 20);
/** The write rounds take turns between sync off and on in blocks of this many writes. */
const WRITE_BLOCK = 50;
const PROPAGATION = size('SYNC_PROPAGATION', 200, 10);
/** A propagation sample slower than this is printed with the time it was sent. */
const SLOW_SAMPLE_MS = 500;
/** How long one propagation sample waits for B before it counts as late (and the next is sent). */
const PROPAGATION_WAIT_MS = size('SYNC_PROPAGATION_WAIT_MS', 10_000, 10_000);
/** Days of history imported on A while both devices log a meal every 2 s (0: that part is skipped). */
const IMPORT_DAYS = size('SYNC_IMPORT_DAYS', 730, 30, 0);
/** Stop after the join (iterating on it). */
const JOIN_ONLY = process.env.SYNC_JOIN_ONLY === '1';
/** Another build's CLI (a copy of an earlier build's build/server/cli/main.js) joins too, taking turns: the same run's baseline. */
const JOIN_BASELINE_CLI = process.env.SYNC_JOIN_BASELINE_CLI;
const JOIN_ROUNDS = size('SYNC_JOIN_ROUNDS', 2, 1);
const TIMEZONE = 'UTC';
const RESULT_FILE = SMOKE ? 'sync-smoke.md' : 'sync.md';

// ---- Children: every process this bench starts, stopped at the end and killed on any failure ----

interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}
const children = new Set<Child>();
const alive = (c: Child) => c.proc.exitCode === null && c.proc.signalCode === null;
process.on('exit', () => {
  for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** Every child's whole stderr goes to a file here (with CHYME_SYNC_DEBUG=1: what each engine did, and the stalls of its thread). */
const LOG_DIR = process.env.SYNC_BENCH_LOG_DIR;
if (LOG_DIR) mkdirSync(LOG_DIR, { recursive: true });
/** As bench/serve.ts: BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" profiles the servers. */
const SERVER_NODE_ARGS = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
/** The same for the init and join commands. */
const COMMAND_NODE_ARGS = process.env.BENCH_COMMAND_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const PEAK_PRELOAD = pathToFileURL(join(import.meta.dirname, 'peak-rss.mjs')).href;

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = [], cli = CLI): Child {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', PEAK_PRELOAD, cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  // The tail is enough to say why something failed; a relay logs every connection.
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => (out = (out + c).slice(-65_536)));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-65_536)));
  if (LOG_DIR) proc.stderr!.pipe(createWriteStream(join(LOG_DIR, `${name.replace(/[^\w.-]+/g, '-')}.${proc.pid}.stderr`)));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = { name, proc, pid: proc.pid!, stdout: () => out, stderr: () => err, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

async function stopChild(c: Child): Promise<void> {
  if (!alive(c)) return;
  c.proc.kill('SIGTERM');
  const killer = setTimeout(() => c.proc.kill('SIGKILL'), 15_000);
  await c.exited;
  clearTimeout(killer);
}

/** Waits for a line on the child's stdout (the ready lines); fails if the child exits first. */
async function waitForOutput(c: Child, re: RegExp, ms: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = re.exec(c.stdout());
    if (m) return m;
    if (!alive(c)) throw new Error(`${c.name} exited with ${c.proc.exitCode}:\n${c.stdout()}\n${c.stderr()}`);
    if (Date.now() > deadline) throw new Error(`${c.name} did not print ${re} within ${ms / 1000} s:\n${c.stdout()}\n${c.stderr()}`);
    await sleep(20);
  }
}

/** Runs a CLI command to its end, with its wall time and peak resident memory. */
async function runCommand(name: string, args: string[], sampled: Record<string, number>, timeoutMs: number, cli = CLI): Promise<{ stdout: string; ms: number; peakMb: number; mem: Record<string, MemFigures> }> {
  const peakFile = join(workDir, `${name}.peak`);
  const t0 = performance.now();
  const c = startChild(name, args, { CHYME_BENCH_PEAK_FILE: peakFile }, COMMAND_NODE_ARGS, cli);
  const sampler = sampleMemory({ [name]: c.pid, ...sampled });
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), timeoutMs);
  const code = await c.exited;
  const ms = performance.now() - t0;
  clearTimeout(timer);
  const mem = sampler.stop();
  if (process.env.SYNC_BENCH_STDERR) process.stderr.write(`--- ${name} stderr (tail) ---\n${c.stderr()}`);
  if (code !== 0) throw new Error(`chyme ${args.slice(0, 2).join(' ')} exited with ${code} after ${(ms / 1000).toFixed(1)} s:\n${c.stdout()}\n${c.stderr()}`);
  const kb = existsSync(peakFile) ? Number(readFileSync(peakFile, 'utf8')) : NaN;
  const peakMb = Math.max(kb / 1024 || 0, mem[name]!.maxMb);
  return { stdout: c.stdout(), ms, peakMb, mem };
}

// ---- Memory ------------------------------------------------------------------------------------

interface MemFigures {
  /** The highest VmRSS sampled (every 100 ms), MB. */
  maxMb: number;
  meanMb: number;
  lastMb: number;
  /** VmHWM when sampling stopped (the process's peak since it started), MB; NaN once it exited. */
  hwmMb: number;
  samples: number;
}

function procStatus(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
    const rss = kb('VmRSS');
    // A process that has exited but is not reaped yet has no memory lines.
    return Number.isNaN(rss) ? undefined : { rss: rss / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Samples VmRSS of the named processes every 100 ms until stop(). */
function sampleMemory(pids: Record<string, number>): { stop(): Record<string, MemFigures> } {
  const seen: Record<string, number[]> = Object.fromEntries(Object.keys(pids).map((k) => [k, []]));
  const hwm: Record<string, number> = {};
  const take = () => {
    for (const [name, pid] of Object.entries(pids)) {
      const s = procStatus(pid);
      if (!s) continue;
      seen[name]!.push(s.rss);
      hwm[name] = s.hwm;
    }
  };
  take();
  const timer = setInterval(take, 100);
  return {
    stop() {
      take();
      clearInterval(timer);
      const out: Record<string, MemFigures> = {};
      for (const [name, pid] of Object.entries(pids)) {
        const xs = seen[name]!;
        out[name] = {
          maxMb: xs.length ? Math.max(...xs) : NaN,
          meanMb: xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN,
          lastMb: xs.at(-1) ?? NaN,
          hwmMb: procStatus(pid)?.hwm ?? hwm[name] ?? NaN,
          samples: xs.length,
        };
      }
      return out;
    },
  };
}

// ---- Servers -----------------------------------------------------------------------------------

interface Server {
  child: Child;
  url: string;
  key: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
}

async function serve(name: string, dbPath: string): Promise<Server> {
  const key = benchKey(dbPath);
  const child = startChild(name, ['serve', '--db', dbPath, '--host', '127.0.0.1', '--port', '0', '--quiet', '--tz', TIMEZONE, '--rate-limit', '1000000/1000000'], {
    CHYME_SYNC_RETRY_MS: '200',
  }, SERVER_NODE_ARGS);
  const url = (await waitForOutput(child, /^Chyme listening on (http:\/\/\S+)$/m, 60_000))[1]!;
  return {
    child,
    url,
    key,
    async api(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Until the service has reached the relay, finished its start-up pass and has nothing pending. */
async function synced(s: Server, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await s.api('GET', '/v1/sync');
    if (r.status !== 200) throw new Error(`GET /v1/sync on ${s.child.name}: ${r.status} ${JSON.stringify(r.json)}`);
    const st = r.json;
    if (!st.enabled) throw new Error(`${s.child.name}: sync is not on`);
    if (st.connected && st.pending_changes === 0 && st.last_synced_at) return;
    if (Date.now() > deadline) throw new Error(`${s.child.name} did not sync within ${ms / 1000} s: ${JSON.stringify(st)}\n${s.child.stderr()}`);
    await sleep(50);
  }
}

// ---- Data --------------------------------------------------------------------------------------


interface Census {
  meals: number;
  nights: number;
  /** Sums over every row: a lost or altered record changes them. */
  calories: number;
  timestamps: number;
}

function census(dbPath: string): Census {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number | null }).n ?? 0;
    return {
      meals: one('SELECT count(*) AS n FROM meals'),
      nights: one('SELECT count(*) AS n FROM sleep_sessions'),
      calories: one('SELECT total(calories) AS n FROM meals'),
      timestamps: one('SELECT total(timestamp_ms) + (SELECT total(start_ms + end_ms) FROM sleep_sessions) AS n FROM meals'),
    };
  } finally {
    db.close();
  }
}

function onFile(dbPath: string, mealId: string): boolean {
  const db = openDatabase(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT 1 FROM meals WHERE id = ?').get(mealId) !== undefined;
  } finally {
    db.close();
  }
}

function seed(dbPath: string): { meals: number; nights: number; ms: number } {
  const t0 = performance.now();
  const db: Db = openDatabase(dbPath);
  try {
    initSettings(db, Date.now(), TIMEZONE);
    const { meals, sleeps } = insertHistory(db, syncBenchHistory(MEALS, NIGHTS, TIMEZONE, Date.now()));
    return { meals, nights: sleeps, ms: performance.now() - t0 };
  } finally {
    db.close();
  }
}

let written = 0;
/** A meal as a person logs them: each 5 hours before the last (as bench/mqtt.ts), per server. */
function historyMeal(counter: { n: number }) {
  counter.n++;
  return { timestamp: new Date(Date.now() - counter.n * 5 * 3600_000).toISOString(), meal_type: 'snack', description: `bench ${counter.n}`, macros: { calories: 100 + (counter.n % 50) } };
}
/** A meal just now, in the current month's shard. */
function mealNow(label: string) {
  written++;
  return { timestamp: new Date(Date.now() - 1000).toISOString(), meal_type: 'snack', description: `${label} ${written}`, macros: { calories: 50 + (written % 20) } };
}

// ---- The event stream --------------------------------------------------------------------------

/** B's /v1/events/stream, read as the renderer reads it: the arrival time of each meal.created by id. */
async function mealCreatedStream(s: Server): Promise<{ arrived(id: string, ms: number): Promise<number>; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${s.url}/v1/events/stream`, { headers: { authorization: `Bearer ${s.key}`, accept: 'text/event-stream' }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET /v1/events/stream: ${res.status}`);
  const seen = new Map<string, number>();
  const waiting = new Map<string, (t: number) => void>();
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const now = performance.now();
        buf += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const lines = block.split('\n');
          if (!lines.includes('event: meal.created')) continue;
          const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
          const id = (JSON.parse(data.join('\n')) as { data: { object: { id: string } } }).data.object.id;
          seen.set(id, now);
          waiting.get(id)?.(now);
        }
      }
    } catch {
      // aborted at the end
    }
  })();
  return {
    arrived(id, ms) {
      const t = seen.get(id);
      if (t !== undefined) return Promise.resolve(t);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`meal ${id} did not reach the other device within ${ms / 1000} s`));
        }, ms);
        waiting.set(id, (t2) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(t2);
        });
      });
    },
    close: () => controller.abort(),
  };
}

// ---- A bulk import beside live meals ----------------------------------------------------------

/**
 * Imports IMPORT_DAYS days on A while A and B each log a meal every 2 s and read the state every
 * 100 ms, until the import is on B and four more meals were logged. Arrival is read from the other
 * device's file (no extra requests on it).
 */
async function importBesideLiveMeals(a: Server, b: Server) {
  const doc = historyImportDocument({ lastDay: dayOf(Date.now() - 2 * 86_400_000, TIMEZONE), days: IMPORT_DAYS, timezone: TIMEZONE });
  const imported = (doc.meals as unknown[]).length + (doc.sleep_sessions as unknown[]).length;
  const servers = { A: { s: a, path: aPath, times: [] as number[], slowest: '' }, B: { s: b, path: bPath, times: [] as number[], slowest: '' } };
  let importPostedAt: number | undefined;
  type Name = keyof typeof servers;
  const logged: Array<{ id: string; on: Name; at: number; arrivedMs?: number }> = [];
  let running = true;
  const timed = async (name: Name, method: string, path: string, body?: unknown) => {
    const t0 = performance.now();
    const r = await servers[name].s.api(method, path, body);
    const ms = performance.now() - t0;
    // Which request was the slowest, and when (seconds after the import was posted): what to trace.
    if (ms > Math.max(0, ...servers[name].times)) servers[name].slowest = `${method} ${path} ${ms.toFixed(0)} ms at ${importPostedAt === undefined ? 'before the import' : `${((t0 - importPostedAt) / 1000).toFixed(1)} s`}`;
    servers[name].times.push(ms);
    if (r.status >= 300) throw new Error(`${method} ${path} on ${name} during the import: ${r.status} ${JSON.stringify(r.json)}`);
    return r;
  };
  const logMeals = async (name: Name) => {
    while (running) {
      const r = await timed(name, 'POST', '/v1/nutrition/meals', mealNow(`live ${name}`));
      logged.push({ id: r.json.id as string, on: name, at: performance.now() });
      await sleep(2000);
    }
  };
  const readState = async (name: Name) => {
    while (running) {
      await timed(name, 'GET', '/v1/digestion/state');
      await sleep(100);
    }
  };
  // Until the loggers have stopped, not only `running`: a POST in flight when it turned false
  // adds its meal after, and a watcher that had left already made that meal's arrival NaN.
  let loggersDone = false;
  const watch = async () => {
    while (!loggersDone || logged.some((m) => m.arrivedMs === undefined)) {
      for (const m of logged) {
        if (m.arrivedMs !== undefined) continue;
        if (onFile(servers[m.on === 'A' ? 'B' : 'A'].path, m.id)) m.arrivedMs = performance.now() - m.at;
        else if (performance.now() - m.at > 120_000) throw new Error(`${m.on}'s live meal ${m.id} did not reach the other device within 120 s`);
      }
      await sleep(50);
    }
  };
  const loggers = [logMeals('A'), logMeals('B')];
  const workers = [...loggers, readState('A'), readState('B'), watch()];
  await sleep(3000);
  const t0 = performance.now();
  importPostedAt = t0;
  const form = new FormData();
  form.append('file', new Blob([JSON.stringify(doc)]), 'history.json');
  const res = await fetch(`${a.url}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${a.key}` }, body: form });
  if (res.status !== 201) throw new Error(`POST /v1/imports on A: ${res.status} ${await res.text()}`);
  // Until A has written the import out and B holds it, then four more live meals.
  const deadline = Date.now() + 600_000;
  for (;;) {
    const st = (await a.api('GET', '/v1/sync')).json;
    if (st.pending_changes === 0 && census(bPath).meals >= census(aPath).meals - 2) break;
    if (Date.now() > deadline) throw new Error('the import did not reach B within 600 s');
    await sleep(250);
  }
  const settledMs = performance.now() - t0;
  await sleep(8000);
  running = false;
  await Promise.all(loggers);
  loggersDone = true;
  await Promise.all(workers);
  const arrivals = logged.map((m) => m.arrivedMs!);
  const worst = (on: Name) => Math.max(0, ...logged.filter((m) => m.on === on).map((m) => m.arrivedMs!));
  const figures = {
    imported,
    live: logged.length,
    settledMs,
    arrivalP50: percentile(arrivals, 50),
    arrivalMaxAB: worst('A'),
    arrivalMaxBA: worst('B'),
    p99A: percentile(servers.A.times, 99),
    maxA: Math.max(...servers.A.times),
    p99B: percentile(servers.B.times, 99),
    maxB: Math.max(...servers.B.times),
    requests: servers.A.times.length + servers.B.times.length,
  };
  return { ...figures, summary: `arrival p50 ${figures.arrivalP50.toFixed(0)} ms, max A→B ${figures.arrivalMaxAB.toFixed(0)} / B→A ${figures.arrivalMaxBA.toFixed(0)} ms; requests p99/max A ${figures.p99A.toFixed(0)}/${figures.maxA.toFixed(0)} ms, B ${figures.p99B.toFixed(0)}/${figures.maxB.toFixed(0)} ms; slowest A ${servers.A.slowest}, B ${servers.B.slowest}; settled ${secs(settledMs)}` };
}

const median = (xs: number[]) => percentile(xs, 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (x: number) => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(0)} MB`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const yes = (ok: boolean) => (ok ? 'yes' : '**no**');

// ---- The run -----------------------------------------------------------------------------------

const workDir = mkdtempSync(join(tmpdir(), 'chyme-bench-sync-'));
const aPath = join(workDir, 'a.db');
const bPath = join(workDir, 'b.db');
const offPath = join(workDir, 'off.db');

async function main(): Promise<string> {
  const startedAt = new Date();
  // The relay, its token given (not inherited from the environment).
  const relay = startChild('relay', ['relay', '--host', '127.0.0.1', '--port', '0', '--data', join(workDir, 'relay')], { CHYME_RELAY_TOKEN: '' });
  const relayUrl = (await waitForOutput(relay, /^Chyme relay listening on (ws:\/\/\S+)$/m, 30_000))[1]!;
  const token = (await waitForOutput(relay, /^Token: (\S+)$/m, 30_000))[1]!;

  // ---- 1. set-up and join ----
  const seeded = seed(aPath);
  console.log(`seeded A: ${seeded.meals} meals, ${seeded.nights} nights in ${secs(seeded.ms)}`);
  // The baseline: the same history, sync never set up.
  copyFileSync(aPath, offPath);
  const expected = census(aPath);

  /** Sets sync up on a file with a build (a history of its own on the relay): its figures and pairing code. */
  const initWith = async (path: string, cli: string) => {
    const r = await runCommand('init', ['sync', 'init', '--relay', relayUrl, '--token', token, '--name', 'A', '--db', path], { relay: relay.pid }, 600_000, cli);
    const pairing = r.stdout.trim().split('\n').at(-1)!;
    if (!pairing.startsWith('chyme-sync:')) throw new Error(`no pairing code on the last line of sync init:\n${r.stdout}`);
    return { ...r, code: pairing };
  };
  // The baseline build sets up a copy of the same file first (its documents are its own format).
  const baseA = JOIN_BASELINE_CLI ? join(workDir, 'base-a.db') : undefined;
  if (baseA) copyFileSync(aPath, baseA);
  const baseInit = baseA ? await initWith(baseA, JOIN_BASELINE_CLI!) : undefined;
  if (baseInit) console.log(`sync init, baseline build: ${secs(baseInit.ms)}, peak ${mb(baseInit.peakMb)}`);
  const init = await initWith(aPath, CLI);
  const code = init.code;
  console.log(`sync init on A: ${secs(init.ms)}, peak ${mb(init.peakMb)}; relay ${mb(init.mem.relay!.maxMb)}`);

  /** Joins a fresh file with a build, and checks that it then holds exactly A's history. */
  const joinWith = async (path: string, cli: string, pairing = code) => {
    const r = await runCommand('join', ['sync', 'join', pairing, '--name', 'B', '--db', path], { relay: relay.pid }, 600_000, cli);
    const got = census(path);
    for (const k of Object.keys(expected) as Array<keyof Census>) {
      if (got[k] !== expected[k]) throw new Error(`after the join ${path} has ${k} = ${got[k]}, A has ${expected[k]}`);
    }
    if (got.meals !== MEALS || got.nights !== NIGHTS) throw new Error(`${path} has ${got.meals} meals and ${got.nights} nights, not ${MEALS} and ${NIGHTS}`);
    return { ...r, census: got };
  };
  // The baseline build joins too, taking turns with this one (each on a fresh file): base, this, base, this.
  const baseJoins: Array<{ ms: number; peakMb: number }> = [];
  const theseJoins: Array<{ ms: number; peakMb: number }> = [];
  let join_!: Awaited<ReturnType<typeof joinWith>>;
  for (let round = 0; round < (JOIN_BASELINE_CLI ? JOIN_ROUNDS : 1); round++) {
    if (JOIN_BASELINE_CLI) {
      const basePath = join(workDir, `base-${round}.db`);
      const base = await joinWith(basePath, JOIN_BASELINE_CLI, baseInit!.code);
      baseJoins.push(base);
      console.log(`sync join, baseline build: ${secs(base.ms)}, peak ${mb(base.peakMb)}`);
      for (const ext of ['', '-wal', '-shm']) rmSync(basePath + ext, { force: true });
    }
    for (const ext of ['', '-wal', '-shm']) rmSync(bPath + ext, { force: true });
    join_ = await joinWith(bPath, CLI);
    theseJoins.push(join_);
    console.log(`sync join on B: ${secs(join_.ms)}, peak ${mb(join_.peakMb)}; relay ${mb(join_.mem.relay!.maxMb)}`);
  }
  const onB = join_.census;
  const relayAfterJoin = procStatus(relay.pid);
  const ratio = (these: number[], base: number[]) => (median(these) / median(base)).toFixed(2);
  const joinLines = [
    `| \`chyme sync join CODE\` on a fresh B | ${secs(join_.ms)} | < 20 s | ${yes(join_.ms < 20_000)} |`,
    ...(JOIN_BASELINE_CLI
      ? [
          `| … the same join, this build ÷ the baseline build, median of ${JOIN_ROUNDS} turns each | time ${ratio(theseJoins.map((j) => j.ms), baseJoins.map((j) => j.ms))}× (${theseJoins.map((j) => secs(j.ms)).join(', ')} vs ${baseJoins.map((j) => secs(j.ms)).join(', ')}); peak RSS ${ratio(theseJoins.map((j) => j.peakMb), baseJoins.map((j) => j.peakMb))}× (${theseJoins.map((j) => mb(j.peakMb)).join(', ')} vs ${baseJoins.map((j) => mb(j.peakMb)).join(', ')}) | — | — |`,
        ]
      : []),
    `| … resident memory during the join: the join command (peak), the relay (max sampled) | ${mb(join_.peakMb)}, ${mb(join_.mem.relay!.maxMb)} (relay VmHWM since start ${mb(relayAfterJoin?.hwm ?? NaN)}) | < 200 MB; relay < 80 MB | ${yes(join_.peakMb < 200 && join_.mem.relay!.maxMb < 80)} |`,
    `| … B afterwards (checked: counts, calories and timestamps equal A's) | ${onB.meals.toLocaleString('en-US')} meals, ${onB.nights.toLocaleString('en-US')} nights | all of A's | yes |`,
  ];
  const header = [
    `# Sync (${startedAt.toISOString().slice(0, 16)}Z${SMOKE ? ', smoke sizes: the figures mean nothing' : ''})`,
    '',
    `Machine: ${cpus().length} CPUs, 1-minute load average ${loadavg()[0]!.toFixed(1)} at the end (other work may share it). A real \`chyme relay\`, \`chyme sync init|join\` and \`chyme serve\` on 127.0.0.1. History: ${seeded.meals.toLocaleString('en-US')} meals and ${seeded.nights.toLocaleString('en-US')} nights (seeded into A's file in ${secs(seeded.ms)}).`,
    '',
    '| figure | value | target | met |',
    '| --- | ---: | --- | --- |',
    `| \`chyme sync init\` on A (adopts the whole history, waits for the relay) | ${secs(init.ms)}; peak ${mb(init.peakMb)}; relay peak ${mb(init.mem.relay!.maxMb)} | — | — |`,
    ...(baseInit ? [`| … the same set-up by the baseline build (a copy of A's file, a history of its own) | ${secs(baseInit.ms)}; peak ${mb(baseInit.peakMb)}: this build ${(init.ms / baseInit.ms).toFixed(2)}× the time, ${(init.peakMb / baseInit.peakMb).toFixed(2)}× the peak | — | — |`] : []),
  ];
  if (JOIN_ONLY) return [...header, ...joinLines].join('\n');

  // ---- 2. steady state ----
  const tStart = performance.now();
  const a = await serve('serve A (sync on)', aPath);
  const off = await serve('serve copy (sync off)', offPath);
  const startMem = sampleMemory({ a: a.child.pid, off: off.child.pid });
  await synced(a);
  const aStartPassMs = performance.now() - tStart;
  const startFigures = startMem.stop();
  console.log(`serve A: listening and through its start-up pass in ${secs(aStartPassMs)}`);

  const idle = sampleMemory({ a: a.child.pid, off: off.child.pid, relay: relay.pid });
  await sleep(IDLE_S * 1000);
  const idleFigures = idle.stop();

  const loaded = sampleMemory({ a: a.child.pid, off: off.child.pid, relay: relay.pid });
  const loadEnd = performance.now() + STEADY_S * 1000;
  let loadRequests = 0;
  await Promise.all(
    [a, off].map(async (s) => {
      for (let tick = 0; performance.now() < loadEnd; tick++) {
        const r = tick % 5 === 0 ? await s.api('POST', '/v1/nutrition/meals', mealNow('steady')) : await s.api('GET', '/v1/digestion/state');
        if (r.status >= 300) throw new Error(`${s.child.name} under load: ${r.status} ${JSON.stringify(r.json)}`);
        loadRequests++;
        await sleep(200);
      }
    }),
  );
  const loadFigures = loaded.stop();
  console.log(`steady: A ${mb(idleFigures.a!.maxMb)} idle, ${mb(loadFigures.a!.maxMb)} under load; sync off ${mb(idleFigures.off!.maxMb)}, ${mb(loadFigures.off!.maxMb)}`);

  // ---- 3. writes with sync off and on ----
  await synced(a);
  const rounds: Record<'off' | 'on', Array<{ p50: number; p99: number; totalMs: number }>> = { off: [], on: [] };
  const counters = { off: { n: 0 }, on: { n: 0 } };
  const writeMem = sampleMemory({ a: a.child.pid, relay: relay.pid });
  // Two rounds; each round takes turns in blocks of WRITE_BLOCK writes (off, on, then on, off, …),
  // so that both see the same machine: a round of each one after the other measured whoever else
  // was busy meanwhile (ratios of 0.6–2.1 on a shared machine). A's documents are written out
  // before each block, so the off copy never shares the machine with A's drain.
  for (let round = 0; round < 2; round++) {
    const times: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const total = { off: 0, on: 0 };
    for (let done = 0; done < WRITES; done += WRITE_BLOCK) {
      for (const state of (done / WRITE_BLOCK) % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const s = state === 'on' ? a : off;
        await synced(a);
        const t0 = performance.now();
        for (let i = 0; i < Math.min(WRITE_BLOCK, WRITES - done); i++) {
          const w0 = performance.now();
          const r = await s.api('POST', '/v1/nutrition/meals', historyMeal(counters[state]));
          if (r.status !== 201) throw new Error(`POST meal (sync ${state}): ${r.status} ${JSON.stringify(r.json)}`);
          times[state].push(performance.now() - w0);
        }
        total[state] += performance.now() - t0;
      }
    }
    for (const state of ['off', 'on'] as const) {
      rounds[state].push({ p50: percentile(times[state], 50), p99: percentile(times[state], 99), totalMs: total[state] });
      console.log(`sync ${state}: ${WRITES} writes, p50 ${rounds[state].at(-1)!.p50.toFixed(2)} ms, ${secs(rounds[state].at(-1)!.totalMs)}`);
    }
  }
  const tDrain = performance.now();
  await synced(a);
  const drainAfterMs = performance.now() - tDrain;
  const writeFigures = writeMem.stop();
  const p50Ratio = median(rounds.on.map((r) => r.p50)) / median(rounds.off.map((r) => r.p50));
  const totalRatio = median(rounds.on.map((r) => r.totalMs)) / median(rounds.off.map((r) => r.totalMs));

  // ---- 4. propagation A → relay → B ----
  const tB = performance.now();
  const b = await serve('serve B (sync on)', bPath);
  await synced(b);
  const bStartPassMs = performance.now() - tB;
  // B joined before the steady load and the rounds: it first catches up with the meals A wrote
  // since (thousands, into one month's shard). That is timed on its own; the samples below time
  // a change on a device that is up to date, which is what the target is about.
  const aMeals = census(aPath).meals;
  const catchUpDeadline = Date.now() + 300_000;
  while (census(bPath).meals < aMeals) {
    if (Date.now() > catchUpDeadline) throw new Error(`B did not catch up with A's ${aMeals} meals within 300 s (has ${census(bPath).meals})`);
    await sleep(100);
  }
  const bCatchUpMs = performance.now() - tB;
  const stream = await mealCreatedStream(b);
  const propMem = sampleMemory({ a: a.child.pid, b: b.child.pid, relay: relay.pid });
  const latencies: number[] = [];
  /** Meals B's stream did not announce within PROPAGATION_WAIT_MS: counted at that value, and listed. */
  const late: Array<{ sample: number; id: string }> = [];
  for (let i = 0; i < PROPAGATION; i++) {
    const t0 = performance.now();
    const r = await a.api('POST', '/v1/nutrition/meals', mealNow('propagation'));
    if (r.status !== 201) throw new Error(`POST meal on A: ${r.status} ${JSON.stringify(r.json)}`);
    const id = r.json.id as string;
    try {
      const ms = (await stream.arrived(id, PROPAGATION_WAIT_MS)) - t0;
      latencies.push(ms);
      // The wall time of a slow sample, to find it in the servers' CHYME_SYNC_DEBUG traces (SYNC_BENCH_LOG_DIR).
      if (ms > SLOW_SAMPLE_MS) console.log(`propagation sample ${i + 1}: ${ms.toFixed(0)} ms, sent at ${new Date(Date.now() - (performance.now() - t0)).toISOString().slice(11, 23)}`);
    } catch {
      late.push({ sample: i + 1, id });
      latencies.push(PROPAGATION_WAIT_MS);
      console.log(`propagation sample ${i + 1}: ${id} not on B's stream within ${PROPAGATION_WAIT_MS / 1000} s`);
    }
  }
  const propFigures = propMem.stop();
  stream.close();
  console.log(`propagation: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, ${late.length} late`);

  // ---- 5. a bulk import on A while both devices log meals ----
  const bulk = IMPORT_DAYS > 0 ? await importBesideLiveMeals(a, b) : undefined;
  if (bulk) console.log(`import beside live meals: ${bulk.summary}`);

  // Everything A holds (the steady load's, the rounds' and the late meals too) must reach B.
  await synced(a);
  const deadline = Date.now() + 60_000;
  let finalA = census(aPath);
  let finalB = census(bPath);
  while (finalA.meals !== finalB.meals || finalA.calories !== finalB.calories) {
    if (Date.now() > deadline) break;
    await sleep(200);
    finalA = census(aPath);
    finalB = census(bPath);
  }
  const caughtUp = finalA.meals === finalB.meals && finalA.calories === finalB.calories;
  const lateOnB = late.filter((l) => onFile(bPath, l.id)).length;
  if (!caughtUp) console.log(`B did not catch up with A within 60 s: ${JSON.stringify(finalB)} vs ${JSON.stringify(finalA)}`);

  // Peaks over each process's whole life, read before they stop.
  const hwm = { a: procStatus(a.child.pid)?.hwm ?? NaN, off: procStatus(off.child.pid)?.hwm ?? NaN, b: procStatus(b.child.pid)?.hwm ?? NaN, relay: procStatus(relay.pid)?.hwm ?? NaN };
  for (const c of [b, a, off]) await stopChild(c.child);
  await stopChild(relay);

  const steadyA = Math.max(idleFigures.a!.maxMb, loadFigures.a!.maxMb);
  const lines = [
    ...header,
    ...joinLines,
    `| \`chyme serve\` on A: listening and through its start-up pass | ${secs(aStartPassMs)} (RSS max ${mb(startFigures.a!.maxMb)}) | — | — |`,
    `| \`chyme serve\` on A, sync on: RSS max idle (${IDLE_S} s) / under light load (${STEADY_S} s: 1 write + 4 reads a second) | ${mb(idleFigures.a!.maxMb)} / ${mb(loadFigures.a!.maxMb)} (mean ${mb(loadFigures.a!.meanMb)}) | < 120 MB | ${yes(steadyA < 120)} |`,
    `| the same file, sync off (baseline, same run) | ${mb(idleFigures.off!.maxMb)} / ${mb(loadFigures.off!.maxMb)} (mean ${mb(loadFigures.off!.meanMb)}) | — | — |`,
    `| the relay meanwhile | ${mb(idleFigures.relay!.maxMb)} / ${mb(loadFigures.relay!.maxMb)} | — | — |`,
    `| ${WRITES} meal writes, p50 per write, sync on ÷ off (the median of 2 rounds each by nearest rank: the higher) | ${p50Ratio.toFixed(2)}× (${rounds.on.map((r) => r.p50.toFixed(2)).join(', ')} vs ${rounds.off.map((r) => r.p50.toFixed(2)).join(', ')} ms) | ≤ 1.3× | ${yes(p50Ratio <= 1.3)} |`,
    `| the same, total time on ÷ off | ${totalRatio.toFixed(2)}× (${rounds.on.map((r) => secs(r.totalMs)).join(', ')} vs ${rounds.off.map((r) => secs(r.totalMs)).join(', ')}) | — | — |`,
    `| … p99 per write on / off | ${rounds.on.map((r) => r.p99.toFixed(1)).join(', ')} / ${rounds.off.map((r) => r.p99.toFixed(1)).join(', ')} ms | — | — |`,
    `| … A's documents written out and confirmed by the relay after the last round | ${secs(drainAfterMs)}; A's RSS max during the rounds ${mb(writeFigures.a!.maxMb)} | — | — |`,
    `| \`chyme serve\` on B: listening and through its start-up pass | ${secs(bStartPassMs)} | — | — |`,
    `| … B holding all ${aMeals.toLocaleString('en-US')} of A's meals (those written since the join included), from its start | ${secs(bCatchUpMs)} | — | — |`,
    `| meal written on A → meal.created on B's event stream, p50 / p95 / p99 / max of ${latencies.length} | ${percentile(latencies, 50).toFixed(0)} / ${percentile(latencies, 95).toFixed(0)} / ${percentile(latencies, 99).toFixed(0)} / ${Math.max(...latencies).toFixed(0)} ms | p99 < 1 s | ${yes(percentile(latencies, 99) < 1000)} |`,
    `| … samples not announced on B within ${PROPAGATION_WAIT_MS / 1000} s (counted at ${PROPAGATION_WAIT_MS / 1000} s above) | ${late.length}${late.length ? ` (sample ${late.map((l) => l.sample).join(', ')}; ${lateOnB} of them in B's file at the end)` : ''} | 0 | ${yes(late.length === 0)} |`,
    `| RSS max during propagation: A / B / relay | ${mb(propFigures.a!.maxMb)} / ${mb(propFigures.b!.maxMb)} / ${mb(propFigures.relay!.maxMb)} | — | — |`,
    `| peak over each process's life (VmHWM): serve A / serve sync off / serve B / relay | ${mb(hwm.a)} / ${mb(hwm.off)} / ${mb(hwm.b)} / ${mb(hwm.relay)} | — | — |`,
    ...(bulk
      ? [
          `| ${IMPORT_DAYS} days imported on A (${bulk.imported.toLocaleString('en-US')} meals and nights) while A and B each log a meal every 2 s: a live meal in the other device's file, p50 / max (A → B, B → A) | ${bulk.arrivalP50.toFixed(0)} / ${bulk.arrivalMaxAB.toFixed(0)}, ${bulk.arrivalMaxBA.toFixed(0)} ms (${bulk.live} meals; the import written out and on B after ${secs(bulk.settledMs)}) | each < 5 s | ${yes(Math.max(bulk.arrivalMaxAB, bulk.arrivalMaxBA) < 5000)} |`,
          `| … requests meanwhile (the meals and a state read every 100 ms), p99 / max on A, on B | ${bulk.p99A.toFixed(0)} / ${bulk.maxA.toFixed(0)} ms, ${bulk.p99B.toFixed(0)} / ${bulk.maxB.toFixed(0)} ms (${bulk.requests} requests) | none over 200 ms | ${yes(Math.max(bulk.maxA, bulk.maxB) < 200)} |`,
        ]
      : []),
    `| at the end (after up to 60 s) B holds A's ${finalA.meals.toLocaleString('en-US')} meals (${loadRequests} steady-load requests, ${4 * WRITES} round writes, ${PROPAGATION} propagation writes) | ${finalB.meals.toLocaleString('en-US')} | equal | ${yes(caughtUp)} |`,
  ];
  return lines.join('\n');
}

let report: string;
try {
  report = await main();
} catch (err) {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  for (const c of [...children]) {
    const tail = c.stderr().slice(-2000);
    if (tail) console.error(`--- ${c.name} stderr (tail) ---\n${tail}`);
  }
  await Promise.all([...children].map(stopChild));
  rmSync(workDir, { recursive: true, force: true });
  process.exit(1);
}
await Promise.all([...children].map(stopChild));
rmSync(workDir, { recursive: true, force: true });
console.log(report);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', RESULT_FILE), `${report}\n`);
