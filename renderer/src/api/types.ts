/**
 * Shapes of the `/v1` resources, inferred from the service's own zod schemas: the same schemas
 * validate requests, generate /v1/openapi.json and type these, so the renderer cannot drift from
 * the API. Only types cross over (`import type`, erased from the bundle); the two value lists the
 * forms need (events, scopes) come from server modules that have no imports at all.
 */
import type { z } from 'zod';
import type { McpSetupSchema } from '../../../server/api/mcp.js';
import type { ImportResultSchema } from '../../../server/api/routes/export.js';
import type { SnapshotSchema } from '../../../server/api/routes/snapshot.js';
import type { DeletedSchema, ErrorSchema, listOf } from '../../../server/api/schemas.js';
import type { ApiKeyCreateSchema, ApiKeySchema } from '../../../server/auth/keys.js';
import type {
  DailyScoreSchema,
  DigestiveStateSchema,
  InsightSchema,
  OvernightScoreSchema,
  TimelineEntrySchema,
  WindowsSchema,
} from '../../../server/digestion/resources.js';
import type { EventType } from '../../../server/events/types.js';
import type { FoodCreateSchema, FoodEntrySchema, FoodSchema, FoodSourcesSchema, FoodUpdateSchema } from '../../../server/foods/schemas.js';
import type { ImportSchema } from '../../../server/imports/schema.js';
import type { MealCreateSchema, MealSchema, MealUpdateSchema } from '../../../server/nutrition/meals.js';
import type { SavedMealCreateSchema, SavedMealSchema } from '../../../server/nutrition/saved-meals.js';
import type { SettingsAnswerSchema, SettingsSchema, SettingsUpdateSchema } from '../../../server/settings.js';
import type { SleepCreateSchema, SleepSessionSchema } from '../../../server/sleep/sessions.js';
import type { WebhookNotice } from '../../../server/webhooks/dispatcher.js';
import type { WebhookAttemptSchema, WebhookDeliverySchema, WebhookSubscriptionSchema, WebhookTestSchema } from '../../../server/webhooks/resources.js';
import type { WebhookCreateSchema, WebhookUpdateSchema } from '../../../server/webhooks/subscriptions.js';
import type { BackupSchema, BackupSettingsSchema, BackupStatusSchema } from '../../../server/backups/resources.js';
import type { MqttSettingsSchema, MqttUpdateSchema } from '../../../server/mqtt/config.js';
import type { MqttTestSchema } from '../../../server/api/routes/mqtt.js';
import type { SyncJoinSchema, SyncPairingSchema, SyncSetupSchema, SyncStatusSchema } from '../../../server/sync/schemas.js';

export { SCOPE_DESCRIPTIONS, SCOPES, type Scope } from '../../../server/auth/scopes.js';
export { SUBSCRIBABLE_EVENT_TYPES as WEBHOOK_EVENTS, type EventType } from '../../../server/events/types.js';

/** A page of a list: the service's list envelope around items of type T. */
export type List<T> = Omit<z.output<ReturnType<typeof listOf>>, 'data'> & { data: T[] };
export type Deleted = z.output<typeof DeletedSchema>;
export type ApiErrorBody = z.output<typeof ErrorSchema>;

export type Meal = z.output<typeof MealSchema>;
export type MealType = Meal['meal_type'];
/** Body of POST /v1/nutrition/meals. */
export type MealInput = z.input<typeof MealCreateSchema>;
/** Body of PATCH /v1/nutrition/meals/{id}. */
export type MealPatch = z.input<typeof MealUpdateSchema>;

/**
 * A food entry of a meal or a saved meal as stored and returned: `name` and `calories` always; an
 * entry built from the food table also names its food, amount and the nutrients computed from it.
 */
export type Food = z.output<typeof FoodEntrySchema>;
/**
 * A food entry as sent: a food of the table and an amount (the service computes its numbers), or an
 * entry with its calories, kept as sent: free text (name + calories) or a stored entry sent back
 * (re-log, copy, undo), which keeps the numbers it was logged with.
 */
export type FoodEntryInput = NonNullable<MealInput['foods']>[number];

/** A food of the table (`usda_sr`) or one of the person's own (`custom`). */
export type NutritionFood = z.output<typeof FoodSchema>;
/** Per 100 g; null = unknown (never a silent 0). */
export type FoodNutrients = NutritionFood['nutrients'];
export type NutrientKey = keyof FoodNutrients;
export type FoodPortion = NutritionFood['portions'][number];
/** Body of POST /v1/foods. */
export type FoodInput = z.input<typeof FoodCreateSchema>;
/** Body of PATCH /v1/foods/{id} (null clears a brand or a nutrient). */
export type FoodPatch = z.input<typeof FoodUpdateSchema>;
/** GET /v1/foods/sources: where the food table comes from, under what licence. */
export type FoodSources = z.output<typeof FoodSourcesSchema>;

export type SavedMeal = z.output<typeof SavedMealSchema>;
/** Body of POST /v1/nutrition/saved_meals. */
export type SavedMealInput = z.input<typeof SavedMealCreateSchema>;

export type DailyScore = z.output<typeof DailyScoreSchema>;
export type ScoreState = DailyScore['score_state'];
export type ComponentName = keyof DailyScore['components'];
export type Contribution = DailyScore['components'][ComponentName]['contribution'];
export type OvernightScore = z.output<typeof OvernightScoreSchema>;
export type DigestiveState = z.output<typeof DigestiveStateSchema>;
export type TimelineEntry = z.output<typeof TimelineEntrySchema>;
export type Windows = z.output<typeof WindowsSchema>;
export type Insight = z.output<typeof InsightSchema>;
export type Snapshot = z.output<typeof SnapshotSchema>;

export type SleepSession = z.output<typeof SleepSessionSchema>;
export type SleepInput = z.input<typeof SleepCreateSchema>;

export type Settings = z.output<typeof SettingsSchema>;
/** GET and PATCH /v1/settings: the settings and the service's clock when it answered. */
export type SettingsAnswer = z.output<typeof SettingsAnswerSchema>;
export type SettingsPatch = z.input<typeof SettingsUpdateSchema>;

export type ApiKey = z.output<typeof ApiKeySchema>;
export type ApiKeyInput = z.input<typeof ApiKeyCreateSchema>;

export type WebhookSubscription = z.output<typeof WebhookSubscriptionSchema>;
export type WebhookInput = z.input<typeof WebhookCreateSchema>;
export type WebhookPatch = z.input<typeof WebhookUpdateSchema>;
export type WebhookTest = z.output<typeof WebhookTestSchema>;
export type WebhookDelivery = z.output<typeof WebhookDeliverySchema>;
export type DeliveryAttempt = z.output<typeof WebhookAttemptSchema>;

export type ImportResult = z.output<typeof ImportResultSchema>;

/** An import of other apps' exports (POST/GET/DELETE /v1/imports). */
type ImportResource = z.output<typeof ImportSchema>;
/**
 * The schema leaves a dry run's samples as plain objects (they are built by the meal and sleep
 * mappers, whose resources these are); the renderer reads them as those resources.
 */
export type Import = Omit<ImportResource, 'samples'> & { samples?: { meals: Meal[]; sleep_sessions: SleepSession[] } };
export type ImportWarning = Import['warnings'][number];

/**
 * What the live stream delivers: the service's events, its live webhook notices, and the
 * renderer's own 'stream.opened' when a connection (re)opens.
 */
export type StreamEventType = EventType | WebhookNotice['type'] | 'database.restored' | 'stream.opened';

/**
 * An event as `/v1/events/stream` carries it (the envelope webhooks carry too, CONTRACT §7). The
 * service builds the envelope without a schema (`eventEnvelope` in server/events/bus.ts), so only
 * its types come from the server here.
 */
export interface ServiceEvent {
  object: 'event';
  id: string;
  type: StreamEventType;
  created: string;
  data: { object: Record<string, unknown> & { object?: string }; previous_attributes?: Record<string, unknown> };
}

/** The meal types in the order forms offer them (checked against the schema's). */
export const MEAL_TYPES = ['breakfast', 'lunch', 'dinner', 'snack'] as const satisfies readonly MealType[];
/** The four components of a daily score in the order the Gut score screen shows them (checked against the schema's). */
export const COMPONENT_NAMES = ['overnight', 'fasted_ratio', 'regularity', 'circadian'] as const satisfies readonly ComponentName[];

// Both lists must name every member: a type the schema gains and a list lacks fails to compile.
type Missing<All, Listed> = Exclude<All, Listed>;
const everyMealType: Missing<MealType, (typeof MEAL_TYPES)[number]> extends never ? true : never = true;
const everyComponent: Missing<ComponentName, (typeof COMPONENT_NAMES)[number]> extends never ? true : never = true;
void everyMealType;
void everyComponent;

export type Backup = z.output<typeof BackupSchema>;
export type BackupStatus = z.output<typeof BackupStatusSchema>;
export type BackupSettings = z.output<typeof BackupSettingsSchema>;

export type McpServer = z.output<typeof McpSetupSchema>;
export type MqttSettings = z.output<typeof MqttSettingsSchema>;
export type MqttSettingsUpdate = z.input<typeof MqttUpdateSchema>;
export type MqttTest = z.output<typeof MqttTestSchema>;

/** GET /v1/sync: whether this device syncs, through which relay, with which devices. */
export type SyncStatus = z.output<typeof SyncStatusSchema>;
export type SyncDevice = SyncStatus['peers'][number];
export type SyncConflict = SyncStatus['conflicts'][number];
/** Body of POST /v1/sync/setup. */
export type SyncSetup = z.input<typeof SyncSetupSchema>;
/** Body of POST /v1/sync/join. */
export type SyncJoin = z.input<typeof SyncJoinSchema>;
/** GET /v1/sync/pairing-code. */
export type SyncPairing = z.output<typeof SyncPairingSchema>;
