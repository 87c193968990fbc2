import type { SqlDatabase as Db } from './sql-api.js';

export type SubscriptionStatus = 'enabled' | 'disabled';

export interface WebhookSubscriptionRecord {
  id: string;
  url: string;
  events: string[];
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresMs: number | null;
  status: SubscriptionStatus;
  disabledReason: string | null;
  disabledMs: number | null;
  failingSinceMs: number | null;
  /** The one certificate (SHA-256 fingerprint, "AB:CD:…") trusted for this URL; null: normal verification. */
  tlsPinSha256: string | null;
  /** The certificate the receiver presented at the last HTTPS attempt, and when. */
  tlsSeenSha256: string | null;
  tlsSeenMs: number | null;
  createdMs: number;
  updatedMs: number;
}

interface SubscriptionRow {
  id: string;
  url: string;
  events_json: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_ms: number | null;
  status: SubscriptionStatus;
  disabled_reason: string | null;
  disabled_ms: number | null;
  failing_since_ms: number | null;
  tls_pin_sha256: string | null;
  tls_seen_sha256: string | null;
  tls_seen_ms: number | null;
  created_ms: number;
  updated_ms: number;
}

const COLUMNS =
  'id, url, events_json, secret, previous_secret, previous_secret_expires_ms, status, disabled_reason, disabled_ms, failing_since_ms, tls_pin_sha256, tls_seen_sha256, tls_seen_ms, created_ms, updated_ms';

function fromRow(r: SubscriptionRow): WebhookSubscriptionRecord {
  return {
    id: r.id,
    url: r.url,
    events: JSON.parse(r.events_json) as string[],
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretExpiresMs: r.previous_secret_expires_ms,
    status: r.status,
    disabledReason: r.disabled_reason,
    disabledMs: r.disabled_ms,
    failingSinceMs: r.failing_since_ms,
    tlsPinSha256: r.tls_pin_sha256,
    tlsSeenSha256: r.tls_seen_sha256,
    tlsSeenMs: r.tls_seen_ms,
    createdMs: r.created_ms,
    updatedMs: r.updated_ms,
  };
}

function toParams(s: WebhookSubscriptionRecord) {
  return {
    id: s.id,
    url: s.url,
    events_json: JSON.stringify(s.events),
    secret: s.secret,
    previous_secret: s.previousSecret,
    previous_secret_expires_ms: s.previousSecretExpiresMs,
    status: s.status,
    disabled_reason: s.disabledReason,
    disabled_ms: s.disabledMs,
    failing_since_ms: s.failingSinceMs,
    tls_pin_sha256: s.tlsPinSha256,
    tls_seen_sha256: s.tlsSeenSha256,
    tls_seen_ms: s.tlsSeenMs,
    created_ms: s.createdMs,
    updated_ms: s.updatedMs,
  };
}

export function insertSubscription(db: Db, s: WebhookSubscriptionRecord): void {
  db.prepare(
    `INSERT INTO webhook_subscriptions (${COLUMNS}) VALUES (@id, @url, @events_json, @secret, @previous_secret, @previous_secret_expires_ms,
       @status, @disabled_reason, @disabled_ms, @failing_since_ms, @tls_pin_sha256, @tls_seen_sha256, @tls_seen_ms, @created_ms, @updated_ms)`,
  ).run(toParams(s));
}

/**
 * Writes every field a person can change, and the dispatcher's failure bookkeeping (its id and
 * created_ms never change; the certificate seen is written by setSeenCertificate alone).
 */
export function updateSubscription(db: Db, s: WebhookSubscriptionRecord): void {
  db.prepare(
    `UPDATE webhook_subscriptions SET url = @url, events_json = @events_json, secret = @secret, previous_secret = @previous_secret,
       previous_secret_expires_ms = @previous_secret_expires_ms, status = @status, disabled_reason = @disabled_reason,
       disabled_ms = @disabled_ms, failing_since_ms = @failing_since_ms, tls_pin_sha256 = @tls_pin_sha256, updated_ms = @updated_ms
     WHERE id = @id`,
  ).run(toParams(s));
}

export function deleteSubscription(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM webhook_subscriptions WHERE id = ?').run(id).changes > 0;
}

export function getSubscription(db: Db, id: string): WebhookSubscriptionRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = ?`).get(id) as SubscriptionRow | undefined;
  return r && fromRow(r);
}

/** Every subscription, newest first (there are at most a few dozen). */
export function listSubscriptions(db: Db): WebhookSubscriptionRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM webhook_subscriptions ORDER BY created_ms DESC, id DESC`).all() as SubscriptionRow[]).map(
    fromRow,
  );
}

export function countSubscriptions(db: Db): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM webhook_subscriptions').get() as { n: number }).n;
}

/** Ids of the enabled subscriptions whose event list names `type`, oldest first (the outbox fan-out). */
export function listEnabledSubscriptionIdsFor(db: Db, type: string): string[] {
  return (
    db
      .prepare(
        `SELECT id FROM webhook_subscriptions
         WHERE status = 'enabled' AND EXISTS (SELECT 1 FROM json_each(events_json) WHERE json_each.value = ?)
         ORDER BY created_ms ASC, id ASC`,
      )
      .all(type) as Array<{ id: string }>
  ).map((r) => r.id);
}

/** Marks a run of failures as started (keeps an earlier start), or ends it (null). */
export function setFailingSince(db: Db, id: string, sinceMs: number | null): void {
  if (sinceMs === null) {
    // Guarded: after every success, and a row left as it was is not rewritten.
    db.prepare('UPDATE webhook_subscriptions SET failing_since_ms = NULL WHERE id = ? AND failing_since_ms IS NOT NULL').run(id);
  } else {
    db.prepare('UPDATE webhook_subscriptions SET failing_since_ms = COALESCE(failing_since_ms, ?) WHERE id = ?').run(sinceMs, id);
  }
}

/** Records the certificate a receiver presented at an HTTPS attempt (shown so it can be pinned). */
export function setSeenCertificate(db: Db, id: string, sha256: string, seenMs: number): void {
  db.prepare('UPDATE webhook_subscriptions SET tls_seen_sha256 = ?, tls_seen_ms = ? WHERE id = ?').run(sha256, seenMs, id);
}
