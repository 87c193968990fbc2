import type { PeerId, PeerMetadata } from '@automerge/automerge-repo';
import { WebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket';

/**
 * How a device reaches a relay (server/sync/relay.ts): automerge-repo's WebSocket client adapter,
 * made safe for a process that runs for months, with a status a person can read.
 *
 * What the stock adapter does, and what changes here (its source:
 * node_modules/@automerge/automerge-repo-network-websocket/dist/WebSocketClientAdapter.js):
 * - connect() opens a socket, sends "join" once it is open, and starts an interval that calls
 *   connect() again every retryInterval until a socket opens (onOpen clears it); onClose schedules
 *   one more connect(). The relay answers the join with a "peer" message, and only then does the
 *   adapter emit 'peer-candidate' and the repo start syncing. So `status.connected` follows
 *   'peer-candidate' (the relay took our join), not the socket's 'open' (a proxy may accept TCP and TLS
 *   for a relay that is down).
 * - Its onError throws every node error but ECONNREFUSED (a 401, a reset, a DNS failure), from a
 *   socket event handler: an uncaught exception that ends the process. onError is replaced.
 * - A retry abandons the previous socket without closing it; a slow handshake that completes later
 *   left an open, orphaned connection behind. A socket still connecting is given connectTimeoutMs,
 *   then closed before the next attempt.
 * - send() throws when the socket is not open (between a close and its 'close' event the repo can
 *   still send); such a message is dropped, and the sync protocol resends what is missing after
 *   the next join.
 * - After a refusal of the token (401, 429) the next attempt waits a minute: a wrong token does
 *   not become right by asking again, and asking fast would run into the relay's limit.
 * - After disconnect() (repo.shutdown()), a retry the stock adapter had scheduled does nothing.
 *
 * The full URL (with the token) is the adapter's public `url`, and `DEBUG=automerge-repo:*` prints
 * it in its log namespace: never log either. Messages here use `relayUrl`, which has no token.
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

/** ws's CONNECTING and OPEN (the numbers of the WebSocket standard). */
const CONNECTING = 0;
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

type AdapterSocket = NonNullable<WebSocketClientAdapter['socket']>;

export class RelayClient extends WebSocketClientAdapter {
  /** The relay's address without the token: safe to show and log. */
  readonly relayUrl: string;
  status: RelayStatus = { connected: false, lastError: null };
  readonly #connectTimeoutMs: number;
  readonly #listeners = new Set<(status: RelayStatus) => void>();
  #attemptStartedAt = 0;
  #notBefore = 0;
  #stopped = false;

  constructor(relayUrl: string, token: string, options: RelayClientOptions = {}) {
    const retryIntervalMs = options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS;
    if (!(retryIntervalMs > 0)) throw new RangeError(`retryIntervalMs must be positive, not ${retryIntervalMs}`);
    super(relayUrlWithToken(relayUrl, token), retryIntervalMs);
    this.relayUrl = displayUrl(relayUrl);
    this.#connectTimeoutMs = Math.max(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, 1);
    if (options.onStatus) this.#listeners.add(options.onStatus);

    // The stock handlers are arrow-function fields: replaced here, once, so that the add and remove
    // calls of the adapter's connect() keep pairing up with the same functions.
    this.onError = (event) => {
      // Node's ws passes an ErrorEvent with the error; a browser passes nothing useful.
      const error = 'error' in event ? (event as { error: unknown }).error : undefined;
      const message = error === undefined ? `Could not reach the relay at ${this.relayUrl}.` : describeConnectionError(error, this.relayUrl);
      if (/\((401|429)\)\.$/.test(message)) this.#notBefore = Date.now() + Math.max(REFUSED_BACKOFF_MS, this.retryInterval);
      this.#setStatus({ connected: false, lastError: message });
    };
    const stockOnClose = this.onClose;
    this.onClose = () => {
      if (this.status.connected) this.#setStatus({ connected: false, lastError: `The connection to the relay at ${this.relayUrl} closed; reconnecting.` });
      stockOnClose();
    };
    this.on('peer-candidate', () => this.#setStatus({ connected: true, lastError: null }));
  }

  /** Calls the listener on every change of `status`; returns a function that stops that. */
  onStatus(listener: (status: RelayStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  override connect(peerId: PeerId, peerMetadata?: PeerMetadata): void {
    if (this.#stopped) return;
    const previous = this.socket as AdapterSocket | undefined;
    const now = Date.now();
    if (previous?.readyState === CONNECTING && now - this.#attemptStartedAt < this.#connectTimeoutMs) return;
    // The stock retry interval keeps calling; an attempt is made only once the wait is over.
    if (previous && now < this.#notBefore) return;
    if (previous?.readyState === CONNECTING) this.#setStatus({ connected: false, lastError: `Could not reach the relay at ${this.relayUrl}: timed out.` });
    this.#attemptStartedAt = now;
    super.connect(peerId, peerMetadata);
    if (previous && previous !== this.socket && (previous.readyState === CONNECTING || previous.readyState === OPEN)) {
      // Its handlers are gone (the stock connect removed them); an 'error' without a listener would throw.
      previous.on('error', () => undefined);
      previous.terminate();
    }
  }

  override disconnect(): void {
    this.#stopped = true;
    if (this.socket) super.disconnect();
    this.#setStatus({ connected: false, lastError: this.status.lastError });
  }

  override send(message: Parameters<WebSocketClientAdapter['send']>[0]): void {
    if (this.socket?.readyState !== OPEN) return;
    super.send(message);
  }

  override receiveMessage(messageBytes: Uint8Array): void {
    try {
      super.receiveMessage(messageBytes);
    } catch (err) {
      // A message the adapter or the repo cannot take must not end the process; the connection is
      // restarted, and the join that follows lets the sync protocol start from a clean state.
      this.#setStatus({ connected: false, lastError: `The relay at ${this.relayUrl} sent a message this device cannot read (${(err as Error)?.message ?? String(err)}).` });
      this.socket?.close();
    }
  }

  #setStatus(next: RelayStatus): void {
    if (next.connected === this.status.connected && next.lastError === this.status.lastError) return;
    this.status = next;
    for (const listener of this.#listeners) {
      try {
        listener({ ...next });
      } catch {
        // A listener's failure is its own; the connection goes on.
      }
    }
  }
}
