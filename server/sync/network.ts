import { WebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket';

/**
 * The device's connection to its relay. automerge-repo's client adapter throws from its error
 * handler on anything but a refused connection (a 401 from the relay, a reset), which would end the
 * process; this one records the error as a sentence and keeps retrying.
 */
export interface RelayNetwork {
  adapter: WebSocketClientAdapter;
  connected(): boolean;
  lastError(): string | null;
  /** Called whenever connected() or lastError() may have changed. */
  onStatus(listener: () => void): void;
}

export function relayUrlWithToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}

export function relayNetwork(url: string, token: string, retryMs = 5000): RelayNetwork {
  let error: string | null = null;
  let peer = false;
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of listeners) l();
  };
  const adapter = new WebSocketClientAdapter(relayUrlWithToken(url, token), retryMs);
  const base = adapter as unknown as { onError: (e: unknown) => void };
  base.onError = (event: unknown) => {
    const err = (event as { error?: { message?: string; code?: string } }).error;
    const message = err?.message ?? String(err);
    if (/\b401\b/.test(message)) error = `The relay at ${url} refused the token (401).`;
    else if (err?.code === 'ECONNREFUSED') error = `Could not reach the relay at ${url}: connection refused.`;
    else error = `Could not reach the relay at ${url}: ${message}.`;
    changed();
  };
  adapter.on('peer-candidate', () => {
    peer = true;
    error = null;
    changed();
  });
  adapter.on('peer-disconnected', () => {
    peer = false;
    changed();
  });
  return { adapter, connected: () => peer, lastError: () => error, onStatus: (l) => void listeners.add(l) };
}
