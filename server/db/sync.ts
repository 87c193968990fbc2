import type { SqlDatabase as Db } from './sql-api.js';

/**
 * The sync tables (migration 9): this device's set-up, the outbox the triggers fill, which document
 * holds each record, the shards this device knows, and the conflicts seen. Plus raw access to the
 * rows of the synced tables by column, for the projector and the outbox (their column lists are
 * fixed constants of server/sync/entities.ts, never input).
 */

/** service_state key: the relay seq this device has pulled and stored everything up to. */
export const CURSOR_KEY = 'sync_cursor';

export interface SyncConfig {
  deviceId: string;
  deviceName: string;
  relayUrl: string;
  /** The history secret, base32: every key of the history is derived from it (server/sync/crypto.ts). */
  historySecret: string;
  enabledMs: number;
}

interface SyncConfigRow {
  device_id: string;
  device_name: string;
  relay_url: string;
  history_secret: string;
  enabled_ms: number;
}

export function getSyncConfig(db: Db): SyncConfig | undefined {
  const r = db.prepare('SELECT device_id, device_name, relay_url, history_secret, enabled_ms FROM sync_config WHERE id = 1').get() as SyncConfigRow | undefined;
  return r && { deviceId: r.device_id, deviceName: r.device_name, relayUrl: r.relay_url, historySecret: r.history_secret, enabledMs: r.enabled_ms };
}

/** Turns sync on for this database: the set-up row, and the triggers start recording changes. */
export function saveSyncConfig(db: Db, c: SyncConfig): void {
  db.prepare(
    `INSERT INTO sync_config (id, device_id, device_name, relay_url, history_secret, enabled_ms)
     VALUES (1, @deviceId, @deviceName, @relayUrl, @historySecret, @enabledMs)
     ON CONFLICT (id) DO UPDATE SET device_id = excluded.device_id, device_name = excluded.device_name, relay_url = excluded.relay_url,
       history_secret = excluded.history_secret, enabled_ms = excluded.enabled_ms`,
  ).run(c);
  setCapture(db, true);
}

/**
 * Sync off, as leaving does: the set-up goes (the secret with it), while the documents, where each
 * record lives and the outbox stay, and the triggers keep recording: joining the same history again
 * merges what changed here meanwhile, field by field.
 */
export function forgetSyncConfig(db: Db): void {
  db.exec('DELETE FROM sync_config;');
}

/** Forgets every trace of a history (a new set-up, a join of another history, a restore): the records stay. */
export function clearSyncState(db: Db): void {
  setCapture(db, false);
  db.exec(`DELETE FROM sync_config; DELETE FROM sync_outbox; DELETE FROM sync_records; DELETE FROM sync_docs; DELETE FROM sync_conflicts; DELETE FROM sync_integrity;
    DELETE FROM service_state WHERE key = '${CURSOR_KEY}';`);
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

/**
 * Entries a drain may take: not those of an import still being written (its records are listed in
 * import_writes until its last transaction). An import commits in many short transactions; its
 * records go into the documents once it is whole, so a failed import is never synced (nor its
 * removal), and a meal logged meanwhile is not queued behind the rows it keeps adding.
 */
const DRAINABLE = 'record_id NOT IN (SELECT record_id FROM import_writes)';

/** The newest entries a drain may take first: a live edit is drained before a bulk change's rest. */
export function listOutboxNewest(db: Db, limit: number): OutboxEntry[] {
  return (db.prepare(`SELECT seq, entity, record_id AS recordId, fields FROM sync_outbox WHERE ${DRAINABLE} ORDER BY seq DESC LIMIT ?`).all(limit) as OutboxEntry[]);
}

/** The newest entry a drain may take (0 when none). */
export function maxOutboxSeq(db: Db): number {
  return (db.prepare(`SELECT MAX(seq) FROM sync_outbox WHERE ${DRAINABLE}`).pluck().get() as number | null) ?? 0;
}

/** Forgets the outbox entries a drain wrote into a document (in the transaction that stores it). */
export function deleteOutboxSeqs(db: Db, seqs: readonly number[]): void {
  const stmt = db.prepare('DELETE FROM sync_outbox WHERE seq = ?');
  for (const seq of seqs) stmt.run(seq);
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
  return (db.prepare('SELECT doc_oid FROM sync_records WHERE record_id = ?').pluck().get(recordId) as string | undefined);
}

export function saveRecordDocs(db: Db, entries: Iterable<[recordId: string, oid: string]>): void {
  const stmt = db.prepare('INSERT INTO sync_records (record_id, doc_oid) VALUES (?, ?) ON CONFLICT (record_id) DO UPDATE SET doc_oid = excluded.doc_oid');
  for (const [id, oid] of entries) stmt.run(id, oid);
}

// ---- This device's copies of the documents ---------------------------------------------------

export interface DocRow {
  oid: string;
  name: string;
  bytes: Uint8Array;
  heads: string;
  syncedHeads: string;
  dirty: boolean;
  unprojected: boolean;
  tailBytes: number;
  snapshotBytes: number;
}

interface DocDbRow {
  oid: string;
  name: string;
  bytes: Uint8Array;
  heads: string;
  synced_heads: string;
  dirty: number;
  unprojected: number;
  tail_bytes: number;
  snapshot_bytes: number;
}

const toDoc = (r: DocDbRow): DocRow => ({
  oid: r.oid,
  name: r.name,
  bytes: r.bytes,
  heads: r.heads,
  syncedHeads: r.synced_heads,
  dirty: r.dirty === 1,
  unprojected: r.unprojected === 1,
  tailBytes: r.tail_bytes,
  snapshotBytes: r.snapshot_bytes,
});

export function getDoc(db: Db, oid: string): DocRow | undefined {
  const r = db.prepare('SELECT * FROM sync_docs WHERE oid = ?').get(oid) as DocDbRow | undefined;
  return r && toDoc(r);
}

/** What a push of a document needs to know, without its bytes (a month of meals is tens of KB). */
export function docPushState(db: Db, oid: string): Omit<DocRow, 'bytes'> | undefined {
  const r = db.prepare('SELECT oid, name, heads, synced_heads, dirty, unprojected, tail_bytes, snapshot_bytes FROM sync_docs WHERE oid = ?').get(oid) as Omit<DocDbRow, 'bytes'> | undefined;
  if (!r) return undefined;
  const { bytes: _none, ...rest } = toDoc({ ...r, bytes: new Uint8Array(0) });
  return rest;
}

export function hasDoc(db: Db, oid: string): boolean {
  return db.prepare('SELECT 1 FROM sync_docs WHERE oid = ?').get(oid) !== undefined;
}

/** Stores a document's new state whole (a save()); `dirty` and `unprojected` are only ever raised here. */
export function saveDoc(db: Db, d: { oid: string; name: string; bytes: Uint8Array; heads: string; dirty: boolean; unprojected: boolean }): void {
  db.prepare(
    `INSERT INTO sync_docs (oid, name, bytes, base_bytes, heads, dirty, unprojected) VALUES (@oid, @name, @bytes, @base, @heads, @dirty, @unprojected)
     ON CONFLICT (oid) DO UPDATE SET bytes = excluded.bytes, base_bytes = excluded.base_bytes, heads = excluded.heads,
       dirty = MAX(dirty, excluded.dirty), unprojected = MAX(unprojected, excluded.unprojected)`,
  ).run({ ...d, base: d.bytes.length, dirty: d.dirty ? 1 : 0, unprojected: d.unprojected ? 1 : 0 });
}

/** The stored heads and sizes of a document, to decide between appending and saving it whole. */
export function docStorage(db: Db, oid: string): { heads: string; bytes: number; baseBytes: number } | undefined {
  return db.prepare('SELECT heads, LENGTH(bytes) AS bytes, base_bytes AS baseBytes FROM sync_docs WHERE oid = ?').get(oid) as { heads: string; bytes: number; baseBytes: number } | undefined;
}

/**
 * Appends the changes since the stored heads (Automerge loads a save followed by such chunks).
 * `||` makes TEXT of its operands: the CAST keeps the column a BLOB, byte for byte.
 */
export function appendDoc(db: Db, d: { oid: string; changes: Uint8Array; heads: string; dirty: boolean; unprojected: boolean }): void {
  db.prepare(
    `UPDATE sync_docs SET bytes = CAST(bytes || @changes AS BLOB), heads = @heads, dirty = MAX(dirty, @dirty), unprojected = MAX(unprojected, @unprojected) WHERE oid = @oid`,
  ).run({ ...d, dirty: d.dirty ? 1 : 0, unprojected: d.unprojected ? 1 : 0 });
}

/** The relay holds `heads` of this document (a push was acknowledged, or everything came from it). */
export function markDocSynced(db: Db, oid: string, heads: string, addTailBytes: number): void {
  db.prepare('UPDATE sync_docs SET synced_heads = ?, dirty = (heads != ?), tail_bytes = tail_bytes + ? WHERE oid = ?').run(heads, heads, addTailBytes, oid);
}

/**
 * The relay acknowledged a push of this document computed from `since` (its synced heads then):
 * it holds `heads` now. Unless a resend was asked for meanwhile (markDocResend moved the synced
 * heads back): then the changes are sent again from there, these included; an acknowledgement
 * arriving late must not mark them as held (they may be in a chunk a snapshot left out).
 */
export function markDocPushed(db: Db, oid: string, since: string, heads: string, addTailBytes: number): void {
  db.prepare('UPDATE sync_docs SET synced_heads = ?, dirty = (heads != ?), tail_bytes = tail_bytes + ? WHERE oid = ? AND synced_heads = ?').run(heads, heads, addTailBytes, oid, since);
}

/** The relay now holds a snapshot of this document of `bytes` (sealed), covering its tail. */
export function markDocSnapshot(db: Db, oid: string, bytes: number): void {
  db.prepare('UPDATE sync_docs SET tail_bytes = 0, snapshot_bytes = ? WHERE oid = ?').run(bytes, oid);
}

export function addDocTail(db: Db, oid: string, bytes: number): void {
  db.prepare('UPDATE sync_docs SET tail_bytes = tail_bytes + ? WHERE oid = ?').run(bytes, oid);
}

/** Local changes must be sent again from `syncedHeads` (the relay lost what it had acknowledged). */
export function markDocResend(db: Db, oid: string, syncedHeads: string): void {
  db.prepare('UPDATE sync_docs SET synced_heads = ?, dirty = 1 WHERE oid = ?').run(syncedHeads, oid);
}

export function setDocProjected(db: Db, oid: string): void {
  db.prepare('UPDATE sync_docs SET unprojected = 0 WHERE oid = ?').run(oid);
}

export function listDirtyDocs(db: Db): string[] {
  return db.prepare('SELECT oid FROM sync_docs WHERE dirty = 1').pluck().all() as string[];
}

export function listUnprojectedDocs(db: Db): string[] {
  return db.prepare('SELECT oid FROM sync_docs WHERE unprojected = 1').pluck().all() as string[];
}

/** Local changes the relay has not confirmed: outbox entries, and documents with changes not yet sent. */
export function countPendingChanges(db: Db): number {
  return countOutbox(db) + countDirtyDocs(db);
}

export function countDirtyDocs(db: Db): number {
  return db.prepare('SELECT COUNT(*) FROM sync_docs WHERE dirty = 1').pluck().get() as number;
}

/** Documents whose relay tail has outgrown half their snapshot, or half `floorBytes` if larger (candidates for a new one). */
export function listDocsToCompact(db: Db, floorBytes: number): string[] {
  return db.prepare('SELECT oid FROM sync_docs WHERE dirty = 0 AND tail_bytes * 2 > MAX(snapshot_bytes, ?)').pluck().all(floorBytes) as string[];
}

// ---- Integrity problems ---------------------------------------------------------------------

export interface IntegrityRow {
  oid: string;
  relaySeq: number;
  problem: string;
  detectedMs: number;
}

export function recordIntegrityProblem(db: Db, p: IntegrityRow): void {
  db.prepare('INSERT INTO sync_integrity (oid, relay_seq, problem, detected_ms) VALUES (?, ?, ?, ?) ON CONFLICT (oid, relay_seq) DO NOTHING').run(p.oid, p.relaySeq, p.problem, p.detectedMs);
}

export function listIntegrityProblems(db: Db): IntegrityRow[] {
  return (db.prepare('SELECT oid, relay_seq, problem, detected_ms FROM sync_integrity ORDER BY seq DESC LIMIT 20').all() as Array<{ oid: string; relay_seq: number; problem: string; detected_ms: number }>).map(
    (r) => ({ oid: r.oid, relaySeq: r.relay_seq, problem: r.problem, detectedMs: r.detected_ms }),
  );
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
