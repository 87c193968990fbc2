import * as A from '@automerge/automerge';
import { recordIds, recordIn, type DocRecord, type Scalar, type ShardDoc } from './documents.js';

/**
 * Merging a pull's chunks into this device's copy of a shard, and reading out what a projection
 * writes: the Automerge half of applying a document, with no database and no engine state, so that
 * it runs on the service's thread or in a worker (merge-thread.ts). Loading a month of records
 * (parsing, hashing every change, materializing the JS document), merging a snapshot into it,
 * saving it and diffing it held the service's thread for 100–1,500 ms at a time while another
 * device's import arrived: in a worker the service's thread only writes the records.
 */

/** One document's merge, as the engine asks for it (structured-clone safe: it may cross to a worker). */
export interface MergeInput {
  oid: string;
  /** This device's copy as stored (undefined: the document is new here), and its heads (headsText). */
  stored?: Uint8Array | undefined;
  storedHeads?: string | undefined;
  /** The chunks' bodies to merge, in order. */
  chunks: Uint8Array[];
  /** The changes this device knows the relay held (for the snapshot check). */
  synced: string[];
  /** Snapshot chunks (by index in `chunks`) to check for this device's acknowledged changes, with their heads when their header gave them. */
  checks: Array<{ index: number; heads?: string[] | undefined }>;
  /** The stored copy ends at the heads before the merge and is small enough: what is stored is the changes since, appended. */
  appendable: boolean;
  /** Whether the projected records' same-field conflicts are wanted (not for a document new here during a join: nothing local to clash with). */
  conflicts: boolean;
}

/** The plain values a projection writes: every record a merge touched (a deleted one as its deletion), and their same-field conflicts. */
export interface RecordsView {
  ids: string[];
  records: Record<string, DocRecord>;
  /** By record id: [field, the values of every side] for each field with more than one. */
  conflicts: Record<string, Array<[field: string, values: Scalar[]]>>;
}

export interface MergeOutput {
  before: string[];
  after: string[];
  /** Indexes of the chunks merged; the others were skipped for the reason given. */
  applied: number[];
  skipped: Array<{ index: number; message: string }>;
  /** What to store when something changed: the changes since `before` (appended) or the whole document. */
  bytes?: Uint8Array | undefined;
  appended: boolean;
  /** The checked snapshots' heads, and whether one lacks a change this device had acknowledged. */
  snapshots: Array<{ index: number; heads: string[]; lacksOurs: boolean }>;
  /** The document's kind (`chyme.shard`, `chyme.root`, or what a newer version wrote). */
  kind: unknown;
  /** What changed, to project (shards only). */
  view?: RecordsView | undefined;
}

const headsOf = (doc: A.Doc<unknown>): string[] => [...A.getHeads(doc)].sort();

/**
 * Merges `input.chunks` into the stored copy (or `have`, the copy in memory, on the service's own
 * thread): all in one step (Automerge turns each loadIncremental into patches of the JS document,
 * which cost more than the merge itself; a document new here is loaded, materialized once), and
 * only when that fails one by one, the chunk that cannot be read skipped. Returns the merged
 * document too (the caller's thread keeps it in its cache; a worker's never leaves the worker).
 */
export function mergeDoc(input: MergeInput, have?: A.Doc<unknown>): { output: MergeOutput; doc: A.Doc<unknown> } {
  const base = have ?? (input.stored ? A.load(input.stored) : undefined);
  const before = base ? headsOf(base) : [];
  const all = input.chunks.length === 1 ? input.chunks[0]! : concatBytes(input.chunks);
  let doc: A.Doc<unknown>;
  let applied = input.chunks.map((_, i) => i);
  const skipped: MergeOutput['skipped'] = [];
  let whole: Uint8Array | undefined;
  try {
    if (!base) {
      doc = A.load(all);
      whole = all;
    } else doc = input.chunks.length === 0 ? base : A.loadIncremental(base, all);
  } catch {
    // A failed load may have left the copy in memory half-merged: start again from the stored one.
    doc = input.stored ? A.load(input.stored) : A.init();
    applied = [];
    for (const [i, body] of input.chunks.entries()) {
      try {
        doc = A.loadIncremental(doc, body);
        applied.push(i);
      } catch (err) {
        skipped.push({ index: i, message: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  const after = headsOf(doc);
  const changed = before.join() !== after.join();
  const snapshots = input.checks
    .filter((c) => applied.includes(c.index))
    .map((c) => {
      // Whether the snapshot holds this device's acknowledged changes: from its heads, read from
      // its header, and the merged copy's history (loaded alone only if unreadable).
      const heads = c.heads ?? headsOf(A.load(input.chunks[c.index]!));
      return { index: c.index, heads, lacksOurs: lacksAny(doc, heads, input.synced) };
    });
  let bytes: Uint8Array | undefined;
  if (changed || !input.stored) bytes = input.appendable && base ? A.saveSince(doc, before) : (whole ?? A.save(doc));
  const kind = (doc as { kind?: unknown }).kind;
  const view = changed && kind === 'chyme.shard' ? recordsView(doc as ShardDoc, base ? A.diff(doc, before, after) : null, input.conflicts || base !== undefined) : undefined;
  return { output: { before, after, applied, skipped, bytes, appended: input.appendable && base !== undefined, snapshots, kind, view }, doc };
}

/**
 * The records a diff of a shard touched (all of them without one), as plain values (an immutable
 * string as its string), with their same-field conflicts when asked for.
 */
export function recordsView(doc: ShardDoc, patches: A.Patch[] | null, withConflicts: boolean): RecordsView {
  let ids: string[];
  if (!patches) ids = recordIds(doc);
  else {
    const set = new Set<string>();
    for (const p of patches) if ((p.path[0] === 'records' || p.path[0] === 'deleted') && typeof p.path[1] === 'string') set.add(p.path[1]);
    ids = [...set];
  }
  return viewOf(doc, ids, withConflicts);
}

/** The plain records `ids` of a shard (and their conflicts when asked for). */
export function viewOf(doc: ShardDoc, ids: string[], withConflicts: boolean): RecordsView {
  const records: RecordsView['records'] = {};
  const conflicts: RecordsView['conflicts'] = {};
  for (const id of ids) {
    const rec = recordIn(doc, id);
    if (!rec) continue;
    const plain: DocRecord = {};
    for (const [k, v] of Object.entries(rec)) plain[k] = scalarOf(v) ?? null;
    records[id] = plain;
    const live = doc.records[id];
    if (!withConflicts || !live || typeof rec.deleted_ms === 'number') continue;
    const clashes: Array<[string, Scalar[]]> = [];
    for (const field of Object.keys(live)) {
      if (field === 'updated_ms') continue;
      const all = A.getConflicts(live as never, field);
      if (all && Object.keys(all).length > 1) clashes.push([field, Object.values(all).map((v) => scalarOf(v) ?? null)]);
    }
    if (clashes.length > 0) conflicts[id] = clashes;
  }
  return { ids, records, conflicts };
}

/**
 * Whether any of `synced` (changes this device knows the relay held) is outside the history of
 * `heads` in `doc`, a copy that holds both. Without loading the document those heads were saved
 * from: the changes of `doc` since them are listed, by hash (a few, or none, for a recent snapshot).
 */
export function lacksAny(doc: A.Doc<unknown>, heads: A.Heads, synced: readonly string[]): boolean {
  const inside = new Set(heads);
  if (synced.every((h) => inside.has(h))) return false;
  if (!A.hasHeads(doc, heads) || !A.hasHeads(doc, [...synced])) return true;
  const since = new Set(A.getChangesMetaSince(doc, heads).map((c) => c.hash));
  return synced.some((h) => since.has(h));
}

/** A document's field as a plain value (an immutable string, or a plain string written before, as a string). */
export function scalarOf(v: unknown): Scalar | undefined {
  return A.isImmutableString(v) ? v.val : (v as Scalar | undefined);
}

/** Byte arrays end to end (Node's Buffer.concat does not exist in the phone's worker). */
function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
