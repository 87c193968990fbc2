import { dataVersion, relaxedCommit, type Db } from './connection.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  createdMs: number;
  lastUsedMs: number | null;
  revokedMs: number | null;
  internal: boolean;
}

interface ApiKeyRow {
  id: string;
  name: string;
  scopes_json: string;
  prefix: string;
  created_ms: number;
  last_used_ms: number | null;
  revoked_ms: number | null;
  internal: number;
}

const COLUMNS = 'id, name, scopes_json, prefix, created_ms, last_used_ms, revoked_ms, internal';

function fromRow(r: ApiKeyRow): ApiKeyRecord {
  return {
    id: r.id,
    name: r.name,
    scopes: JSON.parse(r.scopes_json) as string[],
    prefix: r.prefix,
    createdMs: r.created_ms,
    lastUsedMs: r.last_used_ms,
    revokedMs: r.revoked_ms,
    internal: r.internal === 1,
  };
}

/**
 * What authentication needs from a key, remembered per secret hash: every API request
 * authenticates, and looking the key up (and parsing its scopes) was a tenth of a one-meal read.
 * Forgotten when this connection changes a key (every key write goes through this module) or
 * another one writes to the file (`keys revoke` from the CLI), so a revoked key stops working at
 * once. Nothing is remembered inside a transaction, which could still roll back.
 */
interface KeyMemo {
  dataVersion: number;
  byHash: Map<string, ActiveKey | null>;
}
const memos = new WeakMap<Db, KeyMemo>();
/**
 * When this process last stamped each key's last use, per connection. Kept apart from the memo:
 * it says what this process wrote, which another connection's writes do not change, so it needs
 * no second `PRAGMA data_version` read per request.
 */
const touches = new WeakMap<Db, Map<string, number>>();

function memoFor(db: Db): KeyMemo | undefined {
  if (db.inTransaction) return undefined;
  const version = dataVersion(db);
  let memo = memos.get(db);
  if (!memo || memo.dataVersion !== version) {
    memo = { dataVersion: version, byHash: new Map() };
    memos.set(db, memo);
  }
  return memo;
}

function forgetKeys(db: Db): void {
  memos.get(db)?.byHash.clear();
}

export function insertApiKey(db: Db, key: ApiKeyRecord, secretHash: string): void {
  forgetKeys(db);
  db.prepare(
    `INSERT INTO api_keys (id, name, scopes_json, prefix, secret_hash, created_ms, internal) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(key.id, key.name, JSON.stringify(key.scopes), key.prefix, secretHash, key.createdMs, key.internal ? 1 : 0);
}

export interface ActiveKey {
  id: string;
  scopes: readonly string[];
}

/** The live (not revoked) key with this secret hash. */
export function findActiveKeyByHash(db: Db, secretHash: string): ActiveKey | undefined {
  const memo = memoFor(db);
  const known = memo?.byHash.get(secretHash);
  if (known !== undefined) return known ?? undefined;
  const r = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = ? AND revoked_ms IS NULL`).get(secretHash) as
    | ApiKeyRow
    | undefined;
  const key: ActiveKey | null = r ? Object.freeze({ id: r.id, scopes: Object.freeze(JSON.parse(r.scopes_json) as string[]) }) : null;
  // Unknown secrets are not remembered: a flood of made-up keys must not grow the memo.
  if (memo && key) memo.byHash.set(secretHash, key);
  return key ?? undefined;
}

export function getApiKey(db: Db, id: string): ApiKeyRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id) as ApiKeyRow | undefined;
  return r && fromRow(r);
}

/** Keys people made (not the app's internal ones), oldest first; revoked ones only on request. */
export function listApiKeys(db: Db, includeRevoked = false): ApiKeyRecord[] {
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM api_keys WHERE internal = 0 ${includeRevoked ? '' : 'AND revoked_ms IS NULL'} ORDER BY created_ms ASC, id ASC`,
    )
    .all() as ApiKeyRow[];
  return rows.map(fromRow);
}

export function revokeApiKey(db: Db, id: string, atMs: number): boolean {
  forgetKeys(db);
  return db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL').run(atMs, id).changes > 0;
}

/** Stamps last use, at most once a minute per key so reads do not turn into a write each. */
export function touchApiKey(db: Db, id: string, atMs: number): void {
  // Inside a transaction the stamp could still roll back: write it, remember nothing.
  let touched = db.inTransaction ? undefined : touches.get(db);
  if (!touched && !db.inTransaction) touches.set(db, (touched = new Map()));
  const last = touched?.get(id);
  // Stamped by this process less than a minute ago: the UPDATE below would change nothing.
  if (last !== undefined && atMs >= last && atMs - last < TOUCH_INTERVAL_MS) return;
  const stamp = () => db.prepare('UPDATE api_keys SET last_used_ms = ? WHERE id = ? AND (last_used_ms IS NULL OR last_used_ms < ?)').run(atMs, id, atMs - TOUCH_INTERVAL_MS);
  // A key's first request after start does not wait for the disk for a stamp a power cut may undo.
  if (db.inTransaction) stamp();
  else relaxedCommit(db, stamp);
  touched?.set(id, atMs);
}

const TOUCH_INTERVAL_MS = 60_000;

/** Revokes the app's own internal keys (the desktop renderer gets a fresh one each launch). */
export function revokeInternalKeys(db: Db, atMs: number): number {
  forgetKeys(db);
  return db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE internal = 1 AND revoked_ms IS NULL').run(atMs).changes;
}

/** Those of `ids` that are revoked (or gone): what the revocation watch closes connections for. */
export function revokedKeyIds(db: Db, ids: readonly string[]): string[] {
  if (ids.length === 0) return [];
  const live = new Set(
    (db.prepare(`SELECT id FROM api_keys WHERE revoked_ms IS NULL AND id IN (${ids.map(() => '?').join(', ')})`).all(...ids) as Array<{ id: string }>).map((r) => r.id),
  );
  return ids.filter((id) => !live.has(id));
}
