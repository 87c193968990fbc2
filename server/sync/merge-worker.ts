import type * as A from '@automerge/automerge';
import { parentPort } from 'node:worker_threads';
import { changeDoc, mergeDoc } from './merge-doc.js';
import type { MergeReply, MergeRequest } from './merge-thread.js';

/**
 * The worker thread of merge-thread.ts: merges (or changes) one document at a time and answers
 * with plain values. It keeps the last few documents it merged: another device's live meals land in the same
 * month's shard one after the other, and loading that month again for each is the cost this
 * thread exists to take off the service's.
 */
const KEEP = 8;
const kept = new Map<string, { heads: string; doc: A.Doc<unknown> }>();

parentPort!.on('message', (request: MergeRequest) => {
  const oid = (request.merge ?? request.change).oid;
  let reply: MergeReply;
  try {
    // The copy kept is the stored one only while their heads agree (a drain on the service's thread changes its own shards).
    const have = kept.get(oid);
    kept.delete(oid);
    const storedHeads = (request.merge ?? request.change).storedHeads;
    const same = have && have.heads === storedHeads ? have.doc : undefined;
    const { output, doc } = request.merge ? mergeDoc(request.merge, same) : changeDoc(request.change, same);
    kept.set(oid, { heads: 'after' in output ? JSON.stringify(output.after) : output.heads, doc });
    while (kept.size > KEEP) kept.delete(kept.keys().next().value!);
    reply = { id: request.id, output };
  } catch (err) {
    kept.delete(oid);
    reply = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
