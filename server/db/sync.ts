import type { SqlDatabase as Db } from './sql-api.js';

/**
 * The sync tables (migration 9): this device's set-up, the outbox the triggers fill, which document
 * holds each record, the shards this device knows, and the conflicts seen. Plus raw access to the
 * rows of the synced tables by column, for the projector and the outbox (their column lists are
 * fixed constants of server/sync/entities.ts, never input).
 */

/** service_state key: true when the sync engine last stopped cleanly (its documents flushed). */
export const CLEAN_STOP_KEY = 'sync_clean_stop';

export interface SyncConfig {
  deviceId: string;
  deviceName: string;
  relayUrl: string;
  relayToken: string;
  rootUrl: string;
  enabledMs: number;
}

interface SyncConfigRow {
  device_id: string;
  device_name: string;
  relay_url: string;
  relay_token: string;
  root_url: string;
  enabled_ms: number;
}

export function getSyncConfig(db: Db): SyncConfig | undefined {
  const r = db.prepare('SELECT device_id, device_name, relay_url, relay_token, root_url, enabled_ms FROM sync_config WHERE id = 1').get() as
    | SyncConfigRow
    | undefined;
  return r && { deviceId: r.device_id, deviceName: r.device_name, relayUrl: r.relay_url, relayToken: r.relay_token, rootUrl: r.root_url, enabledMs: r.enabled_ms };
}

/** Turns sync on for this database: the set-up row, and the triggers start recording changes. */
export function saveSyncConfig(db: Db, c: SyncConfig): void {
  db.prepare(
    `INSERT INTO sync_config (id, device_id, device_name, relay_url, relay_token, root_url, enabled_ms)
     VALUES (1, @deviceId, @deviceName, @relayUrl, @relayToken, @rootUrl, @enabledMs)
     ON CONFLICT (id) DO UPDATE SET device_id = excluded.device_id, device_name = excluded.device_name, relay_url = excluded.relay_url,
       relay_token = excluded.relay_token, root_url = excluded.root_url, enabled_ms = excluded.enabled_ms`,
  ).run(c);
  setCapture(db, true);
}

/** Turns sync off: forgets the set-up and everything derived from the documents (the records stay). */
export function clearSyncState(db: Db): void {
  setCapture(db, false);
  db.exec('DELETE FROM sync_config; DELETE FROM sync_outbox; DELETE FROM sync_records; DELETE FROM sync_shards; DELETE FROM sync_conflicts;');
}

/** Whether the triggers record local changes (off while the projector writes what came from the documents). */
export function setCapture(db: Db, active: boolean): void {
  db.prepare('UPDATE sync_capture SET active = ? WHERE id = 1').run(active ? 1 : 0);
}

// ---- Outbox ---------------------------------------------------------------------------------

export interface OutboxEntry {
  seq: number;
  entity: string;
  recordId: string;
  /** '*' created, '-' deleted, else the changed columns. */
  fields: string;
}

export function listOutbox(db: Db, limit: number): OutboxEntry[] {
  return (db.prepare('SELECT seq, entity, record_id AS recordId, fields FROM sync_outbox ORDER BY seq LIMIT ?').all(limit) as OutboxEntry[]);
}

export function hasOutboxEntry(db: Db, recordId: string): boolean {
  return db.prepare('SELECT 1 FROM sync_outbox WHERE record_id = ? LIMIT 1').get(recordId) !== undefined;
}

export function countOutbox(db: Db): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM sync_outbox').get() as { n: number }).n;
}

export function deleteOutboxThrough(db: Db, seq: number): void {
  db.prepare('DELETE FROM sync_outbox WHERE seq <= ?').run(seq);
}

/** Records every current row of a synced table as new (sync set up on a device that has data). */
export function enqueueAll(db: Db, entity: string, table: string, where = ''): number {
  return db.prepare(`INSERT INTO sync_outbox (entity, record_id, fields) SELECT ?, id, '*' FROM ${table} ${where ? `WHERE ${where}` : ''} ORDER BY rowid`).run(entity).changes;
}

// ---- Where records live ---------------------------------------------------------------------

export function docOfRecord(db: Db, recordId: string): string | undefined {
  return (db.prepare('SELECT doc_url FROM sync_records WHERE record_id = ?').get(recordId) as { doc_url: string } | undefined)?.doc_url;
}

export function saveRecordDocs(db: Db, entries: Iterable<[recordId: string, docUrl: string]>): void {
  const stmt = db.prepare('INSERT INTO sync_records (record_id, doc_url) VALUES (?, ?) ON CONFLICT (record_id) DO UPDATE SET doc_url = excluded.doc_url');
  for (const [id, url] of entries) stmt.run(id, url);
}

export interface ShardRow {
  docUrl: string;
  shardKey: string;
  deviceId: string;
  projectedRev: number;
  unconfirmed: boolean;
}

export function listShards(db: Db): ShardRow[] {
  return (
    db.prepare('SELECT doc_url, shard_key, device_id, projected_rev, unconfirmed FROM sync_shards').all() as Array<{
      doc_url: string;
      shard_key: string;
      device_id: string;
      projected_rev: number;
      unconfirmed: number;
    }>
  ).map((r) => ({ docUrl: r.doc_url, shardKey: r.shard_key, deviceId: r.device_id, projectedRev: r.projected_rev, unconfirmed: r.unconfirmed === 1 }));
}

export function upsertShard(db: Db, s: Pick<ShardRow, 'docUrl' | 'shardKey' | 'deviceId'>): void {
  db.prepare('INSERT INTO sync_shards (doc_url, shard_key, device_id) VALUES (?, ?, ?) ON CONFLICT (doc_url) DO NOTHING').run(s.docUrl, s.shardKey, s.deviceId);
}

export function setShardProjected(db: Db, docUrl: string, rev: number): void {
  db.prepare('UPDATE sync_shards SET projected_rev = ? WHERE doc_url = ?').run(rev, docUrl);
}

export function setShardUnconfirmed(db: Db, docUrl: string, unconfirmed: boolean): void {
  db.prepare('UPDATE sync_shards SET unconfirmed = ? WHERE doc_url = ?').run(unconfirmed ? 1 : 0, docUrl);
}

export function countUnconfirmedShards(db: Db): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM sync_shards WHERE unconfirmed = 1').get() as { n: number }).n;
}

// ---- Conflicts ------------------------------------------------------------------------------

export interface ConflictRow {
  entity: string;
  recordId: string;
  field: string;
  kept: unknown;
  others: unknown[];
  detectedMs: number;
}

const KEPT_CONFLICTS = 20;

export function recordConflict(db: Db, c: ConflictRow): void {
  db.prepare('INSERT INTO sync_conflicts (entity, record_id, field, kept_json, others_json, detected_ms) VALUES (?, ?, ?, ?, ?, ?)').run(
    c.entity,
    c.recordId,
    c.field,
    JSON.stringify(c.kept),
    JSON.stringify(c.others),
    c.detectedMs,
  );
  db.prepare('DELETE FROM sync_conflicts WHERE seq <= (SELECT MAX(seq) FROM sync_conflicts) - ?').run(KEPT_CONFLICTS);
}

export function listConflicts(db: Db): ConflictRow[] {
  return (
    db.prepare('SELECT entity, record_id, field, kept_json, others_json, detected_ms FROM sync_conflicts ORDER BY seq DESC').all() as Array<{
      entity: string;
      record_id: string;
      field: string;
      kept_json: string;
      others_json: string;
      detected_ms: number;
    }>
  ).map((r) => ({ entity: r.entity, recordId: r.record_id, field: r.field, kept: JSON.parse(r.kept_json), others: JSON.parse(r.others_json) as unknown[], detectedMs: r.detected_ms }));
}

// ---- Rows of the synced tables --------------------------------------------------------------

export type Row = Record<string, string | number | null>;

/** The rows with these ids, by id: only the given columns (constants of the sync feature). */
export function readRows(db: Db, table: string, columns: readonly string[], ids: readonly string[], where = ''): Map<string, Row> {
  const out = new Map<string, Row>();
  const stmt = db.prepare(`SELECT id, ${columns.join(', ')} FROM ${table} WHERE id = ?${where ? ` AND ${where}` : ''}`);
  for (const id of ids) {
    const r = stmt.get(id) as Row | undefined;
    if (r) out.set(id, r);
  }
  return out;
}

/** Inserts or updates one row by id with these column values (columns are the sync feature's constants). */
export function upsertRow(db: Db, table: string, row: Row): void {
  const cols = Object.keys(row);
  const sets = cols.filter((c) => c !== 'id').map((c) => `${c} = excluded.${c}`);
  db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')}) ON CONFLICT (id) DO UPDATE SET ${sets.join(', ')}`).run(row);
}

export function deleteRow(db: Db, table: string, id: string): boolean {
  return db.prepare(`DELETE FROM ${table} WHERE id = ?`).run(id).changes > 0;
}

export function allIds(db: Db, table: string, where = ''): string[] {
  return (db.prepare(`SELECT id FROM ${table}${where ? ` WHERE ${where}` : ''}`).pluck().all() as string[]);
}
