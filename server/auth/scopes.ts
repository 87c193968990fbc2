/** What an API key may do (CONTRACT §5), and who is calling. */

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

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export interface Principal {
  kind: 'api_key' | 'session';
  /** api key id, or "session" for the browser UI. */
  id: string;
  scopes: ReadonlySet<Scope>;
}
