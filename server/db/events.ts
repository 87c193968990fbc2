import type { SqlDatabase as Db } from './sql-api.js';

export interface EventRecord {
  seq: number;
  id: string;
  type: string;
  createdMs: number;
  data: { object: unknown; previous_attributes?: unknown };
}

interface EventRow {
  seq: number;
  id: string;
  type: string;
  created_ms: number;
  data_json: string;
}

function fromRow(r: EventRow): EventRecord {
  return { seq: r.seq, id: r.id, type: r.type, createdMs: r.created_ms, data: JSON.parse(r.data_json) as EventRecord['data'] };
}

export function insertEvent(db: Db, e: Omit<EventRecord, 'seq'>): EventRecord {
  const info = db
    .prepare('INSERT INTO events (id, type, created_ms, data_json) VALUES (?, ?, ?, ?)')
    .run(e.id, e.type, e.createdMs, JSON.stringify(e.data));
  return { ...e, seq: Number(info.lastInsertRowid) };
}

export function eventExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM events WHERE id = ?').get(id) !== undefined;
}

export function getEvent(db: Db, id: string): EventRecord | undefined {
  const r = db.prepare('SELECT seq, id, type, created_ms, data_json FROM events WHERE id = ?').get(id) as EventRow | undefined;
  return r && fromRow(r);
}

/** Events after a sequence number, oldest first (SSE resume via Last-Event-ID). */
export function listEventsAfter(db: Db, seq: number, limit: number): EventRecord[] {
  return (
    db.prepare('SELECT seq, id, type, created_ms, data_json FROM events WHERE seq > ? ORDER BY seq ASC LIMIT ?').all(seq, limit) as EventRow[]
  ).map(fromRow);
}

/** The sequence number of the newest event (0 when there is none). */
export function latestEventSeq(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events').get() as { seq: number }).seq;
}
