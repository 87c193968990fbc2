import * as A from '@automerge/automerge';
import type { Row } from '../db/sync.js';
import type { ChunkKind } from './crypto.js';
import { isDeleted, recordIds, recordIn, SCHEMA_VERSION, type DocRecord, type DocValue, type Scalar, type ShardDoc } from './documents.js';

/**
 * The Automerge half of the engine's work on a shard, with no database and no engine state, so
 * that it runs on the service's thread or in a worker (merge-thread.ts): merging a pull's chunks
 * into this device's copy and reading out what a projection writes (mergeDoc), and writing a bulk
 * drain's rows into a document with what it stores and pushes (changeDoc). Loading a month of
 * records (parsing, hashing every change, materializing the JS document), merging a snapshot into
 * it, saving it and diffing it held the service's thread for 100–1,500 ms at a time while another
 * device's import arrived, and the importing device's for as long: in a worker the service's
 * thread only writes the records.
 */

/** A push of changes this large (an import, a set-up in rounds) that is half the document is sent as a snapshot at once. */
const BULK_PUSH_BYTES = 2048;

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

/** One push of a document: its changes since `since` (the heads the relay held), or the whole of it. */
export interface Prepared {
  heads: string;
  body: Uint8Array;
  kind: ChunkKind;
  /** A save of the whole document (a first push, or a snapshot). */
  whole: boolean;
  since: string;
}

/**
 * What a push of a document sends. A first push is the whole document (compact); later ones the
 * changes the relay lacks, or the whole document again as a snapshot when those changes are
 * half its size or more: compacted at once, instead of a tail of change chunks (larger than a
 * save of the same records) that every device joining later downloads, merges and compacts.
 * `snapshotRefused`: the relay refused this document's snapshot; changes go as changes until the next pull.
 */
export function pushBodyOf(doc: A.Doc<unknown>, state: { syncedHeads: string; snapshotBytes: number }, snapshotRefused: boolean): Prepared {
  const since = state.syncedHeads;
  const synced = JSON.parse(since) as string[];
  const heads = JSON.stringify(headsOf(doc));
  if (synced.length === 0) return { heads, body: A.save(doc), kind: 'change', whole: true, since };
  const changes = A.saveSince(doc, synced);
  // Only a bulk change (an import, a set-up in rounds) is big enough on its own: a small edit's
  // tail is compacted later, in the background (compactSoon), not on the write path.
  const bulk = changes.length > BULK_PUSH_BYTES && changes.length * 2 > state.snapshotBytes;
  if (bulk && !snapshotRefused) return { heads, body: A.save(doc), kind: 'snapshot', whole: true, since };
  return { heads, body: changes, kind: 'change', whole: false, since };
}

/** A bulk drain's rows for one shard (db/sync.ts's outbox entries with their rows read), to write into it. */
export interface ChangeInput {
  oid: string;
  name: string;
  deviceId: string;
  /** This device's copy as stored (undefined: a shard new here) and its heads. */
  stored?: Uint8Array | undefined;
  storedHeads?: string | undefined;
  edits: Array<{ recordId: string; fields: string; row: Row | undefined; columns: readonly string[] }>;
  nowMs: number;
  /** As MergeInput's: the changes since the stored heads are appended. */
  appendable: boolean;
  /** What the relay holds of it, for the push (docPushState), and whether it refused a snapshot of it. */
  push: { syncedHeads: string; snapshotBytes: number };
  snapshotRefused: boolean;
}

export interface ChangeOutput {
  changed: boolean;
  heads: string;
  /** Records deleted on another device that this drain edited: the deletion wins (the engine projects them again). */
  refused: string[];
  /** What to store and push when changed. */
  bytes?: Uint8Array | undefined;
  appended: boolean;
  push?: Prepared | undefined;
}

/** Writes a drain's rows into a shard in one change, as the engine's drain does in slices on its own thread. */
export function changeDoc(input: ChangeInput, have?: A.Doc<unknown>): { output: ChangeOutput; doc: A.Doc<unknown> } {
  const base = (have as A.Doc<ShardDoc> | undefined) ?? (input.stored ? A.load<ShardDoc>(input.stored) : newShard(input.oid, input.name, input.deviceId));
  const before = headsOf(base);
  const refused: string[] = [];
  const doc = A.change(base, (d) => {
    for (const e of input.edits) if (applyToDoc(d, e, e.row, e.columns, input.nowMs) === 'refused') refused.push(e.recordId);
  });
  const after = headsOf(doc);
  const heads = JSON.stringify(after);
  const changed = !input.stored || before.join() !== after.join();
  if (!changed) return { output: { changed, heads, refused, appended: false }, doc };
  const push = pushBodyOf(doc, input.push, input.snapshotRefused);
  const appended = input.appendable && input.stored !== undefined;
  const bytes = appended ? A.saveSince(doc, before) : push.whole ? push.body : A.save(doc);
  return { output: { changed, heads, refused, bytes, appended, push }, doc };
}

/**
 * A document's first change, the same bytes on every device (a fixed actor derived from its id,
 * time 0): a device that makes a document again merges with the relay's copy instead of two
 * concurrently created maps hiding each other's records. Later changes use a fresh actor.
 */
export function initialDoc<T>(oid: string, content: T): A.Doc<T> {
  const actor = Array.from(new TextEncoder().encode(oid), (b) => b.toString(16).padStart(2, '0')).join('');
  const first = A.change(A.init<T>({ actor }), { time: 0 }, (d) => {
    Object.assign(d as object, content);
  });
  return A.clone(first);
}

export function newShard(oid: string, name: string, deviceId: string): A.Doc<ShardDoc> {
  const key = name.slice('shard:'.length, name.lastIndexOf(':'));
  return initialDoc<ShardDoc>(oid, { schema: SCHEMA_VERSION, kind: 'chyme.shard', shard: key, device_id: deviceId, records: {}, deleted: {} });
}

/** Applies one outbox entry to its record in a shard: only the fields that changed, never undeleting. */
export function applyToDoc(d: ShardDoc, entry: { recordId: string; fields: string }, row: Row | undefined, columns: readonly string[], nowMs: number): 'changed' | 'unchanged' | 'refused' {
  const id = entry.recordId;
  const rec = d.records[id];
  const gone = isDeleted(rec) || typeof d.deleted?.[id] === 'number';
  if (entry.fields === '-') {
    if (gone) return 'unchanged';
    // Listed as deleted even when this copy has no record: the record may reach it later.
    if (d.deleted) d.deleted[id] = nowMs;
    if (rec) {
      for (const k of Object.keys(rec)) delete rec[k];
      rec.deleted_ms = nowMs;
    } else if (!d.deleted) d.records[id] = { deleted_ms: nowMs };
    return 'changed';
  }
  // Deleted here since: its '-' entry follows in this batch or the next.
  if (!row) return 'unchanged';
  if (gone) return 'refused';
  if (!rec) {
    const fresh: DocRecord = {};
    for (const c of columns) fresh[c] = toDoc(row[c] ?? null);
    d.records[id] = fresh;
    return 'changed';
  }
  const fields = entry.fields === '*' ? columns : entry.fields.split(',').filter((c) => columns.includes(c));
  let changed = false;
  for (const c of fields) {
    const v = row[c] ?? null;
    if (scalarOf(rec[c]) !== v) {
      rec[c] = toDoc(v);
      changed = true;
    }
  }
  return changed ? 'changed' : 'unchanged';
}

/** A field's value as a record in a document holds it (strings as immutable strings: see documents.ts). */
export function toDoc(v: Scalar): DocValue {
  return typeof v === 'string' ? new A.ImmutableString(v) : v;
}

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
