/**
 * What an API key may do. A module of its own with no imports, so the renderer's bundle can take
 * the list as it is (the API key form offers these, with the same descriptions as the docs).
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

/** Each scope and what it allows, in the order forms and docs list them. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'nutrition:read': 'read meals',
  'nutrition:write': 'log, edit and delete meals',
  'digestion:read': 'scores, state, timeline, windows, insights',
  'sleep:read': 'read sleep sessions',
  'sleep:write': 'log and delete sleep',
  'webhooks:read': 'see webhooks and deliveries',
  'webhooks:write': 'manage and test webhooks',
  admin: 'API keys, settings, export and import',
};

export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as readonly Scope[];
