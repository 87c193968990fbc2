import { z } from 'zod';
import { DailyScoreSchema, DigestiveStateSchema, OvernightScoreSchema, WindowsSchema } from '../digestion/resources.js';
import type { EventType } from '../events/types.js';
import { isoDateTime } from '../fields.js';
import { MealSchema } from '../nutrition/meals.js';
import { SettingsSchema } from '../settings.js';
import { FoodSchema } from '../foods/schemas.js';

/**
 * The bodies Chyme POSTs to subscribers, one schema per event type, for the `webhooks` section of
 * the OpenAPI document. Every body is the event envelope of CONTRACT §7; `data.object` is the
 * resource the event is about, described by the same schemas as the API's own responses.
 */

function envelope<T extends EventType>(type: T, object: z.ZodType, id: string, withPrevious = false) {
  return z
    .object({
      object: z.literal('event'),
      id: z.string().meta({ description: 'The event id (evt_…); the same event sent to several subscriptions keeps it.' }),
      type: z.literal(type),
      created: isoDateTime.meta({ description: 'When the event happened.' }),
      webhook_delivery_id: z
        .string()
        .meta({ description: 'Unique per delivery (whdel_…), the same on every retry: deduplicate on it. Also sent as X-Webhook-Delivery-Id.' }),
      data: z.object({
        object: object,
        ...(withPrevious
          ? { previous_attributes: z.record(z.string(), z.unknown()).optional().meta({ description: 'Earlier values of the fields that changed.' }) }
          : {}),
      }),
    })
    .meta({ id });
}

/** One document per event type: what the OpenAPI document lists under `webhooks`. */
export type PayloadDocs = Record<string, { summary: string; schema: z.ZodType }>;

let payloads: PayloadDocs | undefined;

/**
 * Built on first use (the OpenAPI document asks), not at import: a cold start of the service
 * answers its first requests without them (docs/performance.md, "Cold start").
 */
export function payloadSchemas(): PayloadDocs {
  if (payloads) return payloads;
  const PingObject = z.object({
    object: z.literal('webhook_ping'),
    subscription_id: z.string(),
    message: z.string(),
  });

  const DeletedMealObject = MealSchema.unwrap().extend({ deleted: z.literal(true) });
  const DeletedFoodObject = FoodSchema.unwrap().extend({ deleted: z.literal(true) });

  payloads = {
    'meal.created': { summary: 'A meal was logged', schema: envelope('meal.created', MealSchema, 'MealCreatedEvent') },
    'meal.updated': {
      summary: 'A meal was edited (previous_attributes holds the old values)',
      schema: envelope('meal.updated', MealSchema, 'MealUpdatedEvent', true),
    },
    'meal.deleted': { summary: 'A meal was deleted (the last state of the meal, deleted: true)', schema: envelope('meal.deleted', DeletedMealObject, 'MealDeletedEvent') },
    'food.created': { summary: 'A custom food was created', schema: envelope('food.created', FoodSchema, 'FoodCreatedEvent') },
    'food.updated': {
      summary: 'A custom food was edited (previous_attributes holds the old values)',
      schema: envelope('food.updated', FoodSchema, 'FoodUpdatedEvent', true),
    },
    'food.deleted': { summary: 'A custom food was deleted (its last state, deleted: true)', schema: envelope('food.deleted', DeletedFoodObject, 'FoodDeletedEvent') },
    'gut_score.created': { summary: 'A new daily gut score', schema: envelope('gut_score.created', DailyScoreSchema, 'GutScoreCreatedEvent') },
    'overnight_score.created': {
      summary: 'A new overnight score',
      schema: envelope('overnight_score.created', OvernightScoreSchema, 'OvernightScoreCreatedEvent'),
    },
    'digestion.state_changed': {
      summary: 'The digestive state moved (previous_attributes.state holds the state it left)',
      schema: envelope('digestion.state_changed', DigestiveStateSchema, 'DigestionStateChangedEvent', true),
    },
    'windows.updated': { summary: 'The digestion windows were recalculated', schema: envelope('windows.updated', WindowsSchema, 'WindowsUpdatedEvent') },
    'settings.updated': {
      summary: 'Settings changed (time zone, day start or units; previous_attributes holds the old values)',
      schema: envelope('settings.updated', SettingsSchema, 'SettingsUpdatedEvent', true),
    },
    'test.ping': { summary: 'Sent by POST /v1/webhooks/{id}/test', schema: envelope('test.ping', PingObject, 'TestPingEvent') },
  };
  return payloads;
}
