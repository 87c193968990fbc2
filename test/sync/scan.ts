import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { constants, inflateRawSync, inflateSync } from 'node:zlib';
import * as Automerge from '@automerge/automerge';
import Database from 'better-sqlite3';

/**
 * A scanner for text that must not be readable in stored bytes (the sealed relay's folder, another
 * device's files). It looks for each needle as UTF-8, UTF-16LE and base64 (at each of the three
 * byte alignments, standard and URL-safe alphabets), and inside every zlib, gzip or raw DEFLATE
 * stream that decodes from any offset (Automerge compresses large columns with raw DEFLATE), and in
 * the decoded history of any blob that loads as an Automerge document. scan.test.ts shows that each
 * of these ways finds what it should.
 */

export interface Hit {
  needle: string;
  where: string;
  how: string;
}

/** The byte patterns of a needle, each named by how it was encoded. */
export function encodings(needle: string): Array<{ how: string; bytes: Buffer }> {
  const utf8 = Buffer.from(needle, 'utf8');
  const out = [
    { how: 'utf-8', bytes: utf8 },
    { how: 'utf-16le', bytes: Buffer.from(needle, 'utf16le') },
  ];
  for (let shift = 0; shift < 3; shift++) {
    // Base64 of the needle preceded by `shift` other bytes: the characters that mix in bits of the
    // bytes before it, and the last group (which mixes in the bytes after it), are left out.
    const text = Buffer.concat([Buffer.alloc(shift), utf8]).toString('base64').replace(/=+$/, '');
    const skip = shift === 0 ? 0 : shift + 1;
    const core = text.slice(skip, text.length - 4);
    if (core.length < 8) continue;
    out.push({ how: `base64 (offset ${shift})`, bytes: Buffer.from(core, 'latin1') });
    const url = core.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== core) out.push({ how: `base64url (offset ${shift})`, bytes: Buffer.from(url, 'latin1') });
  }
  return out;
}

/**
 * Bounds on one stream decoded from an offset: random bytes can decode as DEFLATE for a long way
 * before an error. A real stream longer than the window is read as far as the window reaches
 * (Automerge's compressed columns are far smaller).
 */
const STREAM_WINDOW = 64 * 1024;
const FLUSH = { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 16 * STREAM_WINDOW };

/**
 * Every stream that decodes from some offset of `bytes`: zlib (a valid two-byte header), gzip (its
 * magic) and raw DEFLATE (any offset whose first block type is not the reserved one). A stream cut
 * short still yields what it decoded so far (sync flush).
 */
export function* inflatedStreams(bytes: Uint8Array, minLength: number): Generator<{ offset: number; kind: string; out: Buffer }> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const attempt = (kind: string, offset: number, fn: () => Buffer) => {
    try {
      const out = fn();
      return out.length >= minLength ? { offset, kind, out } : undefined;
    } catch {
      return undefined;
    }
  };
  for (let i = 0; i < buf.length - 1; i++) {
    const b0 = buf[i]!;
    const b1 = buf[i + 1]!;
    const rest = buf.subarray(i, i + STREAM_WINDOW);
    if (b0 === 0x1f && b1 === 0x8b) {
      // The member's DEFLATE data after its header, so that bytes after the member do not spoil it.
      const start = gzipDataStart(buf, i);
      const found = start === null ? undefined : attempt('gzip', i, () => inflateRawSync(buf.subarray(start, start + STREAM_WINDOW), FLUSH));
      if (found) yield found;
    }
    if ((b0 & 0x0f) === 8 && (b0 >> 4) <= 7 && (b0 * 256 + b1) % 31 === 0) {
      const found = attempt('zlib', i, () => inflateSync(rest, FLUSH));
      if (found) yield found;
    }
    if (!plausibleDeflate(buf, i, minLength)) continue;
    const found = attempt('raw deflate', i, () => inflateRawSync(rest, FLUSH));
    if (found) yield found;
  }
}

/** Where a gzip member's compressed data begins (RFC 1952: after the optional fields its flags announce), or null. */
function gzipDataStart(buf: Buffer, at: number): number | null {
  if (at + 10 > buf.length || buf[at + 2] !== 8) return null;
  const flags = buf[at + 3]!;
  let pos = at + 10;
  if (flags & 4) pos += 2 + (pos + 2 <= buf.length ? buf.readUInt16LE(pos) : 0);
  for (const flag of [8, 16]) {
    if (!(flags & flag)) continue;
    const end = buf.indexOf(0, pos);
    if (end < 0) return null;
    pos = end + 1;
  }
  if (flags & 2) pos += 2;
  return pos < buf.length ? pos : null;
}

/** Symbols of fixed-code blocks decoded before zlib is asked (random bytes rarely get this far). */
const FIXED_SYMBOLS_CHECKED = 200;

/**
 * Whether raw DEFLATE from `buf[start]` gets past what zlib would refuse at once: a reserved block
 * type, a stored block whose length fails its check, a dynamic block whose codes are not complete
 * prefix codes, a fixed block with an invalid symbol or a distance reaching back before the start,
 * or a stream that ends before `need` bytes of output. Only what passes goes to zlib: a zlib call per
 * offset costs ~0.15 ms, which would make a scan of a megabyte take minutes.
 */
export function plausibleDeflate(buf: Buffer, start: number, need: number): boolean {
  let pos = start;
  let bit = 0;
  let exhausted = false;
  const read = (n: number): number => {
    let v = 0;
    for (let k = 0; k < n; k++) {
      if (pos >= buf.length) {
        exhausted = true;
        return 0;
      }
      v |= ((buf[pos]! >> bit) & 1) << k;
      if (++bit === 8) {
        bit = 0;
        pos++;
      }
    }
    return v;
  };
  /** The next bit of a Huffman code (codes are read most significant bit first). */
  const code = (c: number) => (c << 1) | read(1);
  let out = 0;
  let symbols = 0;
  for (;;) {
    const final = read(1);
    const type = read(2);
    if (exhausted) return true;
    if (type === 3) return false;
    if (type === 0) {
      // A stored block: LEN and NLEN (its one's complement) from the next byte boundary.
      if (bit > 0) pos++;
      return pos + 4 > buf.length || (buf.readUInt16LE(pos) ^ buf.readUInt16LE(pos + 2)) === 0xffff;
    }
    if (type === 2) return dynamicHeader(read, () => exhausted);
    // Random bytes often decode as a fixed block for dozens of symbols before an error: following
    // them further here spares most zlib calls. Past this many, zlib decides.
    for (;;) {
      if (exhausted || symbols++ >= FIXED_SYMBOLS_CHECKED) return true;
      let c = 0;
      for (let k = 0; k < 7; k++) c = code(c);
      let symbol: number;
      if (c <= 23) symbol = 256 + c;
      else {
        c = code(c);
        if (c >= 48 && c <= 191) symbol = c - 48;
        else if (c >= 192 && c <= 199) symbol = 280 + c - 192;
        else symbol = 144 + code(c) - 400;
      }
      if (symbol < 256) {
        out += 1;
        continue;
      }
      if (symbol === 256) {
        if (final === 1) return out >= need;
        break;
      }
      if (symbol > 285) return false;
      const s = symbol - 257;
      let length = 258;
      if (symbol < 285) {
        const extra = s < 8 ? 0 : (s >> 2) - 1;
        length = (s < 8 ? 3 + s : ((4 + (s & 3)) << extra) + 3) + read(extra);
      }
      let d = 0;
      for (let k = 0; k < 5; k++) d = code(d);
      if (d > 29) return false;
      const extra = d < 4 ? 0 : (d >> 1) - 1;
      const distance = (d < 4 ? d + 1 : ((2 + (d & 1)) << extra) + 1) + read(extra);
      if (distance > out) return false;
      out += length;
    }
  }
}

/** Whether a dynamic block's header (its codes) is one zlib accepts; true when the bytes end first. */
function dynamicHeader(read: (n: number) => number, exhausted: () => boolean): boolean {
  const hlit = read(5) + 257;
  const hdist = read(5) + 1;
  const hclen = read(4) + 4;
  if (hlit > 286 || hdist > 30) return false;
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  const clens = new Array<number>(19).fill(0);
  for (let k = 0; k < hclen; k++) clens[order[k]!] = read(3);
  if (exhausted()) return true;
  const clCode = huffman(clens);
  if (clCode === null || clCode.left !== 0) return false;
  // The code lengths of the literal/length and distance codes, as zlib reads them.
  const lens: number[] = [];
  while (lens.length < hlit + hdist) {
    const sym = decode(clCode, read);
    if (exhausted()) return true;
    if (sym < 16) lens.push(sym);
    else {
      if (sym === 16 && lens.length === 0) return false;
      const value = sym === 16 ? lens[lens.length - 1]! : 0;
      const times = sym === 16 ? 3 + read(2) : sym === 17 ? 3 + read(3) : 11 + read(7);
      if (lens.length + times > hlit + hdist) return false;
      for (let k = 0; k < times; k++) lens.push(value);
    }
  }
  if (lens[256] === 0) return false;
  // Incomplete codes are refused, except a code of one symbol (zlib's inflate_table).
  const complete = (ls: number[]) => {
    const h = huffman(ls);
    return h !== null && (h.left === 0 || Math.max(...ls) === 1);
  };
  return complete(lens.slice(0, hlit)) && complete(lens.slice(hlit));
}

interface Huffman {
  counts: number[];
  symbols: number[];
  /** Codes left unused: 0 for a complete code. */
  left: number;
}

/** A canonical Huffman code from code lengths (as in zlib's puff.c); null when over-subscribed. */
function huffman(lengths: number[]): Huffman | null {
  const counts = new Array<number>(16).fill(0);
  for (const l of lengths) counts[l]! += 1;
  let left = 1;
  for (let len = 1; len < 16; len++) {
    left = left * 2 - counts[len]!;
    if (left < 0) return null;
  }
  const offsets = [0, 0];
  for (let len = 1; len < 15; len++) offsets[len + 1] = offsets[len]! + counts[len]!;
  const symbols: number[] = [];
  lengths.forEach((l, sym) => {
    if (l !== 0) symbols[offsets[l]!++] = sym;
  });
  counts[0] = 0;
  return { counts, symbols, left: counts.every((c) => c === 0) ? 1 : left };
}

function decode(h: Huffman, read: (n: number) => number): number {
  let code = 0;
  let first = 0;
  let index = 0;
  for (let len = 1; len < 16; len++) {
    code |= read(1);
    const count = h.counts[len]!;
    if (code - count < first) return h.symbols[index + (code - first)]!;
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return -1;
}

/** The whole history of a blob that loads as an Automerge document (every change, overwritten values too), or null. */
export function automergeText(bytes: Uint8Array): string | null {
  let doc: Automerge.Doc<unknown>;
  try {
    doc = Automerge.load(bytes);
  } catch {
    return null;
  }
  const changes = Automerge.getAllChanges(doc).map((c) => Automerge.decodeChange(c));
  return JSON.stringify({ state: doc, changes });
}

/**
 * Where each needle shows in `bytes`: directly (any encoding), inside a compressed stream at any
 * offset, or in the history of the blob loaded as an Automerge document. `streams: false` looks
 * only for the direct encodings (a large database whose compressed parts are scanned as blobs).
 */
export function scanBytes(bytes: Uint8Array, needles: string[], where: string, options: { streams?: boolean } = {}): Hit[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const patterns = needles.map((needle) => ({ needle, encoded: encodings(needle) }));
  const hits: Hit[] = [];
  const look = (data: Buffer, how: string) => {
    for (const { needle, encoded } of patterns) {
      for (const e of encoded) if (data.includes(e.bytes)) hits.push({ needle, where, how: `${e.how}${how}` });
    }
  };
  look(buf, '');
  if (options.streams === false) return hits;
  const shortest = Math.min(...needles.map((n) => Buffer.byteLength(n)));
  for (const s of inflatedStreams(buf, shortest)) look(s.out, ` in a ${s.kind} stream at offset ${s.offset}`);
  const text = automergeText(buf);
  if (text !== null) for (const needle of needles) if (text.includes(needle)) hits.push({ needle, where, how: 'in the Automerge history' });
  return hits;
}

export function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((e) => filesUnder(join(path, e)));
}

/** Every file under `dir` (or the file `dir`), scanned whole. */
export function scanFolder(dir: string, needles: string[], options: { streams?: boolean } = {}): Hit[] {
  return filesUnder(dir).flatMap((f) => scanBytes(readFileSync(f), needles, f, options));
}

/**
 * Rows of `SELECT label, bytes …` from a database. Opened for writing (a closed database in WAL
 * mode cannot be opened read-only) but never written: scan its files before.
 */
export function blobs(dbPath: string, sql: string): Array<{ label: string; bytes: Buffer }> {
  return withDb(dbPath, (db) => (db.prepare(sql).all() as Array<{ label: unknown; bytes: Buffer }>).map((r) => ({ label: String(r.label), bytes: r.bytes })));
}

/** Runs `fn` on a database file (opened for writing: a closed database in WAL mode cannot be opened read-only). */
export function withDb<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** "needle in where (how)", one line per hit: what an assertion prints. */
export const describeHits = (hits: Hit[]): string => hits.map((h) => `${h.needle} in ${h.where} (${h.how})`).join('\n');
