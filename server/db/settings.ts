import type { SqlDatabase as Db } from './sql-api.js';

export type Units = 'metric' | 'imperial';

export interface SettingsRecord {
  timezone: string;
  dayStart: string;
  units: Units;
  userId: string;
  updatedMs: number;
}

interface SettingsRow {
  timezone: string;
  day_start: string;
  units: Units;
  user_id: string;
  updated_ms: number;
}

export function getSettings(db: Db): SettingsRecord | undefined {
  const r = db.prepare('SELECT timezone, day_start, units, user_id, updated_ms FROM settings WHERE id = 1').get() as
    | SettingsRow
    | undefined;
  return r && { timezone: r.timezone, dayStart: r.day_start, units: r.units, userId: r.user_id, updatedMs: r.updated_ms };
}

export function saveSettings(db: Db, s: SettingsRecord): void {
  db.prepare(
    `INSERT INTO settings (id, timezone, day_start, units, user_id, updated_ms) VALUES (1, @timezone, @dayStart, @units, @userId, @updatedMs)
     ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, timezone = excluded.timezone, day_start = excluded.day_start, units = excluded.units,
       updated_ms = excluded.updated_ms`,
  ).run(s);
}
