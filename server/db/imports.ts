import type { SqlDatabase as Db } from './sql-api.js';

export interface ImportWarningRow {
  file: string;
  line: number | null;
  message: string;
}

export interface UndoReport {
  undoneMs: number;
  mealsRemoved: number;
  sleepRemoved: number;
  /** Records the import added that were kept: edited since, or already deleted. */
  kept: Array<{ id: string; object: 'nutrition.meal' | 'sleep.session'; reason: 'edited' | 'already_deleted' }>;
}

export interface ImportRecord {
  id: string;
  source: string;
  status: 'completed' | 'undone';
  timezone: string;
  files: string[];
  mealsAdded: number;
  sleepAdded: number;
  duplicatesSkipped: number;
  warnings: ImportWarningRow[];
  firstDay: string | null;
  lastDay: string | null;
  createdMs: number;
  undo: UndoReport | null;
}

interface ImportRow {
  id: string;
  source: string;
  status: 'completed' | 'undone';
  timezone: string;
  files_json: string;
  meals_added: number;
  sleep_added: number;
  duplicates_skipped: number;
  warnings_json: string;
  first_day: string | null;
  last_day: string | null;
  created_ms: number;
  undone_ms: number | null;
  undo_json: string | null;
}

const COLUMNS =
  'id, source, status, timezone, files_json, meals_added, sleep_added, duplicates_skipped, warnings_json, first_day, last_day, created_ms, undone_ms, undo_json';

function fromRow(r: ImportRow): ImportRecord {
  return {
    id: r.id,
    source: r.source,
    status: r.status,
    timezone: r.timezone,
    files: JSON.parse(r.files_json) as string[],
    mealsAdded: r.meals_added,
    sleepAdded: r.sleep_added,
    duplicatesSkipped: r.duplicates_skipped,
    warnings: JSON.parse(r.warnings_json) as ImportWarningRow[],
    firstDay: r.first_day,
    lastDay: r.last_day,
    createdMs: r.created_ms,
    undo: r.undo_json === null ? null : (JSON.parse(r.undo_json) as UndoReport),
  };
}

export function insertImport(db: Db, i: ImportRecord): void {
  db.prepare(`INSERT INTO imports (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    i.id,
    i.source,
    i.status,
    i.timezone,
    JSON.stringify(i.files),
    i.mealsAdded,
    i.sleepAdded,
    i.duplicatesSkipped,
    JSON.stringify(i.warnings),
    i.firstDay,
    i.lastDay,
    i.createdMs,
    i.undo?.undoneMs ?? null,
    i.undo === null ? null : JSON.stringify(i.undo),
  );
}

/** Sets what a finished import added (its row was inserted when it began, see import_writes). */
export function completeImport(db: Db, i: ImportRecord): void {
  db.prepare(
    `UPDATE imports SET meals_added = ?, sleep_added = ?, duplicates_skipped = ?, warnings_json = ?, first_day = ?, last_day = ? WHERE id = ?`,
  ).run(i.mealsAdded, i.sleepAdded, i.duplicatesSkipped, JSON.stringify(i.warnings), i.firstDay, i.lastDay, i.id);
}

/** An import still being written (or cut off) is not one yet: its rows are hidden until it finishes. */
const FINISHED = 'id NOT IN (SELECT import_id FROM import_writes)';

export function getImport(db: Db, id: string): ImportRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM imports WHERE id = ? AND ${FINISHED}`).get(id) as ImportRow | undefined;
  return r && fromRow(r);
}

export function deleteImport(db: Db, id: string): void {
  db.prepare('DELETE FROM import_records WHERE import_id = ?').run(id);
  db.prepare('DELETE FROM imports WHERE id = ?').run(id);
}

export function markImportUndone(db: Db, id: string, undo: UndoReport): void {
  db.prepare(`UPDATE imports SET status = 'undone', undone_ms = ?, undo_json = ? WHERE id = ?`).run(undo.undoneMs, JSON.stringify(undo), id);
}

/** One page of imports newest first; reads limit + 1 rows to know has_more. */
export function listImportsPage(db: Db, q: { after?: { createdMs: number; id: string } | undefined; limit: number }): { imports: ImportRecord[]; hasMore: boolean } {
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM imports WHERE ${FINISHED} ${q.after ? 'AND (created_ms < @afterMs OR (created_ms = @afterMs AND id < @afterId))' : ''}
       ORDER BY created_ms DESC, id DESC LIMIT @take`,
    )
    .all({ afterMs: q.after?.createdMs ?? null, afterId: q.after?.id ?? null, take: q.limit + 1 }) as ImportRow[];
  return { imports: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
}

// ---- What each import added (import_records) ------------------------------------------------

export interface ImportedRecordRow {
  sourceKey: string;
  importId: string;
  kind: 'meal' | 'sleep';
  recordId: string;
  fingerprint: string;
}

export function importedKeyExists(db: Db, sourceKey: string): boolean {
  return db.prepare('SELECT 1 FROM import_records WHERE source_key = ?').get(sourceKey) !== undefined;
}

export function insertImportedRecord(db: Db, r: ImportedRecordRow): void {
  db.prepare('INSERT INTO import_records (source_key, import_id, kind, record_id, fingerprint) VALUES (?, ?, ?, ?, ?)').run(
    r.sourceKey,
    r.importId,
    r.kind,
    r.recordId,
    r.fingerprint,
  );
}

export function listImportedRecords(db: Db, importId: string): ImportedRecordRow[] {
  return (
    db.prepare('SELECT source_key, import_id, kind, record_id, fingerprint FROM import_records WHERE import_id = ? ORDER BY rowid').all(importId) as Array<{
      source_key: string;
      import_id: string;
      kind: 'meal' | 'sleep';
      record_id: string;
      fingerprint: string;
    }>
  ).map((r) => ({ sourceKey: r.source_key, importId: r.import_id, kind: r.kind, recordId: r.record_id, fingerprint: r.fingerprint }));
}

export function deleteImportedRecord(db: Db, sourceKey: string): void {
  db.prepare('DELETE FROM import_records WHERE source_key = ?').run(sourceKey);
}

// ---- What an import being written has written so far (import_writes) ----------------------

export type ImportWriteEntity = 'import' | 'meal' | 'sleep' | 'food' | 'saved_meal' | 'webhook_subscription' | 'settings';

export interface ImportWriteRow {
  rowid: number;
  importId: string;
  entity: ImportWriteEntity;
  recordId: string;
}

export function insertImportWrite(db: Db, importId: string, entity: ImportWriteEntity, recordId: string): void {
  db.prepare('INSERT INTO import_writes (import_id, entity, record_id) VALUES (?, ?, ?)').run(importId, entity, recordId);
}

/** The import is whole: what it wrote stays. */
export function deleteImportWrites(db: Db, importId: string): void {
  db.prepare('DELETE FROM import_writes WHERE import_id = ?').run(importId);
}

/** What unfinished imports wrote, last written first (undone in reverse). */
export function listImportWritesNewestFirst(db: Db, limit: number): ImportWriteRow[] {
  return db
    .prepare('SELECT rowid, import_id AS importId, entity, record_id AS recordId FROM import_writes ORDER BY rowid DESC LIMIT ?')
    .all(limit) as ImportWriteRow[];
}

export function deleteImportWrite(db: Db, rowid: number): void {
  db.prepare('DELETE FROM import_writes WHERE rowid = ?').run(rowid);
}

export function hasImportWrites(db: Db): boolean {
  return db.prepare('SELECT 1 FROM import_writes LIMIT 1').get() !== undefined;
}

/**
 * What the import being written added after rowid `after` (of import_writes): the instants its
 * meals and sleep sessions were written at, and whether it wrote anything else that derived data
 * reads (settings). `last`: the newest rowid read, where the next call starts.
 */
export function importWritesSince(db: Db, after: number): { last: number; mealTimes: number[]; sleepEnds: number[]; settings: boolean } {
  const rows = db
    .prepare(
      `SELECT w.rowid AS rowid, w.entity AS entity, m.timestamp_ms AS mealMs, s.end_ms AS sleepEnd FROM import_writes w
       LEFT JOIN meals m ON w.entity = 'meal' AND m.id = w.record_id
       LEFT JOIN sleep_sessions s ON w.entity = 'sleep' AND s.id = w.record_id
       WHERE w.rowid > ? ORDER BY w.rowid`,
    )
    .all(after) as Array<{ rowid: number; entity: ImportWriteEntity; mealMs: number | null; sleepEnd: number | null }>;
  const out = { last: after, mealTimes: [] as number[], sleepEnds: [] as number[], settings: false };
  for (const r of rows) {
    out.last = r.rowid;
    if (r.mealMs !== null) out.mealTimes.push(r.mealMs);
    else if (r.sleepEnd !== null) out.sleepEnds.push(r.sleepEnd);
    else if (r.entity === 'settings') out.settings = true;
  }
  return out;
}
