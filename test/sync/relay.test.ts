/**
 * The sealed relay (server/sync/relay.ts, relay-store.ts, `chyme relay`) and the device side's
 * RelayConnection (relay-client.ts), with real parts: the built CLI as a child process on
 * 127.0.0.1, temporary folders, raw `ws` sockets speaking protocol.ts with keys from crypto.ts,
 * and the relay's own `relay.db` read with better-sqlite3.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { WebSocket } from 'ws';
import { authDigest, deriveKeys, newHistorySecret, type HistoryKeys } from '../../server/sync/crypto.js';
import { decodeFrame, encodeFrame, PROTOCOL_VERSION, type ClientMessage, type RelayMessage } from '../../server/sync/protocol.js';
import { DEFAULT_MAX_CONNECTIONS, MAX_BAD_TOKENS_PER_MINUTE, RELAY_DB_FILE, startRelay } from '../../server/sync/relay.js';
import { RelayConnection, relayUrlWithToken, type RelayConnectionOptions, type RelayStatus, type SocketLike } from '../../server/sync/relay-client.js';
import { CLI, ROOT, runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { prng } from '../helpers/random.js';

const TIMEOUT = { timeout: 60_000 };
const tempDir = () => mkdtempSync(join(tmpdir(), 'chyme-relay-'));

/** Polls until the condition holds; the deadline is generous so a busy machine is not a failure. */
async function waitFor<T>(what: string, check: () => T | undefined | null | false | Promise<T | undefined | null | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface RelayProcess {
  child: ChildProcess;
  url: string;
  token: string;
  port: number;
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
    port: Number(new URL(url).port),
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

/** A relay in a new temporary data folder. */
async function freshRelay(env: NodeJS.ProcessEnv = {}): Promise<RelayProcess & { data: string }> {
  const data = join(tempDir(), 'relay');
  return { ...(await startRelayProcess(['--port', '0', '--data', data], env)), data };
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

interface Received {
  header: RelayMessage;
  body: Uint8Array | null;
}

/**
 * A raw device: one WebSocket speaking protocol.ts, every frame the relay sends kept in order.
 * `next()` takes the next one, so a test states exactly what arrives and in which order.
 */
class Peer {
  private readonly queue: Received[] = [];
  private taken = 0;
  /** Resolves with the close code once the relay (or the test) closed the socket. */
  readonly closed: Promise<number>;
  /** Called with each frame as it arrives (before next() sees it). */
  onFrame: ((frame: Received) => void) | undefined;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (data) => {
      const frame = decodeFrame<RelayMessage>(new Uint8Array(data as Buffer));
      this.queue.push(frame);
      this.onFrame?.(frame);
    });
  }

  static async open(relayUrl: string, token?: string): Promise<Peer> {
    const ws = new WebSocket(token === undefined ? relayUrl : relayUrlWithToken(relayUrl, token));
    ws.on('error', () => undefined);
    await once(ws, 'open');
    return new Peer(ws);
  }

  /** Opens a connection and says hello; resolves with the relay's first answer. */
  static async hello(relayUrl: string, keys: Pick<HistoryKeys, 'sid' | 'auth'>, token?: string): Promise<{ peer: Peer; answer: RelayMessage }> {
    const peer = await Peer.open(relayUrl, token);
    peer.send({ t: 'hello', v: PROTOCOL_VERSION, sid: keys.sid, auth: keys.auth });
    return { peer, answer: (await peer.next('the answer to hello')).header };
  }

  send(m: ClientMessage, body?: Uint8Array): void {
    this.ws.send(encodeFrame(m, body));
  }

  async next(what: string): Promise<Received> {
    await waitFor(what, () => this.queue.length > this.taken);
    return this.queue[this.taken++]!;
  }

  /** Frames received and not yet taken. */
  pending(): Received[] {
    return this.queue.slice(this.taken);
  }

  /** Pushes and waits for this push's answer (ack or error). */
  async push(rid: number, oid: string, kind: 'change' | 'snapshot', body: Uint8Array, covers?: number, own?: number[]): Promise<RelayMessage> {
    this.send({ t: 'push', rid, oid, kind, ...(covers === undefined ? {} : { covers }), ...(own === undefined ? {} : { own }) }, body);
    return (await this.next(`the answer to push ${rid}`)).header;
  }

  /** Pulls after a cursor: the chunks in the order they came, and the end's seq. */
  async pull(after: number): Promise<{ chunks: Array<{ seq: number; oid: string; kind: string; body: Uint8Array }>; end: number }> {
    this.send({ t: 'pull', after });
    const chunks = [];
    for (;;) {
      const { header, body } = await this.next(`the pull after ${after}`);
      if (header.t === 'end') return { chunks, end: header.seq };
      assert.equal(header.t, 'chunk', `a pull's answer holds chunks and an end, not ${JSON.stringify(header)}`);
      if (header.t === 'chunk') chunks.push({ seq: header.seq, oid: header.oid, kind: header.kind, body: body! });
    }
  }

  close(): void {
    this.ws.terminate();
  }
}

const newKeys = () => deriveKeys(newHistorySecret());
const ackSeq = (m: RelayMessage): number => {
  assert.equal(m.t, 'ack', `expected an ack, got ${JSON.stringify(m)}`);
  return (m as { seq: number }).seq;
};

interface StoredRow {
  seq: number;
  sid: string;
  oid: string;
  kind: number;
  bytes: Buffer;
  covered_by: number | null;
}

/** The relay's chunks table as another process reads it (WAL: a reader sees every committed write). */
function storedChunks(data: string): StoredRow[] {
  const db = new Database(join(data, RELAY_DB_FILE), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT seq, sid, oid, kind, bytes, covered_by FROM chunks ORDER BY seq').all() as StoredRow[];
  } finally {
    db.close();
  }
}

/** The database's logical size in bytes (pages in use, the WAL included) and its free pages. */
function storedSize(data: string): { bytes: number; freePages: number } {
  const db = new Database(join(data, RELAY_DB_FILE), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    return { bytes: pages * pageSize, freePages: db.pragma('freelist_count', { simple: true }) as number };
  } finally {
    db.close();
  }
}

/** Every file under a folder (relative, sorted) with its contents, to show a folder left unchanged. */
function snapshotFolder(dir: string): Array<[string, string]> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((entry): [string, string] => [entry, statSync(join(dir, entry)).isFile() ? readFileSync(join(dir, entry), 'base64') : '<dir>']);
}

describe('chyme relay', () => {
  test('prints the address and the token, answers GET /health, keeps the token in a 0600 file, stops on SIGTERM', TIMEOUT, async () => {
    const relay = await freshRelay();
    assert.match(relay.lines[0]!, /^Chyme relay listening on ws:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(relay.port, 0, 'the bound port is printed, not 0');
    assert.match(relay.lines[1]!, /^Token: [0-9A-Za-z]{32}$/);
    assert.equal(readFileSync(join(relay.data, 'relay-token'), 'utf8').trim(), relay.token);
    assert.equal(statSync(join(relay.data, 'relay-token')).mode & 0o777, 0o600);

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

    const taken = spawn(process.execPath, [CLI, 'relay', '--port', String(fromEnv.port), '--data', data, '--token', 'another-token'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    taken.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const [code] = (await once(taken, 'exit')) as [number | null];
    assert.equal(code, 4);
    assert.match(stderr, /^chyme: Port \d+ on 127\.0\.0\.1 is in use: is a relay already running\? .*\n$/);
    assert.equal(await fromEnv.stop(), 0);

    const bad = runCli(['relay', '--port', '0', '--data', data, '--token', 'has space']);
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr, 'chyme: --token must be 8 to 200 printable characters without spaces.\n');
  });

  test('--help prints its usage; a bad flag exits 2 with the usage', TIMEOUT, () => {
    const help = runCli(['relay', '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage:\n  chyme relay \[--port P\] \[--host H\] \[--data DIR\] \[--token T\] \[--tls-cert FILE --tls-key FILE\]\n/);
    for (const args of [['--port', 'http'], ['--port', '70000'], ['--port=-1'], ['--bogus'], ['--host', '']]) {
      const r = runCli(['relay', ...args]);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /^chyme: .*\n\nUsage:/, args.join(' '));
    }
    const grace = runCli(['relay', '--port', '0', '--data', join(tempDir(), 'relay')], { CHYME_RELAY_COMPACT_GRACE_MS: 'soon' });
    assert.equal(grace.status, 2);
    assert.equal(grace.stderr, 'chyme: CHYME_RELAY_COMPACT_GRACE_MS must be a whole number of milliseconds, not "soon".\n');
  });

  test('a data folder of the old, unencrypted relay (documents/) is refused in one sentence, exit status 2, and left as it was', TIMEOUT, () => {
    const data = join(tempDir(), 'relay');
    mkdirSync(join(data, 'documents', '3L', '9qPRDm', 'snapshot'), { recursive: true });
    writeFileSync(join(data, 'documents', '3L', '9qPRDm', 'snapshot', 'abc'), 'an automerge chunk');
    writeFileSync(join(data, 'relay-token'), 'the-old-token\n', { mode: 0o600 });
    const before = snapshotFolder(data);
    const r = runCli(['relay', '--port', '0', '--data', data]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^chyme: [^\n]+ holds a relay of the old, unencrypted format \(its documents\/ folder\)[^\n]+\.\n$/);
    assert.deepEqual(snapshotFolder(data), before);
  });

  test("the relay's folder holds only relay-token and relay.db (with its -wal and -shm while it runs)", TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      const { peer, answer } = await Peer.hello(relay.url, keys, relay.token);
      assert.equal(answer.t, 'welcome');
      const oid = await keys.oid('root');
      ackSeq(await peer.push(1, oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(5000))));
      peer.close();
      const running = readdirSync(relay.data).sort();
      assert.deepEqual(
        running.filter((f) => !['relay-token', 'relay.db', 'relay.db-wal', 'relay.db-shm'].includes(f)),
        [],
      );
      assert.ok(running.includes('relay.db'));
    } finally {
      assert.equal(await relay.stop('SIGTERM'), 0);
    }
    assert.deepEqual(readdirSync(relay.data).sort(), ['relay-token', 'relay.db']);
  });

  test('no token or the right one opens; a wrong one gets 401, and 429 after 20 a minute from one address, even with the right one', TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      assert.equal(await upgradeStatus(relay.url), 101, 'only creating a space needs the token');
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token)), 101);
      assert.equal(await upgradeStatus(relay.url, { authorization: `Bearer ${relay.token}` }), 101);
      assert.equal(await upgradeStatus(relay.url, { authorization: 'Bearer not-the-token' }), 401);
      // One character off, same length: the comparison is of the whole token.
      const offByOne = relay.token.slice(0, -1) + (relay.token.endsWith('a') ? 'b' : 'a');
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, offByOne)), 401);
      const wrong = relayUrlWithToken(relay.url, 'not-the-token');
      for (let i = 2; i < MAX_BAD_TOKENS_PER_MINUTE; i++) assert.equal(await upgradeStatus(wrong), 401, `attempt ${i + 1}`);
      assert.equal(await upgradeStatus(wrong), 429);
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token)), 429);
      assert.equal(await upgradeStatus(relay.url), 429);
      // Behind a reverse proxy on this machine, the proxy's X-Forwarded-For names the client: another one is not locked out.
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token), { 'x-forwarded-for': '203.0.113.7' }), 101);
      await waitFor('the refusals in the log', () => relay.stderr().includes('wrong token (401)') && relay.stderr().includes('(429)'));
      assert.ok(!relay.stderr().includes(relay.token));
    } finally {
      await relay.stop();
    }
  });

  test(`past ${DEFAULT_MAX_CONNECTIONS} open connections the next one gets 503; a closed one makes room`, TIMEOUT, async () => {
    const relay = await freshRelay();
    const peers: Peer[] = [];
    try {
      const keys = await newKeys();
      for (let i = 0; i < DEFAULT_MAX_CONNECTIONS; i++) {
        const { peer, answer } = await Peer.hello(relay.url, keys, relay.token);
        peers.push(peer);
        assert.equal(answer.t, 'welcome');
      }
      assert.equal(await upgradeStatus(relay.url), 503);
      const last = peers.pop()!;
      last.ws.close();
      await last.closed;
      await waitFor('room for one more', async () => (await upgradeStatus(relay.url)) === 101);
    } finally {
      for (const p of peers) p.close();
      await relay.stop();
    }
  });

  test('a broken frame, a text message, a message before hello or a malformed request target closes only that connection', TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      const { peer: good, answer } = await Peer.hello(relay.url, keys, relay.token);
      assert.equal(answer.t, 'welcome');
      const oid = await keys.oid('root');

      const bad: Array<[string, (p: Peer) => void]> = [
        ['a text message', (p) => p.ws.send('{"t":"hello"}')],
        ['a frame shorter than its length prefix', (p) => p.ws.send(Buffer.from([0, 0]))],
        ['a header that is not JSON', (p) => p.ws.send(Buffer.from([0, 0, 0, 2, 0x7b, 0x7b]))],
        ['a push before hello', (p) => p.send({ t: 'push', rid: 1, oid, kind: 'change' }, new Uint8Array(4))],
        ['a hello with a malformed space id', (p) => p.send({ t: 'hello', v: PROTOCOL_VERSION, sid: 'NOT-AN-ID', auth: keys.auth })],
      ];
      for (const [what, sendIt] of bad) {
        const p = await Peer.open(relay.url);
        sendIt(p);
        assert.equal(await p.closed, 1008, what);
      }
      // A push without a body, after a good hello.
      const { peer: noBody } = await Peer.hello(relay.url, keys);
      noBody.send({ t: 'push', rid: 1, oid, kind: 'change' });
      assert.equal(await noBody.closed, 1008);

      // A frame with the reserved opcode 3 (masked, empty), written under ws: the relay's ws emits 'error'.
      const broken = await Peer.open(relay.url);
      (broken.ws as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.from([0x83, 0x80, 0, 0, 0, 0]));
      await broken.closed;

      // Request targets Node's HTTP parser takes but WHATWG URL rejects, as a plain request and as an upgrade.
      for (const head of ['GET http://[x HTTP/1.1\r\nHost: x\r\n\r\n', 'GET http://[x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n']) {
        const raw = connect(relay.port, '127.0.0.1');
        raw.setEncoding('utf8');
        let reply = '';
        raw.on('data', (c: string) => (reply += c));
        raw.on('error', () => undefined);
        raw.write(head);
        await waitFor('an answer to a malformed target', () => /^HTTP\/1\.1 \d{3}/.test(reply));
        raw.destroy();
      }

      // The good connection was never disturbed.
      ackSeq(await good.push(1, oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(10))));
      assert.equal(relay.child.exitCode, null);
      assert.match(relay.stderr(), /closed a connection from \S+ that sent a bad message: a text message/);
      assert.match(relay.stderr(), /closed a connection from \S+ that sent a bad message: a message before hello/);
      assert.match(relay.stderr(), /failed: Invalid WebSocket frame: invalid opcode 3/);
      good.close();
    } finally {
      await relay.stop();
    }
  });
});

/** Two spaces on a relay: A with two connections (the first created it), B with one. */
async function twoSpaces(relay: RelayProcess) {
  const [a, b] = [await newKeys(), await newKeys()];
  const { peer: a1 } = await Peer.hello(relay.url, a, relay.token);
  const { peer: a2 } = await Peer.hello(relay.url, a);
  const { peer: b1 } = await Peer.hello(relay.url, b, relay.token);
  return { a, b, a1, a2, b1 };
}

describe('the sealed protocol', () => {
  test('only a connection with the token creates a space; afterwards the auth proof alone opens it, and 20 wrong proofs get 429', TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      const unknown = await Peer.hello(relay.url, keys);
      assert.deepEqual(unknown.answer, { t: 'error', code: 'no_space', message: 'This relay holds no history for that pairing code.' });
      assert.equal(await unknown.peer.closed, 1008);

      const created = await Peer.hello(relay.url, keys, relay.token);
      assert.deepEqual(created.answer, { t: 'welcome', seq: 0 });
      // The relay keeps only the SHA-256 of the proof.
      const db = new Database(join(relay.data, RELAY_DB_FILE), { readonly: true });
      assert.deepEqual(db.prepare('SELECT sid, auth_sha256 FROM spaces').all(), [{ sid: keys.sid, auth_sha256: await authDigest(keys.auth) }]);
      db.close();

      const later = await Peer.hello(relay.url, keys);
      assert.equal(later.answer.t, 'welcome', 'no token needed once the space exists');

      const other = await newKeys();
      const wrongProof = { sid: keys.sid, auth: other.auth };
      const refused = await Peer.hello(relay.url, wrongProof);
      assert.deepEqual(refused.answer, { t: 'error', code: 'unauthorized', message: 'The key does not match this history on the relay.' });
      assert.equal(await refused.peer.closed, 1008);
      // The refusal of the unknown space counted too: 2 so far.
      for (let i = 2; i < MAX_BAD_TOKENS_PER_MINUTE; i++) {
        const r = await Peer.hello(relay.url, wrongProof);
        assert.equal(r.answer.t, 'error', `attempt ${i + 1}`);
        await r.peer.closed;
      }
      assert.equal(await upgradeStatus(relay.url), 429);
      assert.equal(await upgradeStatus(relayUrlWithToken(relay.url, relay.token)), 429);

      created.peer.close();
      later.peer.close();
    } finally {
      await relay.stop();
    }
  });

  test('a hello of another protocol version is answered with a sentence and closed', TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      const p = await Peer.open(relay.url, relay.token);
      p.send({ t: 'hello', v: PROTOCOL_VERSION + 1, sid: keys.sid, auth: keys.auth });
      assert.deepEqual((await p.next('the refusal')).header, {
        t: 'error',
        code: 'version',
        message: `This relay speaks sync protocol version ${PROTOCOL_VERSION}; update Chyme on this device.`,
      });
      assert.equal(await p.closed, 1008);
    } finally {
      await relay.stop();
    }
  });

  test("pull after N streams exactly the space's live chunks after N in order, then end; the space's other connection is notified, another space's is not", TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const { a, b, a1, a2, b1 } = await twoSpaces(relay);
      const names = ['root', 'shard:2026-11:dev_a', 'root', 'shard:2026-10:dev_a', 'root'];
      const pushed: Array<{ seq: number; oid: string; name: string; body: string }> = [];
      for (const [i, name] of names.entries()) {
        const oid = await a.oid(name);
        const plain = `change ${i}`;
        // The next frame on A1 is its ack: a notify of B's earlier push would have come first.
        const seq = ackSeq(await a1.push(i + 1, oid, 'change', await a.seal(oid, 'change', name, new TextEncoder().encode(plain))));
        pushed.push({ seq, oid, name, body: plain });
        // The other connection of the space hears of it, with the seq the pusher was given.
        assert.deepEqual((await a2.next(`the notify of push ${i + 1}`)).header, { t: 'notify', seq });
        // Another space's chunk in between: the seqs interleave. B1's next frame is its ack, not a notify of A's push.
        const bOid = await b.oid(name);
        ackSeq(await b1.push(i + 1, bOid, 'change', await b.seal(bOid, 'change', name, new Uint8Array(8))));
      }
      // Anything the relay sent A1 or A2 before answering this pull would come before its end.
      assert.deepEqual(await a1.pull(pushed.at(-1)!.seq), { chunks: [], end: (await a2.pull(pushed.at(-1)!.seq)).end });
      assert.deepEqual(a2.pending(), []);

      const opened = async (chunks: Array<{ seq: number; oid: string; kind: string; body: Uint8Array }>) =>
        Promise.all(
          chunks.map(async (c) => {
            assert.equal(c.kind, 'change');
            const { name, body } = await a.open(c.oid, 'change', c.body);
            return { seq: c.seq, oid: c.oid, name, body: new TextDecoder().decode(body) };
          }),
        );
      const after1 = await a2.pull(pushed[1]!.seq);
      assert.deepEqual(await opened(after1.chunks), pushed.slice(2));
      assert.ok(after1.end >= pushed.at(-1)!.seq, `end ${after1.end} is the new cursor, past every chunk sent`);
      const { peer: a3 } = await Peer.hello(relay.url, a);
      assert.deepEqual(await opened((await a3.pull(0)).chunks), pushed);
      assert.deepEqual(
        (await b1.pull(0)).chunks.map((c) => c.seq),
        storedChunks(relay.data).filter((r) => r.sid === b.sid).map((r) => r.seq),
        "B's pull holds B's chunks only",
      );
      for (const p of [a1, a2, a3, b1]) p.close();
    } finally {
      await relay.stop();
    }
  });

  test('a snapshot marks the chunks it covers: a pull from 0 gets the snapshot and the tail only; a snapshot covering less is refused', TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      const { peer } = await Peer.hello(relay.url, keys, relay.token);
      const [x, y] = [await keys.oid('root'), await keys.oid('shard:2026-11:dev_a')];
      const change = async (oid: string, name: string) => keys.seal(oid, 'change', name, new Uint8Array(32));
      const x1 = ackSeq(await peer.push(1, x, 'change', await change(x, 'root')));
      const x2 = ackSeq(await peer.push(2, x, 'change', await change(x, 'root')));
      const x3 = ackSeq(await peer.push(3, x, 'change', await change(x, 'root')));
      const y1 = ackSeq(await peer.push(4, y, 'change', await change(y, 'shard:2026-11:dev_a')));
      const snapshot = ackSeq(await peer.push(5, x, 'snapshot', await keys.seal(x, 'snapshot', 'root', new Uint8Array(64)), x2));

      const { peer: reader } = await Peer.hello(relay.url, keys);
      const live = (await reader.pull(0)).chunks.map((c) => [c.seq, c.oid, c.kind]);
      assert.deepEqual(live, [
        [x3, x, 'change'],
        [y1, y, 'change'],
        [snapshot, x, 'snapshot'],
      ]);
      // Covered, not yet deleted (the grace period is a week by default).
      assert.deepEqual(
        storedChunks(relay.data).map((r) => [r.seq, r.covered_by]),
        [[x1, snapshot], [x2, snapshot], [x3, null], [y1, null], [snapshot, null]],
      );

      const smaller = await peer.push(6, x, 'snapshot', await keys.seal(x, 'snapshot', 'root', new Uint8Array(64)), x1);
      assert.deepEqual(smaller, { t: 'error', code: 'snapshot_refused', message: `a snapshot must cover at least what the current one covers (seq ${x2})`, rid: 6 });
      const withoutCovers = await peer.push(7, x, 'snapshot', await keys.seal(x, 'snapshot', 'root', new Uint8Array(64)));
      assert.equal(withoutCovers.t === 'error' && withoutCovers.rid, 7);
      const pastLatest = await peer.push(8, x, 'snapshot', await keys.seal(x, 'snapshot', 'root', new Uint8Array(64)), snapshot + 100);
      assert.equal(pastLatest.t === 'error' && pastLatest.code, 'snapshot_refused');
      // A refused push refuses that push only: the connection goes on, and a later snapshot covering more replaces the first.
      const second = ackSeq(await peer.push(9, x, 'snapshot', await keys.seal(x, 'snapshot', 'root', new Uint8Array(64)), snapshot));
      assert.deepEqual((await reader.next('the notify of the second snapshot')).header, { t: 'notify', seq: second });
      assert.deepEqual(
        (await reader.pull(0)).chunks.map((c) => c.seq),
        [y1, second],
      );
      assert.equal(storedChunks(relay.data).find((r) => r.seq === snapshot)?.covered_by, second);
      peer.close();
      reader.close();
    } finally {
      await relay.stop();
    }
  });

  test("two devices' snapshots of one document: neither covers the other's that it has not pulled; a device's own chunks past its cursor are covered when listed", TIMEOUT, async () => {
    // Both devices were apart, each changed the document, and each pushes its changes as a
    // snapshot covering what it had pulled (seq c). The second must not hide the first: it was
    // made without the first's changes, which no other chunk holds.
    const relay = await freshRelay();
    try {
      const keys = await newKeys();
      // Each connects when it is its turn to speak: a notify of another's push would come between
      // a request and its answer here.
      const { peer: desk } = await Peer.hello(relay.url, keys, relay.token);
      const oid = await keys.oid('shard:2026-11:dev_a');
      const body = (n: number) => keys.seal(oid, 'snapshot', 'shard:2026-11:dev_a', new Uint8Array(64).fill(n));
      const c = ackSeq(await desk.push(1, oid, 'change', await keys.seal(oid, 'change', 'shard:2026-11:dev_a', new Uint8Array(32))));
      const fromDesk = ackSeq(await desk.push(2, oid, 'snapshot', await body(1), c));
      const { peer: laptop } = await Peer.hello(relay.url, keys);
      const fromLaptop = ackSeq(await laptop.push(1, oid, 'snapshot', await body(2), c));
      assert.deepEqual(
        storedChunks(relay.data).map((r) => [r.seq, r.covered_by]),
        [[c, fromDesk], [fromDesk, null], [fromLaptop, null]],
      );
      const { peer: joiner } = await Peer.hello(relay.url, keys);
      assert.deepEqual((await joiner.pull(0)).chunks.map((ch) => ch.seq), [fromDesk, fromLaptop]);
      for (const p of [desk, laptop, joiner]) p.close();
      // The desk's next snapshot lists its own chunk past its cursor (`own`): that one is covered,
      // the laptop's is not.
      const { peer: deskAgain } = await Peer.hello(relay.url, keys);
      const again = ackSeq(await deskAgain.push(1, oid, 'snapshot', await body(3), c, [fromDesk]));
      deskAgain.close();
      assert.deepEqual(
        storedChunks(relay.data).map((r) => [r.seq, r.covered_by]),
        [[c, fromDesk], [fromDesk, again], [fromLaptop, null], [again, null]],
      );
      // Once a device has merged everything (its cursor passed it), its snapshot covers it all.
      const { peer: laptopAgain } = await Peer.hello(relay.url, keys);
      const merged = ackSeq(await laptopAgain.push(1, oid, 'snapshot', await body(4), again));
      laptopAgain.close();
      const { peer: later } = await Peer.hello(relay.url, keys);
      assert.deepEqual((await later.pull(0)).chunks.map((ch) => ch.seq), [merged]);
      later.close();
    } finally {
      await relay.stop();
    }
  });

  test('with CHYME_RELAY_COMPACT_GRACE_MS=200 the covered chunks are deleted and the file gives their space back', TIMEOUT, async () => {
    const relay = await freshRelay({ CHYME_RELAY_COMPACT_GRACE_MS: '200' });
    try {
      const keys = await newKeys();
      const { peer } = await Peer.hello(relay.url, keys, relay.token);
      const oid = await keys.oid('root');
      const random = prng(2711);
      let last = 0;
      // 3 MB of changes (random bytes, as sealed chunks are: nothing compresses).
      for (let i = 0; i < 96; i++) {
        const body = Uint8Array.from({ length: 32 * 1024 }, () => Math.floor(random() * 256));
        last = ackSeq(await peer.push(i + 1, oid, 'change', await keys.seal(oid, 'change', 'root', body)));
      }
      const full = storedSize(relay.data);
      assert.ok(full.bytes > 3 * 1024 * 1024, `${full.bytes} bytes with every change`);

      const snapshot = ackSeq(await peer.push(1000, oid, 'snapshot', await keys.seal(oid, 'snapshot', 'root', new Uint8Array(1024)), last));
      await waitFor('the covered chunks deleted', () => {
        const rows = storedChunks(relay.data);
        return rows.length === 1 && rows[0]!.seq === snapshot;
      });
      await waitFor('the deletion in the log', () => /deleted 96 chunks that snapshots cover/.test(relay.stderr()));
      const compacted = storedSize(relay.data);
      assert.equal(compacted.freePages, 0, 'incremental vacuum gave the free pages back');
      assert.ok(compacted.bytes < full.bytes / 10, `${compacted.bytes} bytes after, ${full.bytes} before`);
      peer.close();
      assert.equal(await relay.stop('SIGTERM'), 0);
      // Closed, the relay's file is that size on disk (its WAL written back and removed).
      assert.equal(statSync(join(relay.data, RELAY_DB_FILE)).size, compacted.bytes);
      assert.ok(!existsSync(join(relay.data, `${RELAY_DB_FILE}-wal`)));
    } finally {
      await relay.stop();
    }
  });

  test("say is passed to the space's other connections as heard, never to another space, and never stored", TIMEOUT, async () => {
    const relay = await freshRelay();
    try {
      const { a1: speaker, a2: listener, b1: stranger } = await twoSpaces(relay);
      // A marker that would be found in the relay's files if the note were written anywhere.
      const note = Uint8Array.from({ length: 96 }, (_, i) => (i * 73 + 11) & 0xff);
      speaker.send({ t: 'say' }, note);
      const heard = await listener.next('the heard note');
      assert.equal(heard.header.t, 'heard');
      assert.deepEqual(Buffer.from(heard.body!), Buffer.from(note));
      // Nothing comes back to the speaker, nothing reaches the other space: each one's pull is answered by its end alone.
      assert.deepEqual(await speaker.pull(0), { chunks: [], end: 0 });
      assert.deepEqual(await stranger.pull(0), { chunks: [], end: 0 });
      assert.deepEqual(await listener.pull(0), { chunks: [], end: 0 });
      assert.deepEqual(storedChunks(relay.data), []);
      for (const p of [speaker, listener, stranger]) p.close();
      assert.equal(await relay.stop('SIGTERM'), 0);
      for (const file of readdirSync(relay.data)) assert.equal(readFileSync(join(relay.data, file)).indexOf(Buffer.from(note)), -1, file);
    } finally {
      await relay.stop();
    }
  });

  test('every acknowledged chunk survives a SIGKILL right after its ack (20 seeded push/kill cycles)', { timeout: 240_000 }, async () => {
    const data = join(tempDir(), 'relay');
    const keys = await newKeys();
    const names = ['root', 'shard:2026-11:dev_a', 'shard:2026-10:dev_a'];
    const oids = await Promise.all(names.map((n) => keys.oid(n)));
    const random = prng(27);
    const acked = new Map<number, { oid: string; bytes: Buffer }>();
    let port = 0;
    for (let cycle = 0; cycle < 20; cycle++) {
      const relay = await startRelayProcess(['--port', String(port), '--data', data]);
      port = relay.port;
      try {
        const { peer, answer } = await Peer.hello(relay.url, keys, relay.token);
        assert.equal(answer.t, 'welcome');
        // Pushes sent back to back, without waiting; the relay is killed as the seeded one's ack arrives, others still in flight.
        const count = 1 + Math.floor(random() * 12);
        const killAt = Math.floor(random() * count);
        const sent = new Map<number, { oid: string; bytes: Buffer }>();
        let acks = 0;
        const killed = new Promise<void>((resolve) => {
          peer.onFrame = ({ header }) => {
            if (header.t !== 'ack') return;
            acked.set(header.seq, sent.get(header.rid)!);
            if (acks++ === killAt) {
              relay.child.kill('SIGKILL');
              resolve();
            }
          };
        });
        for (let rid = 0; rid < count; rid++) {
          const i = Math.floor(random() * oids.length);
          const body = Uint8Array.from({ length: 1 + Math.floor(random() * 20_000) }, () => Math.floor(random() * 256));
          const bytes = Buffer.from(await keys.seal(oids[i]!, 'change', names[i]!, body));
          sent.set(rid, { oid: oids[i]!, bytes });
          peer.send({ t: 'push', rid, oid: oids[i]!, kind: 'change' }, bytes);
        }
        await killed;
        await relay.stop();
        assert.equal(relay.child.signalCode, 'SIGKILL');
        await peer.closed;
      } finally {
        await relay.stop('SIGKILL');
      }
      const stored = new Map(storedChunks(data).map((r) => [r.seq, r]));
      for (const [seq, chunk] of acked) {
        const row = stored.get(seq);
        assert.ok(row, `cycle ${cycle}: acknowledged chunk ${seq} is missing`);
        assert.equal(row.oid, chunk.oid);
        assert.ok(row.bytes.equals(chunk.bytes), `cycle ${cycle}: chunk ${seq} holds other bytes`);
      }
    }
    assert.ok(acked.size >= 20, `${acked.size} acknowledged chunks checked`);
  });
});

describe('keepalive', () => {
  test('the relay pings every connection; one that answers stays, one that never answers is cut off', TIMEOUT, async () => {
    const lines: string[] = [];
    const relay = await startRelay({ dataDir: join(tempDir(), 'relay'), port: 0, token: 'keepalive-token', keepaliveMs: 100, log: (l) => lines.push(l) });
    const keys = await newKeys();
    try {
      const { peer: answering, answer } = await Peer.hello(relay.url, keys, relay.token);
      assert.equal(answer.t, 'welcome');
      let pings = 0;
      answering.ws.on('ping', () => (pings += 1));
      const silent = new WebSocket(relay.url, { autoPong: false });
      silent.on('error', () => undefined);
      await once(silent, 'open');
      silent.send(encodeFrame({ t: 'hello', v: PROTOCOL_VERSION, sid: keys.sid, auth: keys.auth }));
      const [code] = (await once(silent, 'close')) as [number];
      assert.equal(code, 1006, 'terminated, without a closing handshake');
      assert.ok(lines.some((l) => /^connection from \S+ answered no ping; cut off$/.test(l)), lines.join('\n'));
      // Past two intervals without a pong the silent one went; the answering one has had more pings than that, and stays.
      await waitFor('five pings answered', () => pings >= 5);
      assert.equal(answering.ws.readyState, WebSocket.OPEN);
      answering.close();
    } finally {
      await relay.close();
    }
  });
});

/** A device's RelayConnection over ws, recording its statuses and notifies. */
function device(url: string, keys: Pick<HistoryKeys, 'sid' | 'auth'>, options: Partial<RelayConnectionOptions> = {}) {
  const statuses: RelayStatus[] = [];
  const notified: number[] = [];
  const connection = new RelayConnection(url, {
    socketFactory: (target) => new WebSocket(target) as unknown as SocketLike,
    sid: keys.sid,
    auth: keys.auth,
    retryIntervalMs: 200,
    onStatus: (s) => statuses.push(s),
    onChunk: () => undefined,
    onEnd: () => undefined,
    onNotify: (seq) => notified.push(seq),
    ...options,
  });
  connection.start();
  return { connection, statuses, notified };
}

describe('RelayConnection', () => {
  test('a wrong token is reported as a sentence; a relay gone is "connection refused"', TIMEOUT, async () => {
    const relay = await freshRelay();
    const keys = await newKeys();
    const wrong = device(relay.url, keys, { token: 'not-the-token' });
    const good = device(relay.url, keys, { token: relay.token });
    try {
      await waitFor('the refusal', () => wrong.connection.status.lastError);
      assert.deepEqual(wrong.connection.status, { connected: false, lastError: 'The relay refused the token (401).' });
      assert.deepEqual(wrong.statuses, [{ connected: false, lastError: 'The relay refused the token (401).' }]);
      await waitFor('the good device connected', () => good.connection.connected);
      await relay.stop('SIGKILL');
      await waitFor('unreachable reported', () => /^Could not reach the relay at ws:\/\/127\.0\.0\.1:\d+: connection refused\.$/.test(good.connection.status.lastError ?? ''));
      assert.equal(good.connection.connected, false);
      assert.ok(good.statuses.some((s) => /^The connection to the relay at ws:\/\/127\.0\.0\.1:\d+ (closed; reconnecting|was reset)\.$/.test(s.lastError ?? '')), JSON.stringify(good.statuses));
    } finally {
      wrong.connection.stop();
      good.connection.stop();
      await relay.stop();
    }
  });

  test("a key the relay does not know, or the wrong key for a space, is the pairing code's sentence", TIMEOUT, async () => {
    const relay = await freshRelay();
    const keys = await newKeys();
    const unknown = device(relay.url, keys);
    let owner: ReturnType<typeof device> | undefined;
    let wrongKey: ReturnType<typeof device> | undefined;
    try {
      await waitFor('the refusal', () => unknown.connection.status.lastError);
      assert.deepEqual(unknown.connection.status, { connected: false, lastError: "The pairing code's key does not match any history on this relay." });
      owner = device(relay.url, keys, { token: relay.token });
      await waitFor('the space created', () => owner!.connection.connected);
      wrongKey = device(relay.url, { sid: keys.sid, auth: (await newKeys()).auth });
      await waitFor('the refusal', () => wrongKey!.connection.status.lastError);
      assert.deepEqual(wrongKey.connection.status, { connected: false, lastError: "The pairing code's key does not match this history." });
      assert.deepEqual(wrongKey.statuses, [wrongKey.connection.status]);
    } finally {
      for (const d of [unknown, owner, wrongKey]) d?.connection.stop();
      await relay.stop();
    }
  });

  test('an unreachable relay is reported, and the connection opens once a relay starts on that port', TIMEOUT, async () => {
    const port = await freePort();
    const keys = await newKeys();
    const { connection, statuses } = device(`ws://127.0.0.1:${port}`, keys, { token: 'the-relay-token' });
    let relay: RelayProcess | undefined;
    try {
      await waitFor('unreachable reported', () => connection.status.lastError);
      assert.equal(connection.status.lastError, `Could not reach the relay at ws://127.0.0.1:${port}: connection refused.`);
      assert.equal(connection.relayUrl, `ws://127.0.0.1:${port}`, 'the address shown holds no token');
      await assert.rejects(connection.push(await keys.oid('root'), 'change', new Uint8Array(40)), /^Error: not connected$/);

      relay = await startRelayProcess(['--port', String(port), '--data', join(tempDir(), 'relay'), '--token', 'the-relay-token']);
      await waitFor('connected', () => connection.connected);
      assert.deepEqual(connection.status, { connected: true, lastError: null });
      assert.deepEqual(statuses.at(-1), { connected: true, lastError: null });
      // Connected means the relay accepted the space: a push is stored.
      const oid = await keys.oid('root');
      const seq = await connection.push(oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(40)));
      assert.equal(seq, 1);
    } finally {
      connection.stop();
      await relay?.stop();
    }
  });

  test('after the relay restarts on the same port it reconnects, hears the latest seq, and its pushes are acknowledged', TIMEOUT, async () => {
    const data = join(tempDir(), 'relay');
    let relay = await startRelayProcess(['--port', '0', '--data', data]);
    const keys = await newKeys();
    const oid = await keys.oid('root');
    const { connection, statuses, notified } = device(relay.url, keys, { token: relay.token });
    try {
      await waitFor('connected', () => connection.connected);
      const first = await connection.push(oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(40)));
      await relay.stop('SIGKILL');
      await waitFor('the drop seen', () => !connection.connected);
      relay = await startRelayProcess(['--port', String(relay.port), '--data', data]);
      await waitFor('reconnected', () => connection.connected);
      assert.ok(statuses.some((s) => !s.connected && s.lastError), 'the drop was reported');
      assert.deepEqual(statuses.at(-1), { connected: true, lastError: null });
      // The welcome of each connection is a notify with the relay's latest seq: the engine pulls what it missed.
      assert.deepEqual(notified, [0, first]);
      const second = await connection.push(oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(40)));
      assert.ok(second > first);
    } finally {
      connection.stop();
      await relay.stop();
    }
  });

  test('push() rejects when the connection drops before the ack', TIMEOUT, async () => {
    const relay = await freshRelay();
    const keys = await newKeys();
    const oid = await keys.oid('root');
    const { connection } = device(relay.url, keys, { token: relay.token });
    try {
      await waitFor('connected', () => connection.connected);
      // Stopped, the relay reads nothing: the push waits in its socket's buffer until the process is killed.
      relay.child.kill('SIGSTOP');
      const pushed = connection.push(oid, 'change', await keys.seal(oid, 'change', 'root', new Uint8Array(40)));
      relay.child.kill('SIGKILL');
      await assert.rejects(pushed, /^Error: the connection to the relay closed$/);
      assert.equal(connection.connected, false);
      assert.deepEqual(storedChunks(relay.data), []);
    } finally {
      connection.stop();
      await relay.stop('SIGKILL');
    }
  });

  test('relayUrlWithToken URL-encodes the token and keeps the rest of the query', () => {
    assert.equal(relayUrlWithToken('ws://relay.lan:7651', 'a b&c/d'), 'ws://relay.lan:7651/?token=a+b%26c%2Fd');
    assert.equal(relayUrlWithToken('wss://example.org/sync?x=1&token=old', 'new'), 'wss://example.org/sync?x=1&token=new');
    assert.throws(() => relayUrlWithToken('http://relay.lan', 't'), /must be a ws:\/\/ or wss:\/\/ URL/);
  });
});

test('the built CLI bundle loads automerge only inside the sync engine, which runs once sync is on, so the relay and other commands start without its wasm', { skip: existsSync(join(ROOT, 'build/server/cli/cli.cjs')) ? false : 'not built' }, () => {
  // One CommonJS file (server/cli/bundle.mjs): a module imported only with import() is wrapped
  // in esbuild's lazy initializer, and the packages it requires are required from there.
  const bundle = readFileSync(join(ROOT, 'build/server/cli/cli.cjs'), 'utf8');
  const required = [...bundle.matchAll(/^( *)\S.*\brequire\("@automerge\/[^"]*"\)/gm)];
  assert.ok(required.length > 0, 'the bundle requires Automerge');
  for (const m of required) assert.ok(m[1]!.length > 0, `required at the top level: ${m[0]}`);
  const init = /^var (init_\w+) = __esm\(\{\n  "build\/server\/sync\/engine\.js"\(\) \{\n(?:.*\n)*?\}\);$/m.exec(bundle);
  assert.ok(init, 'the sync engine is a lazily initialized module');
  assert.match(init[0], /require\("@automerge\/automerge"\)/);
  assert.ok(bundle.includes(`Promise.resolve().then(() => (${init[1]}(), engine_exports))`), 'imported with import()');
});

test("chyme relay's own entry loads the relay, its store, the protocol and ws, and none of express, zod, Automerge or the service", { skip: existsSync(join(ROOT, 'build/server/cli/relay-cli.js')) ? false : 'not built' }, () => {
  // One file (server/cli/bundle.mjs).
  const all = readFileSync(join(ROOT, 'build/server/cli/relay-cli.js'), 'utf8');
  // esbuild heads each bundled module with a comment naming its file.
  const modules = new Set([...all.matchAll(/^\/\/ ((?:build\/server|node_modules)\/\S+)$/gm)].map((m) => m[1]!));
  for (const needed of ['build/server/sync/relay.js', 'build/server/sync/relay-store.js', 'build/server/sync/relay-app.js', 'build/server/sync/protocol.js', 'node_modules/ws/lib/websocket-server.js']) {
    assert.ok(modules.has(needed), `${needed} is in the relay's entry`);
  }
  const unwanted = [...modules].filter((m) => /^node_modules\/(express|zod|body-parser|mqtt|qrcode)\/|^build\/server\/(api|db|nutrition|digestion|foods|engine|webhooks|mcp|imports)\/|^build\/server\/sync\/(engine|documents|entities|index)\.js$/.test(m));
  assert.deepEqual(unwanted, []);
  assert.deepEqual([...all.matchAll(/^\s*import\s[^;]*?from\s+["'](@automerge\/[^"']*|express|zod)["']/gm)].map((m) => m[0]), []);
  // The whole CLI is only ever loaded on demand (help, a failure), through load-cli.js.
  assert.doesNotMatch(all, /cli\.cjs/);
  assert.match(all, /^import \{ loadCli \} from "\.\/load-cli\.js";$/m);
  assert.match(all, /cli\.exitOnFailure\(failure, argv\)/);
});
