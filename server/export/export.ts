import { z } from 'zod';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import { hasMeals, insertMeal, listAllMeals, mealExists, RECORD_SOURCES, type MealRecord } from '../db/meals.js';
import { hasSleep, insertSleep, listAllSleep, sleepExists, type SleepRecord } from '../db/sleep.js';
import { saveSettings } from '../db/settings.js';
import { getSubscription, insertSubscription, listSubscriptions } from '../db/webhook-subscriptions.js';
import { InvalidInputError } from '../domain-errors.js';
import { buildMeal, mealResource, mealType } from '../nutrition/meals.js';
import { currentSettings } from '../settings.js';
import { buildSleep, sleepResource } from '../sleep/sessions.js';
import { isValidTimeZone, isoUtc } from '../time/tz.js';
import { subscriptionResource } from '../webhooks/resources.js';
import { checkSubscriptionLimit, eventList, generateSecret, MAX_SUBSCRIPTIONS, webhookUrl } from '../webhooks/subscriptions.js';
import { csvRow } from './csv.js';

export const EXPORT_FORMAT = 'chyme.export';
export const EXPORT_FORMAT_VERSION = 1;

/** Everything the user owns, as one JSON document (webhook secrets are never exported). */
export function exportDocument(app: AppContext): Record<string, unknown> {
  const settings = currentSettings(app);
  const now = app.clock.now();
  return {
    object: 'export',
    format: EXPORT_FORMAT,
    format_version: EXPORT_FORMAT_VERSION,
    app_version: app.version,
    exported_at: isoUtc(app.clock.now()),
    settings: { timezone: settings.timezone, day_start: settings.dayStart, units: settings.units },
    meals: listAllMeals(app.db).map(mealResource),
    sleep_sessions: listAllSleep(app.db).map(sleepResource),
    webhook_subscriptions: listSubscriptions(app.db).map((sub) => subscriptionResource(sub, now)),
  };
}

export const MEALS_CSV_COLUMNS = [
  'id', 'day', 'timestamp', 'utc_offset_min', 'meal_type', 'description', 'calories', 'protein_g', 'carbs_g', 'fat_g',
  'fiber_g', 'sodium_mg', 'caffeine_mg', 'foods', 'source', 'inferred_time',
] as const;

export function mealsCsv(app: AppContext): string {
  const lines = [MEALS_CSV_COLUMNS.join(',')];
  for (const m of listAllMeals(app.db)) {
    lines.push(
      csvRow([
        m.id, m.day, isoUtc(m.timestampMs), m.utcOffsetMin, m.mealType, m.description, m.calories, m.proteinG, m.carbsG, m.fatG,
        m.fiberG, m.sodiumMg, m.caffeineMg, m.foods.map((f) => `${f.name}: ${f.calories} kcal`).join('; '), m.source, m.inferredTime,
      ]),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

// ---- Import ---------------------------------------------------------------------------------

const num = (max: number) => z.number().finite().min(0).max(max);
const isoInstant = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), {
  message: 'must be an ISO 8601 date-time',
});

const ImportMeal = z.object({
  id: z.string().regex(/^meal_[0-9A-Za-z]{1,60}$/, { message: 'must be a meal id (meal_…)' }),
  timestamp: isoInstant,
  meal_type: mealType,
  description: z.string().max(2000).default(''),
  macros: z.object({
    calories: num(10_000),
    protein_g: num(2000).nullable().optional(),
    carbs_g: num(2000).nullable().optional(),
    fat_g: num(2000).nullable().optional(),
    fiber_g: num(2000).nullable().optional(),
  }),
  micros: z.object({ sodium_mg: num(50_000).nullable().optional(), caffeine_mg: num(2000).nullable().optional() }).default({}),
  foods: z.array(z.object({ name: z.string().trim().min(1).max(200), calories: num(10_000) })).max(100).default([]),
  utc_offset_min: z.number().int().min(-14 * 60).max(14 * 60).optional(),
  calories_source: z.enum(['logged', 'foods', 'macros']).default('logged'),
  source: z.enum(RECORD_SOURCES).default('manual'),
  inferred_time: z.boolean().default(false),
  created_at: isoInstant.optional(),
  updated_at: isoInstant.optional(),
});

const ImportSleep = z.object({
  id: z.string().regex(/^sleep_[0-9A-Za-z]{1,60}$/, { message: 'must be a sleep id (sleep_…)' }),
  start: isoInstant,
  end: isoInstant,
  efficiency: z.number().min(0).max(1).nullable().optional(),
  awakenings: z.number().int().min(0).max(100).nullable().optional(),
  source: z.string().min(1).max(50).optional(),
  nap: z.boolean().default(false),
  created_at: isoInstant.optional(),
});

const ImportSubscription = z.object({
  id: z.string().regex(/^whsub_[0-9A-Za-z]{1,60}$/, { message: 'must be a subscription id (whsub_…)' }),
  url: webhookUrl,
  events: eventList,
  created_at: isoInstant.optional(),
});

/** Why an imported subscription waits disabled: its secret is never exported. */
export const IMPORTED_SUBSCRIPTION_REASON =
  'Imported from an export, which never carries signing secrets: set a new secret on your receiver and here, then enable it.';

export const ImportDocumentSchema = z
  .object({
    format: z.literal(EXPORT_FORMAT, { message: `must be "${EXPORT_FORMAT}" (a file made by Chyme's export)` }),
    format_version: z.literal(EXPORT_FORMAT_VERSION, { message: `must be ${EXPORT_FORMAT_VERSION}; this Chyme reads format version ${EXPORT_FORMAT_VERSION}` }),
    settings: z
      .object({
        timezone: z.string().refine(isValidTimeZone, { message: 'must be an IANA time zone' }),
        day_start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/),
        units: z.enum(['metric', 'imperial']),
      })
      .optional(),
    meals: z.array(ImportMeal).max(200_000).default([]),
    sleep_sessions: z.array(ImportSleep).max(50_000).default([]),
    webhook_subscriptions: z.array(ImportSubscription).max(MAX_SUBSCRIPTIONS).default([]),
  })
  .meta({ id: 'ImportDocument' });

export type ImportDocument = z.output<typeof ImportDocumentSchema>;

export interface ImportCounts {
  imported: number;
  skipped: number;
}

/**
 * Writes a validated export in one transaction: all or nothing. Records whose id exists are
 * skipped. Settings are restored only into an empty database, where they cannot re-date
 * existing meals. No per-record events are sent (a restore is not a stream of new meals).
 */
export function importDocument(
  app: AppContext,
  doc: ImportDocument,
  /** Told of each meal and sleep session added (the imports feature records them for undo). */
  onAdded?: (kind: 'meal' | 'sleep', record: MealRecord | SleepRecord) => void,
): { meals: ImportCounts; sleep_sessions: ImportCounts; webhook_subscriptions: ImportCounts; settings: 'applied' | 'kept' } {
  // Checks the schema cannot express, before anything is written.
  doc.sleep_sessions.forEach((s, i) => {
    if (Date.parse(s.end) <= Date.parse(s.start)) throw new InvalidInputError(`sleep_sessions.${i}.end`, `sleep_sessions.${i}: end must be after start.`);
  });
  const seen = new Set<string>();
  doc.meals.forEach((m, i) => {
    if (seen.has(m.id)) throw new InvalidInputError(`meals.${i}.id`, `meals.${i}: id ${m.id} appears twice in the file.`);
    seen.add(m.id);
  });

  const newSubscriptions = doc.webhook_subscriptions.filter((s) => !getSubscription(app.db, s.id)).length;
  checkSubscriptionLimit(app, newSubscriptions, 'webhook_subscriptions');

  return app.bus.write((emit) => {
    const now = app.clock.now();
    const empty = !hasMeals(app.db) && !hasSleep(app.db);
    let settingsOutcome: 'applied' | 'kept' = 'kept';
    if (doc.settings && empty) {
      saveSettings(app.db, { ...currentSettings(app), timezone: doc.settings.timezone, dayStart: doc.settings.day_start, units: doc.settings.units, updatedMs: now });
      settingsOutcome = 'applied';
    }
    const settings = currentSettings(app);
    const meals: ImportCounts = { imported: 0, skipped: 0 };
    for (const m of doc.meals) {
      if (mealExists(app.db, m.id)) {
        meals.skipped++;
        continue;
      }
      const record = buildMeal(
        settings,
        {
          timestampMs: Date.parse(m.timestamp),
          utcOffsetMin: m.utc_offset_min ?? null,
          mealType: m.meal_type,
          description: m.description,
          macros: m.macros,
          micros: m.micros,
          foods: m.foods,
          caloriesSource: m.calories_source,
          source: m.source,
          inferredTime: m.inferred_time,
        },
        { id: m.id, createdMs: m.created_at ? Date.parse(m.created_at) : now, updatedMs: m.updated_at ? Date.parse(m.updated_at) : now },
      );
      insertMeal(app.db, record);
      onAdded?.('meal', record);
      meals.imported++;
    }
    const sleep: ImportCounts = { imported: 0, skipped: 0 };
    for (const s of doc.sleep_sessions) {
      if (sleepExists(app.db, s.id)) {
        sleep.skipped++;
        continue;
      }
      const record = buildSleep(
        app,
        { startMs: Date.parse(s.start), endMs: Date.parse(s.end), efficiency: s.efficiency, awakenings: s.awakenings, source: s.source ?? 'import', nap: s.nap },
        s.id,
        s.created_at ? Date.parse(s.created_at) : now,
      );
      insertSleep(app.db, record);
      onAdded?.('sleep', record);
      sleep.imported++;
    }
    // Subscriptions come back paused with a fresh secret: the export never carried the old one,
    // and deliveries signed with a secret nobody knows would only fail.
    const subscriptions: ImportCounts = { imported: 0, skipped: 0 };
    for (const s of doc.webhook_subscriptions) {
      if (getSubscription(app.db, s.id)) {
        subscriptions.skipped++;
        continue;
      }
      insertSubscription(app.db, {
        id: s.id,
        url: s.url,
        events: s.events,
        secret: generateSecret(),
        previousSecret: null,
        previousSecretExpiresMs: null,
        status: 'disabled',
        disabledReason: IMPORTED_SUBSCRIPTION_REASON,
        disabledMs: now,
        failingSinceMs: null,
        createdMs: s.created_at ? Date.parse(s.created_at) : now,
        updatedMs: now,
      });
      subscriptions.imported++;
    }
    notifyDataChanged(app, emit);
    return { meals, sleep_sessions: sleep, webhook_subscriptions: subscriptions, settings: settingsOutcome };
  });
}
