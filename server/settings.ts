import { z } from 'zod';
import { notifyDataChanged, type AppContext } from './app-context.js';
import type { Emit } from './events/bus.js';
import type { Db } from './db/connection.js';
import { recomputeMealDays } from './db/meals.js';
import { recomputeSleepDays } from './db/sleep.js';
import { getSettings, saveSettings, type SettingsRecord, type Units } from './db/settings.js';
import { mealDay } from './engine/days.js';
import { newId } from './ids.js';
import { ianaTimeZone } from './fields.js';
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

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const SettingsSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('settings'),
      timezone: z.string(),
      day_start: z.string(),
      units: z.enum(['metric', 'imperial']),
      updated_at: z.string(),
    })
    .meta({ id: 'Settings' }),
);

/**
 * What GET and PATCH /v1/settings answer: the settings plus the service's clock at that moment. A
 * client's first request is usually this one, and it needs the service's "now" before it can say
 * which day "today" is (the service may run on another machine or on a test clock); the HTTP Date
 * header has only whole seconds.
 */
export const SettingsAnswerSchema = z.lazy(() =>
  SettingsSchema.unwrap().extend({
    generated_at: z.string().meta({ format: 'date-time', description: 'The service\'s clock when it answered (ISO 8601 UTC, milliseconds).' }),
  }).meta({ id: 'SettingsAnswer' }),
);

export const SettingsUpdateSchema = z.lazy(() =>
  z
    .strictObject({
      timezone: ianaTimeZone.optional(),
      day_start: z
        .string()
        .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'must be a time of day written HH:MM' })
        .optional(),
      units: z.enum(['metric', 'imperial']).optional(),
    })
    .meta({ id: 'SettingsUpdate' }),
);

export function settingsResource(s: SettingsRecord): Record<string, unknown> {
  return { object: 'settings', timezone: s.timezone, day_start: s.dayStart, units: s.units, updated_at: isoUtc(s.updatedMs) };
}

/** The answer of GET and PATCH /v1/settings: the resource stamped with the service's `nowMs`. */
export function settingsAnswer(s: SettingsRecord, nowMs: number): Record<string, unknown> {
  return { ...settingsResource(s), generated_at: new Date(nowMs).toISOString() };
}

/** Saves new settings and re-derives what depends on them (meal days after a day_start change). */
/** A validated update body as the settings it changes. */
export function settingsPatchFrom(body: z.output<typeof SettingsUpdateSchema>): SettingsPatch {
  const patch: SettingsPatch = {};
  if (body.timezone !== undefined) patch.timezone = body.timezone;
  if (body.day_start !== undefined) patch.dayStart = body.day_start;
  if (body.units !== undefined) patch.units = body.units;
  return patch;
}

export type SettingsPatch = Partial<Pick<SettingsRecord, 'timezone' | 'dayStart' | 'units'>>;

export function updateSettings(app: AppContext, patch: SettingsPatch): SettingsRecord {
  return app.bus.write((emit) => {
    const before = currentSettings(app);
    return storeSettings(app, emit, before, { ...before, ...patch, updatedMs: app.clock.now() });
  });
}

/**
 * Saves settings inside a write and re-dates what they re-date. Changes made here and settings
 * that came from another device (the sync projector) take this one path.
 */
export function storeSettings(app: AppContext, emit: Emit, before: SettingsRecord, next: SettingsRecord): SettingsRecord {
  const changed = (['timezone', 'dayStart', 'units'] as const).filter((k) => next[k] !== before[k]);
  if (changed.length === 0 && next.userId === before.userId) return before;
  saveSettings(app.db, next);
  if (changed.length === 0) return next;
  const names = { timezone: 'timezone', dayStart: 'day_start', units: 'units' } as const;
  emit('settings.updated', settingsResource(next), {
    previousAttributes: Object.fromEntries(changed.map((k) => [names[k], before[k]])),
  });
  if (next.dayStart !== before.dayStart) {
    recomputeMealDays(app.db, (timestamp, utcOffsetMin) => mealDay({ timestamp, utcOffsetMin }, next));
  }
  const redated = next.dayStart !== before.dayStart || next.timezone !== before.timezone;
  if (redated) {
    recomputeSleepDays(app.db, (endMs) => dayOf(endMs, next.timezone, parseClock(next.dayStart)));
  }
  // Units change no derived data; a zone or day start re-dates every day.
  notifyDataChanged(app, emit, redated ? 'everything' : {});
  return next;
}

