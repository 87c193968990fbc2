import type { SqlDatabase as Db } from './sql-api.js';

export type UiTokenKind = 'launch' | 'session';

export function insertUiToken(db: Db, tokenHash: string, kind: UiTokenKind, createdMs: number, expiresMs: number): void {
  db.prepare('INSERT INTO ui_tokens (token_hash, kind, created_ms, expires_ms) VALUES (?, ?, ?, ?)').run(
    tokenHash,
    kind,
    createdMs,
    expiresMs,
  );
}

/** Removes and reports a live launch token: a launch token works exactly once. */
export function consumeLaunchToken(db: Db, tokenHash: string, nowMs: number): boolean {
  return (
    db.prepare("DELETE FROM ui_tokens WHERE token_hash = ? AND kind = 'launch' AND expires_ms > ?").run(tokenHash, nowMs)
      .changes > 0
  );
}

export function isLiveSession(db: Db, tokenHash: string, nowMs: number): boolean {
  return (
    db.prepare("SELECT 1 FROM ui_tokens WHERE token_hash = ? AND kind = 'session' AND expires_ms > ?").get(tokenHash, nowMs) !==
    undefined
  );
}

export function deleteExpiredUiTokens(db: Db, nowMs: number): void {
  db.prepare('DELETE FROM ui_tokens WHERE expires_ms <= ?').run(nowMs);
}
