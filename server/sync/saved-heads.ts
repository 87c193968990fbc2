/**
 * The heads of a saved Automerge document (A.save's bytes), read from its chunk header without
 * loading it: loading a month of records (parsing every change, hashing each to check the heads,
 * and building the JS document) takes tens of milliseconds of the service's thread, and a device
 * often only needs to know whether a snapshot holds anything it lacks.
 *
 * Automerge's binary format (https://automerge.org/automerge-binary-format-spec/): a chunk is the
 * magic bytes 85 6f 4a 83, a 4-byte checksum, a type byte (0: a document), its length (uLEB128),
 * then, for a document, its actors (a uLEB128 count, each a uLEB128 length and bytes) and its
 * heads (a uLEB128 count, each a 32-byte SHA-256 hash), then the columns. Returns the heads as
 * A.getHeads gives them (lowercase hex), sorted, or undefined for bytes that do not begin with a
 * document chunk (incremental changes, or anything this cannot read): the caller then loads them.
 */
export function savedDocHeads(bytes: Uint8Array): string[] | undefined {
  if (bytes.length < 10 || bytes[0] !== 0x85 || bytes[1] !== 0x6f || bytes[2] !== 0x4a || bytes[3] !== 0x83 || bytes[8] !== 0) return undefined;
  const at = { i: 9 };
  const length = uleb(bytes, at);
  if (length === undefined || at.i + length > bytes.length) return undefined;
  const end = at.i + length;
  const actors = uleb(bytes, at);
  if (actors === undefined) return undefined;
  for (let k = 0; k < actors; k++) {
    const n = uleb(bytes, at);
    if (n === undefined) return undefined;
    at.i += n;
  }
  const count = uleb(bytes, at);
  if (count === undefined || at.i + 32 * count > end) return undefined;
  const heads: string[] = [];
  for (let k = 0; k < count; k++, at.i += 32) heads.push(hex(bytes.subarray(at.i, at.i + 32)));
  return heads.sort();
}

/** No Buffer: the phone's worker runs this engine in a browser. */
function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** An unsigned LEB128 number at `at.i` (moved past it), or undefined past the end or beyond 2^53. */
function uleb(bytes: Uint8Array, at: { i: number }): number | undefined {
  let value = 0;
  for (let shift = 0; shift < 53; shift += 7) {
    const b = bytes[at.i++];
    if (b === undefined) return undefined;
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return value;
  }
  return undefined;
}
