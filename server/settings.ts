import { notifyDataChanged, type AppContext } from './app-context.js';
import type { Db } from './db/connection.js';
import { recomputeMealDays } from './db/meals.js';
import { recomputeSleepDays } from './db/sleep.js';
import { getSettings, saveSettings, type SettingsRecord, type Units } from './db/settings.js';
import { newId } from './ids.js';
import { dayOf, isoUtc, parseClock, systemTimeZone } from './time/tz.js';

export type { SettingsRecord, Units };

/** Creates the settings row on first start; `timezone` (from --tz) overrides the stored zone. */
export function initSettings(db: Db, nowMs: number, timezone?: string): SettingsRecord {
  const existing = getSettings(db);
  if (existing && (!timezone || timezone === existing.timezone)) return existing;
  const next: SettingsRecord = existing
    ? { ...existing, timezone: timezone!, updatedMs: nowMs }
    : {
        timezone: timezone ?? systemTimeZone(),
        dayStart: '00:00',
        units: 'metric',
        userId: newId('key').replace(/^key_/, 'user_'),
        updatedMs: nowMs,
      };
  saveSettings(db, next);
  return next;
}

export function currentSettings(app: AppContext): SettingsRecord {
  const s = getSettings(app.db);
  if (!s) throw new Error('settings are initialised at start-up');
  return s;
}

/**
 * The user's day a meal belongs to, from the offset it was eaten at: the local date, or the
 * previous one when the local time is before day_start. No zone lookup is needed, so a day
 * logged while travelling stays that day.
 */
export function mealDay(timestampMs: number, utcOffsetMin: number, dayStart: string): string {
  const local = new Date(timestampMs + (utcOffsetMin - parseClock(dayStart)) * 60_000);
  return local.toISOString().slice(0, 10);
}

/** Today for the user (the day containing now, in their zone and day start). */
export function today(app: AppContext, settings = currentSettings(app)): string {
  return dayOf(app.clock.now(), settings.timezone, parseClock(settings.dayStart));
}

export function settingsResource(s: SettingsRecord): Record<string, unknown> {
  return { object: 'settings', timezone: s.timezone, day_start: s.dayStart, units: s.units, updated_at: isoUtc(s.updatedMs) };
}

/** Saves new settings and re-derives what depends on them (meal days after a day_start change). */
export function updateSettings(app: AppContext, patch: Partial<Pick<SettingsRecord, 'timezone' | 'dayStart' | 'units'>>): SettingsRecord {
  return app.bus.write((emit) => {
    const before = currentSettings(app);
    const next: SettingsRecord = { ...before, ...patch, updatedMs: app.clock.now() };
    const changed = (['timezone', 'dayStart', 'units'] as const).filter((k) => next[k] !== before[k]);
    if (changed.length === 0) return before;
    saveSettings(app.db, next);
    const names = { timezone: 'timezone', dayStart: 'day_start', units: 'units' } as const;
    emit('settings.updated', settingsResource(next), {
      previousAttributes: Object.fromEntries(changed.map((k) => [names[k], before[k]])),
    });
    if (next.dayStart !== before.dayStart) {
      recomputeMealDays(app.db, (ts, offset) => mealDay(ts, offset, next.dayStart));
    }
    const redated = next.dayStart !== before.dayStart || next.timezone !== before.timezone;
    if (redated) {
      recomputeSleepDays(app.db, (endMs) => dayOf(endMs, next.timezone, parseClock(next.dayStart)));
    }
    // Units change no derived data; a zone or day start re-dates every day.
    notifyDataChanged(app, emit, redated ? 'everything' : {});
    return next;
  });
}

