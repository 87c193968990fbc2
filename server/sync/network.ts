import { RelayClient } from './relay-client.js';

/** The device's connection to its relay, as the engine sees it (relay-client.ts does the work). */
export interface RelayNetwork {
  adapter: RelayClient;
  connected(): boolean;
  lastError(): string | null;
  /** Called whenever connected() or lastError() may have changed. */
  onStatus(listener: () => void): void;
}

export function relayNetwork(url: string, token: string, retryMs?: number): RelayNetwork {
  const adapter = new RelayClient(url, token, retryMs ? { retryIntervalMs: retryMs } : {});
  return {
    adapter,
    connected: () => adapter.status.connected,
    lastError: () => adapter.status.lastError,
    onStatus: (listener) => void adapter.onStatus(() => listener()),
  };
}
