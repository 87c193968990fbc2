import type { ImmutableString } from '@automerge/automerge';

/**
 * The shapes of the sync documents. Plain maps of strings, numbers and nulls (no Node-only
 * encoding), so the phone's browser loads the same documents. A record's strings are Automerge
 * immutable strings (one value each): a plain string would be a collaborative text of one
 * operation per character, which made a month of meals six times larger and slower to load, and
 * a field is only ever replaced whole. Records written before hold plain strings; both read alike.
 *
 * - One root document per history (name `root`): the devices, the webhook host and the
 *   person-level settings.
 * - Shards hold records: a meal lives in its creator's shard of its month, sleep in its creator's
 *   shard of its year, custom foods and saved meals in their creator's one shard each (name
 *   `shard:KEY:DEVICE`). Each device creates only its own shards, so two devices that start the
 *   same month offline never collide; edits from any device go to the record's shard. The relay
 *   knows a document only by an opaque id derived from its name (crypto.ts); a device that joins
 *   derives the ids of the months it wants first from the root's devices (engine.ts, joinNewestFirst).
 * - A record converges field by field. A deleted record is listed in `deleted` (and keeps only `deleted_ms`):
 *   set once, never cleared, so a concurrent edit of a field cannot bring it back.
 * - Fields a device does not know (a newer version wrote them) are left as they are: a device only
 *   ever writes the fields it changed.
 * - A document's first change is the same bytes wherever it is made (initialChange): a device that
 *   makes a document again that it had lost merges with the relay's copy instead of racing it.
 */
export const SCHEMA_VERSION = 2;

export const ROOT_NAME = 'root';
export const shardName = (key: string, deviceId: string): string => `shard:${key}:${deviceId}`;
/** Whether a shard was made by this device (its records were created here). */
export const isShardOf = (name: string, deviceId: string): boolean => name.startsWith('shard:') && name.endsWith(`:${deviceId}`);

export type Scalar = string | number | boolean | null;
/** A field's value in a document: a scalar, or a string as an immutable string. */
export type DocValue = Scalar | ImmutableString;
export type DocRecord = Record<string, DocValue>;

export interface DeviceEntry {
  name: string;
  joined_ms: number;
  last_seen_ms?: number;
  left_ms?: number;
}

export interface WebhookHost {
  device_id: string;
  device_name: string;
  since_ms: number;
}

export interface RootDoc {
  schema: number;
  kind: 'chyme.root';
  devices: Record<string, DeviceEntry>;
  webhook_host: WebhookHost | null;
  settings: DocRecord;
}

export interface ShardDoc {
  schema: number;
  kind: 'chyme.shard';
  shard: string;
  device_id: string;
  records: Record<string, DocRecord>;
  /**
   * Deletions by record id (the instant). Kept beside the records, not in them: a deletion must
   * win even over a copy of the record this device never had (one it sent just before a crash
   * and whose change only the relay kept), and a key of its own can never be lost to such a copy.
   * Created with the document, so two devices never race to create the map itself.
   */
  deleted?: Record<string, number>;
}

export const isDeleted = (r: DocRecord | undefined): boolean => r !== undefined && typeof r.deleted_ms === 'number';

/** A record as the projector sees it: deleted when either the record or the deletions say so. */
export function recordIn(doc: ShardDoc, id: string): DocRecord | undefined {
  const at = doc.deleted?.[id];
  if (typeof at === 'number') return { deleted_ms: at };
  return doc.records[id];
}

/** Every record id a shard mentions (live, deleted, or only in its deletions). */
export function recordIds(doc: ShardDoc): string[] {
  return [...new Set([...Object.keys(doc.records), ...Object.keys(doc.deleted ?? {})])];
}
