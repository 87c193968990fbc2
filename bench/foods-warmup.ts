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
 * Alone: `node --import tsx bench/foods-warmup.ts [pairs]` (FOODS_WARMUP_WINDOW_MS to change the window).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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
if (before) {
  const max = (xs: number[]) => Math.max(...xs);
  const b = worst.get('before')!;
  const t = worst.get('this')!;
  console.log(`worst of the runs, this / before: first start ${(max(t.first) / max(b.first)).toFixed(2)}, second start ${(max(t.second) / max(b.second)).toFixed(2)}`);
}
