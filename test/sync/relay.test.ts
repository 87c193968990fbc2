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
import { DEFAULT_MAX_CONNECTIONS, MAX_BAD_TOKENS_PER_MINUTE, RELAY_DB_FILE } from '../../server/sync/relay.js';
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
  async push(rid: number, oid: string, kind: 'change' | 'snapshot', body: Uint8Array, covers?: number): Promise<RelayMessage> {
    this.send({ t: 'push', rid, oid, kind, ...(covers === undefined ? {} : { covers }) }, body);
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
    assert.match(help.stdout, /^Usage:\n  chyme relay \[--port P\] \[--host H\] \[--data DIR\] \[--token T\]\n/);
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
    assert.match(r.stderr, /^chyme: [^\n]+ holds a relay of the old, unencrypted format \(its documents\/ folder\): [^\n]+\.\n$/);
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
      const a = await newKeys();
      const b = await newKeys();
      const { peer: a1 } = await Peer.hello(relay.url, a, relay.token);
      const { peer: a2 } = await Peer.hello(relay.url, a);
      const { peer: b1 } = await Peer.hello(relay.url, b, relay.token);
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
});
