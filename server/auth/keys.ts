import { createHash } from 'node:crypto';
import { z } from 'zod';
import { relaxedCommit, type Db } from '../db/connection.js';
import { findActiveKeyByHash, getApiKey, insertApiKey, revokeApiKey, touchApiKey, type ActiveKey, type ApiKeyRecord } from '../db/api-keys.js';
import { NotFoundError } from '../domain-errors.js';
import { isoUtc } from '../time/tz.js';
import { insertUiToken, consumeLaunchToken, isLiveSession } from '../db/ui-tokens.js';
import { newId, randomToken } from '../ids.js';
import { nonBlankText } from '../fields.js';
import { isScope, SCOPES, type Principal, type Scope } from './scopes.js';

/**
 * API keys and browser sessions. Secrets are 32+ random base62 characters, so a single SHA-256
 * is enough to store them safely (a slow hash guards low-entropy passwords, not random keys).
 * The secret is returned once, at creation, and never stored.
 */

export const KEY_PREFIX = 'chy_';
const SECRET_CHARS = 40;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface CreatedKey {
  key: ApiKeyRecord;
  secret: string;
}

export function createApiKey(db: Db, opts: { name: string; scopes: Scope[]; nowMs: number; internal?: boolean }): CreatedKey {
  const secret = KEY_PREFIX + randomToken(SECRET_CHARS);
  const key: ApiKeyRecord = {
    id: newId('key'),
    name: opts.name,
    scopes: [...new Set(opts.scopes)].sort(),
    prefix: secret.slice(0, KEY_PREFIX.length + 6),
    createdMs: opts.nowMs,
    lastUsedMs: null,
    revokedMs: null,
    internal: opts.internal ?? false,
  };
  insertApiKey(db, key, hashSecret(secret));
  return { key, secret };
}

/**
 * The principal a bearer secret stands for, or undefined for an unknown or revoked key.
 * `stampLastUse` false leaves the last-used stamp for a later request (while an import's worker
 * holds the write lock, a read must not wait for it just to stamp).
 */
export function authenticateKey(db: Db, secret: string, nowMs: number, stampLastUse = true): Principal | undefined {
  if (!secret.startsWith(KEY_PREFIX) || secret.length > 200) return undefined;
  const key = findActiveKeyByHash(db, hashSecret(secret));
  if (!key) return undefined;
  try {
    if (stampLastUse) touchApiKey(db, key.id, nowMs); // skips the write while the stamp is under a minute old
  } catch {
    // The last-used stamp is a convenience: a full, read-only or busy database must not turn a
    // read into a failure (a write then fails with its own 503).
  }
  return principalOf(key);
}

/**
 * One principal per remembered key: the key memo hands out the same frozen record for a secret
 * until a key changes, so its principal (and scope set) need not be rebuilt on every request.
 */
const principals = new WeakMap<ActiveKey, Principal>();
function principalOf(key: ActiveKey): Principal {
  let principal = principals.get(key);
  if (!principal) {
    principal = Object.freeze({ kind: 'api_key', id: key.id, scopes: new Set(key.scopes.filter(isScope)) });
    principals.set(key, principal);
  }
  return principal;
}

// ---- Browser mode --------------------------------------------------------------------------

export const SESSION_COOKIE = 'chyme_session';
const LAUNCH_TOKEN_TTL_MS = 24 * 3600_000;
export const SESSION_TTL_MS = 30 * 24 * 3600_000;

/** A one-time token for the `App:` URL that `chyme serve` prints. */
export function createLaunchToken(db: Db, nowMs: number): string {
  const token = randomToken(32);
  // Not waiting for the disk (`chyme serve` makes one on every start): a power cut that undoes it
  // has ended the server it opens too; `chyme link` gives another.
  relaxedCommit(db, () => insertUiToken(db, hashSecret(token), 'launch', nowMs, nowMs + LAUNCH_TOKEN_TTL_MS));
  return token;
}

/** Exchanges a launch token (once) for a session token, or returns undefined. */
export function exchangeLaunchToken(db: Db, token: string, nowMs: number): string | undefined {
  return db.transaction(() => {
    if (!consumeLaunchToken(db, hashSecret(token), nowMs)) return undefined;
    const session = randomToken(40);
    insertUiToken(db, hashSecret(session), 'session', nowMs, nowMs + SESSION_TTL_MS);
    return session;
  })();
}

/** The browser UI acts for the owner of the machine: every scope. */
export function authenticateSession(db: Db, sessionToken: string, nowMs: number): Principal | undefined {
  if (sessionToken.length > 200 || !isLiveSession(db, hashSecret(sessionToken), nowMs)) return undefined;
  return { kind: 'session', id: 'session', scopes: new Set(SCOPES) };
}

/** Revokes a key the user made (the desktop app's own key is not theirs to revoke here). */
export function revokeKey(db: Db, id: string, nowMs: number): void {
  const key = getApiKey(db, id);
  if (!key || key.internal || !revokeApiKey(db, id, nowMs)) throw new NotFoundError('api_key', id);
}

// ---- The resource ---------------------------------------------------------------------------

export const ApiKeySchema = z
  .object({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES as [Scope, ...Scope[]])),
    prefix: z.string().meta({ description: 'The first characters of the secret, to recognise it.' }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    secret: z.string().optional().meta({ description: 'Only in the response that creates the key.' }),
  })
  .meta({ id: 'ApiKey' });

const scopeList = z
  .array(z.enum(SCOPES as [Scope, ...Scope[]], { message: `must be one of ${SCOPES.join(', ')}` }))
  .min(1, { message: 'must name at least one scope' });

const keyName = nonBlankText(100);

export const ApiKeyCreateSchema = z.strictObject({ name: keyName, scopes: scopeList }).meta({ id: 'ApiKeyCreate' });

export function apiKeyResource(k: ApiKeyRecord, secret?: string): Record<string, unknown> {
  return {
    object: 'api_key',
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    prefix: k.prefix,
    created_at: isoUtc(k.createdMs),
    last_used_at: k.lastUsedMs === null ? null : isoUtc(k.lastUsedMs),
    ...(secret ? { secret } : {}),
  };
}
