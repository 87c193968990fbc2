import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { join } from 'node:path';
import { CLI, runCli, startServe, type ServeProcess } from './cli.js';

/**
 * Real parts for sync tests: a `chyme relay` process and `chyme serve` processes on 127.0.0.1, each
 * device with its own database and sync storage. Waits poll for a condition with a deadline; the
 * deadlines bound hangs, they are not what a test measures.
 */

export interface RelayProcess {
  url: string;
  token: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Ends the relay (SIGKILL by default: a partition, not a goodbye). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data folder (same token). */
  restart(): Promise<void>;
}

async function spawnRelay(dataDir: string, port: number, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; token: string; port: number }> {
  const child = spawn(process.execPath, [CLI, 'relay', '--port', String(port), '--data', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`chyme relay did not start: ${out}\n${err}`)), 20_000);
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /^Chyme relay listening on (ws:\/\/\S+)\nToken: (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, token: m[2]!, port: Number(new URL(m[1]!).port) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`chyme relay exited with ${code}: ${out}\n${err}`));
    });
  });
}

/** `env`: added to the relay's environment (CHYME_RELAY_COMPACT_GRACE_MS), also after a restart. */
export async function startRelay(dataDir: string, options: { env?: NodeJS.ProcessEnv } = {}): Promise<RelayProcess> {
  const env = options.env ?? {};
  const first = await spawnRelay(dataDir, 0, env);
  const relay: RelayProcess = {
    ...first,
    dataDir,
    async kill(signal = 'SIGKILL') {
      if (relay.child.exitCode !== null || relay.child.signalCode !== null) return;
      const exited = once(relay.child, 'exit');
      relay.child.kill(signal);
      await exited;
    },
    async restart() {
      await relay.kill();
      // The port was just freed; another process could take it, so a few tries.
      for (let i = 0; ; i++) {
        try {
          relay.child = (await spawnRelay(dataDir, relay.port, env)).child;
          return;
        } catch (err) {
          if (i >= 20) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
  return relay;
}

export interface Device {
  name: string;
  dbPath: string;
  key: string;
  url: string;
  serve: ServeProcess;
  /** Everything the device's processes wrote on stderr, across restarts. */
  stderr(): string;
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
  /** Stops (SIGTERM by default, SIGKILL for a crash) and starts `chyme serve` again on the same database. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export const SYNC_ENV = { CHYME_SYNC_RETRY_MS: '200' };

// Debugging a sync test: CHYME_SYNC_DEBUG=1 makes the engine trace what it drains and projects on
// stderr, and CHYME_SYNC_DEBUG_DIR=DIR keeps each device's stderr in DIR/PID-N-NAME.log when the run ends.
const debugDir = process.env.CHYME_SYNC_DEBUG_DIR;
const started: Device[] = [];
if (debugDir) {
  process.on('exit', () => {
    mkdirSync(debugDir, { recursive: true });
    // Each test file runs in a process of its own: the pid keeps their logs apart.
    started.forEach((d, i) => writeFileSync(join(debugDir, `${process.pid}-${i + 1}-${d.name}.log`), d.stderr()));
  });
}

export async function startDevice(dir: string, name: string, env: NodeJS.ProcessEnv = {}): Promise<Device> {
  const dbPath = join(dir, `${name}.db`);
  const created = runCli(['keys', 'create', '--name', 'sync test', '--scopes', 'all', '--db', dbPath]);
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const key = created.stdout.trim().split('\n').at(-1)!;
  const args = ['--db', dbPath, '--tz', 'UTC', '--rate-limit', '5000/50000'];
  let earlier = '';
  const device: Device = {
    stderr: () => earlier + device.serve.stderr(),
    name,
    dbPath,
    key,
    url: '',
    serve: await startServe(args, { ...SYNC_ENV, ...env }),
    async api(method, path, body) {
      const res = await fetch(device.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    },
    async restart(signal = 'SIGTERM') {
      await device.stop(signal);
      earlier += device.serve.stderr();
      device.serve = await startServe(args, { ...SYNC_ENV, ...env });
      device.url = device.serve.url;
    },
    async stop(signal = 'SIGTERM') {
      const child = device.serve.child;
      // Killed already (exitCode stays null after a signal): nothing to wait for.
      if (child.exitCode !== null || child.signalCode !== null) return;
      await device.serve.stop(signal);
    },
  };
  device.url = device.serve.url;
  started.push(device);
  return device;
}

/** Polls `fn` until it returns something other than undefined/false, or fails with `what` after timeoutMs. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Sets sync up on `host` and joins `others` to it through the API; returns the pairing code. */
export async function pair(relay: RelayProcess, host: Device, ...others: Device[]): Promise<string> {
  const setup = await host.api('POST', '/v1/sync/setup', { relay: relay.url, token: relay.token, name: host.name });
  if (setup.status !== 201) throw new Error(`setup failed: ${JSON.stringify(setup.json)}`);
  const code = (await host.api('GET', '/v1/sync/pairing-code')).json.pairing_code as string;
  for (const d of others) {
    const joined = await d.api('POST', '/v1/sync/join', { pairing_code: code, name: d.name });
    if (joined.status !== 200) throw new Error(`join failed: ${JSON.stringify(joined.json)}`);
  }
  return code;
}

/** The person's synced history as the API shows it, in a stable order (the export, without its instant and webhooks). */
export async function history(d: Device): Promise<unknown> {
  const r = await d.api('GET', '/v1/export');
  if (r.status !== 200) throw new Error(`export failed: ${r.status}`);
  const { exported_at: _at, webhook_subscriptions: _w, ...rest } = r.json as Record<string, unknown>;
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  for (const k of ['foods', 'saved_meals', 'meals', 'sleep_sessions']) (rest[k] as Array<{ id: string }>).sort(byId);
  return rest;
}

/** Waits until every device shows the same history; returns it. */
export async function converged(devices: Device[], timeoutMs = 30_000): Promise<unknown> {
  let last: string[] = [];
  try {
    return await until(
      'the devices converge',
      async () => {
        const all = await Promise.all(devices.map(history));
        last = all.map((h) => JSON.stringify(h));
        return last.every((h) => h === last[0]) ? all[0] : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    // Where the first device's history and each other one part ways, with some context, and what
    // each device says of its sync (which side holds changes back, or cannot reach the relay).
    const statuses = await Promise.all(devices.map(async (d) => `${d.name}: ${await syncSummary(d)}`));
    throw new Error(`${(err as Error).message}\n${historyDifferences(devices, last)}\n${statuses.join('\n')}`);
  }
}

/** A device's GET /v1/sync, less its lists of devices and conflicts. */
async function syncSummary(d: Device): Promise<string> {
  try {
    const r = await d.api('GET', '/v1/sync');
    const { devices: _d, conflicts: _c, ...rest } = (r.json ?? {}) as Record<string, unknown>;
    return `${r.status} ${JSON.stringify(rest)}`;
  } catch (err) {
    return `no answer (${String(err)})`;
  }
}

/** What each device's history has that the first device's lacks or holds otherwise, record by record. */
function historyDifferences(devices: Device[], histories: string[]): string {
  const parsed = histories.map((h) => JSON.parse(h || '{}') as Record<string, unknown>);
  const first = parsed[0] ?? {};
  const lines: string[] = [];
  for (let i = 1; i < parsed.length; i++) {
    const other = parsed[i]!;
    for (const key of Object.keys({ ...first, ...other })) {
      const mine = first[key];
      const theirs = other[key];
      if (JSON.stringify(mine) === JSON.stringify(theirs)) continue;
      if (!Array.isArray(mine) || !Array.isArray(theirs)) {
        lines.push(`${key}: ${devices[0]!.name} ${JSON.stringify(mine)}; ${devices[i]!.name} ${JSON.stringify(theirs)}`);
        continue;
      }
      const byId = (list: unknown[]) => new Map(list.map((r) => [String((r as { id?: unknown }).id), JSON.stringify(r)]));
      const a = byId(mine);
      const b = byId(theirs);
      for (const id of new Set([...a.keys(), ...b.keys()])) {
        if (a.get(id) === b.get(id)) continue;
        lines.push(`${key} ${id}: ${devices[0]!.name} ${a.get(id) ?? '(none)'}; ${devices[i]!.name} ${b.get(id) ?? '(none)'}`);
      }
    }
  }
  return lines.slice(0, 12).join('\n') + (lines.length > 12 ? `\n… and ${lines.length - 12} more differences` : '');
}

export interface SyncedPair {
  dir: string;
  relay: RelayProcess;
  /** The device that set sync up (the webhook host). */
  a: Device;
  /** The device that joined. */
  b: Device;
  /** Stops both devices and the relay, and removes the folder. */
  stop(): Promise<void>;
}

/**
 * A relay process and two `chyme serve` processes ("desk" sets sync up, "laptop" joins), in a new
 * temp folder. `beforePairing` gives both devices a life before sync.
 */
export async function startSyncedPair(options: { beforePairing?: (a: Device, b: Device) => Promise<void>; env?: NodeJS.ProcessEnv } = {}): Promise<SyncedPair> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-sync-'));
  const relay = await startRelay(join(dir, 'relay'));
  const started = await Promise.allSettled([startDevice(dir, 'desk', options.env), startDevice(dir, 'laptop', options.env)]);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    // The one that did start would keep the test's process alive after the failure.
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
    await relay.kill();
    throw failed.reason;
  }
  const [a, b] = started.map((s) => (s as PromiseFulfilledResult<Device>).value) as [Device, Device];
  await options.beforePairing?.(a, b);
  await pair(relay, a, b);
  return {
    dir,
    relay,
    a,
    b,
    async stop() {
      await Promise.all([a.stop(), b.stop()]);
      await relay.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
