/**
 * The sync relay (server/sync/relay.ts, `chyme relay`) and the device side's RelayClient, with
 * real parts: the built CLI as a child process on 127.0.0.1, port 0 or a free port, temporary
 * folders, automerge-repo Repos in this process, and raw `ws` sockets for what the adapter hides.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as Automerge from '@automerge/automerge';
import { Repo, type AutomergeUrl, type DocHandle, type DocumentId } from '@automerge/automerge-repo';
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs';
import { WebSocket } from 'ws';
import { acceptSyncUpgrades, MAX_BAD_TOKENS_PER_MINUTE, RelayConfigError, startRelay, type Relay } from '../../server/sync/relay.js';
import { RelayClient, relayUrlWithToken, type RelayStatus } from '../../server/sync/relay-client.js';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';

const TIMEOUT = { timeout: 30_000 };
const tempDir = () => mkdtempSync(join(tmpdir(), 'chyme-relay-'));

/** Polls until the condition holds; the deadline is generous so a busy machine is not a failure. */
async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Ends a device's repo in a test's finally: its flush may throw for a document still being
 * requested ("DocHandle is not ready"), which would replace the test's own failure, if any.
 */
async function closeRepo(repo: Repo): Promise<void> {
  await repo.shutdown().catch(() => undefined);
}

interface RelayProcess {
  child: ChildProcess;
  url: string;
  token: string;
  lines: string[];
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `chyme relay` as a child process, once it has printed its two lines. */
async function startRelayProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RelayProcess> {
  const child = spawn(process.execPath, [CLI, 'relay', ...args], { env: { ...process.env, CHYME_RELAY_TOKEN: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = once(child, 'exit');
  await Promise.race([
    waitFor('the two lines of chyme relay', () => out.split('\n').length > 2),
    exited.then(([code]) => {
      throw new Error(`chyme relay exited with ${code}: ${out}\n${err}`);
    }),
  ]);
  const lines = out.split('\n').slice(0, 2);
  const url = /^Chyme relay listening on (ws:\/\/\S+)$/.exec(lines[0]!)?.[1];
  const token = /^Token: (\S+)$/.exec(lines[1]!)?.[1];
  assert.ok(url && token, `unexpected first lines: ${JSON.stringify(lines)}`);
  return {
    child,
    url,
    token,
    lines,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** What the relay answers a raw WebSocket: the HTTP status of a refusal, or 101 once open. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode!);
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', (err) => reject(err));
  });
}

interface Doc {
  meals: Record<string, { description: string; calories: number }>;
}

function device(relayUrl: string, token: string, statuses?: RelayStatus[]): { repo: Repo; client: RelayClient } {
  const client = new RelayClient(relayUrl, token, { retryIntervalMs: 200, ...(statuses ? { onStatus: (s) => statuses.push(s) } : {}) });
  return { repo: new Repo({ network: [client] }), client };
}

/**
 * A device as the engine makes it, with its own storage: the relay then knows the device's storage
 * id and stores its sync state per document (a path the devices above, which keep nothing, skip).
 */
function storingDevice(relayUrl: string, token: string): { repo: Repo; client: RelayClient } {
  const client = new RelayClient(relayUrl, token, { retryIntervalMs: 200 });
  return { repo: new Repo({ network: [client], storage: new NodeFSStorageAdapter(join(tempDir(), 'device')) }), client };
}

/** Every file under a folder, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((entry) => statSync(join(dir, entry)).isFile())
    .sort();
}

/** The heads of a document as the relay has stored it: every chunk of it in the relay's folder, loaded. */
function storedHeads(dataDir: string, url: AutomergeUrl): string[] | undefined {
  const id = url.slice('automerge:'.length);
  const docDir = join(dataDir, 'documents', id.slice(0, 2), id.slice(2));
  if (!existsSync(docDir)) return undefined;
  let doc = Automerge.init();
  for (const file of filesUnder(docDir).filter((f) => /^(snapshot|incremental)[/\\]/.test(f))) {
    doc = Automerge.loadIncremental(doc, readFileSync(join(docDir, file)));
  }
  return Automerge.getHeads(doc).sort();
}

/** storedHeads, or undefined while the relay is between writing and deleting chunks. */
function storedHeadsNow(dataDir: string, url: AutomergeUrl): string[] | undefined {
  try {
    return storedHeads(dataDir, url);
  } catch {
    return undefined;
  }
}

const sameHeads = (a: string[] | undefined, b: string[]) => JSON.stringify(a) === JSON.stringify([...b].sort());
const documentIdOf = (url: AutomergeUrl) => url.slice('automerge:'.length) as DocumentId;

describe('chyme relay', () => {
  test('prints the address and the token, answers GET /health, keeps the token in a 0600 file, stops on SIGTERM', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    const relay = await startRelayProcess(['--port', '0', '--data', data]);
    assert.match(relay.lines[0]!, /^Chyme relay listening on ws:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(relay.url).port, '0', 'the bound port is printed, not 0');
    assert.match(relay.lines[1]!, /^Token: [0-9A-Za-z]{32}$/);
    assert.equal(readFileSync(join(data, 'relay-token'), 'utf8').trim(), relay.token);
    assert.equal(statSync(join(data, 'relay-token')).mode & 0o777, 0o600);

    const http = relay.url.replace(/^ws:/, 'http:');
    const health = await fetch(`${http}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true });
    const other = await fetch(`${http}/`);
    assert.equal(other.status, 426);
    assert.match(await other.text(), /^This is a Chyme sync relay; it speaks WebSocket only/);

    assert.equal(await relay.stop('SIGTERM'), 0);
    assert.ok(!relay.stderr().includes(relay.token), 'the log never holds the token');
  });

  test('--token and $CHYME_RELAY_TOKEN replace the file; a taken port is one line and exit status 4', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    const fromEnv = await startRelayProcess(['--port', '0', '--data', data], { CHYME_RELAY_TOKEN: 'from-the-environment' });
    assert.equal(fromEnv.token, 'from-the-environment');
    assert.ok(!existsSync(join(data, 'relay-token')), 'a given token is not written to the folder');

    const taken = spawn(process.execPath, [CLI, 'relay', '--port', new URL(fromEnv.url).port, '--data', data, '--token', 'another-token'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    taken.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const [code] = (await once(taken, 'exit')) as [number | null];
    assert.equal(code, 4);
    assert.match(stderr, /^chyme: Port \d+ on 127\.0\.0\.1 is in use: is a relay already running\? .*\n$/);
    assert.equal(await fromEnv.stop(), 0);

    const bad = spawn(process.execPath, [CLI, 'relay', '--port', '0', '--data', data, '--token', 'has space'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let badErr = '';
    bad.stderr!.setEncoding('utf8').on('data', (c: string) => (badErr += c));
    assert.equal(((await once(bad, 'exit')) as [number])[0], 2);
    assert.equal(badErr, 'chyme: --token must be 8 to 200 printable characters without spaces.\n');
  });

  test('--help prints its usage; a bad flag exits 2 with the usage', TIMEOUT, () => {
    const help = runCli(['relay', '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage:\n  chyme relay \[--port P\] \[--host H\] \[--data DIR\] \[--token T\]\n/);
    for (const args of [['--port', 'http'], ['--port', '70000'], ['--port=-1'], ['--bogus'], ['--host', '']]) {
      const r = runCli(['relay', ...args]);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /^chyme: .*\n\nUsage:/, args.join(' '));
    }
  });

  test('a wrong or missing token gets 401; the right one in the query or a Bearer header opens', TIMEOUT, async () => {
    const relay = await startRelayProcess(['--port', '0', '--data', join(tempDir(), 'relay')]);
    try {
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, 'not-the-token')), 401);
      assert.equal(await upgradeStatus(relay.url), 401);
      assert.equal(await upgradeStatus(relay.url, { authorization: 'Bearer not-the-token' }), 401);
      // One character off, same length: the comparison is of the whole token.
      const offByOne = relay.token.slice(0, -1) + (relay.token.endsWith('a') ? 'b' : 'a');
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, offByOne)), 401);
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token)), 101);
      assert.equal(await upgradeStatus(relay.url, { authorization: `Bearer ${relay.token}` }), 101);
      await waitFor('the refusals in the log', () => relay.stderr().includes('wrong token (401)') && relay.stderr().includes('no token (401)'));
      assert.ok(!relay.stderr().includes(relay.token));
    } finally {
      await relay.stop();
    }
  });

  test(`more than ${MAX_BAD_TOKENS_PER_MINUTE} wrong tokens a minute from one address get 429, even with the right token`, TIMEOUT, async () => {
    const relay = await startRelayProcess(['--port', '0', '--data', join(tempDir(), 'relay')]);
    try {
      const wrong = relayUrlWithToken(relay.url, 'not-the-token');
      for (let i = 0; i < MAX_BAD_TOKENS_PER_MINUTE; i++) assert.equal(await upgradeStatus(wrong), 401, `attempt ${i + 1}`);
      assert.equal(await upgradeStatus(wrong), 429);
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token)), 429);
      // Behind a reverse proxy on this machine, the proxy's X-Forwarded-For names the client: another one is not locked out.
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token), { 'x-forwarded-for': '203.0.113.7' }), 101);
    } finally {
      await relay.stop();
    }
  });

  test('two devices sync through the relay, and after a SIGKILL and restart a new device finds the document while its creator is offline', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    let relay = await startRelayProcess(['--port', '0', '--data', data]);
    const a = device(relay.url, relay.token);
    const b = device(relay.url, relay.token);
    try {
      await waitFor('both devices connected', () => a.client.status.connected && b.client.status.connected);
      const created: DocHandle<Doc> = a.repo.create<Doc>({ meals: { meal_1: { description: 'Porridge', calories: 350 } } });
      const onB = await b.repo.find<Doc>(created.url);
      assert.equal(onB.doc().meals.meal_1?.description, 'Porridge');

      created.change((d) => {
        d.meals.meal_2 = { description: 'Lentil soup', calories: 420 };
      });
      await waitFor("A's later change on B", () => onB.doc().meals.meal_2?.calories === 420);

      // SIGKILL gives the relay no chance to flush: only what it had already written survives. So
      // first wait until its folder holds A's latest heads.
      const expected = Automerge.getHeads(created.doc()).sort();
      await waitFor("A's latest change in the relay's folder", () => JSON.stringify(storedHeads(data, created.url)) === JSON.stringify(expected));
      await closeRepo(a.repo);
      await relay.stop('SIGKILL');

      relay = await startRelayProcess(['--port', '0', '--data', data]);
      assert.equal(relay.token, readFileSync(join(data, 'relay-token'), 'utf8').trim(), 'the same token after a restart');
      const c = device(relay.url, relay.token);
      try {
        const onC = await c.repo.find<Doc>(created.url);
        assert.deepEqual(onC.doc().meals, {
          meal_1: { description: 'Porridge', calories: 350 },
          meal_2: { description: 'Lentil soup', calories: 420 },
        });
      } finally {
        await closeRepo(c.repo);
      }
    } finally {
      await closeRepo(b.repo);
      await relay.stop();
    }
  });

  test("the relay's folder holds only automerge-repo storage files and relay-token", TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    const relay = await startRelayProcess(['--port', '0', '--data', data]);
    const a = device(relay.url, relay.token);
    try {
      const handle = a.repo.create<Doc>({ meals: { meal_1: { description: 'Toast', calories: 200 } } });
      const expected = Automerge.getHeads(handle.doc()).sort();
      await waitFor('the document in the relay folder', () => JSON.stringify(storedHeads(data, handle.url)) === JSON.stringify(expected));
    } finally {
      await closeRepo(a.repo);
      assert.equal(await relay.stop(), 0);
    }
    assert.deepEqual(readdirSync(data).sort(), ['documents', 'relay-token']);
    const files = filesUnder(join(data, 'documents')).map((f) => f.split(/[/\\]/).join('/'));
    assert.ok(files.length > 1, `stored files: ${files.join(', ')}`);
    // NodeFSStorageAdapter's layout: the adapter's id, and per document (its id split after two
    // characters) snapshots, incremental changes and the sync states of the peers it met.
    const unexpected = files.filter((f) => f !== 'st/orage-adapter-id' && !/^[1-9A-HJ-NP-Za-km-z]{2}\/[1-9A-HJ-NP-Za-km-z]+\/(snapshot|incremental|sync-state)\/[^/]+$/.test(f));
    assert.deepEqual(unexpected, []);
  });

  test('a broken frame, a message that is not a sync message or a malformed request target is refused alone; the relay goes on', TIMEOUT, async () => {
    const relay = await startRelayProcess(['--port', '0', '--data', join(tempDir(), 'relay')]);
    try {
      const url = relayUrlWithToken(relay.url, relay.token);
      // CBOR null: the stock adapter's receiveMessage destructures it and throws.
      const notSync = new WebSocket(url);
      await once(notSync, 'open');
      notSync.send(Buffer.from([0xf6]));
      const [closeCode] = (await once(notSync, 'close')) as [number];
      assert.equal(closeCode, 1008);

      // A frame with the reserved opcode 3 (masked, empty), written under ws: the relay's ws emits 'error'.
      const broken = new WebSocket(url);
      await once(broken, 'open');
      broken.on('error', () => undefined);
      (broken as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.from([0x83, 0x80, 0, 0, 0, 0]));
      await once(broken, 'close');

      // Request targets Node's HTTP parser takes but WHATWG URL rejects, as a plain request and as an upgrade.
      const { port } = new URL(relay.url);
      for (const head of ['GET http://[x HTTP/1.1\r\nHost: x\r\n\r\n', 'GET http://[x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n']) {
        const raw = connect(Number(port), '127.0.0.1');
        raw.setEncoding('utf8');
        let answer = '';
        raw.on('data', (c: string) => (answer += c));
        raw.on('error', () => undefined);
        raw.write(head);
        await waitFor('an answer to a malformed target', () => /^HTTP\/1\.1 \d{3}/.test(answer));
        raw.destroy();
      }

      const health = await fetch(`${relay.url.replace(/^ws:/, 'http:')}/health`);
      assert.equal(health.status, 200);
      assert.equal(relay.child.exitCode, null);
      assert.match(relay.stderr(), /closed a connection that sent a bad message/);
      assert.match(relay.stderr(), /failed: Invalid WebSocket frame: invalid opcode 3/);
    } finally {
      await relay.stop();
    }
  });
});

describe('RelayClient', () => {
  test('a wrong token is reported as a sentence, and the process goes on', TIMEOUT, async () => {
    const relay = await startRelayProcess(['--port', '0', '--data', join(tempDir(), 'relay')]);
    const statuses: RelayStatus[] = [];
    const { repo, client } = device(relay.url, 'not-the-token', statuses);
    try {
      await waitFor('the refusal', () => client.status.lastError);
      assert.deepEqual(client.status, { connected: false, lastError: 'The relay refused the token (401).' });
      assert.deepEqual(statuses, [{ connected: false, lastError: 'The relay refused the token (401).' }]);
      // The stock adapter threw this from a socket handler; were it still thrown, this file would have failed by now.
      // Another failure that is not ECONNREFUSED: the relay resets the connection of a connected device.
      const good = device(relay.url, relay.token);
      try {
        await waitFor('the good device connected', () => good.client.status.connected);
        await relay.stop('SIGKILL');
        await waitFor('the disconnection seen', () => !good.client.status.connected && good.client.status.lastError);
        await waitFor('unreachable reported', () => /^Could not reach the relay at ws:\/\/127\.0\.0\.1:\d+: connection refused\.$/.test(good.client.status.lastError ?? ''));
      } finally {
        await closeRepo(good.repo);
      }
    } finally {
      await closeRepo(repo);
      await relay.stop();
    }
    assert.equal(client.status.connected, false);
  });

  test('after the relay restarts on the same port, a device reconnects and its change made meanwhile reaches another device', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    let relay = await startRelayProcess(['--port', '0', '--data', data]);
    const port = new URL(relay.url).port;
    const statuses: RelayStatus[] = [];
    const a = device(relay.url, relay.token, statuses);
    try {
      await waitFor('connected', () => a.client.status.connected);
      const handle = a.repo.create<Doc>({ meals: {} });
      const expected = Automerge.getHeads(handle.doc()).sort();
      await waitFor('the document in the relay folder', () => JSON.stringify(storedHeads(data, handle.url)) === JSON.stringify(expected));
      await relay.stop('SIGKILL');
      await waitFor('the drop seen', () => !a.client.status.connected);
      handle.change((d) => {
        d.meals.meal_offline = { description: 'Eaten while the relay was down', calories: 90 };
      });

      relay = await startRelayProcess(['--port', port, '--data', data]);
      await waitFor('reconnected', () => a.client.status.connected);
      assert.ok(statuses.some((s) => !s.connected && s.lastError), 'the drop was reported');
      assert.deepEqual(statuses.at(-1), { connected: true, lastError: null });
      const b = device(relay.url, relay.token);
      try {
        const onB = await b.repo.find<Doc>(handle.url);
        await waitFor('the offline change on B', () => onB.doc().meals.meal_offline?.calories === 90);
      } finally {
        await closeRepo(b.repo);
      }
    } finally {
      await closeRepo(a.repo);
      await relay.stop();
    }
  });

  test('after the relay restarts, each device joins it once, and a device that only listens hears the next change', TIMEOUT, async () => {
    // A re-join makes the relay forget which documents the device asked for, while the device's
    // repo, which saw no disconnection, never asks again: it would hear no other device's changes
    // to the documents it holds. Retries scheduled while the relay was down (every failed attempt
    // schedules one) fire after the new connection opened; none may replace it.
    const dataDir = join(tempDir(), 'relay');
    let relay: Relay = await startRelay({ dataDir, port: 0, token: 'restart-token' });
    const a = storingDevice(relay.url, relay.token);
    const b = storingDevice(relay.url, relay.token);
    try {
      const created = a.repo.create<Doc>({ meals: { meal_1: { description: 'Porridge', calories: 350 } } });
      const onB = await b.repo.find<Doc>(created.url);
      await relay.close();
      await waitFor('both devices saw the relay go', () => !a.client.status.connected && !b.client.status.connected);
      // Several failed attempts each, every 200 ms.
      await waitFor('attempts refused', () => /connection refused/.test(a.client.status.lastError ?? '') && /connection refused/.test(b.client.status.lastError ?? ''));
      await new Promise((r) => setTimeout(r, 1000));
      relay = await startRelay({ dataDir, port: relay.port, token: relay.token });
      const joins = new Map<string, number>();
      relay.repo.networkSubsystem.on('peer', ({ peerId }) => joins.set(peerId, (joins.get(peerId) ?? 0) + 1));
      await waitFor('both devices back', () => a.client.status.connected && b.client.status.connected);
      // The retries scheduled before are due within one interval (200 ms) of the connection.
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual([...joins.values()], [1, 1], 'one join per device');
      created.change((d) => {
        d.meals.meal_2 = { description: 'Lentil soup', calories: 420 };
      });
      await waitFor("A's change on B", () => onB.doc().meals.meal_2?.calories === 420);
    } finally {
      await closeRepo(a.repo);
      await closeRepo(b.repo);
      await relay.close();
    }
  });

  test('an unreachable relay is reported, and the client connects once a relay starts on that port', TIMEOUT, async () => {
    const port = await freePort();
    const statuses: RelayStatus[] = [];
    const { repo, client } = device(`ws://127.0.0.1:${port}`, 'the-relay-token', statuses);
    let relay: RelayProcess | undefined;
    try {
      await waitFor('unreachable reported', () => client.status.lastError);
      assert.equal(client.status.lastError, `Could not reach the relay at ws://127.0.0.1:${port}: connection refused.`);
      assert.equal(client.relayUrl, `ws://127.0.0.1:${port}`);

      relay = await startRelayProcess(['--port', String(port), '--data', join(tempDir(), 'relay'), '--token', 'the-relay-token']);
      await waitFor('connected', () => client.status.connected);
      assert.deepEqual(client.status, { connected: true, lastError: null });
      assert.deepEqual(statuses.at(-1), { connected: true, lastError: null });
      // Connected means the relay answered the join: a document really syncs.
      const handle = repo.create<Doc>({ meals: {} });
      const other = device(relay.url, relay.token);
      try {
        assert.deepEqual((await other.repo.find<Doc>(handle.url)).doc(), { meals: {} });
      } finally {
        await closeRepo(other.repo);
      }
    } finally {
      await closeRepo(repo);
      await relay?.stop();
    }
  });

  test('relayUrlWithToken URL-encodes the token and keeps the rest of the query', () => {
    assert.equal(relayUrlWithToken('ws://relay.lan:7651', 'a b&c/d'), 'ws://relay.lan:7651/?token=a+b%26c%2Fd');
    assert.equal(relayUrlWithToken('wss://example.org/sync?x=1&token=old', 'new'), 'wss://example.org/sync?x=1&token=new');
    assert.throws(() => relayUrlWithToken('http://relay.lan', 't'), /must be a ws:\/\/ or wss:\/\/ URL/);
  });
});

describe('acceptSyncUpgrades on a server of its own', () => {
  test('with a path it leaves other upgrades to the next listener; it caps connections with 503', TIMEOUT, async () => {
    const server = createServer();
    const wss = acceptSyncUpgrades(server, { token: () => 'the-sync-token', path: '/v1/sync/ws', maxConnections: 1 });
    // What a composer adds after it: something else on /other, and a refusal for every path nobody owns.
    server.on('upgrade', (req, socket) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/v1/sync/ws') return;
      socket.end(path === '/other' ? 'HTTP/1.1 418 I am a teapot\r\nConnection: close\r\n\r\n' : 'HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
    // Stands in for the automerge adapter's own 'connection' listener (see acceptSyncUpgrades).
    wss.on('connection', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const opened: WebSocket[] = [];
    try {
      assert.equal(await upgradeStatus(`${base}/other`), 418);
      assert.equal(await upgradeStatus(`${base}/nobody`), 404);
      assert.equal(await upgradeStatus(`${base}/v1/sync/ws`), 401);
      const first = new WebSocket(`${base}/v1/sync/ws`, { headers: { authorization: 'Bearer the-sync-token' } });
      opened.push(first);
      await once(first, 'open');
      assert.equal(await upgradeStatus(`${base}/v1/sync/ws?token=the-sync-token`), 503);
    } finally {
      for (const ws of opened) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('answers 503 until a repo has connected its adapter, so no connection is left without an answer', TIMEOUT, async () => {
    const server = createServer();
    acceptSyncUpgrades(server, { token: 'the-sync-token' });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      assert.equal(await upgradeStatus(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/?token=the-sync-token`), 503);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('startRelay in this process: close() ends connected clients and the repo', TIMEOUT, async () => {
    const relay = await startRelay({ dataDir: join(tempDir(), 'relay'), port: 0, token: 'in-process-token' });
    assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
    const a = device(relay.url, relay.token);
    try {
      await waitFor('connected', () => a.client.status.connected);
      await relay.close();
      await waitFor('the client saw the relay go', () => !a.client.status.connected);
    } finally {
      await closeRepo(a.repo);
    }
  });
});

describe('the relay drops idle documents from memory', () => {
  /** An in-process relay that drops a document after 300 ms without sync traffic. */
  const evictingRelay = (dataDir: string) => startRelay({ dataDir, port: 0, token: 'evicting-relay-token', idleEvictMs: 300 });
  const inMemory = (relay: Relay, url: AutomergeUrl) => relay.repo.handles[documentIdOf(url)]?.isReady() === true;

  test('a device that only listens still hears a change made after the relay dropped and reloaded the document', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    const relay = await evictingRelay(data);
    const a = storingDevice(relay.url, relay.token);
    const b = storingDevice(relay.url, relay.token);
    try {
      const created = a.repo.create<Doc>({ meals: { meal_1: { description: 'Porridge', calories: 350 } } });
      const onB = await b.repo.find<Doc>(created.url);
      assert.equal(onB.doc().meals.meal_1?.description, 'Porridge');

      await waitFor('the document dropped from the relay', () => !inMemory(relay, created.url));
      assert.ok(relay.memory().evicted >= 1);
      assert.equal(relay.memory().loaded, 0);
      assert.ok(sameHeads(storedHeadsNow(data, created.url), Automerge.getHeads(created.doc())), "the relay's folder holds the document it dropped");

      // B sends nothing from here on: only the relay can bring it A's change.
      created.change((d) => {
        d.meals.meal_2 = { description: 'Lentil soup', calories: 420 };
      });
      await waitFor("A's change on B", () => onB.doc().meals.meal_2?.calories === 420);
      // And again, after the relay dropped it a second time.
      await waitFor('the document dropped again', () => !inMemory(relay, created.url));
      created.change((d) => {
        d.meals.meal_3 = { description: 'Apple', calories: 80 };
      });
      await waitFor("A's second change on B", () => onB.doc().meals.meal_3?.calories === 80);
    } finally {
      await closeRepo(a.repo);
      await closeRepo(b.repo);
      await relay.close();
    }
  });

  test('no change is lost when a device writes across the moments the relay drops the document', { timeout: 90_000 }, async () => {
    const data = join(tempDir(), 'relay');
    const relay = await evictingRelay(data);
    const a = storingDevice(relay.url, relay.token);
    let written = 0;
    try {
      const handle = a.repo.create<Doc>({ meals: {} });
      await waitFor('the document in the relay folder', () => sameHeads(storedHeadsNow(data, handle.url), Automerge.getHeads(handle.doc())));
      // Rounds that start right after the relay dropped the document (so the first change reloads
      // it) and write with gaps from none to past the idle period, so that later changes land while
      // it is loaded, being written out, or dropped again.
      for (let round = 0; round < 8; round++) {
        await waitFor(`the document dropped before round ${round}`, () => !inMemory(relay, handle.url));
        for (let i = 0; i < 6; i++) {
          const n = written++;
          handle.change((d) => {
            d.meals[`meal_${n}`] = { description: `Meal ${n}`, calories: n };
          });
          await new Promise((r) => setTimeout(r, ((round * 6 + i) * 37) % 420));
        }
      }
      const expected = Automerge.getHeads(handle.doc());
      await waitFor("every change in the relay's folder", () => sameHeads(storedHeadsNow(data, handle.url), expected), 30_000);
      // A is gone before C looks, so only what the relay kept can reach C.
      await closeRepo(a.repo);
      await waitFor('the document dropped after the last change', () => !inMemory(relay, handle.url));
      assert.ok(relay.memory().evicted >= 9, `dropped ${relay.memory().evicted} times`);

      const c = device(relay.url, relay.token);
      try {
        const onC = await c.repo.find<Doc>(handle.url);
        assert.equal(Object.keys(onC.doc().meals).length, written);
        assert.deepEqual(Automerge.getHeads(onC.doc()).sort(), [...expected].sort());
      } finally {
        await closeRepo(c.repo);
      }
    } finally {
      await closeRepo(a.repo);
      await relay.close();
    }
  });

  test('past the cap, documents idle for a second leave memory before the idle period, and stay whole on disk', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    // An idle period longer than the test: only the cap can drop documents here.
    const relay = await startRelay({ dataDir: data, port: 0, token: 'evicting-relay-token', idleEvictMs: 600_000, maxLoadedDocuments: 2 });
    const a = storingDevice(relay.url, relay.token);
    try {
      const made = Array.from({ length: 6 }, (_, i) => a.repo.create<Doc>({ meals: { [`meal_${i}`]: { description: `Meal ${i}`, calories: i } } }));
      for (const h of made) await waitFor(`${h.url} in the relay folder`, () => sameHeads(storedHeadsNow(data, h.url), Automerge.getHeads(h.doc())));
      await waitFor('at most 2 documents in memory', () => relay.memory().loaded <= 2);
      assert.ok(relay.memory().evicted >= 4);
      await closeRepo(a.repo);
      const c = device(relay.url, relay.token);
      try {
        for (const [i, h] of made.entries()) assert.deepEqual((await c.repo.find<Doc>(h.url)).doc().meals, { [`meal_${i}`]: { description: `Meal ${i}`, calories: i } });
      } finally {
        await closeRepo(c.repo);
      }
    } finally {
      await closeRepo(a.repo);
      await relay.close();
    }
  });

  test('an idle period below 100 ms, or not a whole number, is refused with a sentence', TIMEOUT, async () => {
    for (const idleEvictMs of [5, 250.5, Number.NaN]) {
      await assert.rejects(startRelay({ dataDir: join(tempDir(), 'relay'), port: 0, token: 'evicting-relay-token', idleEvictMs }), (err: Error) => {
        assert.ok(err instanceof RelayConfigError);
        assert.match(err.message, /^idleEvictMs must be a whole number of milliseconds, at least 100, not /);
        return true;
      });
    }
    const r = runCli(['relay', '--port', '0', '--data', join(tempDir(), 'relay')], { CHYME_RELAY_IDLE_EVICT_MS: 'soon' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'chyme: CHYME_RELAY_IDLE_EVICT_MS must be a whole number of milliseconds, at least 100, not "soon".\n');
  });

  test('after the relay process restarts, a listening device still hears changes once the new process has dropped the document', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    const env = { CHYME_RELAY_IDLE_EVICT_MS: '300' };
    let relay = await startRelayProcess(['--port', '0', '--data', data], env);
    const port = new URL(relay.url).port;
    const a = storingDevice(relay.url, relay.token);
    const b = storingDevice(relay.url, relay.token);
    try {
      await waitFor('both devices connected', () => a.client.status.connected && b.client.status.connected);
      const created = a.repo.create<Doc>({ meals: { meal_1: { description: 'Porridge', calories: 350 } } });
      // B asks once the relay has it (asked sooner, the relay answers that it has no such document).
      const expected = Automerge.getHeads(created.doc()).sort();
      await waitFor('the document in the relay folder', () => JSON.stringify(storedHeads(data, created.url)) === JSON.stringify(expected));
      const onB = await b.repo.find<Doc>(created.url);
      await waitFor('the document dropped by the first process', () => /dropped 1 idle document from memory \(0 loaded\)/.test(relay.stderr()));

      assert.equal(await relay.stop('SIGTERM'), 0);
      await waitFor('both devices saw the relay go', () => !a.client.status.connected && !b.client.status.connected);
      relay = await startRelayProcess(['--port', port, '--data', data], env);
      await waitFor('both devices back', () => a.client.status.connected && b.client.status.connected);
      // Reconnected, each device syncs its documents with the relay, which then drops them again.
      await waitFor('the document dropped by the new process', () => /dropped \d+ idle documents? from memory \(0 loaded\)/.test(relay.stderr()));

      created.change((d) => {
        d.meals.meal_2 = { description: 'Lentil soup', calories: 420 };
      });
      await waitFor("A's change on B", () => onB.doc().meals.meal_2?.calories === 420);
      assert.doesNotMatch(relay.stderr(), /could not drop|sweeping idle documents failed/);
    } finally {
      await closeRepo(a.repo);
      await closeRepo(b.repo);
      await relay.stop();
    }
  });
});

/** The files the CLI bundle loads before any command runs: cli.js and the chunks it imports statically. */
function staticBundleFiles(): Map<string, string> {
  const dir = join(ROOT, 'build/server/cli');
  const files = new Map<string, string>();
  const visit = (name: string) => {
    if (files.has(name)) return;
    const text = readFileSync(join(dir, name), 'utf8');
    files.set(name, text);
    for (const m of text.matchAll(/^\s*import\s[^;]*?from\s+["']\.\/(bundle-[^"']+)["']/gm)) visit(m[1]!);
  };
  visit('cli.js');
  return files;
}

test('the built CLI bundle loads automerge only through import(), so other commands start without its wasm', { skip: existsSync(join(ROOT, 'build/server/cli/cli.js')) ? false : 'not built' }, () => {
  const files = staticBundleFiles();
  for (const [name, text] of files) assert.deepEqual([...text.matchAll(/^\s*import\s[^;]*?from\s+["']@automerge\/[^"']*["']/gm)].map((m) => `${name}: ${m[0]}`), []);
  const all = [...files.values()].join('\n');
  assert.match(all, /import\("@automerge\/automerge-repo"\)/);
  // The engine is a chunk of the bundle loaded on demand, not build/server/sync/engine.js, which
  // would load a second copy of the service's modules beside the bundle's (server/cli/bundle.mjs).
  const engine = /import\("\.\/(bundle-engine-[^"]+\.js)"\)/.exec(all);
  assert.ok(engine, 'the bundle imports its engine chunk with import()');
  assert.ok(!files.has(engine[1]!), 'the engine chunk is not loaded at start');
  assert.doesNotMatch(all, /sync\/engine\.js/);
  assert.doesNotMatch(readFileSync(join(ROOT, 'build/server/cli', engine[1]!), 'utf8'), /from\s+["']\.\.\/(?!memory\.js)/);
});

test('the built CLI bundle collects garbage through the memory module main.js prepared', { skip: existsSync(join(ROOT, 'build/server/cli/cli.js')) ? false : 'not built' }, () => {
  // main.js calls useCompactHeap on build/server/memory.js; a copy of that module inside the
  // bundle would never have its collector set, and the engine's and the relay's collections after
  // they drop documents would do nothing.
  const dir = join(ROOT, 'build/server/cli');
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, name), 'utf8');
    assert.doesNotMatch(text, /function collectGarbage\(/, `${name} holds its own copy of memory.js`);
    if (/\bcollectGarbage\(/.test(text)) assert.match(text, /import \{[^}]*\bcollectGarbage\b[^}]*\} from "\.\.\/memory\.js"/, name);
  }
});
