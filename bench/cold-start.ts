/**
 * Cold start on an empty database: spawn → first 200, for `chyme serve` (GET /v1/digestion/state
 * with a key) and for the bare node:http + better-sqlite3 server (bench/bare-server.mjs) on the same
 * file, alternating run by run, so that both see the same load on the machine. The figure that
 * counts is the ratio of the medians. Part of `npm run bench` (bench/run.ts); alone:
 * `node --import tsx bench/cold-start.ts [runs]`. BENCH_CHYME_CLI times another build (bench/serve.ts);
 * BENCH_BEFORE_CLI (the built main.js of another checkout) adds that build to the same alternation,
 * for a before/after ratio under the same load.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchKey, startServe } from './serve.js';
import { percentile } from './stats.js';

const median = (xs: readonly number[]) => percentile(xs, 50);

export interface ColdStart {
  runs: number;
  chymeMs: number[];
  bareMs: number[];
  /** median(chyme) / median(bare) */
  ratio: number;
  /** The BENCH_BEFORE_CLI build, when given, in the same alternation. */
  before?: { cli: string; ms: number[]; ratio: number };
}

async function firstOk(url: string, headers: Record<string, string>): Promise<void> {
  for (;;) {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status === 200) return;
  }
}

async function bareColdStart(dbPath: string): Promise<number> {
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
    return performance.now() - startedAt;
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
}

async function chymeColdStart(dbPath: string, secret: string, cli?: string): Promise<number> {
  const serve = await startServe(dbPath, [], {}, cli);
  try {
    await firstOk(`${serve.url}/v1/digestion/state`, { authorization: `Bearer ${secret}` });
    return performance.now() - serve.startedAt;
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
    const chymeMs: number[] = [];
    const bareMs: number[] = [];
    const beforeMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      chymeMs.push(await chymeColdStart(dbPath, secret));
      bareMs.push(await bareColdStart(dbPath));
      if (beforeCli) beforeMs.push(await chymeColdStart(dbPath, secret, beforeCli));
    }
    const bare = median(bareMs);
    return {
      runs,
      chymeMs,
      bareMs,
      ratio: median(chymeMs) / bare,
      ...(beforeCli ? { before: { cli: beforeCli, ms: beforeMs, ratio: median(beforeMs) / bare } } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function coldStartReport(c: ColdStart): string {
  const ms = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`;
  return (
    `Cold start, empty database (spawn → first 200, ${c.runs} runs each, alternating): chyme serve ${ms(c.chymeMs)}; ` +
    `bare node:http + better-sqlite3 (bench/bare-server.mjs) ${ms(c.bareMs)}; ratio ${c.ratio.toFixed(2)}× (target ≤ 2.5×).` +
    (c.before ? ` Before (${c.before.cli}): ${ms(c.before.ms)}, ratio ${c.before.ratio.toFixed(2)}×; now ÷ before ${(median(c.chymeMs) / median(c.before.ms)).toFixed(2)}.` : '')
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(coldStartReport(await coldStartVsBare(Number(process.argv[2] ?? 8))));
}
