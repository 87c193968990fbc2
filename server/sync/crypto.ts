/**
 * The keys of a history and the sealing of its chunks: what lets the relay store a history it
 * cannot read (docs/sync.md, "What the relay sees"). WebCrypto only (globalThis.crypto.subtle), no
 * Node import, so the same module runs in Node 20 and in the phone's browser.
 *
 * - The root is one random **history secret** (16 bytes), made by `sync init` and carried by the
 *   pairing code. It is not a password, so no password KDF: HKDF-SHA256 derives every other key.
 * - `K_enc` (AES-256-GCM) seals chunks; `K_name` (HMAC-SHA256) names the space and documents, so
 *   the relay sees opaque ids; `K_auth` proves to the relay that a device may use the space (the
 *   relay stores only its SHA-256).
 * - A sealed chunk is `0x02 ‖ nonce(12, random) ‖ AES-256-GCM(K_enc, nonce, plaintext, AAD)`, the
 *   plaintext padded to a PADMÉ length (hides exact sizes), the AAD binding it to its space,
 *   document and kind: bytes moved to another document or space fail authentication.
 */

const subtle = (): typeof globalThis.crypto.subtle => {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('This runtime has no WebCrypto (crypto.subtle): a browser needs a secure context (HTTPS or localhost).');
  return s;
};

export const SECRET_BYTES = 16;
/** WebCrypto's typings take bytes over an ArrayBuffer only (DOM lib); ours are always that. */
const buf = (u: Uint8Array): Uint8Array<ArrayBuffer> => u as Uint8Array<ArrayBuffer>;
const SEALED_VERSION = 0x02;
const NONCE_BYTES = 12;
const HKDF_SALT = new TextEncoder().encode('chyme-sync-v2');

export type ChunkKind = 'change' | 'snapshot';
const KIND_BYTE: Record<ChunkKind, number> = { change: 1, snapshot: 2 };

export interface HistoryKeys {
  /** The space's id on the relay: opaque, derived from the secret. */
  sid: string;
  /** Proof of the secret for the relay (hex); the relay keeps only its SHA-256. */
  auth: string;
  /** The opaque relay id of a document name (`root`, `shard:2026-11:dev_…`). */
  oid(name: string): Promise<string>;
  seal(oid: string, kind: ChunkKind, name: string, body: Uint8Array): Promise<Uint8Array>;
  /** Opens a sealed chunk stored under `oid`; throws IntegrityError when it fails authentication. */
  open(oid: string, kind: ChunkKind, sealed: Uint8Array): Promise<{ name: string; body: Uint8Array }>;
}

/** A chunk that is not what its device sealed: changed bytes, or moved to another document. */
export class IntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntegrityError';
  }
}

export function newHistorySecret(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
}

async function hkdf(secret: Uint8Array, info: string): Promise<Uint8Array> {
  const base = await subtle().importKey('raw', buf(secret), 'HKDF', false, ['deriveBits']);
  const bits = await subtle().deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: HKDF_SALT, info: new TextEncoder().encode(info) }, base, 256);
  return new Uint8Array(bits);
}

export async function deriveKeys(secret: Uint8Array): Promise<HistoryKeys> {
  if (secret.length < SECRET_BYTES) throw new Error(`A history secret has at least ${SECRET_BYTES} bytes.`);
  const [encRaw, nameRaw, authRaw] = await Promise.all([hkdf(secret, 'chyme/enc'), hkdf(secret, 'chyme/name'), hkdf(secret, 'chyme/auth')]);
  const encKey = await subtle().importKey('raw', buf(encRaw), 'AES-GCM', false, ['encrypt', 'decrypt']);
  const nameKey = await subtle().importKey('raw', buf(nameRaw), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const name = async (label: string) => base32(new Uint8Array(await subtle().sign('HMAC', nameKey, new TextEncoder().encode(label)))).slice(0, 26).toLowerCase();
  const sid = await name('space');
  const oids = new Map<string, string>();
  const aad = (oid: string, kind: ChunkKind) => new TextEncoder().encode(`chyme/v2|${sid}|${oid}|${kind}`);
  return {
    sid,
    auth: hex(authRaw),
    async oid(docName) {
      let id = oids.get(docName);
      if (!id) oids.set(docName, (id = await name(`doc:${docName}`)));
      return id;
    },
    async seal(oid, kind, docName, body) {
      const nameBytes = new TextEncoder().encode(docName);
      const length = 1 + 2 + nameBytes.length + 4 + body.length;
      const plain = new Uint8Array(padme(length));
      const view = new DataView(plain.buffer);
      plain[0] = KIND_BYTE[kind];
      view.setUint16(1, nameBytes.length);
      plain.set(nameBytes, 3);
      view.setUint32(3 + nameBytes.length, body.length);
      plain.set(body, 7 + nameBytes.length);
      const nonce = globalThis.crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
      const cipher = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad(oid, kind) }, encKey, plain));
      const out = new Uint8Array(1 + NONCE_BYTES + cipher.length);
      out[0] = SEALED_VERSION;
      out.set(nonce, 1);
      out.set(cipher, 1 + NONCE_BYTES);
      return out;
    },
    async open(oid, kind, sealed) {
      if (sealed.length < 1 + NONCE_BYTES + 16 || sealed[0] !== SEALED_VERSION) throw new IntegrityError('not a sealed chunk of this version');
      let plain: Uint8Array;
      try {
        plain = new Uint8Array(
          await subtle().decrypt({ name: 'AES-GCM', iv: buf(sealed.subarray(1, 1 + NONCE_BYTES)), additionalData: aad(oid, kind) }, encKey, buf(sealed.subarray(1 + NONCE_BYTES))),
        );
      } catch {
        throw new IntegrityError('it fails authentication: changed on the relay, or stored under another document');
      }
      const view = new DataView(plain.buffer, plain.byteOffset, plain.byteLength);
      if (plain[0] !== KIND_BYTE[kind]) throw new IntegrityError('its kind does not match');
      const nameLength = view.getUint16(1);
      const docName = new TextDecoder().decode(plain.subarray(3, 3 + nameLength));
      const bodyLength = view.getUint32(3 + nameLength);
      const start = 7 + nameLength;
      if (start + bodyLength > plain.length) throw new IntegrityError('its length is wrong');
      return { name: docName, body: plain.slice(start, start + bodyLength) };
    },
  };
}

/** SHA-256 of the auth proof, as the relay stores it (hex). */
export async function authDigest(authHex: string): Promise<string> {
  return hex(new Uint8Array(await subtle().digest('SHA-256', new TextEncoder().encode(authHex))));
}

/**
 * PADMÉ (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and Communication with
 * PURBs", 2019; as Evolu pads its messages): rounds a length up so that at most O(log log L) bits
 * of it remain, at most 12 % overhead.
 */
export function padme(length: number): number {
  if (length < 2) return length;
  const e = Math.floor(Math.log2(length));
  const s = Math.floor(Math.log2(e)) + 1;
  const lastBits = e - s;
  const mask = 2 ** lastBits - 1;
  return Math.ceil(length / (mask + 1)) * (mask + 1);
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, upper case, no padding: the QR code's alphanumeric mode carries it compactly. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (any case); null when a character is not base32. */
export function fromBase32(text: string): Uint8Array | null {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text.toUpperCase()) {
    const v = B32.indexOf(ch);
    if (v < 0) return null;
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  return new Uint8Array(out);
}

export function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}
