/**
 * `npm run bench` (last step): imports a generated Apple Health export.xml of CHYME_BENCH_IMPORT_MB
 * megabytes (default 1024) into a fresh database: uploaded to POST /v1/imports of the built
 * `chyme serve` (worker-thread parse, then its write in transactions of ~25 ms) while the same
 * server is asked for the digestion state in a loop and sent a meal every 100 ms (a write, which
 * waits for the import's transaction under way). Reports wall time, the server's peak resident memory (VmHWM: the
 * worker thread shares the process) and the state's latency during the import. The file is generated into a temporary
 * folder and deleted afterwards (never committed).
 *
 * Targets (issue 13): under 60 s and under 200 MB resident for 1 GB.
 */
import { execSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openAsBlob, readFileSync, rmSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generateAppleExport } from './apple-export.js';
import { percentile } from './stats.js';

/** The built CLI (npm run bench builds first); BENCH_CHYME_CLI runs another build (before/after runs). */
const CLI = process.env.BENCH_CHYME_CLI ?? fileURLToPath(new URL('../build/server/cli/main.js', import.meta.url));

const TARGET_MB = Number(process.env.CHYME_BENCH_IMPORT_MB ?? 1024);
const TIMEZONE = 'Europe/Berlin';

/** Peak and current resident memory of a process, from /proc (Linux). */
function rssOf(pid: number): { peakMb: number; nowMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakMb: kb('VmHWM') / 1024, nowMb: kb('VmRSS') / 1024 };
}

/** CPU seconds (user + system) a process has used: the cost of the import whatever else the machine runs. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

const dir = mkdtempSync(join(tmpdir(), 'chyme-bench-import-'));
const serve = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--quiet', '--db', join(dir, 'chyme.db'), '--tz', TIMEZONE], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const xml = join(dir, 'export.xml');
  process.stdout.write(`Generating a ${TARGET_MB} MB export.xml… `);
  const g0 = performance.now();
  await generateAppleExport(xml, TARGET_MB * 1024 * 1024);
  const size = statSync(xml).size;
  process.stdout.write(`${(size / 1024 ** 2).toFixed(0)} MB in ${((performance.now() - g0) / 1000).toFixed(1)} s\n`);

  // The built server, as a user runs it: its own process, so its memory is measured alone.
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    serve.stdout!.on('data', (c) => {
      out += c;
      const m = /^Chyme listening on (\S+)$/m.exec(out);
      if (m && /^App: /m.test(out)) resolve(m[1]!);
    });
    serve.on('exit', (code) => reject(new Error(`chyme serve exited (${code}): ${out}`)));
  });
  const keyOut = spawnSync(process.execPath, [CLI, 'keys', 'create', '--name', 'bench', '--scopes', 'all', '--db', join(dir, 'chyme.db')], { encoding: 'utf8' });
  const key = keyOut.stdout.trim().split('\n').at(-1)!;
  const auth = { authorization: `Bearer ${key}` };
  const idle = rssOf(serve.pid!);

  let importing = true;
  const latencies: number[] = [];
  const prober = (async () => {
    while (importing) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/digestion/state`, { headers: auth });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`state answered ${res.status} during the import`);
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const mealLatencies: number[] = [];
  const mealWriter = (async () => {
    for (let i = 0; importing; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/nutrition/meals`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ timestamp: new Date(Date.now() - 60_000).toISOString(), meal_type: 'snack', description: `bench ${i}`, macros: { calories: 100 } }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`a meal POST answered ${res.status} during the import`);
      mealLatencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const form = new FormData();
  form.append('file', await openAsBlob(xml), 'export.xml');
  const cpu0 = cpuSecondsOf(serve.pid!);
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/imports`, { method: 'POST', headers: auth, body: form });
  const body = (await res.json()) as Record<string, unknown>;
  const seconds = (performance.now() - t0) / 1000;
  importing = false;
  await Promise.all([prober, mealWriter]);
  if (res.status !== 201) throw new Error(`the import answered ${res.status}: ${JSON.stringify(body)}`);
  const mem = rssOf(serve.pid!);
  const cpu = cpuSecondsOf(serve.pid!) - cpu0;
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

  console.log(`Imported ${body.meals_added} meals and ${body.sleep_added} nights (${body.first_day} to ${body.last_day}), ${body.duplicates_skipped} duplicates skipped.`);
  console.log(`Machine load average during the run: ${load} (${os.cpus().length} cores).`);
  const figures = (l: number[]) => `${percentile(l, 50).toFixed(1)} / ${percentile(l, 99).toFixed(1)} / ${Math.max(...l).toFixed(1)} ms (${l.length})`;
  console.log(`| export.xml | wall time (upload + parse + write) | CPU time of chyme serve | peak RSS of chyme serve | idle RSS | state p50 / p99 / max during import (n) | meal POST p50 / p99 / max (n) |`);
  console.log(`|---|---|---|---|---|---|---|`);
  console.log(
    `| ${(size / 1024 ** 2).toFixed(0)} MB | ${seconds.toFixed(1)} s | ${cpu.toFixed(1)} s | ${mem.peakMb.toFixed(0)} MB | ${idle.nowMb.toFixed(0)} MB | ${figures(latencies)} | ${figures(mealLatencies)} |`,
  );
  console.log(seconds < 60 && mem.peakMb < 200 ? 'Within the targets (< 60 s, < 200 MB).' : 'OUTSIDE the targets (< 60 s, < 200 MB).');
} finally {
  serve.kill('SIGTERM');
  await once(serve, 'exit').catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
