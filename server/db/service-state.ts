import type { SqlDatabase as Db } from './sql-api.js';

/** Small durable facts kept between runs, e.g. the last digestive state announced. */
export function readServiceState<T>(db: Db, key: string): T | undefined {
  const r = db.prepare('SELECT value_json FROM service_state WHERE key = ?').get(key) as { value_json: string } | undefined;
  return r ? (JSON.parse(r.value_json) as T) : undefined;
}

export function writeServiceState(db: Db, key: string, value: unknown): void {
  db.prepare(
    'INSERT INTO service_state (key, value_json) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json',
  ).run(key, JSON.stringify(value));
}

export function deleteServiceState(db: Db, key: string): void {
  db.prepare('DELETE FROM service_state WHERE key = ?').run(key);
}
