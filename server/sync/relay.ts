import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { DocumentId, Repo } from '@automerge/automerge-repo';
import type { WebSocketServerAdapter } from '@automerge/automerge-repo-network-websocket';
import { WebSocketServer, type WebSocket } from 'ws';
import { randomToken } from '../ids.js';
import { collectGarbage } from '../memory.js';
import { fixRepoDefects } from './repo-fixes.js';

/**
 * The sync relay: automerge-repo's own sync-server pattern (a Repo with a WebSocket server adapter
 * and file storage) behind a token check. It never announces documents to anyone
 * (sharePolicy false): it answers requests for documents by id and stores what devices send, so a
 * device that comes online later finds the changes of the others here. See docs/sync-relay.md.
 */

export const DEFAULT_RELAY_HOST = '127.0.0.1';
export const DEFAULT_RELAY_PORT = 7651;

/**
 * The largest WebSocket message accepted. A sync message for a device that has none of a
 * document carries the whole document, compressed: measured with Automerge 3.5, a month of 200
 * meals (17 fields each, plus edits) is 23 KB and ten years in one document (20,000 meals, 4,000
 * edits) about 2.2 MB. 64 MiB leaves ~30× room for longer notes and a history far beyond ten
 * years, while a buggy or hostile device holding the token can make the relay buffer at most
 * 64 MiB per connection (ws's default, 100 MiB, or 256 MiB would only raise that bound).
 */
export const MAX_SYNC_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Open sync connections at once; a person's devices are a handful, so this only bounds a runaway client. */
export const DEFAULT_MAX_CONNECTIONS = 64;
/** Wrong tokens one address may present per minute before it gets 429 for the rest of that minute. */
export const MAX_BAD_TOKENS_PER_MINUTE = 20;
const RATE_WINDOW_MS = 60_000;

/**
 * How long a document may go without sync traffic before the relay writes it to disk and drops it
 * from memory. Devices keep a shard loaded for 30 s after they last used it and sync a change within
 * ~100 ms, so a conversation about a document has gaps far shorter than this; 20 s keeps a document
 * a person is editing (a meal, then its correction) in memory, while the documents of a join or of a
 * device's start-up pass leave memory soon after. Reloading one from disk costs milliseconds.
 */
export const DEFAULT_IDLE_EVICT_MS = 20_000;
/**
 * At most this many documents stay in memory once each has been idle for CAP_MIN_IDLE_MS: the
 * least recently used go first. Each document loaded costs ~1 MB of Automerge wasm memory and
 * ~1.5 MB of JS heap (measured with bench/sync.ts), and wasm memory never shrinks, so the most
 * documents held at once stays resident. Devices send a bulk change four shards at a time, and a
 * join asks for one at a time. Measured on a ten-year history (bench/sync.ts), the relay's peak
 * during a join: 224 MB with 16, 181–199 MB with 8, 158–162 MB with 4 (and devices pacing by 4);
 * the join as fast each time (31–34 s), set-up too (45–47 s) once devices paced by the same 4.
 */
export const DEFAULT_MAX_LOADED_DOCUMENTS = 4;
/** Past the cap, a document may leave memory once a sync exchange about it has paused this long (ms). */
const CAP_MIN_IDLE_MS = 1000;
/** The smallest idle period accepted: below it a document could be dropped between the messages of one exchange. */
export const MIN_IDLE_EVICT_MS = 100;

/** Tokens are sent in a URL query or a header, and typed or pasted by people: printable ASCII, no spaces. */
const TOKEN_PATTERN = /^[\x21-\x7e]{8,200}$/;

/** A relay option that cannot work (a malformed token, an unusable data folder): a sentence for a person. */
export class RelayConfigError extends Error {}

export interface RelayOptions {
  host?: string;
  /** 0 picks a free port (Relay.port tells which). */
  port?: number;
  /** Holds `relay-token` and `documents/` (created when missing). */
  dataDir: string;
  /** Overrides $CHYME_RELAY_TOKEN and the token file; not written anywhere. */
  token?: string;
  /** One line per connection, refusal and failure; never the token. */
  log?: (line: string) => void;
  /**
   * Drops a document from memory after this long without sync traffic (ms; default
   * DEFAULT_IDLE_EVICT_MS, else $CHYME_RELAY_IDLE_EVICT_MS). Tests and the bench make it short.
   */
  idleEvictMs?: number;
  /** Above this many documents in memory, those idle for a second are dropped too (default DEFAULT_MAX_LOADED_DOCUMENTS). */
  maxLoadedDocuments?: number;
}

export interface Relay {
  /** ws://HOST:PORT with the bound port (IPv6 hosts in brackets). */
  url: string;
  token: string;
  port: number;
  repo: Repo;
  /** The documents in memory now (ready to sync), and how many the relay has dropped from memory since it started. */
  memory(): { loaded: number; evicted: number };
  /** Stops accepting, closes every connection, writes pending changes to disk and shuts the repo down. */
  close(): Promise<void>;
}

/** The token file in a relay's data folder. */
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

export interface AcceptSyncOptions {
  /** The token to accept, or a function read at every attempt (null: accept none, e.g. sync is off). */
  token: string | (() => string | null);
  /** Only upgrades to this path are handled (e.g. /v1/sync/ws); without it, every upgrade is. */
  path?: string;
  maxConnections?: number;
  log?: (line: string) => void;
}

/**
 * Accepts sync WebSocket connections on an HTTP server: the returned WebSocketServer is what
 * `new WebSocketServerAdapter(wss)` takes. The token is checked on the upgrade, before any
 * WebSocket exists, so a wrong one costs one HTTP answer (401; 429 after too many; 503 when full).
 *
 * Node emits 'upgrade' to every listener in the order they were added, and once any listener
 * exists it no longer closes upgrade sockets itself. With `path`, upgrades to other paths are left
 * alone (not answered, not destroyed) for another listener; whoever composes the server must then
 * make sure some listener answers every path, or a socket nobody owns stays open until its client
 * gives up. Without `path`, every upgrade is answered here, so no other upgrade listener should be added.
 */
export function acceptSyncUpgrades(server: Server, options: AcceptSyncOptions): WebSocketServer {
  const log = options.log ?? (() => undefined);
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SYNC_MESSAGE_BYTES });
  const failures = new Map<string, { since: number; count: number }>();

  const recentFailures = (address: string, now: number) => {
    const entry = failures.get(address);
    return entry && now - entry.since < RATE_WINDOW_MS ? entry : undefined;
  };
  const countFailure = (address: string, now: number) => {
    const entry = recentFailures(address, now);
    if (entry) entry.count += 1;
    else failures.set(address, { since: now, count: 1 });
    // Keeps the table bounded when many addresses try: expired windows are forgotten.
    if (failures.size > 1000) for (const [key, value] of failures) if (now - value.since >= RATE_WINDOW_MS) failures.delete(key);
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (options.path !== undefined && requestUrl(req)?.pathname !== options.path) return;
    const address = clientAddress(req);
    const now = Date.now();
    // Checked before the token, so that even the right token waits out the minute: guessing stays slow.
    if ((recentFailures(address, now)?.count ?? 0) >= MAX_BAD_TOKENS_PER_MINUTE) {
      log(`refused ${address}: too many wrong tokens (429)`);
      refuse(socket, 429, 'Too Many Requests', 'Too many wrong tokens from this address; wait a minute.');
      return;
    }
    const expected = typeof options.token === 'function' ? options.token() : options.token;
    const presented = presentedToken(req);
    // The URL holds the token, so neither it nor req.url is ever logged.
    if (expected === null || presented === null || !timingSafeEqual(digest(presented), digest(expected))) {
      countFailure(address, now);
      log(`refused ${address}: ${presented === null ? 'no token' : 'wrong token'} (401)`);
      refuse(socket, 401, 'Unauthorized', 'This Chyme relay needs its token: ?token=… or Authorization: Bearer ….');
      return;
    }
    // The adapter's connect() adds the second 'connection' listener (the first is below); until the
    // repo has called it, a connection would be accepted and never answered.
    if (wss.listenerCount('connection') < 2) {
      log(`refused ${address}: not ready yet (503)`);
      refuse(socket, 503, 'Service Unavailable', 'This Chyme relay is starting; try again in a moment.');
      return;
    }
    if (wss.clients.size >= maxConnections) {
      log(`refused ${address}: ${maxConnections} connections already open (503)`);
      refuse(socket, 503, 'Service Unavailable', `This Chyme relay already has ${maxConnections} connections open.`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', onUpgrade);

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const address = clientAddress(req);
    log(`connection from ${address} (${wss.clients.size} open)`);
    // ws emits 'error' for a broken frame or a message over maxPayload, and an 'error' without a
    // listener would end the process; the adapter adds none. ws closes the connection itself.
    ws.on('error', (err) => log(`connection from ${address} failed: ${err.message}`));
    ws.on('close', () => log(`connection from ${address} closed (${wss.clients.size} open)`));
  });
  wss.on('close', () => server.off('upgrade', onUpgrade));
  return wss;
}

/** The automerge-repo server adapter, with `connected` (see createSyncServerAdapter). */
export type SyncServerAdapter = WebSocketServerAdapter & {
  /**
   * Resolves once the repo has connected the adapter. A Repo connects its adapters only after
   * reading its storage id (asynchronously); a WebSocket accepted before that would get no answer
   * to its join, ever, and its client would never retry an open socket. So the relay listens only
   * after this, and acceptSyncUpgrades answers 503 until then.
   */
  readonly connected: Promise<void>;
};

/**
 * The automerge-repo server adapter for a WebSocketServer from acceptSyncUpgrades, hardened: a
 * message that makes the adapter or the repo throw (a device sending something that is not a sync
 * message, say) closes that one connection instead of escaping from ws's socket handler as an
 * uncaught exception that would stop the relay. automerge is loaded here, not at the top, so that
 * the other CLI commands start without its wasm (~180 ms).
 */
export async function createSyncServerAdapter(wss: WebSocketServer, onBadMessage: (err: unknown) => void = () => undefined): Promise<SyncServerAdapter> {
  const { WebSocketServerAdapter } = await import('@automerge/automerge-repo-network-websocket');
  class GuardedWebSocketServerAdapter extends WebSocketServerAdapter {
    readonly connected: Promise<void>;
    #markConnected!: () => void;

    constructor() {
      // The adapter's typings name ws through isomorphic-ws's CommonJS types; it is the same class.
      super(wss as unknown as ConstructorParameters<typeof WebSocketServerAdapter>[0]);
      this.connected = new Promise((resolve) => (this.#markConnected = resolve));
    }

    override connect(...args: Parameters<WebSocketServerAdapter['connect']>): void {
      super.connect(...args);
      this.#markConnected();
    }

    override receiveMessage(messageBytes: Uint8Array, socket: Parameters<WebSocketServerAdapter['receiveMessage']>[1]): void {
      try {
        super.receiveMessage(messageBytes, socket);
      } catch (err) {
        onBadMessage(err);
        socket.close(1008, 'bad message');
      }
    }
  }
  return new GuardedWebSocketServerAdapter();
}

/** The idle period: the option, else $CHYME_RELAY_IDLE_EVICT_MS, else the default; a sentence when unusable. */
export function resolveIdleEvictMs(explicit: number | undefined): number {
  const raw = explicit ?? (process.env.CHYME_RELAY_IDLE_EVICT_MS ? Number(process.env.CHYME_RELAY_IDLE_EVICT_MS) : DEFAULT_IDLE_EVICT_MS);
  if (!Number.isSafeInteger(raw) || raw < MIN_IDLE_EVICT_MS) {
    const source = explicit !== undefined ? 'idleEvictMs' : 'CHYME_RELAY_IDLE_EVICT_MS';
    throw new RelayConfigError(`${source} must be a whole number of milliseconds, at least ${MIN_IDLE_EVICT_MS}, not ${JSON.stringify(explicit ?? process.env.CHYME_RELAY_IDLE_EVICT_MS)}.`);
  }
  return raw;
}

interface Eviction {
  /** Ready documents in memory now. */
  loaded(): number;
  evicted(): number;
  /** Stops sweeping; resolves once a sweep under way has finished (its document written or kept). */
  stop(): Promise<void>;
}

/**
 * Keeps the relay's memory bounded: a Repo keeps every document it has loaded (its Automerge
 * document in wasm memory and its sync state per device) until the process ends, so a relay that
 * served a ten-year history held all of it. This drops each document that had no sync message, in
 * either direction, for `idleMs`: written to disk first, then removed from the repo's cache. A
 * device still listening to it loses nothing: automerge-repo remembers (until that device
 * disconnects) that the device asked for the document, so when another device's change makes the
 * relay load it again, the relay starts syncing it with the listener again (tested in
 * test/sync/relay.test.ts).
 */
function evictIdleDocuments(repo: Repo, idleMs: number, maxLoaded: number, log: (line: string) => void): Eviction {
  const capMinIdleMs = Math.min(idleMs, CAP_MIN_IDLE_MS);
  /** The sequence number of each document's latest sync message: a change of it means "traffic since". */
  const lastSeq = new Map<DocumentId, number>();
  const lastAt = new Map<DocumentId, number>();
  let seq = 0;
  let evicted = 0;
  const failed = new Set<DocumentId>();
  // Every message that concerns a document names it; the others (remote-heads subscriptions) do not.
  const touch = (msg: object) => {
    const id = 'documentId' in msg ? (msg.documentId as DocumentId | undefined) : undefined;
    if (!id) return;
    const known = lastAt.has(id);
    lastSeq.set(id, ++seq);
    lastAt.set(id, Date.now());
    // A document new to memory may take it past the cap: look now rather than at the next tick.
    if (!known && lastAt.size > maxLoaded) kick();
  };
  // Incoming messages (emitted synchronously as a WebSocket message arrives, before the repo's own
  // asynchronous handling of it) and outgoing ones.
  repo.networkSubsystem.on('message', touch);
  repo.synchronizer.on('message', touch);

  const evictOne = async (id: DocumentId): Promise<boolean> => {
    const handle = repo.handles[id];
    if (!handle?.isReady()) return false;
    const seen = lastSeq.get(id);
    // Without this, removeFromCache would drop a change whose throttled save has not run yet.
    await repo.flush([id]);
    // A message that arrived while the document was being written: it is in use again, keep it
    // (its change is saved by the repo as usual). No message can come in from here to the
    // removal: what follows runs without waiting for I/O.
    if (lastSeq.get(id) !== seen || repo.handles[id] !== handle || !handle.isReady()) return false;
    await repo.removeFromCache(id);
    lastSeq.delete(id);
    lastAt.delete(id);
    return true;
  };

  let sweeping: Promise<void> | undefined;
  let stopped = false;
  const sweep = async () => {
    const now = Date.now();
    const ready: [DocumentId, number][] = [];
    for (const [id, handle] of Object.entries(repo.handles) as [DocumentId, (typeof repo.handles)[DocumentId]][]) {
      if (!handle.isReady()) continue;
      let at = lastAt.get(id);
      // A document loaded without a message seen (none so far): its idle period starts now.
      if (at === undefined) {
        at = now;
        lastAt.set(id, now);
        lastSeq.set(id, ++seq);
      }
      ready.push([id, at]);
    }
    // Least recently used first: past the cap, those go before the ones still being synced.
    ready.sort((x, y) => x[1] - y[1]);
    let over = ready.length - maxLoaded;
    let count = 0;
    for (const [id, at] of ready) {
      if (stopped) break;
      const idleFor = now - at;
      if (idleFor < idleMs && !(over > 0 && idleFor >= capMinIdleMs)) continue;
      try {
        if (await evictOne(id)) {
          count += 1;
          over -= 1;
        }
        failed.delete(id);
      } catch (err) {
        // Logged once per document: the next sweep tries again, without filling the log.
        if (!failed.has(id)) log(`could not drop document ${id} from memory: ${(err as Error)?.message ?? String(err)}`);
        failed.add(id);
      }
    }
    // Forget documents that left the cache some other way, so these maps stay as small as it.
    for (const id of lastAt.keys()) if (!repo.handles[id]) (lastAt.delete(id), lastSeq.delete(id));
    if (count > 0) {
      evicted += count;
      log(`dropped ${count} idle document${count === 1 ? '' : 's'} from memory (${loaded()} loaded)`);
      // What they held is garbage now, and an idle relay allocates too little for V8 to collect it.
      collectGarbage();
    }
  };
  const kick = () => {
    if (sweeping || stopped) return;
    sweeping = sweep()
      .catch((err: unknown) => log(`sweeping idle documents failed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => (sweeping = undefined));
  };
  const loaded = () => Object.values(repo.handles).filter((h) => h.isReady()).length;
  // Every second (a quarter of a shorter period): past the cap a document leaves memory about a
  // second after its exchange, else at most ~idleMs + 1 s after its last message.
  const timer = setInterval(kick, Math.max(50, Math.min(capMinIdleMs, Math.floor(idleMs / 4))));
  // The relay's server keeps the process alive, not this.
  timer.unref();
  return {
    loaded,
    evicted: () => evicted,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await sweeping;
      repo.networkSubsystem.off('message', touch);
      repo.synchronizer.off('message', touch);
    },
  };
}

/** Plain HTTP on the relay's port: a health check for monitoring, and a hint for anything else. */
function answerHttp(req: IncomingMessage, res: ServerResponse): void {
  const path = requestUrl(req)?.pathname;
  if ((req.method === 'GET' || req.method === 'HEAD') && path === '/health') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : '{"ok":true}');
    return;
  }
  res
    .writeHead(426, { 'Content-Type': 'text/plain; charset=utf-8', Upgrade: 'websocket', Connection: 'Upgrade' })
    .end('This is a Chyme sync relay; it speaks WebSocket only (and GET /health).\n');
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

/** Starts a relay; resolves once it listens. */
export async function startRelay(options: RelayOptions): Promise<Relay> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? DEFAULT_RELAY_HOST;
  const port = options.port ?? DEFAULT_RELAY_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RelayConfigError(`The port must be an integer from 0 to 65535, not ${port}.`);

  // 0700: the documents are the user's whole history, unencrypted.
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const documentsDir = join(options.dataDir, 'documents');
  mkdirSync(documentsDir, { recursive: true, mode: 0o700 });
  const token = resolveRelayToken(options.dataDir, options.token, log);
  const idleEvictMs = resolveIdleEvictMs(options.idleEvictMs);
  const maxLoaded = options.maxLoadedDocuments ?? DEFAULT_MAX_LOADED_DOCUMENTS;
  if (!Number.isSafeInteger(maxLoaded) || maxLoaded < 1) throw new RelayConfigError(`maxLoadedDocuments must be a whole number of at least 1, not ${maxLoaded}.`);

  const server = createServer(answerHttp);
  const wss = acceptSyncUpgrades(server, { token, log });
  const [{ Repo }, { FileStorage }] = await Promise.all([import('@automerge/automerge-repo'), import('./file-storage.js')]);
  const adapter = await createSyncServerAdapter(wss, (err) => log(`closed a connection that sent a bad message: ${(err as Error)?.message ?? String(err)}`));
  const storage = new FileStorage(documentsDir);
  const repo = new Repo({
    network: [adapter],
    storage,
    // Never announce documents to a peer: a device gets only the documents it asks for by id.
    sharePolicy: async () => false,
  });
  // Every document a device asks for is found through the repo's own find, and each is dropped
  // again: without this, each stayed in memory for good, and a dropped one could be overwritten
  // on disk by an empty document (repo-fixes.ts).
  fixRepoDefects(repo);

  try {
    await adapter.connected;
    await listen(server, port, host);
  } catch (err) {
    wss.close();
    await repo.shutdown();
    throw err;
  }
  const eviction = evictIdleDocuments(repo, idleEvictMs, maxLoaded, log);
  const bound = (server.address() as AddressInfo).port;
  const url = `ws://${host.includes(':') ? `[${host}]` : host}:${bound}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // 1001 "going away": the clients' adapters retry, and find the relay again once it is back.
        for (const client of wss.clients) client.close(1001, 'relay stopping');
        wss.close();
        server.closeAllConnections();
        // A client that never answers the close handshake is cut off rather than waited for.
        setTimeout(() => {
          for (const client of wss.clients) client.terminate();
        }, 2000).unref();
      });
      await eviction.stop();
      await repo.flush();
      await repo.shutdown();
      storage.close();
    })();
    return closing;
  };
  return { url, token, port: bound, repo, memory: () => ({ loaded: eviction.loaded(), evicted: eviction.evicted() }), close };
}

