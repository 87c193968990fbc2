/**
 * JSON already serialized, in parts written one after the other. A large answer assembled from
 * cached parts (the 90-day snapshot's meals, kept as UTF-8 bytes) is written as it is, instead of
 * being kept as objects and serialized again on every request: that serializing, and the garbage
 * it leaves on the heap, was most of the answer's cost. Bytes are off V8's heap, so a cached part
 * costs the collector nothing however often it is sent.
 *
 * Anything that serializes it the ordinary way (JSON.stringify) still gets the same value.
 */
export class JsonText {
  readonly parts: ReadonlyArray<string | Uint8Array>;

  constructor(...parts: Array<string | Uint8Array>) {
    this.parts = parts;
  }

  byteLength(): number {
    let n = 0;
    for (const p of this.parts) n += typeof p === 'string' ? utf8Length(p) : p.byteLength;
    return n;
  }

  /** The whole JSON text (the phone's worker sends text, not bytes). */
  text(): string {
    const decoder = new TextDecoder();
    return this.parts.map((p) => (typeof p === 'string' ? p : decoder.decode(p))).join('');
  }

  toJSON(): unknown {
    return JSON.parse(this.text());
  }
}

/**
 * A string's length in UTF-8: Node's Buffer counts without encoding; the phone's worker, which
 * shares this module and has no Buffer, encodes (only the HTTP pipeline asks for a length).
 */
const nodeBuffer = (globalThis as { Buffer?: { byteLength(s: string): number } }).Buffer;
const encoder = new TextEncoder();
const utf8Length = (s: string): number => (nodeBuffer ? nodeBuffer.byteLength(s) : encoder.encode(s).byteLength);
