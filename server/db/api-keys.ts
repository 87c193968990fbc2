import type { Db } from './connection.js';

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

export function insertApiKey(db: Db, key: ApiKeyRecord, secretHash: string): void {
  db.prepare(
    `INSERT INTO api_keys (id, name, scopes_json, prefix, secret_hash, created_ms, internal) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(key.id, key.name, JSON.stringify(key.scopes), key.prefix, secretHash, key.createdMs, key.internal ? 1 : 0);
}

/** The live (not revoked) key with this secret hash. */
export function findActiveKeyByHash(db: Db, secretHash: string): ApiKeyRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = ? AND revoked_ms IS NULL`).get(secretHash) as
    | ApiKeyRow
    | undefined;
  return r && fromRow(r);
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
  return db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL').run(atMs, id).changes > 0;
}

/** Stamps last use, at most once a minute per key so reads do not turn into a write each. */
export function touchApiKey(db: Db, id: string, atMs: number): void {
  db.prepare('UPDATE api_keys SET last_used_ms = ? WHERE id = ? AND (last_used_ms IS NULL OR last_used_ms < ?)').run(
    atMs,
    id,
    atMs - 60_000,
  );
}

/** Revokes the app's own internal keys (the desktop renderer gets a fresh one each launch). */
export function revokeInternalKeys(db: Db, atMs: number): number {
  return db.prepare('UPDATE api_keys SET revoked_ms = ? WHERE internal = 1 AND revoked_ms IS NULL').run(atMs).changes;
}
