import { z } from 'zod';
import { notifyDataChanged, type AppContext } from '../app-context.js';
import { hasMeals, insertMeal, listAllMeals, mealExists, RECORD_SOURCES, type MealRecord } from '../db/meals.js';
import { hasSleep, insertSleep, listAllSleep, sleepExists, type SleepRecord } from '../db/sleep.js';
import { saveSettings } from '../db/settings.js';
import { getSubscription, insertSubscription, listSubscriptions } from '../db/webhook-subscriptions.js';
import { InvalidInputError } from '../domain-errors.js';
import { foodExists, insertFood, listFoodsBySource, NUTRIENT_KEYS, rebuildFoodUsage, type Nutrients } from '../db/foods.js';
import { MEAL_NUTRIENTS, type FoodEntry, type MealNutrient, type NutrientSources } from '../db/meals.js';
import { insertSavedMeal, listSavedMeals, savedMealExists } from '../db/saved-meals.js';
import { foodResource } from '../foods/foods.js';
import { invalidateFoodSearch } from '../foods/search.js';
import { buildMeal, mealNumbers, mealResource, mealType } from '../nutrition/meals.js';
import { mealNutrient, type TotalNutrient } from '../nutrition/totals.js';
import { savedMealResource } from '../nutrition/saved-meals.js';
import { ImportDocumentInvalid } from '../imports/types.js';
import { currentSettings } from '../settings.js';
import { buildSleep, sleepResource } from '../sleep/sessions.js';
import { firstIssue, ianaTimeZone, nonBlankText } from '../fields.js';
import { isoUtc } from '../time/tz.js';
import { subscriptionResource } from '../webhooks/resources.js';
import { certificateFingerprint, checkSubscriptionLimit, eventList, generateSecret, MAX_SUBSCRIPTIONS, webhookUrl } from '../webhooks/subscriptions.js';
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
    foods: listFoodsBySource(app.db, 'custom').map((f) => foodResource(f, undefined)),
    saved_meals: listSavedMeals(app.db).map(savedMealResource),
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
    // A number nobody gave is an empty cell, never 0 (nutrition/totals.ts).
    const n = mealNumbers(m);
    const v = (k: TotalNutrient) => mealNutrient(n, k);
    lines.push(
      csvRow([
        m.id, m.day, isoUtc(m.timestampMs), m.utcOffsetMin, m.mealType, m.description, v('calories'), v('protein_g'), v('carbs_g'), v('fat_g'),
        v('fiber_g'), v('sodium_mg'), v('caffeine_mg'), m.foods.map((f) => `${f.name}: ${f.calories} kcal`).join('; '), m.source, m.inferredTime,
      ]),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

// ---- Import ---------------------------------------------------------------------------------

const num = (max: number) => z.number().finite().min(0).max(max);
const nullableNum = (max: number) => num(max).nullable().optional();
const nutrient = (max: number) => num(max).nullable().default(null);

/** Why an imported subscription waits disabled: its secret is never exported. */
export const IMPORTED_SUBSCRIPTION_REASON =
  'Imported from an export, which never carries signing secrets: set a new secret on your receiver and here, then enable it.';

/**
 * The schema of an export read back, built on its first use (an import), not at start: the
 * service's first answers do not need it (docs/performance.md, "Cold start").
 */
export const ImportDocumentSchema = z.lazy(() => {
  const isoInstant = z
    .string()
    .refine((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), { message: 'must be an ISO 8601 date-time' })
    .meta({ format: 'date-time' });

  /** A food entry as exported: name and calories, and what it was built from when it came from a food. */
  const ImportFoodEntry = z.object({
    name: z.string().trim().min(1).max(200),
    calories: num(10_000),
    food_id: z.string().max(64).optional(),
    quantity: num(100_000).optional(),
    unit: z.string().min(1).max(20).optional(),
    grams: num(100_000).optional(),
    protein_g: nullableNum(2000),
    carbs_g: nullableNum(2000),
    fat_g: nullableNum(2000),
    fiber_g: nullableNum(2000),
    sugars_g: nullableNum(2000),
    sodium_mg: nullableNum(50_000),
    caffeine_mg: nullableNum(2000),
  });

  /** A custom food as exported (USDA foods are not exported: every Chyme ships them). */
  const ImportFood = z.object({
    id: z.string().regex(/^food_[0-9A-Za-z]{1,60}$/, { message: 'must be a food id (food_…)' }),
    source: z.literal('custom').default('custom'),
    name: z.string().trim().min(1).max(200),
    brand: z.string().trim().min(1).max(100).nullable().default(null),
    nutrients: z.object({
      calories: num(1000),
      protein_g: nutrient(105),
      carbs_g: nutrient(105),
      fat_g: nutrient(105),
      fiber_g: nutrient(100),
      sugars_g: nutrient(100),
      sodium_mg: nutrient(100_000),
      caffeine_mg: nutrient(100_000),
    }),
    portions: z.array(z.object({ label: z.string().trim().min(1).max(100), grams: z.number().finite().gt(0).max(5000) })).max(50).default([]),
    created_at: isoInstant.optional(),
    updated_at: isoInstant.optional(),
  });

  const ImportSavedMeal = z.object({
    id: z.string().regex(/^smeal_[0-9A-Za-z]{1,60}$/, { message: 'must be a saved meal id (smeal_…)' }),
    name: z.string().trim().min(1).max(200),
    meal_type: mealType.nullable().default(null),
    foods: z.array(ImportFoodEntry).min(1).max(100),
    created_at: isoInstant.optional(),
    updated_at: isoInstant.optional(),
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
    foods: z.array(ImportFoodEntry).max(100).default([]),
    nutrient_sources: z.record(z.enum(MEAL_NUTRIENTS), z.enum(['logged', 'foods']).nullable()).optional(),
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
    source: nonBlankText(50).optional(),
    nap: z.boolean().default(false),
    created_at: isoInstant.optional(),
  });

  const ImportSubscription = z.object({
    id: z.string().regex(/^whsub_[0-9A-Za-z]{1,60}$/, { message: 'must be a subscription id (whsub_…)' }),
    url: webhookUrl,
    events: eventList,
    tls_certificate_sha256: certificateFingerprint.nullable().optional(),
    created_at: isoInstant.optional(),
  });

  return z
    .object({
      format: z.literal(EXPORT_FORMAT, { message: `must be "${EXPORT_FORMAT}" (a file made by Chyme's export)` }),
      format_version: z.literal(EXPORT_FORMAT_VERSION, { message: `must be ${EXPORT_FORMAT_VERSION}; this Chyme reads format version ${EXPORT_FORMAT_VERSION}` }),
      settings: z
        .object({
          timezone: ianaTimeZone,
          day_start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/),
          units: z.enum(['metric', 'imperial']),
        })
        .optional(),
      foods: z.array(ImportFood).max(50_000).default([]),
      saved_meals: z.array(ImportSavedMeal).max(500).default([]),
      meals: z.array(ImportMeal).max(200_000).default([]),
      sleep_sessions: z.array(ImportSleep).max(50_000).default([]),
      webhook_subscriptions: z.array(ImportSubscription).max(MAX_SUBSCRIPTIONS).default([]),
    })
    .meta({ id: 'ImportDocument' });
});

export type ImportDocument = z.output<typeof ImportDocumentSchema>;

export interface ImportCounts {
  imported: number;
  skipped: number;
}

/**
 * Reads a Chyme export document from its JSON bytes (an empty body reads as `{}`), checked
 * against the schema: the document, or ImportDocumentInvalid saying what is wrong (the API turns
 * that into the same 400 a JSON body of any other route gets).
 */
export function readImportDocument(bytes: Uint8Array): ImportDocument {
  let input: unknown;
  try {
    input = bytes.length === 0 ? {} : JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new ImportDocumentInvalid({ kind: 'json', message: (err as Error).message });
  }
  const parsed = ImportDocumentSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ImportDocumentInvalid({ kind: 'schema', issue: firstIssue(parsed.error, input) });
}

/** What importing a document did, per kind of record. */
export interface DocumentImportCounts {
  foods: ImportCounts;
  saved_meals: ImportCounts;
  meals: ImportCounts;
  sleep_sessions: ImportCounts;
  webhook_subscriptions: ImportCounts;
  settings: 'applied' | 'kept';
}

/** Zod leaves optional fields out; this keeps an entry's JSON free of undefined holes either way. */
function storedEntry(entry: ImportDocument['meals'][number]['foods'][number]): FoodEntry {
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as unknown as FoodEntry;
}

/** An exported meal's nutrient_sources (absent in a file from before foods: values count as typed in). */
function nutrientSourcesFromExport(sources: Partial<Record<MealNutrient, 'logged' | 'foods' | null>> | undefined): NutrientSources {
  const out: NutrientSources = {};
  for (const k of MEAL_NUTRIENTS) {
    const v = sources?.[k];
    if (v) out[k] = v;
  }
  return out;
}

/** The resource reads an unknown macro as 0; nutrient_sources (null = unknown) says which are unknown. */
function knownValues<K extends MealNutrient>(
  m: { nutrient_sources?: Partial<Record<MealNutrient, string | null>> | undefined },
  keys: K[],
  given: Partial<Record<K, number | null | undefined>>,
): Partial<Record<K, number | null>> {
  const out: Partial<Record<K, number | null>> = {};
  for (const k of keys) out[k] = m.nutrient_sources && m.nutrient_sources[k] === null ? null : (given[k] ?? null);
  return out;
}

/**
 * Writes a validated export in one transaction: all or nothing. Records whose id exists are
 * skipped. Settings are restored only into an empty database, where they cannot re-date
 * existing meals. No per-record events are sent (a restore is not a stream of new meals).
 */
export function importDocument(app: AppContext, doc: ImportDocument): DocumentImportCounts {
  const steps = importDocumentSteps(app, doc);
  return app.bus.write((emit) => {
    let step = steps.next();
    while (!step.done) step = steps.next();
    // An import can add years of rows (and settings): re-derive everything rather than list them.
    notifyDataChanged(app, emit, 'everything');
    return step.value;
  });
}

/** What importDocumentSteps wrote, as it writes it: the imports feature records it (undo, and removal of an unfinished import). */
export interface DocumentWriteListener {
  /** A meal or sleep session added. */
  added?(kind: 'meal' | 'sleep', record: MealRecord | SleepRecord): void;
  /** Any record added (or, for 'settings', the settings as they were before this changed them). */
  wrote?(entity: 'meal' | 'sleep' | 'food' | 'saved_meal' | 'webhook_subscription' | 'settings', id: string): void;
}

/**
 * importDocument's writes one record at a time: every `next()` writes one record (or one step)
 * in the transaction the caller has open, so a caller may commit between any two (the imports
 * feature writes a long document in short transactions). Checks that need the whole document run
 * at the first `next()`, before anything is written.
 */
export function* importDocumentSteps(app: AppContext, doc: ImportDocument, listener: DocumentWriteListener = {}): Generator<void, DocumentImportCounts> {
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

  {
    const now = app.clock.now();
    const empty = !hasMeals(app.db) && !hasSleep(app.db);
    let settingsOutcome: 'applied' | 'kept' = 'kept';
    if (doc.settings && empty) {
      listener.wrote?.('settings', JSON.stringify(currentSettings(app)));
      saveSettings(app.db, { ...currentSettings(app), timezone: doc.settings.timezone, dayStart: doc.settings.day_start, units: doc.settings.units, updatedMs: now });
      settingsOutcome = 'applied';
    }
    const settings = currentSettings(app);
    const foods: ImportCounts = { imported: 0, skipped: 0 };
    for (const f of doc.foods) {
      if (foodExists(app.db, f.id)) {
        foods.skipped++;
        continue;
      }
      const nutrients = Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, f.nutrients[k]])) as Nutrients;
      insertFood(app.db, {
        id: f.id,
        source: 'custom',
        name: f.name,
        brand: f.brand,
        nutrients,
        portions: f.portions,
        sr28Mask: null,
        createdMs: f.created_at ? Date.parse(f.created_at) : now,
        updatedMs: f.updated_at ? Date.parse(f.updated_at) : now,
      });
      listener.wrote?.('food', f.id);
      foods.imported++;
      yield;
    }
    if (foods.imported > 0) invalidateFoodSearch(app.db);
    const savedMeals: ImportCounts = { imported: 0, skipped: 0 };
    for (const m of doc.saved_meals) {
      if (savedMealExists(app.db, m.id)) {
        savedMeals.skipped++;
        continue;
      }
      insertSavedMeal(app.db, {
        id: m.id,
        name: m.name,
        mealType: m.meal_type,
        foods: m.foods.map(storedEntry),
        createdMs: m.created_at ? Date.parse(m.created_at) : now,
        updatedMs: m.updated_at ? Date.parse(m.updated_at) : now,
      });
      listener.wrote?.('saved_meal', m.id);
      savedMeals.imported++;
      yield;
    }
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
          macros: { ...m.macros, ...knownValues(m, ['protein_g', 'carbs_g', 'fat_g', 'fiber_g'], m.macros) },
          micros: { ...m.micros, ...knownValues(m, ['sodium_mg', 'caffeine_mg'], m.micros) },
          foods: m.foods.map(storedEntry),
          caloriesSource: m.calories_source,
          source: m.source,
          inferredTime: m.inferred_time,
          nutrientSources: nutrientSourcesFromExport(m.nutrient_sources),
        },
        { id: m.id, createdMs: m.created_at ? Date.parse(m.created_at) : now, updatedMs: m.updated_at ? Date.parse(m.updated_at) : now },
      );
      insertMeal(app.db, record);
      listener.wrote?.('meal', record.id);
      listener.added?.('meal', record);
      meals.imported++;
      yield;
    }
    if (meals.imported > 0) rebuildFoodUsage(app.db);
    yield;
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
      listener.wrote?.('sleep', record.id);
      listener.added?.('sleep', record);
      sleep.imported++;
      yield;
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
        tlsPinSha256: s.tls_certificate_sha256 ?? null,
        tlsSeenSha256: null,
        tlsSeenMs: null,
        createdMs: s.created_at ? Date.parse(s.created_at) : now,
        updatedMs: now,
      });
      listener.wrote?.('webhook_subscription', s.id);
      subscriptions.imported++;
      yield;
    }
    return { foods, saved_meals: savedMeals, meals, sleep_sessions: sleep, webhook_subscriptions: subscriptions, settings: settingsOutcome };
  }
}
