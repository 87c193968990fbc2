/**
 * What an API key may do (CONTRACT §5), and who is calling. No imports: the renderer bundles the
 * scope list and descriptions for its API key form.
 */

export type Scope =
  | 'nutrition:read'
  | 'nutrition:write'
  | 'digestion:read'
  | 'sleep:read'
  | 'sleep:write'
  | 'webhooks:read'
  | 'webhooks:write'
  | 'admin';

export const SCOPES: readonly Scope[] = [
  'nutrition:read',
  'nutrition:write',
  'digestion:read',
  'sleep:read',
  'sleep:write',
  'webhooks:read',
  'webhooks:write',
  'admin',
];

/** What each scope allows, in words (the API key form shows these beside the scopes). */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'nutrition:read': 'read meals',
  'nutrition:write': 'log, edit and delete meals',
  'digestion:read': 'scores, state, timeline, windows, insights',
  'sleep:read': 'read sleep sessions',
  'sleep:write': 'log and delete sleep',
  'webhooks:read': 'see webhooks and deliveries',
  'webhooks:write': 'manage and test webhooks',
  // Reading settings needs no scope: every client that shows days needs the zone and day start.
  admin: 'API keys, changing settings, export and import',
};

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export interface Principal {
  kind: 'api_key' | 'session';
  /** api key id, or "session" for the browser UI. */
  id: string;
  scopes: ReadonlySet<Scope>;
}
