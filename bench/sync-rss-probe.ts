/**
 * A fast probe of bench/sync.ts part 2 (the resident memory of `chyme serve` with sync on), for
 * trying one change at a time without the 9-minute bench.
 *
 *   node --import tsx bench/sync-rss-probe.ts template
 *     once: seeds the ten-year history (as bench/sync.ts: SYNC_MEALS 15,000, SYNC_NIGHTS 3,600),
 *     runs a real `chyme relay` on a fixed port and the real `chyme sync init`, and keeps A's synced
 *     file, the sync-off copy and the relay's folder in $PROBE_DIR (/tmp/chyme-rss-probe).
 *   node --import tsx bench/sync-rss-probe.ts run VARIANT [VARIANT…]
 *     for each variant (see VARIANTS; PROBE_REPEAT rounds, variants interleaved): fresh copies of
 *     the template, the relay on them, `chyme serve` on A (sync on) and on the copy (sync off) at
 *     once as the bench does, through A's start-up pass, then VmRSS every 100 ms over PROBE_IDLE_S
 *     (15) idle seconds and PROBE_LOAD_S (30) seconds of the bench's light load (1 meal write + 4
 *     state reads a second per server). Prints max/mean, /proc/PID/smaps_rollup, the biggest
 *     mappings of /proc/PID/smaps by category, and what bench/rss-hook.mjs reads from inside (V8's
 *     spaces, Automerge's wasm memory).
 *
 * Run `npm run build:server` first; BENCH_CHYME_CLI picks another build.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { openDatabase, type Db } from '../server/db/connection.js';
import { insertMeal } from '../server/db/meals.js';
import { insertSleep } from '../server/db/sleep.js';
import { initSettings } from '../server/settings.js';
import { syncBenchHistory } from './seed.js';
import { benchKey, CLI } from './serve.js';

const DIR = process.env.PROBE_DIR ?? '/tmp/chyme-rss-probe';
const TPL = join(DIR, 'template');
const RELAY_PORT = Number(process.env.PROBE_RELAY_PORT ?? 47391);
const MEALS = Number(process.env.SYNC_MEALS ?? 15_000);
const NIGHTS = Number(process.env.SYNC_NIGHTS ?? 3_600);
const IDLE_S = Number(process.env.PROBE_IDLE_S ?? 15);
const LOAD_S = Number(process.env.PROBE_LOAD_S ?? 30);
const REPEAT = Number(process.env.PROBE_REPEAT ?? 1);
const TZ = 'UTC';
const PEAK_PRELOAD = pathToFileURL(join(import.meta.dirname, 'peak-rss.mjs')).href;
const HOOK_PRELOAD = pathToFileURL(join(import.meta.dirname, 'rss-hook.mjs')).href;

/** What a variant changes in both servers: node flags before the CLI, environment. */
interface Variant {
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Another build of the CLI. */
  cli?: string;
  /** Skip the sync-off server (when only the sync-on figure is compared). */
  onOnly?: boolean;
}
const VARIANTS: Record<string, Variant> = {
  base: {},
  nohook: {},
  arena1: { env: { MALLOC_ARENA_MAX: '1' } },
  arena2: { env: { MALLOC_ARENA_MAX: '2' } },
  trim: { env: { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_TOP_PAD_: '0' } },
  uv1: { env: { UV_THREADPOOL_SIZE: '1' } },
  v8threads1: { nodeArgs: ['--v8-pool-size=1'] },
  lite: { nodeArgs: ['--lite-mode'] },
  nojitless: { nodeArgs: ['--max-lazy'] },
  nosparkplug: { nodeArgs: ['--no-sparkplug'] },
  noopt: { nodeArgs: ['--no-opt'] },
  maxold: { nodeArgs: ['--max-old-space-size=64'] },
  semi: { nodeArgs: ['--max-semi-space-size=1'] },
  lazyval: { nodeArgs: ['--wasm-lazy-validation'] },
  ntasks1: { nodeArgs: ['--wasm-num-compilation-tasks=1'] },
  ntasks0: { nodeArgs: ['--wasm-num-compilation-tasks=0'] },
  optsize: { nodeArgs: ['--optimize-for-size'] },
  single: { nodeArgs: ['--single-threaded'] },
  noconc: { nodeArgs: ['--no-concurrent-recompilation'] },
  gcthreads: { nodeArgs: ['--no-concurrent-marking', '--no-parallel-marking', '--no-concurrent-sweeping', '--no-parallel-scavenge', '--no-parallel-compaction'] },
  pool1: { nodeArgs: ['--v8-pool-size=1'] },
};
for (const [name, cli] of Object.entries(process.env).filter(([k]) => k.startsWith('PROBE_CLI_'))) {
  VARIANTS[name.slice('PROBE_CLI_'.length).toLowerCase()] = { cli };
}
/** PROBE_VARIANT_name='{"nodeArgs":[...],"env":{...}}' adds a variant from outside. */
for (const [name, json] of Object.entries(process.env).filter(([k]) => k.startsWith('PROBE_VARIANT_'))) {
  VARIANTS[name.slice('PROBE_VARIANT_'.length).toLowerCase()] = JSON.parse(json!) as Variant;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => process.exit(130));

interface Child {
  proc: ChildProcess;
  out(): string;
  err(): string;
}
function start(args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = [], cli = CLI): Child {
  const argv = [...nodeArgs, '--import', PEAK_PRELOAD, cli, ...args];
  // PROBE_STRACE=FILE: the sync-on server runs under strace, its threads' mmap/munmap calls logged
  // (to see which freed blocks move glibc's mmap threshold); its RSS figures are then strace's.
  const traced = process.env.PROBE_STRACE && args[0] === 'serve' && args[2]?.endsWith('a.db');
  const proc = traced
    ? spawn('strace', ['-f', '-tt', '-e', 'trace=mmap,munmap', '-o', process.env.PROBE_STRACE!, process.execPath, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => (out = (out + c).slice(-65_536)));
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-65_536)));
  return { proc, out: () => out, err: () => err };
}
async function waitFor(c: Child, re: RegExp, ms: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = re.exec(c.out());
    if (m) return m;
    if (c.proc.exitCode !== null) throw new Error(`exited ${c.proc.exitCode}: ${c.out()}\n${c.err()}`);
    if (Date.now() > deadline) throw new Error(`no ${re} within ${ms} ms: ${c.out()}\n${c.err()}`);
    await sleep(20);
  }
}
async function stop(c: Child): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  const done = new Promise((r) => c.proc.once('exit', r));
  c.proc.kill('SIGTERM');
  const t = setTimeout(() => c.proc.kill('SIGKILL'), 15_000);
  await done;
  clearTimeout(t);
}

// ---- template ----


async function template(): Promise<void> {
  rmSync(TPL, { recursive: true, force: true });
  mkdirSync(TPL, { recursive: true });
  const a = join(TPL, 'a.db');
  const { meals, sleeps } = syncBenchHistory(MEALS, NIGHTS, TZ, Date.now());
  const db: Db = openDatabase(a);
  initSettings(db, Date.now(), TZ);
  db.transaction(() => {
    for (const s of sleeps) insertSleep(db, s);
    for (const m of meals) insertMeal(db, m);
  })();
  db.close();
  copyFileSync(a, join(TPL, 'off.db'));
  const relay = start(['relay', '--host', '127.0.0.1', '--port', String(RELAY_PORT), '--data', join(TPL, 'relay')], { CHYME_RELAY_TOKEN: '' });
  const url = (await waitFor(relay, /^Chyme relay listening on (ws:\/\/\S+)$/m, 30_000))[1]!;
  const token = (await waitFor(relay, /^Token: (\S+)$/m, 30_000))[1]!;
  const t0 = performance.now();
  const init = start(['sync', 'init', '--relay', url, '--token', token, '--name', 'A', '--db', a]);
  const code = await new Promise<number | null>((r) => init.proc.once('exit', r));
  if (code !== 0) throw new Error(`sync init: ${code}\n${init.out()}\n${init.err()}`);
  console.log(`template: ${meals.length} meals, ${sleeps.length} nights, sync init ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await stop(relay);
}

// ---- memory ----

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}
function sampler(pid: number): { stop(): { max: number; mean: number; n: number } } {
  const xs: number[] = [];
  const take = () => {
    const v = rssKb(pid);
    if (!Number.isNaN(v)) xs.push(v / 1024);
  };
  take();
  const t = setInterval(take, 100);
  return {
    stop() {
      take();
      clearInterval(t);
      return { max: Math.max(...xs), mean: xs.reduce((a, b) => a + b, 0) / xs.length, n: xs.length };
    },
  };
}

interface Mapping {
  start: number;
  end: number;
  perms: string;
  name: string;
  rss: number;
  anon: number;
}
function smaps(pid: number): Mapping[] {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of text.split('\n')) {
    const h = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (h) {
      cur = { start: parseInt(h[1]!, 16), end: parseInt(h[2]!, 16), perms: h[3]!, name: h[4]!.trim(), rss: 0, anon: 0 };
      out.push(cur);
      continue;
    }
    const f = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (f && cur) {
      if (f[1] === 'Rss') cur.rss = Number(f[2]);
      else cur.anon = Number(f[2]);
    }
  }
  return out;
}
/**
 * Rough category of a mapping, by name, permissions and the reservation it belongs to: glibc
 * gives each thread arena a 64 MB-aligned 64 MB reservation (its used part rw-p, the rest ---p),
 * a thread's stack is an 8 MB rw-p mapping (after a guard page), V8 allocates its heap in 256 KB
 * pages (the young generation in larger ones), code in rwx/r-x anonymous mappings.
 */
function categorize(maps: Mapping[]): string[] {
  return maps.map((m, i) => {
    const size = (m.end - m.start) / 1024;
    if (m.name.endsWith('/node') || m.name.includes('bin/node')) return `node binary ${m.perms}`;
    if (m.name.includes('.node')) return 'native addons (.node)';
    if (m.name.includes('.so')) return 'shared libs';
    if (m.name === '[heap]') return '[heap] (main arena, brk)';
    if (m.name.startsWith('[stack')) return '[stack]';
    if (m.name.startsWith('[')) return m.name;
    if (m.name) return `file ${m.name.split('/').at(-1)}`;
    if (m.perms.includes('x')) return 'anon exec (JIT / wasm code)';
    const next = maps[i + 1];
    const arenaSpan = next && !next.name && next.perms === '---p' && next.start === m.end ? (next.end - m.start) / 1024 : size;
    if (m.perms === 'rw-p' && m.start % (64 * 1024 * 1024) === 0 && arenaSpan === 64 * 1024) return 'anon thread arenas (64 MB heaps)';
    if (m.perms === 'rw-p' && size === 8192) return 'anon thread stacks (8 MB)';
    if (size >= 1024 * 1024) return 'anon ≥1 GB reservation (wasm memory)';
    if (size === 256) return 'anon 256 KB (V8 heap pages)';
    return 'anon other';
  });
}
function describe(pid: number): string {
  const maps = smaps(pid);
  const cats = new Map<string, { rss: number; n: number }>();
  const names = categorize(maps);
  for (const [i, m] of maps.entries()) {
    const c = names[i]!;
    const e = cats.get(c) ?? { rss: 0, n: 0 };
    e.rss += m.rss;
    e.n++;
    cats.set(c, e);
  }
  const lines = [...cats.entries()].sort((a, b) => b[1].rss - a[1].rss).filter(([, e]) => e.rss > 256).map(([c, e]) => `    ${(e.rss / 1024).toFixed(1).padStart(6)} MB  ${c} (${e.n})`);
  const top = maps.map((m, i) => ({ m, c: names[i]! })).sort((a, b) => b.m.rss - a.m.rss).slice(0, 14).map(({ m, c }) => `    ${(m.rss / 1024).toFixed(1).padStart(6)} MB of ${((m.end - m.start) / 1048576).toFixed(1).padStart(8)} MB ${m.perms} ${m.name || '(anon)'} [${c}]`);
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n').filter((l) => /^(Rss|Pss|Anonymous|Private_Dirty|Private_Clean|Shared_Clean):/.test(l)).map((l) => l.replace(/\s+/g, ' ')).join('; ');
  return `  rollup: ${rollup}\n  by category:\n${lines.join('\n')}\n  biggest mappings:\n${top.join('\n')}`;
}
async function inside(pid: number, file: string): Promise<string> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(file); i++) await sleep(50);
  await sleep(50);
  if (!existsSync(file)) return '  (no hook dump)';
  const d = JSON.parse(readFileSync(file, 'utf8'));
  const M = (x: number) => (x / 1048576).toFixed(1);
  const mu = d.memoryUsage;
  const spaces = d.spaces.filter((s: any) => s.physical > 0).map((s: any) => `${s.name.replace('_space', '')} ${M(s.physical)}/${M(s.used)}`).join(', ');
  return `  inside: rss ${M(mu.rss)}, heapTotal ${M(mu.heapTotal)}, heapUsed ${M(mu.heapUsed)}, external ${M(mu.external)}, arrayBuffers ${M(mu.arrayBuffers)}; malloced ${M(d.heap.malloced_memory)} (peak ${M(d.heap.peak_malloced_memory)}); code+metadata ${M(d.code.code_and_metadata_size)}, bytecode ${M(d.code.bytecode_and_metadata_size)}; wasm memories [${d.wasmMemories.map(M).join(', ')}] MB\n  spaces (physical/used MB): ${spaces}`;
}

// ---- one variant ----

interface Serve {
  c: Child;
  url: string;
  key: string;
  pid: number;
}
async function serve(db: string, v: Variant, hookFile: string, useHook: boolean): Promise<Serve> {
  const key = benchKey(db);
  const nodeArgs = [...(v.nodeArgs ?? []), ...(useHook ? ['--import', HOOK_PRELOAD] : [])];
  const c = start(['serve', '--db', db, '--host', '127.0.0.1', '--port', '0', '--quiet', '--tz', TZ, '--rate-limit', '1000000/1000000'], { CHYME_SYNC_RETRY_MS: '200', CHYME_RSS_HOOK_FILE: hookFile, CHYME_RSS_HOOK_TRACE: process.env.PROBE_TRACE ?? '', ...v.env }, nodeArgs, v.cli);
  const url = (await waitFor(c, /^Chyme listening on (http:\/\/\S+)$/m, 60_000))[1]!;
  return { c, url, key, pid: c.proc.pid! };
}
async function api(s: Serve, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(s.url + path, { method, headers: { authorization: `Bearer ${s.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
let written = 0;
const mealNow = () => ({ timestamp: new Date(Date.now() - 1000).toISOString(), meal_type: 'snack', description: `steady ${++written}`, macros: { calories: 50 + (written % 20) } });

async function runVariant(name: string, round: number): Promise<Record<string, string>> {
  const v = VARIANTS[name];
  if (!v) throw new Error(`unknown variant ${name}: ${Object.keys(VARIANTS).join(', ')}`);
  const work = join(DIR, `run-${name}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(TPL, work, { recursive: true });
  const relay = start(['relay', '--host', '127.0.0.1', '--port', String(RELAY_PORT), '--data', join(work, 'relay')], { CHYME_RELAY_TOKEN: '' });
  await waitFor(relay, /^Token: (\S+)$/m, 30_000);
  const useHook = name !== 'nohook';
  const t0 = performance.now();
  const a = await serve(join(work, 'a.db'), v, join(work, 'hook-on.json'), useHook);
  const listenMs = performance.now() - t0;
  const off = v.onOnly ? undefined : await serve(join(work, 'off.db'), v, join(work, 'hook-off.json'), useHook);
  for (;;) {
    const st = (await api(a, 'GET', '/v1/sync')).json;
    if (st.connected && st.pending_changes === 0 && st.last_synced_at) break;
    if (performance.now() - t0 > 120_000) throw new Error(`A not synced: ${JSON.stringify(st)}`);
    await sleep(50);
  }
  const passMs = performance.now() - t0;
  const servers = off ? { on: a, off } : { on: a };
  const report: Record<string, string> = {};
  const idle = Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, sampler(s.pid)]));
  await sleep(IDLE_S * 1000);
  const idleF = Object.fromEntries(Object.entries(idle).map(([k, s]) => [k, s.stop()]));
  const detail: string[] = [];
  for (const [k, s] of Object.entries(servers)) detail.push(`[${name} r${round} ${k}] after idle\n${describe(s.pid)}\n${useHook ? await inside(s.pid, join(work, `hook-${k}.json`)) : ''}`);
  const load = Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, sampler(s.pid)]));
  const end = performance.now() + LOAD_S * 1000;
  const cpu0 = Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, cpuTicks(s.pid)]));
  await Promise.all(
    Object.values(servers).map(async (s) => {
      for (let tick = 0; performance.now() < end; tick++) {
        const r = tick % 5 === 0 ? await api(s, 'POST', '/v1/nutrition/meals', mealNow()) : await api(s, 'GET', '/v1/digestion/state');
        if (r.status >= 300) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
        await sleep(200);
      }
    }),
  );
  const loadF = Object.fromEntries(Object.entries(load).map(([k, s]) => [k, s.stop()]));
  // The load's meals must have reached the relay: a variant that broke sync must not pass for a small one.
  const tSync = performance.now();
  for (;;) {
    const st = (await api(a, 'GET', '/v1/sync')).json;
    if (st.connected && st.pending_changes === 0) break;
    if (performance.now() - tSync > 60_000) throw new Error(`A did not sync its load within 60 s: ${JSON.stringify(st)}`);
    await sleep(100);
  }
  console.log(`[${name} r${round}] the load's writes confirmed by the relay ${(performance.now() - tSync).toFixed(0)} ms after it ended`);
  const cpu = Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, cpuTicks(s.pid) - cpu0[k]!]));
  for (const [k, s] of Object.entries(servers)) detail.push(`[${name} r${round} ${k}] after load\n${describe(s.pid)}\n${useHook ? await inside(s.pid, join(work, `hook-${k}.json`)) : ''}`);
  for (const k of Object.keys(servers)) {
    report[k] = `idle max ${idleF[k]!.max.toFixed(1)} mean ${idleF[k]!.mean.toFixed(1)} | load max ${loadF[k]!.max.toFixed(1)} mean ${loadF[k]!.mean.toFixed(1)} | cpu under load ${(cpu[k]! * 10).toFixed(0)} ms`;
  }
  console.log(detail.join('\n'));
  if (process.env.PROBE_TRACE) for (const [k, s] of Object.entries(servers)) console.log(`[${name} r${round} ${k}] trace\n${s.c.err().split('\n').filter((l: string) => l.startsWith('rsshook') || l.startsWith('sync ')).join('\n')}`);
  console.log(`== ${name} r${round}: listening ${listenMs.toFixed(0)} ms, synced ${passMs.toFixed(0)} ms`);
  for (const [k, line] of Object.entries(report)) console.log(`== ${name} r${round} ${k.padEnd(3)}: ${line}`);
  for (const s of Object.values(servers)) await stop(s.c);
  await stop(relay);
  rmSync(work, { recursive: true, force: true });
  return report;
}
/** utime + stime of a process, in clock ticks (100 a second on Linux). */
function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** Spawn → first 200 of GET /v1/digestion/state (as bench/run.ts), PROBE_COLD runs per variant, interleaved. */
async function cold(names: string[]): Promise<void> {
  const work = join(DIR, 'run-cold');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(TPL, work, { recursive: true });
  const relay = start(['relay', '--host', '127.0.0.1', '--port', String(RELAY_PORT), '--data', join(work, 'relay')], { CHYME_RELAY_TOKEN: '' });
  await waitFor(relay, /^Token: (\S+)$/m, 30_000);
  const times: Record<string, number[]> = {};
  const runs = Number(process.env.PROBE_COLD ?? 7);
  for (let i = 0; i < runs; i++) {
    for (const n of names) {
      for (const file of ['off.db', 'a.db']) {
        const v = VARIANTS[n]!;
        const db = join(work, file);
        const key = benchKey(db);
        const t0 = performance.now();
        const c = start(['serve', '--db', db, '--host', '127.0.0.1', '--port', '0', '--quiet', '--tz', TZ, '--rate-limit', '1000000/1000000'], { ...v.env }, v.nodeArgs ?? [], v.cli);
        const url = (await waitFor(c, /^Chyme listening on (http:\/\/\S+)$/m, 60_000))[1]!;
        for (;;) {
          const res = await fetch(`${url}/v1/digestion/state`, { headers: { authorization: `Bearer ${key}` } });
          await res.arrayBuffer();
          if (res.status === 200) break;
        }
        (times[`${n} ${file === 'a.db' ? 'sync on' : 'sync off'}`] ??= []).push(performance.now() - t0);
        await stop(c);
      }
    }
  }
  await stop(relay);
  for (const [k, xs] of Object.entries(times)) console.log(`cold ${k.padEnd(24)} median ${[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(' ')})`);
}

const [mode, ...names] = process.argv.slice(2);
if (mode === 'template') await template();
else if (mode === 'cold') await cold(names);
else if (mode === 'run') {
  if (!existsSync(join(TPL, 'a.db'))) throw new Error(`no template in ${TPL}: run "template" first`);
  const all: string[] = [];
  for (let r = 1; r <= REPEAT; r++) {
    for (const n of names) {
      const rep = await runVariant(n, r);
      for (const [k, line] of Object.entries(rep)) all.push(`${n.padEnd(12)} r${r} ${k.padEnd(3)} ${line}`);
    }
  }
  console.log(`\nSUMMARY (MB)\n${all.join('\n')}`);
  writeFileSync(join(DIR, `summary-${Date.now()}.txt`), all.join('\n') + '\n');
} else {
  console.error('usage: sync-rss-probe.ts template | run VARIANT…');
  process.exit(2);
}
