/**
 * Cold start on an empty database: spawn → first 200, for `chyme serve` (GET /v1/digestion/state
 * with a key) and for the bare node:http + better-sqlite3 server (bench/bare-server.mjs) on the same
 * file, alternating run by run, so that both see the same load on the machine. The figure that
 * counts is the ratio of the medians; beside it, the CPU time each process used until its first
 * answer (Linux /proc), which a machine busy with other work inflates far less than wall time. Part of `npm run bench` (bench/run.ts); alone:
 * `node --import tsx bench/cold-start.ts [runs]`. BENCH_CHYME_CLI times another build (bench/serve.ts);
 * BENCH_BEFORE_CLI (the built main.js of another checkout) adds that build to the same alternation,
 * for a before/after ratio under the same load.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchKey, cpuMsOf, startServe } from './serve.js';
import { percentile } from './stats.js';

const median = (xs: readonly number[]) => percentile(xs, 50);

/** One start: spawn → first 200 (wall), and the server's CPU time by then. */
interface Start {
  ms: number;
  cpuMs: number;
}

export interface ColdStart {
  runs: number;
  chymeMs: number[];
  bareMs: number[];
  chymeCpuMs: number[];
  bareCpuMs: number[];
  /** median(chyme) / median(bare) */
  ratio: number;
  /** The BENCH_BEFORE_CLI build, when given, in the same alternation. */
  before?: { cli: string; ms: number[]; cpuMs: number[]; ratio: number };
}

async function firstOk(url: string, headers: Record<string, string>): Promise<void> {
  for (;;) {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status === 200) return;
  }
}

async function bareColdStart(dbPath: string): Promise<Start> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [join(import.meta.dirname, 'bare-server.mjs'), dbPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        const m = /^LISTENING (\S+)$/m.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`bench/bare-server.mjs exited with ${code}`)));
    });
    await firstOk(url, {});
    return { ms: performance.now() - startedAt, cpuMs: cpuMsOf(child.pid!) };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
}

async function chymeColdStart(dbPath: string, secret: string, cli?: string): Promise<Start> {
  const serve = await startServe(dbPath, [], {}, cli);
  try {
    await firstOk(`${serve.url}/v1/digestion/state`, { authorization: `Bearer ${secret}` });
    return { ms: performance.now() - serve.startedAt, cpuMs: cpuMsOf(serve.pid) };
  } finally {
    await serve.stop();
  }
}

export async function coldStartVsBare(runs: number): Promise<ColdStart> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-cold-'));
  try {
    const dbPath = join(dir, 'chyme.db');
    // A migrated database with a key and nothing else; the service's own start-up work (foods
    // table, settings) is left to the first `chyme serve`, which is not counted.
    const secret = benchKey(dbPath);
    const beforeCli = process.env.BENCH_BEFORE_CLI;
    await chymeColdStart(dbPath, secret);
    await bareColdStart(dbPath);
    if (beforeCli) await chymeColdStart(dbPath, secret, beforeCli);
    const chyme: Start[] = [];
    const bare: Start[] = [];
    const before: Start[] = [];
    for (let i = 0; i < runs; i++) {
      chyme.push(await chymeColdStart(dbPath, secret));
      bare.push(await bareColdStart(dbPath));
      if (beforeCli) before.push(await chymeColdStart(dbPath, secret, beforeCli));
    }
    const bareMedian = median(bare.map((s) => s.ms));
    const chymeMs = chyme.map((s) => s.ms);
    return {
      runs,
      chymeMs,
      bareMs: bare.map((s) => s.ms),
      chymeCpuMs: chyme.map((s) => s.cpuMs),
      bareCpuMs: bare.map((s) => s.cpuMs),
      ratio: median(chymeMs) / bareMedian,
      ...(beforeCli ? { before: { cli: beforeCli, ms: before.map((s) => s.ms), cpuMs: before.map((s) => s.cpuMs), ratio: median(before.map((s) => s.ms)) / bareMedian } } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function coldStartReport(c: ColdStart): string {
  const ms = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`;
  return (
    `Cold start, empty database (spawn → first 200, ${c.runs} runs each, alternating): chyme serve ${ms(c.chymeMs)}; ` +
    `bare node:http + better-sqlite3 (bench/bare-server.mjs) ${ms(c.bareMs)}; ratio ${c.ratio.toFixed(2)}× (target ≤ 2.5×). ` +
    `CPU time until the first answer: chyme serve ${ms(c.chymeCpuMs)}, bare ${ms(c.bareCpuMs)}; ratio ${(median(c.chymeCpuMs) / median(c.bareCpuMs)).toFixed(2)}×.` +
    (c.before
      ? ` Before (${c.before.cli}): ${ms(c.before.ms)}, ratio ${c.before.ratio.toFixed(2)}×, CPU ${ms(c.before.cpuMs)}, ratio ${(median(c.before.cpuMs) / median(c.bareCpuMs)).toFixed(2)}×; ` +
        `now ÷ before ${(median(c.chymeMs) / median(c.before.ms)).toFixed(2)} (CPU ${(median(c.chymeCpuMs) / median(c.before.cpuMs)).toFixed(2)}).`
      : '')
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(coldStartReport(await coldStartVsBare(Number(process.argv[2] ?? 8))));
}
