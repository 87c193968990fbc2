/**
 * The real `chyme serve` (the built CLI) in a child process on a database file, for the benchmarks
 * that measure it from outside: cold start, webhook fan-out, fairness. The load generator and the
 * receivers then never share the server's event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createApiKey } from '../server/auth/keys.js';
import { SCOPES } from '../server/auth/scopes.js';
import { openDatabase } from '../server/db/connection.js';

/** BENCH_CHYME_CLI runs another build (e.g. a copy of the previous one, for before/after runs). */
export const CLI = process.env.BENCH_CHYME_CLI ?? join(import.meta.dirname, '..', 'build', 'server', 'cli', 'main.js');

/** A key holding every scope, written into the file before the server starts. */
export function benchKey(dbPath: string, nowMs = Date.now()): string {
  const db = openDatabase(dbPath);
  try {
    return createApiKey(db, { name: 'bench', scopes: [...SCOPES], nowMs }).secret;
  } finally {
    db.close();
  }
}

export interface Serve {
  url: string;
  pid: number;
  /** ms from spawn to the "listening" line. */
  readyMs: number;
  startedAt: number;
  /** Resident memory of the server process (from /proc), MB. */
  rssMb(): number;
  stop(): Promise<void>;
}

export async function startServe(dbPath: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, cli = CLI): Promise<Serve> {
  const startedAt = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" profiles the server under the load.
    [...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []), cli, 'serve', '--db', dbPath, '--port', '0', '--quiet', '--rate-limit', '1000000/1000000', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`chyme serve did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /^Chyme listening on (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chyme serve exited with ${code}: ${out}`));
    });
  });
  const readyMs = performance.now() - startedAt;
  return {
    url,
    pid: child.pid!,
    readyMs,
    startedAt,
    rssMb: () => rssOf(child.pid!),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** VmRSS of a process (Linux /proc, where the bench runs), MB. */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** CPU time (user + system) a process has used so far, ms (Linux /proc; clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the command name.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
