import { z } from 'zod';
import type { WebhookAttemptRecord } from '../db/webhook-attempts.js';
import type { WebhookDeliveryRecord } from '../db/webhook-deliveries.js';
import type { WebhookSubscriptionRecord } from '../db/webhook-subscriptions.js';
import { EVENT_TYPES } from '../events/types.js';
import { isoDateTime } from '../fields.js';
import { isoUtc } from '../time/tz.js';

/** API resources of the webhook system and the zod schemas that document them. */

/** Millisecond-precision instant (attempt times, where retry spacing matters). */
export function isoMs(ms: number): string {
  return new Date(ms).toISOString();
}

// The schemas here are built on first use (z.lazy), not at import: a cold start answers its
// first requests without them (docs/performance.md, "Cold start").
export const WebhookSubscriptionSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('webhook_subscription'),
      id: z.string().meta({ example: 'whsub_3kT9xQ2pLm8vR1sN4wZc' }),
      url: z.string(),
      events: z.array(z.enum(EVENT_TYPES)),
      status: z.enum(['enabled', 'disabled']),
      disabled_reason: z
        .string()
        .nullable()
        .meta({ description: 'Why the service disabled the subscription (deliveries failing for 3 days); null when enabled or paused by hand.' }),
      disabled_at: isoDateTime.nullable(),
      previous_secret_expires_at: isoDateTime
        .nullable()
        .meta({ description: 'After a secret rotation, the old secret also signs (a second v1=) until this instant.' }),
      tls_certificate_sha256: z.string().nullable().meta({
        description: 'The pinned certificate: HTTPS deliveries trust exactly the certificate with this SHA-256 fingerprint. null: the usual verification.',
      }),
      observed_certificate_sha256: z.string().nullable().meta({
        description:
          'SHA-256 fingerprint of the certificate the receiver presented at the last HTTPS attempt, trusted or not: compare it with the receiver\'s own, then pin it.',
      }),
      observed_certificate_at: isoDateTime.nullable(),
      created_at: isoDateTime,
      updated_at: isoDateTime,
      secret: z.string().optional().meta({ description: 'The signing secret: only in the response that creates the subscription.' }),
    })
    .meta({ id: 'WebhookSubscription' }),
);

export function subscriptionResource(s: WebhookSubscriptionRecord, nowMs: number, secret?: string): Record<string, unknown> {
  const overlap = s.previousSecret !== null && s.previousSecretExpiresMs !== null && s.previousSecretExpiresMs > nowMs;
  return {
    object: 'webhook_subscription',
    id: s.id,
    url: s.url,
    events: s.events,
    status: s.status,
    disabled_reason: s.status === 'disabled' ? s.disabledReason : null,
    disabled_at: s.status === 'disabled' && s.disabledMs !== null ? isoUtc(s.disabledMs) : null,
    previous_secret_expires_at: overlap ? isoUtc(s.previousSecretExpiresMs!) : null,
    tls_certificate_sha256: s.tlsPinSha256,
    observed_certificate_sha256: s.tlsSeenSha256,
    observed_certificate_at: s.tlsSeenMs === null ? null : isoUtc(s.tlsSeenMs),
    created_at: isoUtc(s.createdMs),
    updated_at: isoUtc(s.updatedMs),
    ...(secret !== undefined ? { secret } : {}),
  };
}

export const WebhookAttemptSchema = z.lazy(() =>
  z
    .object({
      attempt: z.number().int().meta({ description: '1 for the first attempt.' }),
      started_at: isoDateTime.meta({ description: 'Millisecond precision.' }),
      finished_at: isoDateTime.nullable(),
      outcome: z.enum(['succeeded', 'failed', 'interrupted', 'in_flight']).meta({
        description: 'interrupted: the service stopped during the attempt; it does not count toward the 6 attempts and is retried.',
      }),
      status_code: z.number().int().nullable().meta({ description: 'The HTTP status the receiver answered, if it answered.' }),
      duration_ms: z.number().int().nullable(),
      error: z.string().nullable(),
      certificate_sha256: z.string().nullable().meta({ description: 'HTTPS: SHA-256 fingerprint of the certificate the receiver presented.' }),
    })
    .meta({ id: 'WebhookAttempt' }),
);

export const WebhookDeliverySchema = z.lazy(() =>
  z
    .object({
      object: z.literal('webhook_delivery'),
      id: z.string().meta({ description: 'The webhook_delivery_id every attempt carries.', example: 'whdel_3kT9xQ2pLm8vR1sN4wZc' }),
      subscription_id: z.string(),
      event_id: z.string(),
      event_type: z.enum(EVENT_TYPES),
      kind: z.enum(['event', 'test', 'redelivery']),
      redelivery_of: z.string().nullable().meta({ description: 'For a redelivery, the delivery it repeats.' }),
      status: z.enum(['pending', 'succeeded', 'failed', 'canceled']),
      status_detail: z.string().nullable(),
      attempt_count: z.number().int(),
      next_attempt_at: isoDateTime.nullable(),
      created_at: isoDateTime,
      completed_at: isoDateTime.nullable(),
      attempts: z.array(WebhookAttemptSchema),
    })
    .meta({ id: 'WebhookDelivery' }),
);

export function attemptResource(a: WebhookAttemptRecord): Record<string, unknown> {
  return {
    attempt: a.attempt,
    started_at: isoMs(a.startedMs),
    finished_at: a.finishedMs === null ? null : isoMs(a.finishedMs),
    outcome: a.outcome ?? 'in_flight',
    status_code: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
    certificate_sha256: a.peerCertificateSha256,
  };
}

export function deliveryResource(d: WebhookDeliveryRecord, attempts: WebhookAttemptRecord[]): Record<string, unknown> {
  return {
    object: 'webhook_delivery',
    id: d.id,
    subscription_id: d.subscriptionId,
    event_id: d.eventId,
    event_type: d.eventType,
    kind: d.kind,
    redelivery_of: d.redeliveryOf,
    status: d.status,
    status_detail: d.statusDetail,
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptMs === null ? null : isoMs(d.nextAttemptMs),
    created_at: isoMs(d.createdMs),
    completed_at: d.completedMs === null ? null : isoMs(d.completedMs),
    attempts: attempts.map(attemptResource),
  };
}

export const WebhookTestSchema = z.lazy(() =>
  z
    .object({
      object: z.literal('webhook_test'),
      delivered: z.boolean().meta({ description: 'True when the receiver answered with a 2xx status.' }),
      status_code: z.number().int().nullable(),
      duration_ms: z.number().int(),
      webhook_delivery_id: z.string(),
      certificate_sha256: z.string().nullable().meta({
        description: 'HTTPS: SHA-256 fingerprint of the certificate the receiver presented, trusted or not (pin it with tls_certificate_sha256); null for http.',
      }),
      error: z.string().optional().meta({ description: 'Why it was not delivered (absent when delivered).' }),
    })
    .meta({ id: 'WebhookTest' }),
);
