import type { SqlDatabase as Db } from './sql-api.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';
export type DeliveryKind = 'event' | 'test' | 'redelivery';

export interface WebhookDeliveryRecord {
  seq: number;
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  kind: DeliveryKind;
  redeliveryOf: string | null;
  body: string;
  status: DeliveryStatus;
  maxAttempts: number;
  attemptCount: number;
  nextAttemptMs: number | null;
  createdMs: number;
  completedMs: number | null;
  /** Why it stopped when that is not obvious from its attempts (canceled, interrupted). */
  statusDetail: string | null;
}

interface DeliveryRow {
  seq: number;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  kind: DeliveryKind;
  redelivery_of: string | null;
  body: string;
  status: DeliveryStatus;
  max_attempts: number;
  attempt_count: number;
  next_attempt_ms: number | null;
  created_ms: number;
  completed_ms: number | null;
  status_detail: string | null;
}

const COLUMNS =
  'seq, id, subscription_id, event_id, event_type, kind, redelivery_of, body, status, max_attempts, attempt_count, next_attempt_ms, created_ms, completed_ms, status_detail';

function fromRow(r: DeliveryRow): WebhookDeliveryRecord {
  return {
    seq: r.seq,
    id: r.id,
    subscriptionId: r.subscription_id,
    eventId: r.event_id,
    eventType: r.event_type,
    kind: r.kind,
    redeliveryOf: r.redelivery_of,
    body: r.body,
    status: r.status,
    maxAttempts: r.max_attempts,
    attemptCount: r.attempt_count,
    nextAttemptMs: r.next_attempt_ms,
    createdMs: r.created_ms,
    completedMs: r.completed_ms,
    statusDetail: r.status_detail,
  };
}

export type NewDelivery = Pick<
  WebhookDeliveryRecord,
  'id' | 'subscriptionId' | 'eventId' | 'eventType' | 'kind' | 'redeliveryOf' | 'body' | 'maxAttempts' | 'nextAttemptMs' | 'createdMs'
>;

export function insertDelivery(db: Db, d: NewDelivery): void {
  db.prepare(
    `INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, kind, redelivery_of, body, status, max_attempts, next_attempt_ms, created_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  ).run(d.id, d.subscriptionId, d.eventId, d.eventType, d.kind, d.redeliveryOf, d.body, d.maxAttempts, d.nextAttemptMs, d.createdMs);
}

export function getDelivery(db: Db, id: string): WebhookDeliveryRecord | undefined {
  const r = db.prepare(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE id = ?`).get(id) as DeliveryRow | undefined;
  return r && fromRow(r);
}

/** Enabled subscriptions that have a pending delivery with a due time (the dispatcher's work list). */
export function subscriptionsWithDueWork(db: Db): string[] {
  return (
    db
      .prepare(
        `SELECT s.id FROM webhook_subscriptions s WHERE s.status = 'enabled' AND EXISTS (
           SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.next_attempt_ms IS NOT NULL)`,
      )
      .all() as Array<{ id: string }>
  ).map((r) => r.id);
}

/**
 * One subscription's scheduled pending deliveries (due or not), soonest first, at most `limit`:
 * the dispatcher takes those due by now and learns from the first one that is not when to look
 * again, in one walk of the subscription's own due index. In-flight deliveries have no
 * next_attempt_ms and are never returned.
 */
export function listScheduledDeliveries(db: Db, subscriptionId: string, limit: number): WebhookDeliveryRecord[] {
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM webhook_deliveries
        WHERE subscription_id = ? AND status = 'pending' AND next_attempt_ms IS NOT NULL
        ORDER BY next_attempt_ms ASC, seq ASC LIMIT ?`,
    )
    .all(subscriptionId, limit) as DeliveryRow[];
  return rows.map(fromRow);
}

/** Pending deliveries with no due time: an attempt was in flight when the process stopped. */
export function listStrandedDeliveries(db: Db): WebhookDeliveryRecord[] {
  return (
    db.prepare(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_ms IS NULL`).all() as DeliveryRow[]
  ).map(fromRow);
}

/** What an attempt's outcome is judged against: a delivery's state without its body. */
export type DeliveryState = Pick<
  WebhookDeliveryRecord,
  'id' | 'subscriptionId' | 'eventType' | 'kind' | 'status' | 'maxAttempts' | 'attemptCount' | 'createdMs'
>;

export function getDeliveryState(db: Db, id: string): DeliveryState | undefined {
  const r = db
    .prepare(
      `SELECT id, subscription_id, event_type, kind, status, max_attempts, attempt_count, created_ms FROM webhook_deliveries WHERE id = ?`,
    )
    .get(id) as Pick<DeliveryRow, 'id' | 'subscription_id' | 'event_type' | 'kind' | 'status' | 'max_attempts' | 'attempt_count' | 'created_ms'> | undefined;
  return (
    r && {
      id: r.id,
      subscriptionId: r.subscription_id,
      eventType: r.event_type,
      kind: r.kind,
      status: r.status,
      maxAttempts: r.max_attempts,
      attemptCount: r.attempt_count,
      createdMs: r.created_ms,
    }
  );
}

/**
 * Takes a pending delivery for an attempt: bumps its attempt count and clears its due time.
 * Returns the attempt's number, or undefined when the delivery is no longer pending.
 */
export function claimDelivery(db: Db, id: string): number | undefined {
  const r = db
    .prepare(
      `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, next_attempt_ms = NULL WHERE id = ? AND status = 'pending'
       RETURNING attempt_count AS n`,
    )
    .get(id) as { n: number } | undefined;
  return r?.n;
}

/**
 * Takes a scheduled delivery for an attempt, as claimDelivery, only if it is still pending and
 * scheduled (it may have been read before another writer changed it).
 */
export function claimScheduledDelivery(db: Db, id: string): number | undefined {
  const r = db
    .prepare(
      `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, next_attempt_ms = NULL
        WHERE id = ? AND status = 'pending' AND next_attempt_ms IS NOT NULL RETURNING attempt_count AS n`,
    )
    .get(id) as { n: number } | undefined;
  return r?.n;
}

export function scheduleDelivery(db: Db, id: string, nextAttemptMs: number): void {
  db.prepare(`UPDATE webhook_deliveries SET next_attempt_ms = ? WHERE id = ? AND status = 'pending'`).run(nextAttemptMs, id);
}

export function completeDelivery(
  db: Db,
  id: string,
  status: Exclude<DeliveryStatus, 'pending'>,
  completedMs: number,
  detail: string | null = null,
): void {
  db.prepare('UPDATE webhook_deliveries SET status = ?, next_attempt_ms = NULL, completed_ms = ?, status_detail = ? WHERE id = ?').run(
    status,
    completedMs,
    detail,
    id,
  );
}

/** Cancels a subscription's pending deliveries (it was disabled); in-flight attempts still report. */
export function cancelPendingDeliveries(db: Db, subscriptionId: string, nowMs: number, detail: string): number {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET status = 'canceled', next_attempt_ms = NULL, completed_ms = ?, status_detail = ?
       WHERE subscription_id = ? AND status = 'pending'`,
    )
    .run(nowMs, detail, subscriptionId).changes;
}

export interface DeliveryPageQuery {
  subscriptionId: string;
  status?: DeliveryStatus | undefined;
  afterSeq?: number | undefined;
  limit: number;
}

/** A page of one subscription's deliveries, newest first. */
export function listDeliveriesPage(db: Db, q: DeliveryPageQuery): { deliveries: WebhookDeliveryRecord[]; hasMore: boolean } {
  const where = ['subscription_id = @sub'];
  if (q.status) where.push('status = @status');
  if (q.afterSeq !== undefined) where.push('seq < @afterSeq');
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @take`)
    .all({ sub: q.subscriptionId, status: q.status ?? null, afterSeq: q.afterSeq ?? null, take: q.limit + 1 }) as DeliveryRow[];
  return { deliveries: rows.slice(0, q.limit).map(fromRow), hasMore: rows.length > q.limit };
}

/** Forgets finished deliveries (and their attempts) completed before `beforeMs`. */
export function deleteDeliveriesCompletedBefore(db: Db, beforeMs: number): number {
  return db.prepare('DELETE FROM webhook_deliveries WHERE completed_ms IS NOT NULL AND completed_ms < ?').run(beforeMs).changes;
}
