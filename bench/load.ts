/**
 * The load runner of the HTTP benchmarks: autocannon against a server running in its own
 * process (so the load generator and the server do not share an event loop), with the figures
 * every bench reports. bench/http.ts uses it; later benches can too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { cpuMsOf } from './serve.js';

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  /** A POST with this body (default a GET); `[<id>]` in it becomes a fresh id per request. */
  body?: string;
  /** Concurrent connections (default 10). */
  connections?: number;
  /** Seconds of measured load (default 3). */
  durationSec?: number;
  /** Seconds of unmeasured load first, for the JIT and caches (default 2). */
  warmupSec?: number;
  /** The server's process id: when given, its CPU time per request is measured from /proc. */
  pid?: number;
}

export interface LoadResult {
  /** Latency in ms. */
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  /** Requests per second (mean). */
  rps: number;
  requests: number;
  /** Connection errors, timeouts and non-2xx answers: a valid run has none. */
  failures: number;
  /** The server's CPU time (user + system) per request in µs, when `pid` was given. */
  cpuPerRequestUs?: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const base = {
    url: options.url,
    connections: options.connections ?? 10,
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { method: 'POST', body: options.body, idReplacement: true }),
  };
  await autocannon({ ...base, duration: options.warmupSec ?? 2 });
  const cpuBefore = options.pid === undefined ? 0 : cpuMsOf(options.pid);
  const r = await autocannon({ ...base, duration: options.durationSec ?? 3 });
  const cpuMs = options.pid === undefined ? undefined : cpuMsOf(options.pid) - cpuBefore;
  return {
    ...loadResultOf(r),
    ...(cpuMs === undefined ? {} : { cpuPerRequestUs: (cpuMs * 1000) / Math.max(r.requests.total, 1) }),
  };
}

/** The figures this bench reports from one autocannon result. */
export function loadResultOf(r: Awaited<ReturnType<typeof autocannon>>): LoadResult {
  return {
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    mean: r.latency.mean,
    rps: r.requests.average,
    requests: r.requests.total,
    failures: r.errors + r.timeouts + r.non2xx,
  };
}

export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <script> ...args` and waits for its `LISTENING <url>` line. The child
 * is stopped with SIGTERM (and killed if it does not exit within 5 s).
 */
export async function startServerProcess(script: string, args: string[], cwd: string): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 30 s`)), 30_000);
    lines.on('line', (line) => {
      const m = /^LISTENING (\S+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
