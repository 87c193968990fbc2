import type { SqlDatabase as Db } from './sql-api.js';

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: unknown;
}

export function findIdempotentResponse(
  db: Db,
  principal: string,
  key: string,
  notBeforeMs: number,
): StoredResponse | undefined {
  const r = db
    .prepare(
      'SELECT request_hash, status, response_json FROM idempotency_keys WHERE principal = ? AND idempotency_key = ? AND created_ms >= ?',
    )
    .get(principal, key, notBeforeMs) as { request_hash: string; status: number; response_json: string } | undefined;
  return r && { requestHash: r.request_hash, status: r.status, body: JSON.parse(r.response_json) as unknown };
}

export function saveIdempotentResponse(
  db: Db,
  principal: string,
  key: string,
  requestHash: string,
  status: number,
  body: unknown,
  createdMs: number,
): void {
  db.prepare(
    `INSERT INTO idempotency_keys (principal, idempotency_key, request_hash, status, response_json, created_ms)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (principal, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
       response_json = excluded.response_json, created_ms = excluded.created_ms`,
  ).run(principal, key, requestHash, status, JSON.stringify(body), createdMs);
}

export function deleteIdempotencyOlderThan(db: Db, cutoffMs: number): void {
  db.prepare('DELETE FROM idempotency_keys WHERE created_ms < ?').run(cutoffMs);
}
