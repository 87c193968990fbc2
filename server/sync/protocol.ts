/**
 * The sealed relay's protocol (version 2), spoken over one WebSocket per device: binary frames of
 * `u32 header length ‖ header (JSON) ‖ body`. The body, where there is one, is a sealed chunk
 * (crypto.ts) the relay stores and serves without reading. No Node import: the phone speaks it too.
 *
 * device → relay
 *   hello    {v, sid, auth}                     first frame; creates the space when the connection
 *                                               presented the relay's token, else the space must exist
 *   push     {rid, oid, kind, covers?, own?}    a chunk (kind change) or a snapshot covering every
 *            + body                             chunk of oid up to relay seq `covers` (the device's
 *                                               cursor), and the device's own earlier chunks of oid
 *                                               after it, listed in `own` (the snapshot holds them)
 *   pull     {after, oids?}                     everything stored after cursor `after` (only the
 *                                               documents listed in `oids`, when given: a join
 *                                               fetches the newest documents first)
 *   index    {}                                 the documents the space holds, with their sizes
 *   say      {} + body                          a sealed presence note, passed on to the space's
 *                                               other connections and never stored
 * relay → device
 *   welcome  {seq}                              the space's latest seq
 *   ack      {rid, seq}                         after the chunk is committed (durable)
 *   chunk    {seq, oid, kind} + body            an answer to pull
 *   end      {seq}                              the pull is complete up to seq (the new cursor,
 *                                               for a pull of every document)
 *   docs     {seq, docs: [[oid, bytes]]}        the answer to index: every document with live
 *                                               chunks and their stored bytes, as of seq
 *   notify   {seq}                              another connection stored a chunk
 *   heard    {} + body                          another connection's `say`
 *   error    {code, message, rid?}              a refused frame (with rid: that push only)
 */

export const PROTOCOL_VERSION = 2;

export type ClientMessage =
  | { t: 'hello'; v: number; sid: string; auth: string }
  | { t: 'push'; rid: number; oid: string; kind: 'change' | 'snapshot'; covers?: number; own?: number[] }
  | { t: 'pull'; after: number; oids?: string[] }
  | { t: 'index' }
  | { t: 'say' };

export type RelayMessage =
  | { t: 'welcome'; seq: number }
  | { t: 'ack'; rid: number; seq: number }
  | { t: 'chunk'; seq: number; oid: string; kind: 'change' | 'snapshot' }
  | { t: 'end'; seq: number }
  | { t: 'docs'; seq: number; docs: Array<[oid: string, bytes: number]> }
  | { t: 'notify'; seq: number }
  | { t: 'heard' }
  | { t: 'error'; code: string; message: string; rid?: number };

export interface Frame<H> {
  header: H;
  body: Uint8Array | null;
}

export function encodeFrame(header: ClientMessage | RelayMessage, body?: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + head.length + (body?.length ?? 0));
  new DataView(out.buffer).setUint32(0, head.length);
  out.set(head, 4);
  if (body) out.set(body, 4 + head.length);
  return out;
}

/** Decodes a frame; throws a sentence when it is not one. The header's fields are checked by each side. */
export function decodeFrame<H>(data: Uint8Array): Frame<H> {
  if (data.length < 4) throw new Error('a frame shorter than its length prefix');
  const length = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0);
  if (4 + length > data.length) throw new Error('a frame whose header runs past its end');
  const header = JSON.parse(new TextDecoder().decode(data.subarray(4, 4 + length))) as unknown;
  if (typeof header !== 'object' || header === null || typeof (header as { t?: unknown }).t !== 'string') throw new Error('a frame without a message type');
  const body = data.length > 4 + length ? data.subarray(4 + length) : null;
  return { header: header as H, body };
}

/** The most documents one pull may list (a join asks for a few dozen at a time). */
export const MAX_PULL_OIDS = 1000;

/** The most own chunks one snapshot may list past its `covers` (more wait for the next compaction). */
export const MAX_OWN_SEQS = 1000;

/** Opaque ids on the relay: 26 base32 characters in lower case. */
export const OPAQUE_ID = /^[a-z2-7]{26}$/;
/** The auth proof: 32 bytes in hex. */
export const AUTH_PROOF = /^[0-9a-f]{64}$/;
