import * as A from '@automerge/automerge';
import { WebSocket } from 'ws';
import { deriveKeys, type HistoryKeys } from '../../server/sync/crypto.js';
import { decodePairingCode } from '../../server/sync/index.js';
import { RelayConnection } from '../../server/sync/relay-client.js';

/**
 * A raw peer of a history, for tests: it speaks the sealed relay's protocol with the keys of a
 * pairing code and holds the documents as plain Automerge documents, the way another program (a
 * newer Chyme, say) would. Not a Chyme device: no SQLite, no projection.
 */
export interface RawPeer {
  keys: HistoryKeys;
  /** Every document the relay holds, merged, by opaque id (a pull from 0). */
  pullAll(timeoutMs?: number): Promise<Map<string, { name: string; doc: A.Doc<any> }>>;
  /** Pushes the changes of `doc` since `since` (sealed); resolves with the relay seq once stored. */
  push(oid: string, name: string, doc: A.Doc<unknown>, since: A.Heads): Promise<number>;
  close(): void;
}

export async function rawPeer(code: string): Promise<RawPeer> {
  const { relay, secret } = decodePairingCode(code);
  const keys = await deriveKeys(secret);
  let chunks: Array<{ oid: string; kind: 'change' | 'snapshot'; sealed: Uint8Array }> = [];
  let ended: ((seq: number) => void) | undefined;
  const conn = new RelayConnection(relay, {
    socketFactory: (url) => new WebSocket(url) as never,
    sid: keys.sid,
    auth: keys.auth,
    retryIntervalMs: 200,
    onChunk: (_seq, oid, kind, sealed) => chunks.push({ oid, kind, sealed }),
    onEnd: (seq) => ended?.(seq),
    onNotify: () => undefined,
  });
  conn.start();
  const deadline = Date.now() + 20_000;
  while (!conn.connected) {
    if (Date.now() > deadline) throw new Error(`the raw peer could not connect: ${conn.status.lastError}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    keys,
    async pullAll(timeoutMs = 20_000) {
      chunks = [];
      const done = new Promise<number>((resolve, reject) => {
        ended = resolve;
        setTimeout(() => reject(new Error('the pull did not end')), timeoutMs).unref();
      });
      conn.pull(0);
      await done;
      const docs = new Map<string, { name: string; doc: A.Doc<any> }>();
      for (const ch of chunks) {
        const opened = await keys.open(ch.oid, ch.kind, ch.sealed);
        const have = docs.get(ch.oid);
        docs.set(ch.oid, { name: opened.name, doc: A.loadIncremental(have?.doc ?? A.init(), opened.body) });
      }
      return docs;
    },
    async push(oid, name, doc, since) {
      return conn.push(oid, 'change', await keys.seal(oid, 'change', name, A.saveSince(doc, since)));
    },
    close: () => conn.stop(),
  };
}
