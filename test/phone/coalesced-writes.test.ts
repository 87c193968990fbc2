/**
 * The phone worker's coalesced OPFS writes (renderer/src/phone/coalesced-writes.ts) over a fake
 * access handle that behaves as OPFS's does (a write past the end fills the gap with zeros, a read
 * past it is short) and counts its calls: what reaches the handle, when, and that every read,
 * size and truncation through the overlay answers what the handle alone would have.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoalescingHandle, coalesceSyncAccessHandles, type Bytes, type SyncAccessHandle } from '../../renderer/src/phone/coalesced-writes.js';

class FakeHandle implements SyncAccessHandle {
  bytes = new Uint8Array(0);
  /** The file as the last flush left it: what survives a crash. */
  durable = new Uint8Array(0);
  calls = { read: 0, write: 0, getSize: 0, truncate: 0, flush: 0, close: 0 };
  writes: Array<{ at: number; length: number }> = [];
  failWrites = 0;

  read(buffer: Bytes, options?: { at?: number }): number {
    this.calls.read++;
    const into = view(buffer);
    const at = options!.at!;
    const part = this.bytes.subarray(Math.min(at, this.bytes.length), Math.min(at + into.length, this.bytes.length));
    into.set(part);
    return part.length;
  }

  write(buffer: Bytes, options?: { at?: number }): number {
    this.calls.write++;
    if (this.failWrites > 0 && --this.failWrites === 0) throw new Error('disk full');
    const from = view(buffer);
    const at = options!.at!;
    if (at + from.length > this.bytes.length) this.resize(at + from.length);
    this.bytes.set(from, at);
    this.writes.push({ at, length: from.length });
    return from.length;
  }

  getSize(): number {
    this.calls.getSize++;
    return this.bytes.length;
  }

  truncate(size: number): void {
    this.calls.truncate++;
    this.resize(size);
  }

  flush(): void {
    this.calls.flush++;
    this.durable = this.bytes.slice();
  }

  close(): void {
    this.calls.close++;
  }

  private resize(size: number): void {
    const next = new Uint8Array(size);
    next.set(this.bytes.subarray(0, Math.min(size, this.bytes.length)));
    this.bytes = next;
  }
}

const view = (b: Bytes) => (ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b));
const filled = (length: number, value: number) => new Uint8Array(length).fill(value);
const PAGE = 4096;
const FRAME_HEADER = 24;

test('a WAL commit of a dozen pages reaches the handle as one write at the flush, and is durable only then', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner);
  let at = 4096 + 32;
  for (let page = 1; page <= 12; page++) {
    assert.equal(file.write(filled(FRAME_HEADER, page), { at }), FRAME_HEADER);
    at += FRAME_HEADER;
    assert.equal(file.write(filled(PAGE, page), { at }), PAGE);
    at += PAGE;
  }
  assert.equal(inner.calls.write, 0, 'nothing written before the flush');
  assert.equal(inner.durable.length, 0, 'a crash now keeps the file as it was');
  assert.equal(file.getSize(), at, 'the size counts the gathered frames');
  file.flush();
  assert.deepEqual(inner.writes, [{ at: 4096 + 32, length: 12 * (FRAME_HEADER + PAGE) }], 'one write of the whole run');
  assert.equal(inner.calls.flush, 1);
  assert.equal(inner.durable.length, at, 'durable after the flush');
  assert.equal(inner.durable[4096 + 32 + 11 * (FRAME_HEADER + PAGE) + FRAME_HEADER], 12, 'the last page in its place');
  assert.equal(file.pendingBytes, 0);
});

test('reads see gathered bytes: inside a run, across runs and the file, and zeros in a gap past the stored end', () => {
  const inner = new FakeHandle();
  inner.write(filled(100, 1), { at: 0 });
  inner.calls.write = 0;
  const file = new CoalescingHandle(inner);
  file.write(filled(10, 2), { at: 20 });
  file.write(filled(10, 3), { at: 150 });
  const inside = new Uint8Array(5);
  const readsBefore = inner.calls.read;
  assert.equal(file.read(inside, { at: 22 }), 5);
  assert.deepEqual([...inside], [2, 2, 2, 2, 2]);
  assert.equal(inner.calls.read, readsBefore, 'a read within one gathered run needs no call');
  // SQLite reads into its heap: whatever was there must not show through a gap.
  const across = filled(160, 0xee);
  assert.equal(file.read(across, { at: 0 }), 160);
  const expected = [...filled(20, 1), ...filled(10, 2), ...filled(70, 1), ...filled(50, 0), ...filled(10, 3)];
  assert.deepEqual([...across], expected);
  const past = new Uint8Array(20);
  assert.equal(file.read(past, { at: 155 }), 5, 'short at the end, as OPFS');
  assert.deepEqual([...past], [...filled(5, 3), ...filled(15, 0)]);
  assert.equal(file.getSize(), 160);
  assert.equal(inner.calls.write, 0);
});

test('overlapping and touching writes merge in order, later bytes winning, and flush as one write per contiguous run', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner);
  file.write(filled(10, 1), { at: 100 });
  file.write(filled(10, 2), { at: 0 });
  file.write(filled(10, 3), { at: 200 });
  file.write(filled(100, 4), { at: 5 }); // over the first, touching the second
  file.write(filled(2, 5), { at: 104 });
  file.flush();
  assert.deepEqual(inner.writes, [{ at: 0, length: 110 }, { at: 200, length: 10 }]);
  assert.deepEqual([...inner.bytes.subarray(0, 110)], [...filled(5, 2), ...filled(99, 4), 5, 5, ...filled(4, 1)]);
});

test('truncation drops gathered bytes past the new end and the size follows it', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner);
  file.write(filled(50, 7), { at: 0 });
  file.write(filled(50, 8), { at: 100 });
  file.truncate(120);
  assert.equal(file.getSize(), 120);
  file.truncate(30);
  assert.equal(file.getSize(), 30);
  assert.equal(file.pendingBytes, 30);
  file.truncate(40);
  const all = new Uint8Array(40);
  assert.equal(file.read(all, { at: 0 }), 40);
  assert.deepEqual([...all], [...filled(30, 7), ...filled(10, 0)], 'grown again with zeros');
  file.flush();
  assert.deepEqual([...inner.bytes], [...filled(30, 7), ...filled(10, 0)]);
});

test('more than the limit gathered is written at once without a flush; close writes what is left', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner, 1000);
  file.write(filled(600, 1), { at: 0 });
  assert.equal(inner.calls.write, 0);
  file.write(filled(600, 2), { at: 5000 });
  assert.equal(inner.calls.write, 2, 'both runs written');
  assert.equal(inner.calls.flush, 0, 'but not made durable');
  file.write(filled(10, 3), { at: 10 });
  file.close();
  assert.equal(inner.calls.write, 3);
  assert.equal(inner.calls.close, 1);
  assert.equal(inner.bytes[10], 3);
});

test('a write failing at the flush is thrown, nothing flushed, and the runs not written stay gathered', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner);
  file.write(filled(10, 1), { at: 0 });
  file.write(filled(10, 2), { at: 100 });
  inner.failWrites = 2;
  assert.throws(() => file.flush(), /disk full/);
  assert.equal(inner.calls.flush, 0);
  assert.equal(file.pendingBytes, 10, 'the second run is still gathered');
  const back = new Uint8Array(10);
  file.read(back, { at: 100 });
  assert.deepEqual([...back], [...filled(10, 2)]);
  file.flush();
  assert.equal(inner.bytes[105], 2);
});

test('any view (the pool writes its header digest as a Uint32Array) and no access without a position', () => {
  const inner = new FakeHandle();
  const file = new CoalescingHandle(inner);
  const digest = new Uint32Array([0x01020304, 0x05060708]);
  assert.equal(file.write(digest, { at: 516 }), 8);
  const back = new Uint32Array(2);
  assert.equal(file.read(back, { at: 516 }), 8);
  assert.deepEqual([...back], [...digest]);
  assert.throws(() => file.write(filled(1, 1)), /explicit position/);
  assert.throws(() => file.read(new Uint8Array(1), {}), /explicit position/);
});

test('random reads, writes, truncations and flushes answer as the handle alone does', () => {
  let seed = 29;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 40; round++) {
    const plain = new FakeHandle();
    const inner = new FakeHandle();
    const file = new CoalescingHandle(inner, 1 + random(3000));
    for (let step = 0; step < 200; step++) {
      const op = random(20);
      const at = random(2000);
      if (op < 11) {
        const bytes = filled(1 + random(300), 1 + random(250));
        assert.equal(file.write(bytes, { at }), plain.write(bytes, { at }));
      } else if (op < 16) {
        const a = filled(1 + random(400), 0xee);
        const b = filled(a.length, 0xee);
        const n = file.read(a, { at });
        assert.equal(n, plain.read(b, { at }), `round ${round} step ${step}: read length`);
        assert.deepEqual(a.subarray(0, n), b.subarray(0, n), `round ${round} step ${step}: read bytes`);
      } else if (op < 17) {
        file.truncate(at);
        plain.truncate(at);
      } else if (op < 18) {
        file.flush();
        assert.deepEqual(inner.durable, plain.bytes, `round ${round} step ${step}: flushed file`);
      } else {
        assert.equal(file.getSize(), plain.getSize());
      }
    }
    file.close();
    assert.deepEqual(inner.bytes, plain.bytes, `round ${round}: the file after close`);
  }
});

test('the worker’s handles come wrapped, once, from createSyncAccessHandle', async () => {
  const inner = new FakeHandle();
  class FileHandle {
    createSyncAccessHandle(): Promise<unknown> {
      return Promise.resolve(inner);
    }
  }
  coalesceSyncAccessHandles(FileHandle);
  coalesceSyncAccessHandles(FileHandle);
  const handle = (await new FileHandle().createSyncAccessHandle()) as CoalescingHandle;
  assert.ok(handle instanceof CoalescingHandle);
  handle.write(filled(4, 1), { at: 0 });
  assert.equal(inner.calls.write, 0, 'gathered, so wrapped');
  handle.flush();
  assert.equal(inner.calls.write, 1, 'one wrapper: one write');
});
