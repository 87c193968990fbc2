import { createHash, createPrivateKey, timingSafeEqual, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { randomToken } from '../ids.js';
import { AUTH_PROOF, decodeFrame, encodeFrame, MAX_OWN_SEQS, MAX_PULL_OIDS, OPAQUE_ID, PROTOCOL_VERSION, type ClientMessage, type RelayMessage } from './protocol.js';
import { PhoneAppFiles } from './relay-app.js';
import { DEFAULT_RELAY_HOST, DEFAULT_RELAY_PORT } from './relay-defaults.js';
import { RelayStore, RELAY_DB_FILE } from './relay-store.js';

/**
 * The sealed relay (docs/sync-relay.md): an append-only store of sealed chunks per space and
 * opaque document id, over a WebSocket. It never loads Automerge and never holds a key: devices
 * push sealed chunks and snapshots, it acknowledges each once committed, serves "everything since
 * cursor N", and tells connected devices of the same space that something new arrived.
 *
 * Who may do what: creating a space needs the relay's token (on the WebSocket upgrade); using a
 * space afterwards needs its auth proof, derived from the history secret, whose SHA-256 the relay
 * keeps. So a phone that joins carries no relay token at all.
 */

export { DEFAULT_RELAY_HOST, DEFAULT_RELAY_PORT };

/**
 * The largest WebSocket message accepted. One sealed chunk is one message: a snapshot of a month
 * of 200 meals is ~20 KB, and ten years in one document about 2.2 MB (Automerge 3.5), so 64 MiB
 * leaves ~30× room while bounding what one connection can make the relay buffer.
 */
export const MAX_SYNC_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Open sync connections at once; a person's devices are a handful, so this only bounds a runaway client. */
export const DEFAULT_MAX_CONNECTIONS = 64;
/** Wrong tokens or auth proofs one address may present per minute before it gets 429 for the rest of that minute. */
export const MAX_BAD_TOKENS_PER_MINUTE = 20;
const RATE_WINDOW_MS = 60_000;
/** A connection must say hello within this long. */
const HELLO_TIMEOUT_MS = 10_000;
/** Chunks read from the store per step of a pull (each step yields to other connections). */
const PULL_PAGE = 256;
/** A pull pauses while this much is queued on its socket (a slow device, a large history). */
const PULL_BUFFER_BYTES = 8 * 1024 * 1024;
/**
 * How long chunks a snapshot covers stay on the relay: a device that began a pull before the
 * snapshot arrived, or is offline for a while, still finds them meanwhile ($CHYME_RELAY_COMPACT_GRACE_MS).
 */
export const DEFAULT_COMPACT_GRACE_MS = 7 * 24 * 3600_000;
const PURGE_INTERVAL_MS = 60_000;
/**
 * Every connection is pinged this often: a reverse proxy keeps an idle sync connection open (nginx
 * closes one silent for 60 s), and a device gone without a goodbye (asleep, off the network) is
 * cut off after two unanswered pings, unless the relay is still handing it data (a slow device's
 * pull, whose pongs queue behind it), so that it stops counting against the connection cap.
 */
export const DEFAULT_KEEPALIVE_MS = 5000;
const MISSED_PINGS = 2;

/** Tokens are sent in a URL query or a header, and typed or pasted by people: printable ASCII, no spaces. */
const TOKEN_PATTERN = /^[\x21-\x7e]{8,200}$/;

/** A relay option that cannot work (a malformed token, an unusable data folder): a sentence for a person. */
export class RelayConfigError extends Error {}

export interface RelayOptions {
  host?: string;
  /** 0 picks a free port (Relay.port tells which). */
  port?: number;
  /** Holds `relay-token` and `relay.db` (created when missing). */
  dataDir: string;
  /** Overrides $CHYME_RELAY_TOKEN and the token file; not written anywhere. */
  token?: string;
  /** One line per connection, refusal and failure; never the token, never a space id. */
  log?: (line: string) => void;
  /** Covered chunks are deleted after this long (ms; default DEFAULT_COMPACT_GRACE_MS, else $CHYME_RELAY_COMPACT_GRACE_MS). */
  compactGraceMs?: number;
  /** Between pings (ms; default DEFAULT_KEEPALIVE_MS). */
  keepaliveMs?: number;
  /** PEM files: the relay serves HTTPS and wss:// itself (else plain HTTP and ws://, for a proxy in front). */
  tls?: { certFile: string; keyFile: string };
  /** The phone app's files, served at /app/ (default build/phone beside the relay's build). */
  phoneAppDir?: string;
}

export interface Relay {
  /** ws://HOST:PORT (wss:// with TLS) with the bound port (IPv6 hosts in brackets). */
  url: string;
  token: string;
  port: number;
  store: RelayStore;
  /** Stops accepting, closes every connection and the store. */
  close(): Promise<void>;
}

export function relayTokenPath(dataDir: string): string {
  return join(dataDir, 'relay-token');
}

/**
 * The token the relay accepts: the option, else $CHYME_RELAY_TOKEN, else the token file, else a new
 * random one written to the file (mode 0600) so that a restart keeps it and paired devices keep working.
 */
export function resolveRelayToken(dataDir: string, explicit: string | undefined, log: (line: string) => void): string {
  const given = explicit ?? (process.env.CHYME_RELAY_TOKEN || undefined);
  if (given !== undefined) {
    if (!TOKEN_PATTERN.test(given)) {
      const source = explicit !== undefined ? '--token' : 'CHYME_RELAY_TOKEN';
      throw new RelayConfigError(`${source} must be 8 to 200 printable characters without spaces.`);
    }
    return given;
  }
  const file = relayTokenPath(dataDir);
  let stored: string | undefined;
  try {
    stored = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (stored !== undefined) {
    if (!TOKEN_PATTERN.test(stored)) {
      throw new RelayConfigError(`${file} does not hold a usable token (8 to 200 printable characters without spaces); delete it to have a new one made.`);
    }
    // Anyone who can read the file can sync every document on this relay.
    if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) log(`warning: ${file} is readable by other users; chmod 600 it.`);
    return stored;
  }
  const token = randomToken(32);
  // 'wx': if another relay process made the file in the meantime, fail rather than overwrite its token.
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/** The sha256 of a token: equal-length buffers for timingSafeEqual, whatever the presented length. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The request's URL. Node's parser lets through targets that WHATWG URL rejects (`http://[x`),
 * and a throw here, in a server's event handler, would end the process: such a URL is null.
 */
function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://relay');
  } catch {
    return null;
  }
}

/** The token a client presented: `?token=` in the URL, or `Authorization: Bearer …`. */
function presentedToken(req: IncomingMessage): string | null {
  const query = requestUrl(req)?.searchParams.get('token');
  if (query) return query;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match ? match[1]! : null;
}

/**
 * The address a refusal is counted against. Behind a reverse proxy on the same machine every
 * client arrives from loopback, so there the proxy's own X-Forwarded-For entry (the last one, which
 * the client cannot choose) is used; otherwise one bad client would lock every device out.
 */
function clientAddress(req: IncomingMessage): string {
  const remote = req.socket.remoteAddress ?? 'unknown';
  const loopback = remote === '::1' || remote.startsWith('127.') || remote.startsWith('::ffff:127.');
  const forwarded = req.headers['x-forwarded-for'];
  if (loopback && typeof forwarded === 'string') {
    const last = forwarded.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return remote;
}

/** Answers an upgrade request with a plain HTTP status and closes the connection. */
function refuse(socket: Duplex, status: number, reason: string, body: string): void {
  socket.on('error', () => socket.destroy());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const text = `${body}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  // end() flushes the answer first; a client that never reads it is not waited for.
  socket.once('finish', () => socket.destroy());
  setTimeout(() => socket.destroy(), 5000).unref();
}


/** Rate limiting of refusals (wrong token, wrong auth proof) per address. */
class Refusals {
  private readonly failures = new Map<string, { since: number; count: number }>();

  tooMany(address: string, now: number): boolean {
    return (this.recent(address, now)?.count ?? 0) >= MAX_BAD_TOKENS_PER_MINUTE;
  }

  count(address: string, now: number): void {
    const entry = this.recent(address, now);
    if (entry) entry.count += 1;
    else this.failures.set(address, { since: now, count: 1 });
    // Keeps the table bounded when many addresses try: expired windows are forgotten.
    if (this.failures.size > 1000) for (const [key, value] of this.failures) if (now - value.since >= RATE_WINDOW_MS) this.failures.delete(key);
  }

  private recent(address: string, now: number) {
    const entry = this.failures.get(address);
    return entry && now - entry.since < RATE_WINDOW_MS ? entry : undefined;
  }
}

interface Connection {
  ws: WebSocket;
  address: string;
  /** True when the upgrade presented the relay's token: this connection may create a space. */
  admin: boolean;
  sid: string | null;
  /** Pulls are answered one after the other, in order. */
  pulling: Promise<void>;
  /** Pings sent since the connection last sent anything (a pong or a message). */
  missedPings: number;
}

/** Plain HTTP on the relay's port: a health check for monitoring, the phone app, and a hint for anything else. */
function answerHttp(app: PhoneAppFiles, req: IncomingMessage, res: ServerResponse): void {
  const path = requestUrl(req)?.pathname;
  if (path !== undefined && app.handle(req, res, path)) return;
  if ((req.method === 'GET' || req.method === 'HEAD') && path === '/health') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : '{"ok":true}');
    return;
  }
  res
    .writeHead(426, { 'Content-Type': 'text/plain; charset=utf-8', Upgrade: 'websocket', Connection: 'Upgrade' })
    .end('This is a Chyme sync relay; it speaks WebSocket only (and GET /health, and the phone app at /app/).\n');
}

/**
 * The certificate and key for `--tls-cert`/`--tls-key`, read and checked before the relay listens,
 * so that a wrong file is one sentence at start rather than a failed handshake on every device.
 */
export function readTlsFiles(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string, flag: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new RelayConfigError(`Cannot read the TLS ${what} ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): check ${flag}.`);
    }
  };
  const cert = read(certFile, 'certificate', '--tls-cert');
  const key = read(keyFile, 'key', '--tls-key');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new RelayConfigError(`${certFile} is not a PEM certificate (-----BEGIN CERTIFICATE-----): check --tls-cert.`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    // OpenSSL 3 reports a missing passphrase as "interrupted or cancelled": the PEM header says it plainly.
    const encrypted = (err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' || /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(key.toString('latin1'));
    throw new RelayConfigError(
      encrypted
        ? `${keyFile} is an encrypted private key; give the relay an unencrypted one (openssl pkey -in ${keyFile} -out key.pem).`
        : `${keyFile} is not a PEM private key: check --tls-key.`,
    );
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new RelayConfigError(`The TLS key ${keyFile} does not belong to the certificate ${certFile}: give the key the certificate was made for.`);
  }
  return { cert, key };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}


/** The grace period: the option, else $CHYME_RELAY_COMPACT_GRACE_MS, else the default; a sentence when unusable. */
export function resolveCompactGraceMs(explicit: number | undefined): number {
  const raw = explicit ?? (process.env.CHYME_RELAY_COMPACT_GRACE_MS ? Number(process.env.CHYME_RELAY_COMPACT_GRACE_MS) : DEFAULT_COMPACT_GRACE_MS);
  if (!Number.isSafeInteger(raw) || raw < 0) {
    throw new RelayConfigError(`CHYME_RELAY_COMPACT_GRACE_MS must be a whole number of milliseconds, not ${JSON.stringify(explicit ?? process.env.CHYME_RELAY_COMPACT_GRACE_MS)}.`);
  }
  return raw;
}

/** Starts a relay; resolves once it listens. */
export async function startRelay(options: RelayOptions): Promise<Relay> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? DEFAULT_RELAY_HOST;
  const port = options.port ?? DEFAULT_RELAY_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RelayConfigError(`The port must be an integer from 0 to 65535, not ${port}.`);
  const graceMs = resolveCompactGraceMs(options.compactGraceMs);
  const tls = options.tls ? readTlsFiles(options.tls.certFile, options.tls.keyFile) : undefined;

  // The relay of the first, unencrypted protocol kept automerge-repo's files in documents/.
  if (existsSync(join(options.dataDir, 'documents'))) {
    throw new RelayConfigError(
      `${options.dataDir} holds a relay of the old, unencrypted format (its documents/ folder), while this relay stores only sealed chunks: ` +
        'start it with an empty --data folder (move the old one away or delete it), then set sync up again on your devices.',
    );
  }
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const token = resolveRelayToken(options.dataDir, options.token, log);
  const store = new RelayStore(options.dataDir);
  const refusals = new Refusals();
  const connections = new Set<Connection>();

  const app = new PhoneAppFiles(options.phoneAppDir);
  const handler = (req: IncomingMessage, res: ServerResponse) => answerHttp(app, req, res);
  const server: Server = tls ? createTlsServer({ cert: tls.cert, key: tls.key }, handler) : createServer(handler);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SYNC_MESSAGE_BYTES });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const address = clientAddress(req);
    const now = Date.now();
    // Checked before the token, so that even the right token waits out the minute: guessing stays slow.
    if (refusals.tooMany(address, now)) {
      log(`refused ${address}: too many wrong tokens or keys (429)`);
      refuse(socket, 429, 'Too Many Requests', 'Too many wrong tokens or keys from this address; wait a minute.');
      return;
    }
    // The token is optional: only creating a space needs it. A wrong one is still refused, so a
    // device with a mistyped token hears so at once.
    const presented = presentedToken(req);
    if (presented !== null && !timingSafeEqual(digest(presented), digest(token))) {
      refusals.count(address, now);
      log(`refused ${address}: wrong token (401)`);
      refuse(socket, 401, 'Unauthorized', 'Wrong token for this Chyme relay: ?token=… or Authorization: Bearer ….');
      return;
    }
    if (connections.size >= DEFAULT_MAX_CONNECTIONS) {
      log(`refused ${address}: ${DEFAULT_MAX_CONNECTIONS} connections already open (503)`);
      refuse(socket, 503, 'Service Unavailable', `This Chyme relay already has ${DEFAULT_MAX_CONNECTIONS} connections open.`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, address, presented !== null));
  });

  const send = (c: Connection, header: RelayMessage, body?: Uint8Array) => {
    if (c.ws.readyState === c.ws.OPEN) c.ws.send(encodeFrame(header, body));
  };
  const fail = (c: Connection, code: string, message: string, rid?: number) => send(c, { t: 'error', code, message, ...(rid === undefined ? {} : { rid }) });

  function accept(ws: WebSocket, address: string, admin: boolean): void {
    const c: Connection = { ws, address, admin, sid: null, pulling: Promise.resolve(), missedPings: 0 };
    connections.add(c);
    log(`connection from ${address} (${connections.size} open)`);
    const helloTimer = setTimeout(() => {
      if (c.sid === null) ws.close(1008, 'no hello');
    }, HELLO_TIMEOUT_MS);
    helloTimer.unref();
    // ws emits 'error' for a broken frame or a message over maxPayload; ws closes the connection itself.
    ws.on('error', (err) => log(`connection from ${address} failed: ${err.message}`));
    ws.on('close', () => {
      clearTimeout(helloTimer);
      connections.delete(c);
      log(`connection from ${address} closed (${connections.size} open)`);
    });
    ws.on('pong', () => (c.missedPings = 0));
    ws.on('message', (data, isBinary) => {
      c.missedPings = 0;
      try {
        if (!isBinary) throw new Error('a text message');
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        const { header, body } = decodeFrame<ClientMessage>(bytes);
        handle(c, header, body);
      } catch (err) {
        log(`closed a connection from ${address} that sent a bad message: ${(err as Error)?.message ?? String(err)}`);
        ws.close(1008, 'bad message');
      }
    });
  }

  function handle(c: Connection, m: ClientMessage, body: Uint8Array | null): void {
    if (m.t === 'hello') return hello(c, m);
    if (c.sid === null) throw new Error('a message before hello');
    const sid = c.sid;
    switch (m.t) {
      case 'push': {
        if (!Number.isSafeInteger(m.rid) || typeof m.oid !== 'string' || !OPAQUE_ID.test(m.oid) || (m.kind !== 'change' && m.kind !== 'snapshot') || !body) {
          throw new Error('a malformed push');
        }
        if (m.own !== undefined && (!Array.isArray(m.own) || m.own.length > MAX_OWN_SEQS || !m.own.every((s) => Number.isSafeInteger(s) && s > 0))) throw new Error('a malformed push');
        const covers = m.kind === 'snapshot' ? (Number.isSafeInteger(m.covers) ? (m.covers as number) : null) : null;
        const stored = store.append(sid, m.oid, m.kind, body, covers, Date.now(), m.kind === 'snapshot' ? (m.own ?? []) : []);
        if (typeof stored === 'string') return fail(c, 'snapshot_refused', stored, m.rid);
        send(c, { t: 'ack', rid: m.rid, seq: stored });
        for (const other of connections) if (other !== c && other.sid === sid) send(other, { t: 'notify', seq: stored });
        return;
      }
      case 'pull': {
        if (!Number.isSafeInteger(m.after) || m.after < 0) throw new Error('a malformed pull');
        const oids = m.oids;
        if (oids !== undefined && (!Array.isArray(oids) || oids.length > MAX_PULL_OIDS || !oids.every((o) => typeof o === 'string' && OPAQUE_ID.test(o)))) throw new Error('a malformed pull');
        c.pulling = c.pulling.then(() => pull(c, sid, m.after, oids)).catch((err: unknown) => log(`a pull failed: ${(err as Error)?.message ?? String(err)}`));
        return;
      }
      case 'index': {
        // After the pulls asked before it, like every answer on this connection.
        c.pulling = c.pulling.then(() => send(c, { t: 'docs', seq: store.latestSeq(), docs: store.docs(sid) })).catch((err: unknown) => log(`an index failed: ${(err as Error)?.message ?? String(err)}`));
        return;
      }
      case 'say': {
        if (!body) throw new Error('a malformed say');
        for (const other of connections) if (other !== c && other.sid === sid) send(other, { t: 'heard' }, body);
        return;
      }
      default:
        throw new Error(`an unknown message type ${JSON.stringify((m as { t: unknown }).t)}`);
    }
  }

  function hello(c: Connection, m: Extract<ClientMessage, { t: 'hello' }>): void {
    if (c.sid !== null) throw new Error('a second hello');
    if (m.v !== PROTOCOL_VERSION) {
      fail(c, 'version', `This relay speaks sync protocol version ${PROTOCOL_VERSION}; update Chyme on this device.`);
      c.ws.close(1008, 'version');
      return;
    }
    if (typeof m.sid !== 'string' || !OPAQUE_ID.test(m.sid) || typeof m.auth !== 'string' || !AUTH_PROOF.test(m.auth)) throw new Error('a malformed hello');
    const presented = createHash('sha256').update(m.auth, 'utf8').digest('hex');
    const stored = store.spaceAuth(m.sid);
    if (stored === undefined) {
      if (!c.admin) {
        refusals.count(c.address, Date.now());
        fail(c, 'no_space', 'This relay holds no history for that pairing code.');
        c.ws.close(1008, 'no space');
        return;
      }
      store.createSpace(m.sid, presented, Date.now());
      log(`a new space from ${c.address}`);
    } else if (!timingSafeEqual(Buffer.from(stored, 'hex'), Buffer.from(presented, 'hex'))) {
      refusals.count(c.address, Date.now());
      fail(c, 'unauthorized', 'The key does not match this history on the relay.');
      c.ws.close(1008, 'unauthorized');
      return;
    }
    c.sid = m.sid;
    send(c, { t: 'welcome', seq: store.latestSeq() });
  }

  /** Streams every live chunk after `after` (of the documents `oids` only, when given), a page at a time, pausing while the socket is full. */
  async function pull(c: Connection, sid: string, after: number, oids?: readonly string[]): Promise<void> {
    // Everything up to here is in this answer: chunks stored while it streams come with their notify.
    const end = store.latestSeq();
    let cursor = after;
    for (;;) {
      if (c.ws.readyState !== c.ws.OPEN) return;
      const page = (oids ? store.pageOf(sid, oids, cursor, PULL_PAGE) : store.page(sid, cursor, PULL_PAGE)).filter((ch) => ch.seq <= end);
      for (const ch of page) send(c, { t: 'chunk', seq: ch.seq, oid: ch.oid, kind: ch.kind }, ch.bytes);
      if (page.length < PULL_PAGE) break;
      cursor = page[page.length - 1]!.seq;
      while (c.ws.readyState === c.ws.OPEN && c.ws.bufferedAmount > PULL_BUFFER_BYTES) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setImmediate(r));
    }
    send(c, { t: 'end', seq: end });
  }

  const purgeTimer = setInterval(() => {
    try {
      const n = store.purge(Date.now() - graceMs);
      if (n > 0) log(`deleted ${n} chunk${n === 1 ? '' : 's'} that snapshots cover`);
    } catch (err) {
      log(`deleting covered chunks failed: ${(err as Error)?.message ?? String(err)}`);
    }
  }, Math.max(50, Math.min(PURGE_INTERVAL_MS, Math.floor(graceMs / 2) || 50)));
  purgeTimer.unref();

  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  const keepaliveTimer = setInterval(() => {
    for (const c of connections) {
      if (c.ws.readyState !== c.ws.OPEN) continue;
      if (c.missedPings >= MISSED_PINGS && c.ws.bufferedAmount === 0) {
        log(`connection from ${c.address} answered no ping; cut off`);
        c.ws.terminate();
        continue;
      }
      c.missedPings += 1;
      c.ws.ping();
    }
  }, keepaliveMs);
  keepaliveTimer.unref();

  try {
    await listen(server, port, host);
  } catch (err) {
    clearInterval(purgeTimer);
    clearInterval(keepaliveTimer);
    wss.close();
    store.close();
    throw err;
  }
  const bound = (server.address() as AddressInfo).port;
  const url = `${tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${bound}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(purgeTimer);
      clearInterval(keepaliveTimer);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // 1001 "going away": devices retry, and find the relay again once it is back.
        for (const c of connections) c.ws.close(1001, 'relay stopping');
        wss.close();
        server.closeAllConnections();
        // A client that never answers the close handshake is cut off rather than waited for.
        setTimeout(() => {
          for (const c of connections) c.ws.terminate();
        }, 2000).unref();
      });
      await Promise.all([...connections].map((c) => c.pulling));
      store.close();
    })();
    return closing;
  };
  return { url, token, port: bound, store, close };
}

export { RELAY_DB_FILE };
