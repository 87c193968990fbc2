import type * as A from '@automerge/automerge';
import { mergeDoc, type ChangeInput, type ChangeOutput, type MergeInput, type MergeOutput } from './merge-doc.js';

/**
 * Where the engine merges a pull's chunks of a shard into this device's copy (merge-doc.ts). The
 * service (server/service.ts) merges in a worker thread (merge-thread.ts), so that loading and
 * merging a month another device imported never holds the thread that answers requests; the
 * phone's engine already runs in a Web Worker of its own and merges on its thread (inThreadMerger).
 */
export interface DocMerger {
  /**
   * Merges; `have` is the engine's copy in memory, which an in-thread merger merges into and
   * returns as `doc` (the engine keeps it). Without `doc` back, the engine's copy is outdated.
   */
  merge(input: MergeInput, have?: A.Doc<unknown>): Promise<{ output: MergeOutput; doc?: A.Doc<unknown> }>;
  /**
   * Writes a bulk drain's rows into a document not in the engine's memory (changeDoc), when the
   * merger works off the engine's thread; without it the engine changes documents itself, in
   * slices between which its thread answers requests.
   */
  change?(input: ChangeInput): Promise<{ output: ChangeOutput }>;
  /** Whether a worker is running (bulk work under way): small work goes to it too meanwhile. */
  readonly warm: boolean;
  close(): Promise<void>;
}

export const inThreadMerger: DocMerger = {
  merge: (input, have) => Promise.resolve(mergeDoc(input, have)),
  warm: false,
  close: () => Promise.resolve(),
};
