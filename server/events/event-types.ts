/**
 * Every event the service announces: the spec's Events table, plus meal.deleted (issue 4) and
 * settings.updated. A module of its own with no imports, so the renderer's bundle can take the
 * list as it is (the webhook form offers these).
 */
export const EVENT_TYPES = [
  'meal.created',
  'meal.updated',
  'meal.deleted',
  'gut_score.created',
  'overnight_score.created',
  'digestion.state_changed',
  'windows.updated',
  'settings.updated',
  'test.ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The events a webhook subscription may list: all but the test ping, which only "Send test" sends. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter((t): t is Exclude<EventType, 'test.ping'> => t !== 'test.ping');
