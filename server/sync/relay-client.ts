import { decodeFrame, encodeFrame, PROTOCOL_VERSION, type ClientMessage, type RelayMessage } from './protocol.js';

/**
 * A device's connection to its sealed relay (relay.ts, protocol.ts): connects, says hello with the
 * space's id and auth proof, and reconnects after every loss, with a status a person can read.
 * Written against the WebSocket standard's API, so the phone passes the browser's WebSocket and
 * Node passes ws's (`socketFactory`).
 *
 * - `connected` follows the relay's welcome (the space accepted), not the socket's 'open' (a proxy
 *   may accept TCP and TLS for a relay that is down).
 * - push() resolves with the chunk's relay seq once the relay has committed it, and rejects when
 *   the connection drops first: the engine keeps the change marked unsent and pushes it again.
 * - After a refusal (a wrong token, a key the relay does not know, too many tries) the next attempt
 *   waits a minute: it does not become right by asking again, and asking fast runs into the limit.
 *
 * The URL with the token is never logged or shown: messages use `relayUrl`, which has none.
 */

export interface RelayStatus {
  /** True while the relay has answered this connection's join (documents sync). */
  connected: boolean;
  /** Why the last attempt failed, as a sentence for a person; null once connected. */
  lastError: string | null;
}

export interface RelayClientOptions {
  /** Between attempts while the relay cannot be reached (default 5 s). */
  retryIntervalMs?: number;
  /**
   * How long one attempt may take to open before it is given up as timed out (default 30 s). A relay
   * on a small home server that is busy (storing a whole history another device just sent) can take
   * several seconds to finish a handshake; an attempt abandoned early only starts the wait again.
   */
  connectTimeoutMs?: number;
  /** Called on every change of `status`. */
  onStatus?: (status: RelayStatus) => void;
}

export const DEFAULT_RETRY_INTERVAL_MS = 5000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** The wait after the relay refused the token: its bad-token limit counts per minute. */
const REFUSED_BACKOFF_MS = 60_000;

/** The relay URL with `?token=` set (URL-encoded; any other query parameter is kept). */
export function relayUrlWithToken(url: string, token: string): string {
  const parsed = parseRelayUrl(url);
  parsed.searchParams.set('token', token);
  return parsed.toString();
}

/** A ws:// or wss:// URL, or an error that says what is wrong with it. */
function parseRelayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`The relay address must be a ws:// or wss:// URL, not ${JSON.stringify(url)}.`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') {
    throw new TypeError(`The relay address must be a ws:// or wss:// URL, not ${JSON.stringify(url)}.`);
  }
  return parsed;
}

/** The address to show a person: the URL without any token in it. */
function displayUrl(url: string): string {
  const parsed = parseRelayUrl(url);
  parsed.searchParams.delete('token');
  const text = parsed.toString();
  // "ws://host:7651/" reads better as the address the person typed.
  return parsed.pathname === '/' && !parsed.search && !url.endsWith('/') ? text.slice(0, -1) : text;
}

/** The WebSocket standard's OPEN readyState. */
const OPEN = 1;

/** What a failed connection attempt means, in one sentence. */
export function describeConnectionError(error: unknown, relayUrl: string): string {
  const err = (error ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : String(error);
  const status = /Unexpected server response: (\d+)/.exec(message)?.[1];
  if (status === '401') return 'The relay refused the token (401).';
  if (status === '429') return 'The relay refused this device for a minute after too many wrong tokens (429).';
  if (status === '503') return 'The relay is busy (503): it is starting, or already has as many connections as it takes.';
  if (status !== undefined) return `The server at ${relayUrl} answered HTTP ${status} instead of accepting a sync connection; is it a Chyme relay?`;
  const unreachable = (why: string) => `Could not reach the relay at ${relayUrl}: ${why}.`;
  switch (code) {
    case 'ECONNREFUSED':
      return unreachable('connection refused');
    case 'ETIMEDOUT':
      return unreachable('timed out');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return unreachable('the host name was not found');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return unreachable('no route to the host');
    case 'ECONNRESET':
      return `The connection to the relay at ${relayUrl} was reset.`;
  }
  if (/CERT|SELF_SIGNED|ERR_TLS/.test(code)) return `The relay at ${relayUrl} presented a certificate this device does not trust (${code}).`;
  return unreachable(message.replace(/\.$/, ''));
}


/** The standard WebSocket API this client uses (browsers' and ws's). */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

export interface RelayConnectionOptions extends RelayClientOptions {
  /** Opens a socket to a URL (Node: ws; the browser: its WebSocket). */
  socketFactory: (url: string) => SocketLike;
  /** Present only where this device may create the space (sync init): the relay's token. */
  token?: string | null;
  sid: string;
  auth: string;
  /** A chunk of a pull's answer, in order (awaited: chunks are applied one after the other). */
  onChunk: (seq: number, oid: string, kind: 'change' | 'snapshot', sealed: Uint8Array) => void;
  /** A pull's answer is complete up to seq. */
  onEnd: (seq: number) => void;
  /** The answer to index(): every document the space holds, with its stored bytes, as of seq. */
  onDocs?: (seq: number, docs: Array<[oid: string, bytes: number]>) => void;
  /** The relay stored something new (another device's push), or the connection (re)opened. */
  onNotify: (seq: number) => void;
  /** Another device's sealed presence note. */
  onHeard?: (sealed: Uint8Array) => void;
}

interface Pending {
  resolve: (seq: number) => void;
  reject: (err: Error) => void;
}

export class RelayConnection {
  readonly relayUrl: string;
  status: RelayStatus = { connected: false, lastError: null };
  private socket: SocketLike | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextRid = 1;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;
  /** True before start() and after stop(). */
  private stopped = true;
  private readonly retryMs: number;
  private readonly connectTimeoutMs: number;
  private readonly listeners = new Set<(status: RelayStatus) => void>();

  constructor(private readonly url: string, private readonly options: RelayConnectionOptions) {
    this.relayUrl = displayUrl(url);
    this.retryMs = options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS;
    if (!(this.retryMs > 0)) throw new RangeError(`retryIntervalMs must be positive, not ${this.retryMs}`);
    this.connectTimeoutMs = Math.max(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 1);
    if (options.onStatus) this.listeners.add(options.onStatus);
  }

  get connected(): boolean {
    return this.status.connected;
  }

  onStatus(listener: (status: RelayStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Connects (and keeps reconnecting); a second call while connecting or connected does nothing. */
  start(): void {
    if (!this.stopped && (this.socket || this.retryTimer)) return;
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.connectTimer);
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = s.onerror = s.onmessage = s.onopen = null;
      try {
        s.close(1000, 'device stopping');
      } catch {
        // Already closed.
      }
    }
    this.failPending('the device stopped syncing');
    this.setStatus({ connected: false, lastError: this.status.lastError });
  }

  /**
   * Sends a sealed chunk; resolves with its relay seq once the relay has committed it. A snapshot
   * covers the chunks up to `covers` and this device's own after it listed in `own`.
   */
  push(oid: string, kind: 'change' | 'snapshot', sealed: Uint8Array, covers?: number, own?: number[]): Promise<number> {
    if (!this.connected || this.socket?.readyState !== OPEN) return Promise.reject(new Error('not connected'));
    const rid = this.nextRid++;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(rid, { resolve, reject });
      this.send({ t: 'push', rid, oid, kind, ...(covers === undefined ? {} : { covers }), ...(own && own.length > 0 ? { own } : {}) }, sealed);
    });
  }

  /** Asks for every chunk after `after`, or only those of the documents `oids`. */
  pull(after: number, oids?: string[]): void {
    this.send(oids ? { t: 'pull', after, oids } : { t: 'pull', after });
  }

  /** Asks which documents the space holds (answered through onDocs). */
  index(): void {
    this.send({ t: 'index' });
  }

  say(sealed: Uint8Array): void {
    if (this.connected) this.send({ t: 'say' }, sealed);
  }

  private send(m: ClientMessage, body?: Uint8Array): void {
    const s = this.socket;
    if (!s || s.readyState !== OPEN) return;
    try {
      s.send(encodeFrame(m, body));
    } catch {
      // Closing: the close handler fails what waits, and the engine sends again after reconnecting.
    }
  }

  private open(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    let target = this.url;
    if (this.options.token) target = relayUrlWithToken(this.url, this.options.token);
    let s: SocketLike;
    try {
      s = this.options.socketFactory(target);
    } catch (err) {
      this.setStatus({ connected: false, lastError: describeConnectionError(err, this.relayUrl) });
      this.scheduleRetry(this.retryMs);
      return;
    }
    this.socket = s;
    s.binaryType = 'arraybuffer';
    this.connectTimer = setTimeout(() => {
      if (this.socket === s && !this.connected) {
        this.setStatus({ connected: false, lastError: `Could not reach the relay at ${this.relayUrl}: timed out.` });
        this.drop(s, this.retryMs);
      }
    }, this.connectTimeoutMs);
    s.onopen = () => s.send(encodeFrame({ t: 'hello', v: PROTOCOL_VERSION, sid: this.options.sid, auth: this.options.auth }));
    s.onmessage = (ev) => {
      try {
        const data = ev.data instanceof ArrayBuffer ? new Uint8Array(ev.data) : (ev.data as Uint8Array);
        const { header, body } = decodeFrame<RelayMessage>(data);
        this.receive(header, body);
      } catch (err) {
        this.setStatus({ connected: false, lastError: `The relay at ${this.relayUrl} sent a message this device cannot read (${(err as Error)?.message ?? String(err)}).` });
        this.drop(s, this.retryMs);
      }
    };
    s.onerror = (ev) => {
      const error = typeof ev === 'object' && ev !== null && 'error' in ev ? (ev as { error: unknown }).error : undefined;
      const message = error === undefined ? `Could not reach the relay at ${this.relayUrl}.` : describeConnectionError(error, this.relayUrl);
      const refused = /\((401|429)\)\.$/.test(message);
      this.setStatus({ connected: false, lastError: message });
      this.drop(s, refused ? Math.max(REFUSED_BACKOFF_MS, this.retryMs) : this.retryMs);
    };
    s.onclose = () => {
      if (this.socket !== s) return;
      if (this.status.connected) this.setStatus({ connected: false, lastError: `The connection to the relay at ${this.relayUrl} closed; reconnecting.` });
      this.drop(s, this.retryMs);
    };
  }

  private receive(m: RelayMessage, body: Uint8Array | null): void {
    switch (m.t) {
      case 'welcome':
        clearTimeout(this.connectTimer);
        this.setStatus({ connected: true, lastError: null });
        this.options.onNotify(m.seq);
        return;
      case 'ack': {
        const p = this.pending.get(m.rid);
        this.pending.delete(m.rid);
        p?.resolve(m.seq);
        return;
      }
      case 'chunk':
        if (!body) throw new Error('a chunk without bytes');
        this.options.onChunk(m.seq, m.oid, m.kind, body);
        return;
      case 'end':
        this.options.onEnd(m.seq);
        return;
      case 'docs':
        if (!Number.isSafeInteger(m.seq) || !Array.isArray(m.docs)) throw new Error('a malformed list of documents');
        this.options.onDocs?.(m.seq, m.docs);
        return;
      case 'notify':
        this.options.onNotify(m.seq);
        return;
      case 'heard':
        if (body) this.options.onHeard?.(body);
        return;
      case 'error': {
        if (m.rid !== undefined) {
          const p = this.pending.get(m.rid);
          this.pending.delete(m.rid);
          p?.reject(new Error(m.message));
          return;
        }
        const sentence = m.code === 'no_space' ? "The pairing code's key does not match any history on this relay." : m.code === 'unauthorized' ? "The pairing code's key does not match this history." : m.message;
        this.setStatus({ connected: false, lastError: sentence });
        if (this.socket) this.drop(this.socket, Math.max(REFUSED_BACKOFF_MS, this.retryMs));
        return;
      }
    }
  }

  /** Forgets a socket (closing it) and schedules the next attempt. */
  private drop(s: SocketLike, waitMs: number): void {
    if (this.socket !== s) return;
    clearTimeout(this.connectTimer);
    this.socket = null;
    s.onclose = s.onerror = s.onmessage = s.onopen = null;
    try {
      s.close();
    } catch {
      // Never opened.
    }
    this.failPending('the connection to the relay closed');
    if (this.status.connected) this.setStatus({ connected: false, lastError: this.status.lastError });
    this.scheduleRetry(waitMs);
  }

  private scheduleRetry(waitMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), waitMs);
    (this.retryTimer as { unref?: () => void }).unref?.();
  }

  private failPending(why: string): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(new Error(why));
  }

  private setStatus(next: RelayStatus): void {
    if (next.connected === this.status.connected && next.lastError === this.status.lastError) return;
    this.status = next;
    for (const listener of this.listeners) {
      try {
        listener({ ...next });
      } catch {
        // A listener's failure is its own; the connection goes on.
      }
    }
  }
}
