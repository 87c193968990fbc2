/**
 * The event vocabulary, with no dependencies: the service, its webhooks and the renderer (which
 * names the events in its webhook form) all read it from here.
 */

/** Every event the service announces: the spec's Events table, plus meal.deleted (issue 4), food.* (issue 8), settings.updated and sync.* (issue 22). */
export const EVENT_TYPES = [
  'meal.created',
  'meal.updated',
  'meal.deleted',
  'food.created',
  'food.updated',
  'food.deleted',
  'gut_score.created',
  'overnight_score.created',
  'digestion.state_changed',
  'windows.updated',
  'settings.updated',
  'sync.device_joined',
  'sync.device_left',
  'sync.webhook_host_changed',
  'sync.status_changed',
  'test.ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The events a webhook subscription may list: all but the test ping, which only "Send test" sends. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter((t): t is Exclude<EventType, 'test.ping'> => t !== 'test.ping');
