import type { SqlDatabase as Db } from './sql-api.js';

export type AttemptOutcome = 'succeeded' | 'failed' | 'interrupted';

export interface WebhookAttemptRecord {
  deliveryId: string;
  attempt: number;
  startedMs: number;
  /** null while in flight (or when the process died during it: outcome 'interrupted'). */
  finishedMs: number | null;
  outcome: AttemptOutcome | null;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  /** SHA-256 fingerprint of the certificate an HTTPS receiver presented ("AB:CD:…"). */
  peerCertificateSha256: string | null;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_ms: number;
  finished_ms: number | null;
  outcome: AttemptOutcome | null;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  peer_certificate_sha256: string | null;
}

const COLUMNS = 'delivery_id, attempt, started_ms, finished_ms, outcome, status_code, duration_ms, error, peer_certificate_sha256';

function fromRow(r: AttemptRow): WebhookAttemptRecord {
  return {
    deliveryId: r.delivery_id,
    attempt: r.attempt,
    startedMs: r.started_ms,
    finishedMs: r.finished_ms,
    outcome: r.outcome,
    statusCode: r.status_code,
    durationMs: r.duration_ms,
    error: r.error,
    peerCertificateSha256: r.peer_certificate_sha256,
  };
}

/** Records that an attempt is starting, before the request leaves (crash recovery reads this). */
export function insertAttemptStart(db: Db, deliveryId: string, attempt: number, startedMs: number): void {
  db.prepare('INSERT INTO webhook_attempts (delivery_id, attempt, started_ms) VALUES (?, ?, ?)').run(deliveryId, attempt, startedMs);
}

export function finishAttempt(
  db: Db,
  a: Omit<WebhookAttemptRecord, 'startedMs'>,
): void {
  db.prepare(
    `UPDATE webhook_attempts SET finished_ms = ?, outcome = ?, status_code = ?, duration_ms = ?, error = ?, peer_certificate_sha256 = ?
     WHERE delivery_id = ? AND attempt = ?`,
  ).run(a.finishedMs, a.outcome, a.statusCode, a.durationMs, a.error, a.peerCertificateSha256, a.deliveryId, a.attempt);
}

/** Attempts with no outcome: they were in flight when the process stopped. */
export function listUnfinishedAttempts(db: Db): WebhookAttemptRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM webhook_attempts WHERE outcome IS NULL`).all() as AttemptRow[]).map(fromRow);
}

/** Attempts that reached an outcome (they count toward the attempt limit); interrupted ones do not. */
export function countFinishedAttempts(db: Db, deliveryId: string): number {
  return (
    db.prepare(`SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = ? AND outcome IN ('succeeded', 'failed')`).get(deliveryId) as {
      n: number;
    }
  ).n;
}

export function listAttempts(db: Db, deliveryId: string): WebhookAttemptRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt ASC`).all(deliveryId) as AttemptRow[]).map(
    fromRow,
  );
}

/** Attempts of many deliveries at once (a page of the delivery log), grouped by delivery. */
export function listAttemptsFor(db: Db, deliveryIds: string[]): Map<string, WebhookAttemptRecord[]> {
  const out = new Map<string, WebhookAttemptRecord[]>();
  if (deliveryIds.length === 0) return out;
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM webhook_attempts WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, attempt ASC`,
    )
    .all(JSON.stringify(deliveryIds)) as AttemptRow[];
  for (const r of rows) {
    const list = out.get(r.delivery_id) ?? [];
    list.push(fromRow(r));
    out.set(r.delivery_id, list);
  }
  return out;
}
