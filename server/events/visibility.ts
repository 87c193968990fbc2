import type { Principal, Scope } from '../auth/scopes.js';

/**
 * Who may see which event or notice on the live event stream (CONTRACT §5): a principal sees only
 * the events whose resource it may read.
 *   meal.*                                     nutrition:read
 *   gut_score.created, overnight_score.created,
 *   digestion.state_changed, windows.updated   digestion:read
 *   webhook_subscription.*, webhook_delivery.* webhooks:read
 *   settings.*                                 any valid key
 *   sync.*                                     any valid key (GET /v1/sync is open to every key)
 *   database.restored (a notice)               any valid key
 *   test.ping                                  never: it is a delivery test for one URL
 * Unknown types are not streamed until they are given a scope here.
 */

const DIGESTION_EVENTS = new Set(['gut_score.created', 'overnight_score.created', 'digestion.state_changed', 'windows.updated']);
/** Opening the stream needs at least one of these. */
export const STREAM_SCOPES: Scope[] = ['nutrition:read', 'digestion:read', 'sleep:read', 'webhooks:read'];

/** The scope needed to see an event or notice of `type` on the stream; null: never streamed. */
export function streamScopeFor(type: string): Scope | 'any' | null {
  if (type.startsWith('meal.')) return 'nutrition:read';
  if (DIGESTION_EVENTS.has(type)) return 'digestion:read';
  if (type.startsWith('sleep.')) return 'sleep:read';
  if (type.startsWith('webhook_subscription.') || type.startsWith('webhook_delivery.')) return 'webhooks:read';
  if (type.startsWith('settings.')) return 'any'; // GET /v1/settings is open to any valid key
  if (type.startsWith('sync.')) return 'any';
  if (type === 'database.restored') return 'any'; // every client's view of the data is stale
  return null;
}

export function mayRead(principal: Principal, type: string): boolean {
  const scope = streamScopeFor(type);
  return scope === 'any' || (scope !== null && principal.scopes.has(scope));
}
