/**
 * OPFS writes gathered until SQLite asks for them to be durable. The SAH pool VFS writes each
 * piece SQLite hands it through its file's `FileSystemSyncAccessHandle`, and every call of that
 * handle is a system call on a phone (an IPC to the browser process in a private window): a logged
 * meal's commit wrote a 24-byte WAL frame header and a 4 KiB page, each its own call, for each of
 * the dozen pages it touched. Here the writes between two flushes are kept in memory, merged into
 * contiguous runs (the log's frames are appended one after the other), and written at the flush
 * (the VFS's xSync), one write per run, before the handle's own flush.
 *
 * Durability is the handle's, unchanged: SQLite treats a write as durable only once xSync has
 * returned (synchronous=FULL syncs the log at every commit, server/db/wasm-database.ts), and xSync
 * returns only after these writes and the handle's flush. A write not yet flushed could be lost
 * in a crash before too (nothing orders or persists unsynced writes); a crash now loses all of
 * them, which SQLite's recovery already allows (a log's frames without a commit record are
 * ignored, the database file is written only after the log is synced).
 *
 * Reads, sizes and truncations see the gathered bytes. More than `limit` bytes gathered (a
 * checkpoint, a large join's transaction) are written at once, still without a flush.
 */

/** What the handle reads into and writes from (the DOM's BufferSource, which Node's types lack). */
export type Bytes = ArrayBuffer | ArrayBufferView;

/** The part of `FileSystemSyncAccessHandle` the SAH pool VFS uses: every access passes `at`. */
export interface SyncAccessHandle {
  read(buffer: Bytes, options?: { at?: number }): number;
  write(buffer: Bytes, options?: { at?: number }): number;
  getSize(): number;
  truncate(size: number): void;
  flush(): void;
  close(): void;
}

/** Gathered bytes, at most, before they are written without waiting for the flush. */
export const COALESCE_LIMIT_BYTES = 4 * 1024 * 1024;

/** Contiguous gathered bytes: `bytes[0, length)` belong at `at` in the file. */
interface Run {
  at: number;
  bytes: Uint8Array;
  length: number;
}

function bytesOf(source: Bytes): Uint8Array {
  return ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
}

function offsetOf(options: { at?: number } | undefined): number {
  // The file's cursor is not emulated: the pool always says where.
  if (options?.at === undefined) throw new TypeError('coalesced OPFS access needs an explicit position (at)');
  return options.at;
}

export class CoalescingHandle implements SyncAccessHandle {
  /** Sorted by `at`; none overlaps or touches another (touching runs are merged). */
  private runs: Run[] = [];
  private gathered = 0;
  /** The file's size as this handle's caller sees it; read from the handle once, then kept (the handle is exclusive). */
  private size: number | undefined;

  constructor(
    private readonly inner: SyncAccessHandle,
    private readonly limit = COALESCE_LIMIT_BYTES,
  ) {}

  write(source: Bytes, options?: { at?: number }): number {
    const at = offsetOf(options);
    const bytes = bytesOf(source);
    const end = at + bytes.byteLength;
    if (bytes.byteLength === 0) return 0;
    this.size = Math.max(this.currentSize(), end);
    this.gather(at, bytes);
    if (this.gathered > this.limit) this.writeGathered();
    return bytes.byteLength;
  }

  read(target: Bytes, options?: { at?: number }): number {
    const at = offsetOf(options);
    const into = bytesOf(target);
    const end = at + into.byteLength;
    const available = Math.max(0, Math.min(into.byteLength, this.currentSize() - at));
    const covering = this.runs.find((r) => r.at <= at && end <= r.at + r.length);
    if (covering) {
      into.set(covering.bytes.subarray(at - covering.at, end - covering.at));
      return into.byteLength;
    }
    const read = this.inner.read(into, { at });
    // Past the file's end on storage and before a gathered write: zeros, as the write will leave.
    into.fill(0, read);
    for (const r of this.runs) {
      const from = Math.max(at, r.at);
      const to = Math.min(end, r.at + r.length);
      if (from < to) into.set(r.bytes.subarray(from - r.at, to - r.at), from - at);
    }
    return available;
  }

  getSize(): number {
    return this.currentSize();
  }

  truncate(size: number): void {
    this.inner.truncate(size);
    this.size = size;
    const kept: Run[] = [];
    for (const r of this.runs) {
      if (r.at >= size) continue;
      r.length = Math.min(r.length, size - r.at);
      kept.push(r);
    }
    this.runs = kept;
    this.gathered = kept.reduce((sum, r) => sum + r.length, 0);
  }

  flush(): void {
    this.writeGathered();
    this.inner.flush();
  }

  close(): void {
    this.writeGathered();
    this.inner.close();
  }

  /** Gathered bytes not yet written (for tests). */
  get pendingBytes(): number {
    return this.gathered;
  }

  private currentSize(): number {
    this.size ??= this.inner.getSize();
    return this.size;
  }

  /** Writes every run, one call each, in file order; a run is dropped once written, so a failure leaves the rest gathered. */
  private writeGathered(): void {
    while (this.runs.length > 0) {
      const r = this.runs[0]!;
      const written = this.inner.write(r.bytes.subarray(0, r.length), { at: r.at });
      if (written !== r.length) throw new Error(`OPFS wrote ${written} of ${r.length} bytes at ${r.at}`);
      this.runs.shift();
      this.gathered -= r.length;
    }
  }

  private gather(at: number, bytes: Uint8Array): void {
    const end = at + bytes.byteLength;
    // The runs this write overlaps or touches, which become one.
    let first = this.runs.findIndex((r) => r.at + r.length >= at);
    if (first === -1) first = this.runs.length;
    let last = first;
    while (last < this.runs.length && this.runs[last]!.at <= end) last++;
    const touched = this.runs.slice(first, last);
    if (touched.length === 1 && touched[0]!.at <= at) {
      // The common case: an append to the run before it, or an overwrite within it.
      const r = touched[0]!;
      this.gathered -= r.length;
      const length = Math.max(r.length, end - r.at);
      if (length > r.bytes.byteLength) r.bytes = grown(r.bytes, r.length, length);
      r.bytes.set(bytes, at - r.at);
      r.length = length;
      this.gathered += r.length;
      return;
    }
    const from = Math.min(at, touched[0]?.at ?? at);
    const to = Math.max(end, ...touched.map((r) => r.at + r.length));
    const merged: Run = { at: from, bytes: new Uint8Array(to - from), length: to - from };
    // Older bytes first, the new write over them.
    for (const r of touched) merged.bytes.set(r.bytes.subarray(0, r.length), r.at - from);
    merged.bytes.set(bytes, at - from);
    this.runs.splice(first, touched.length, merged);
    this.gathered += merged.length - touched.reduce((sum, r) => sum + r.length, 0);
  }
}

/** A run's buffer with room for at least `needed` bytes (doubling, so a log's appends copy little). */
function grown(bytes: Uint8Array, used: number, needed: number): Uint8Array {
  const next = new Uint8Array(Math.max(needed, bytes.byteLength * 2));
  next.set(bytes.subarray(0, used));
  return next;
}

/**
 * Makes every sync access handle the worker opens from now on a coalescing one (the SAH pool VFS
 * opens its pool's files with `createSyncAccessHandle` while it installs, and when it grows).
 */
export function coalesceSyncAccessHandles(fileHandle: { prototype: object }, limit = COALESCE_LIMIT_BYTES): void {
  const proto = fileHandle.prototype as { createSyncAccessHandle(): Promise<unknown>; [COALESCED]?: true };
  if (proto[COALESCED]) return;
  const open = proto.createSyncAccessHandle;
  proto.createSyncAccessHandle = async function (this: unknown) {
    return new CoalescingHandle((await open.call(this)) as SyncAccessHandle, limit);
  };
  proto[COALESCED] = true;
}

const COALESCED = Symbol('chyme.coalesced');
