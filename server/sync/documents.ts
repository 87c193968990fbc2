import type { Counter } from '@automerge/automerge';

/**
 * The shapes of the sync documents. Plain maps of strings, numbers and nulls (no Node-only
 * encoding), so a browser's automerge-repo can load the same documents later.
 *
 * - One root document per history: the devices, the webhook host, the person-level settings and
 *   the index of shards (`shards["key@deviceId"]` → key, device, url and a change counter). Each
 *   device creates and lists only its own shards, so two devices that start the same month offline
 *   never collide. The index is flat on purpose: with a map per key (`shards[key][deviceId]`), two
 *   devices creating the first shard of a month at the same time each create that key's map, and
 *   Automerge keeps one of two concurrently created objects, hiding the other device's shard.
 * - Shards hold records: a meal lives in its creator's shard of its month, sleep in its creator's
 *   shard of its year, custom foods and saved meals in their creator's one shard each. Edits from
 *   any device go to the record's shard and bump its counter in the root, which is how other
 *   devices learn that a shard they have not loaded changed.
 * - A record converges field by field. A deleted record keeps only `deleted_ms` (set once, never
 *   cleared): a concurrent edit of a field cannot bring it back.
 * - Fields a device does not know (a newer version wrote them) are left as they are: a device only
 *   ever writes the fields it changed.
 */
export const SCHEMA_VERSION = 1;

export type Scalar = string | number | boolean | null;
export type DocRecord = Record<string, Scalar>;

export interface ShardEntry {
  shard: string;
  device_id: string;
  url: string;
  rev: Counter;
}

/** A shard's key in the root's index: one entry per (shard key, device), only ever created by that device. */
export const shardIndexKey = (shard: string, deviceId: string): string => `${shard}@${deviceId}`;

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
  shards: Record<string, ShardEntry>;
}

export interface ShardDoc {
  schema: number;
  kind: 'chyme.shard';
  shard: string;
  device_id: string;
  records: Record<string, DocRecord>;
}

export const isDeleted = (r: DocRecord | undefined): boolean => r !== undefined && typeof r.deleted_ms === 'number';
