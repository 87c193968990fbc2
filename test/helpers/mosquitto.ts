import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { freePort } from './ports.js';
import { selfSignedCertificate } from './tls.js';

/**
 * A real Mosquitto broker (Debian's `mosquitto`) for one test: its own folder and config, a
 * password file (anonymous off), a plain listener and a TLS listener with a certificate openssl
 * made, both on free loopback ports. `stop()` ends it; `kill()` is a crash; `start()` again
 * brings it back on the same ports.
 */
export interface Broker {
  url: string;
  tlsUrl: string;
  /** MQTT over WebSocket (Mosquitto's websockets listener). */
  wsUrl: string;
  /** The TLS listener's certificate fingerprint, as openssl prints it. */
  tlsSha256: string;
  user: string;
  password: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A subscriber logged in as the test user. */
  client(): Promise<MqttClient>;
  log(): string;
  close(): Promise<void>;
}

/** Debian installs the broker in /usr/sbin, which a non-root PATH may lack. */
const MOSQUITTO = ['mosquitto', '/usr/sbin/mosquitto'].find((cmd) => spawnSync(cmd, ['-h'], { encoding: 'utf8' }).error === undefined);

export function mosquittoAvailable(): boolean {
  return MOSQUITTO !== undefined;
}


export async function startBroker(options: { user?: string; password?: string } = {}): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), 'chyme-mosquitto-'));
  const user = options.user ?? 'chyme';
  const password = options.password ?? 'broker-secret-4711';
  const passwd = join(dir, 'passwd');
  const made = spawnSync('mosquitto_passwd', ['-b', '-c', passwd, user, password], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr}`);
  const cert = selfSignedCertificate('localhost', 'DNS:localhost,IP:127.0.0.1');
  writeFileSync(join(dir, 'cert.pem'), cert.cert);
  writeFileSync(join(dir, 'key.pem'), cert.key);
  for (const f of ['passwd', 'cert.pem', 'key.pem']) chmodSync(join(dir, f), 0o600);
  const port = await freePort();
  const tlsPort = await freePort();
  const wsPort = await freePort();
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(
    config,
    [
      // Run as whoever starts it (root in CI): the files above are that user's, mode 0600.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      'per_listener_settings false',
      'allow_anonymous false',
      `password_file ${passwd}`,
      'persistence false',
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'log_type notice',
      `listener ${port} 127.0.0.1`,
      `listener ${tlsPort} 127.0.0.1`,
      `certfile ${join(dir, 'cert.pem')}`,
      `keyfile ${join(dir, 'key.pem')}`,
      `listener ${wsPort} 127.0.0.1`,
      'protocol websockets',
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let output = '';

  async function start(): Promise<void> {
    if (child) return;
    const proc = spawn(MOSQUITTO ?? 'mosquitto', ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout!.on('data', (c) => (output += c));
    proc.stderr!.on('data', (c) => (output += c));
    proc.once('exit', () => {
      if (child === proc) child = undefined;
    });
    // Ready when a login succeeds (the listener is up and reads the password file).
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const c = await connectAsync(`mqtt://127.0.0.1:${port}`, { username: user, password, reconnectPeriod: 0, connectTimeout: 2000 });
        await c.endAsync();
        return;
      } catch (err) {
        if (!child) throw new Error(`mosquitto exited: ${output}`);
        if (Date.now() > deadline) throw new Error(`mosquitto did not start: ${String(err)}\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc) return;
    child = undefined;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }

  await start();
  const clients: MqttClient[] = [];
  return {
    url: `mqtt://127.0.0.1:${port}`,
    tlsUrl: `mqtts://127.0.0.1:${tlsPort}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    tlsSha256: cert.sha256,
    user,
    password,
    start,
    stop,
    async client() {
      const c = await connectAsync(`mqtt://127.0.0.1:${port}`, { username: user, password, reconnectPeriod: 0 });
      clients.push(c);
      return c;
    },
    log: () => output,
    async close() {
      for (const c of clients) await c.endAsync(true).catch(() => undefined);
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** MQTT's filter matching: "+" one level, "#" the rest. */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** Collects every message on `filter` (retained ones first), keeping the latest per topic. */
export async function watch(client: MqttClient, filter: string) {
  const latest = new Map<string, string>();
  const all: Array<{ topic: string; payload: string; retain: boolean; at: number }> = [];
  const waiters: Array<() => void> = [];
  client.on('message', (topic, payload, packet) => {
    if (!topicMatches(filter, topic)) return;
    const text = payload.toString('utf8');
    latest.set(topic, text);
    all.push({ topic, payload: text, retain: packet.retain, at: Date.now() });
    for (const w of waiters.splice(0)) w();
  });
  await client.subscribeAsync(filter, { qos: 1 });
  return {
    latest,
    all,
    /** Waits until `pred` holds (checked on every message); fails after `timeoutMs`, which only bounds a failure. */
    async until<T>(pred: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = pred();
        if (v) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; topics: ${[...latest.keys()].join(', ')}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
  };
}
