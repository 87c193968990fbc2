import type { SqlDatabase as Db } from './sql-api.js';
import type { SortPosition } from './meals.js';

export interface SleepRecord {
  id: string;
  startMs: number;
  endMs: number;
  /** The user's day the sleep ended on (its overnight score's date). */
  day: string;
  efficiency: number | null;
  awakenings: number | null;
  source: string;
  /** A nap: kept, but it makes no overnight score. */
  nap: boolean;
  createdMs: number;
}

interface SleepRow {
  id: string;
  start_ms: number;
  end_ms: number;
  day: string;
  efficiency: number | null;
  awakenings: number | null;
  source: string;
  nap: number;
  created_ms: number;
}

const COLUMNS = 'id, start_ms, end_ms, day, efficiency, awakenings, source, nap, created_ms';

function fromRow(r: SleepRow): SleepRecord {
  return {
    id: r.id,
    startMs: r.start_ms,
    endMs: r.end_ms,
    day: r.day,
    efficiency: r.efficiency,
    awakenings: r.awakenings,
    source: r.source,
    nap: r.nap === 1,
    createdMs: r.created_ms,
  };
}

export function insertSleep(db: Db, s: SleepRecord): void {
  db.prepare(`INSERT INTO sleep_sessions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    s.id,
    s.startMs,
    s.endMs,
    s.day,
    s.efficiency,
    s.awakenings,
    s.source,
    s.nap ? 1 : 0,
    s.createdMs,
  );
}

export function getSleep(db: Db, id: string): SleepRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM sleep_sessions WHERE id = ?`).get(id) as SleepRow | undefined;
  return r && fromRow(r);
}

export function deleteSleep(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM sleep_sessions WHERE id = ?').run(id).changes > 0;
}

/** A session that overlaps [startMs, endMs), if any. */
export function findOverlappingSleep(db: Db, startMs: number, endMs: number): SleepRecord | undefined {
  const r = db
    .prepare(`SELECT ${COLUMNS} FROM sleep_sessions WHERE start_ms < ? AND end_ms > ? ORDER BY start_ms LIMIT 1`)
    .get(endMs, startMs) as SleepRow | undefined;
  return r && fromRow(r);
}

export function sleepPosition(db: Db, id: string): SortPosition | undefined {
  const r = db.prepare('SELECT end_ms, id FROM sleep_sessions WHERE id = ?').get(id) as { end_ms: number; id: string } | undefined;
  return r && { timestampMs: r.end_ms, id: r.id };
}

/** One page of sessions newest first (by end), for days in [startDay, endDay]. */
export function listSleepPage(
  db: Db,
  q: { startDay: string; endDay: string; after?: SortPosition | undefined; limit: number },
): { sessions: SleepRecord[]; hasMore: boolean } {
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM sleep_sessions WHERE day >= @startDay AND day <= @endDay
       ${q.after ? 'AND (end_ms < @afterTs OR (end_ms = @afterTs AND id < @afterId))' : ''}
       ORDER BY end_ms DESC, id DESC LIMIT @take`,
    )
    .all({ startDay: q.startDay, endDay: q.endDay, afterTs: q.after?.timestampMs ?? null, afterId: q.after?.id ?? null, take: q.limit + 1 }) as SleepRow[];
  return { sessions: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
}

/** Sessions that ended in [fromMs, toMs), oldest first. */
export function listSleepEndingBetween(db: Db, fromMs: number, toMs: number): SleepRecord[] {
  return (
    db.prepare(`SELECT ${COLUMNS} FROM sleep_sessions WHERE end_ms >= ? AND end_ms < ? ORDER BY end_ms ASC, id ASC`).all(fromMs, toMs) as SleepRow[]
  ).map(fromRow);
}

export function listAllSleep(db: Db): SleepRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM sleep_sessions ORDER BY end_ms ASC, id ASC`).all() as SleepRow[]).map(fromRow);
}

export function sleepExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM sleep_sessions WHERE id = ?').get(id) !== undefined;
}

/** Re-derives every session's day (after a settings change). */
export function recomputeSleepDays(db: Db, dayFor: (endMs: number) => string): void {
  const rows = db.prepare('SELECT id, end_ms, day FROM sleep_sessions').all() as Pick<SleepRow, 'id' | 'end_ms' | 'day'>[];
  const update = db.prepare('UPDATE sleep_sessions SET day = ? WHERE id = ?');
  for (const r of rows) {
    const day = dayFor(r.end_ms);
    if (day !== r.day) update.run(day, r.id);
  }
}

/** True when at least one sleep session is stored. */
export function hasSleep(db: Db): boolean {
  return db.prepare('SELECT 1 FROM sleep_sessions LIMIT 1').get() !== undefined;
}
