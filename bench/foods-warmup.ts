/**
 * `npm run bench` (foods warm-up part): how long a request waits while `chyme serve` loads the
 * food table and builds its search index, which it does shortly after it starts listening.
 *
 * Each run starts the built CLI on a fresh database (first start: the table is loaded, then the
 * index built) and once more on the same file (second start: the index only), and sends a cheap
 * request (GET /v1/health) every SAMPLE_MS, one at a time, for WINDOW_MS after the server listens;
 * it reports the longest wait and when it began. A request that arrives while the service's thread
 * is busy waits for it, so the longest wait is about the longest block of work on that thread.
 *
 * BENCH_BEFORE_CLI (the built main.js of another checkout, e.g. a copy of the previous build)
 * takes turns with this build run by run, so that the machine's load falls on both alike.
 *
 * On a busy machine a wait is mostly the process waiting for a core, so a second part measures
 * what the load changes far less: the CPU time of the longest block of the warm-up (between two
 * turns it gives to requests), in this process, on each build's own modules (its build/server).
 * Alone: `node --import tsx bench/foods-warmup.ts [pairs]` (FOODS_WARMUP_WINDOW_MS to change the window).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { CLI, startServe } from './serve.js';

const SAMPLE_MS = 20;
const WINDOW_MS = Number(process.env.FOODS_WARMUP_WINDOW_MS ?? 6000);

interface Wait {
  ms: number;
  /** When the request was sent, ms after the server listened. */
  atMs: number;
}

/** Requests GET /v1/health every SAMPLE_MS for WINDOW_MS; the longest waits, longest first. */
async function sample(url: string, listenedAt: number): Promise<Wait[]> {
  const waits: Wait[] = [];
  while (performance.now() - listenedAt < WINDOW_MS) {
    const sent = performance.now();
    const res = await fetch(`${url}/v1/health`);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`GET /v1/health answered ${res.status}`);
    const done = performance.now();
    waits.push({ ms: done - sent, atMs: sent - listenedAt });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, SAMPLE_MS - (done - sent))));
  }
  return waits.sort((a, b) => b.ms - a.ms);
}

interface Run {
  first: Wait[];
  second: Wait[];
}

async function run(cli: string): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-foodwarm-'));
  try {
    const dbPath = join(dir, 'chyme.db');
    const starts: Wait[][] = [];
    for (let i = 0; i < 2; i++) {
      const serve = await startServe(dbPath, [], {}, cli);
      try {
        starts.push(await sample(serve.url, performance.now()));
      } finally {
        await serve.stop();
      }
    }
    return { first: starts[0]!, second: starts[1]! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const show = (w: Wait[]) => `${w[0]!.ms.toFixed(0).padStart(4)} ms at ${(w[0]!.atMs / 1000).toFixed(2)} s (next ${w[1]!.ms.toFixed(0)} ms)`;

const pairs = Number(process.argv[2] ?? 2);
const before = process.env.BENCH_BEFORE_CLI;
const builds: Array<[string, string]> = before ? [['before', before], ['this', CLI]] : [['this', CLI]];
console.log(`foods warm-up: longest wait of GET /v1/health every ${SAMPLE_MS} ms for ${WINDOW_MS / 1000} s after listening`);
console.log('build   load | first start (table + index)          | second start (index only)');
const worst = new Map<string, { first: number[]; second: number[] }>();
for (let p = 0; p < pairs; p++) {
  for (const [name, cli] of builds) {
    const load = loadavg()[0]!.toFixed(1);
    const r = await run(cli);
    const w = worst.get(name) ?? { first: [], second: [] };
    w.first.push(r.first[0]!.ms);
    w.second.push(r.second[0]!.ms);
    worst.set(name, w);
    console.log(`${name.padEnd(6)} ${load.padStart(5)} | ${show(r.first)} | ${show(r.second)}`);
  }
}
/**
 * CPU ms of each block of a warm-up on a fresh database, longest first, with `buildServer`'s
 * modules: a build whose warm-up takes no turns is one block.
 */
async function blocks(buildServer: string): Promise<number[]> {
  const load = (path: string) => import(pathToFileURL(join(buildServer, path)).href);
  const [{ openDatabase }, { createAppContext }, { ManualClock }, { silentLogger }, { warmUpFoods }] = await Promise.all(
    ['db/connection.js', 'app-context.js', 'clock.js', 'logger.js', 'foods/foods.js'].map(load),
  );
  const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-foodwarm-'));
  const db = openDatabase(join(dir, 'chyme.db'));
  try {
    const app = createAppContext(db, new ManualClock(Date.UTC(2026, 10, 29)), silentLogger);
    const cpu: number[] = [];
    let since = process.cpuUsage();
    const lap = () => {
      const used = process.cpuUsage(since);
      cpu.push((used.user + used.system) / 1000);
    };
    await warmUpFoods(app, {
      nextTurn: async () => {
        lap();
        await new Promise((resolve) => setImmediate(resolve));
        since = process.cpuUsage();
      },
    });
    lap();
    return cpu.sort((a, b) => b - a);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const serverOf = (cli: string) => join(dirname(cli), '..');
console.log('CPU time of the warm-up\'s longest blocks (first start, in-process)');
for (let p = 0; p < pairs; p++) {
  for (const [name, cli] of builds) {
    const cpu = await blocks(serverOf(cli));
    const total = cpu.reduce((a, b) => a + b, 0);
    console.log(`${name.padEnd(6)} ${loadavg()[0]!.toFixed(1).padStart(5)} | longest ${cpu.slice(0, 3).map((ms) => ms.toFixed(0)).join(', ')} ms of ${cpu.length} block(s), ${total.toFixed(0)} ms in all`);
  }
}

if (before) {
  const max = (xs: number[]) => Math.max(...xs);
  const b = worst.get('before')!;
  const t = worst.get('this')!;
  console.log(`worst of the runs, this / before: first start ${(max(t.first) / max(b.first)).toFixed(2)}, second start ${(max(t.second) / max(b.second)).toFixed(2)}`);
}
