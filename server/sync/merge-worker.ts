import type * as A from '@automerge/automerge';
import { parentPort } from 'node:worker_threads';
import { mergeDoc } from './merge-doc.js';
import type { MergeReply, MergeRequest } from './merge-thread.js';

/**
 * The worker thread of merge-thread.ts: merges one document at a time and answers with plain
 * values. It keeps the last few documents it merged: another device's live meals land in the same
 * month's shard one after the other, and loading that month again for each is the cost this
 * thread exists to take off the service's.
 */
const KEEP = 8;
const kept = new Map<string, { heads: string; doc: A.Doc<unknown> }>();

parentPort!.on('message', ({ id, input }: MergeRequest) => {
  const oid = input.oid;
  let reply: MergeReply;
  try {
    // The copy kept is the stored one only while their heads agree (the service's drains change its own shards).
    const have = kept.get(oid);
    kept.delete(oid);
    const { output, doc } = mergeDoc(input, have && have.heads === input.storedHeads ? have.doc : undefined);
    kept.set(oid, { heads: JSON.stringify(output.after), doc });
    while (kept.size > KEEP) kept.delete(kept.keys().next().value!);
    reply = { id, output };
  } catch (err) {
    kept.delete(oid);
    reply = { id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
