import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { listAttempts, listAttemptsFor } from '../db/webhook-attempts.js';
import { cancelPendingDeliveries, getDelivery, insertDelivery, listDeliveriesPage, type WebhookDeliveryRecord } from '../db/webhook-deliveries.js';
import {
  countSubscriptions,
  getSubscription,
  insertSubscription,
  updateSubscription,
  type WebhookSubscriptionRecord,
} from '../db/webhook-subscriptions.js';
import { ConflictError, InvalidCursorError, InvalidInputError, LimitExceededError, NotFoundError } from '../domain-errors.js';
import { eventEnvelope } from '../events/bus.js';
import { EVENT_TYPES } from '../events/types.js';
import { newId, randomToken } from '../ids.js';
import { MAX_ATTEMPTS, type Dispatcher } from './dispatcher.js';
import { deliveryResource } from './resources.js';
import { FINGERPRINT_PATTERN, normalizeFingerprint } from './tls-pin.js';

/**
 * Webhook subscriptions and their deliveries: the rules a subscription keeps (URL, events,
 * secret, the limit of 50), secret rotation, pause and enable, the test ping and redelivery.
 */

export const MAX_SUBSCRIPTIONS = 50;
/** After a rotation the old secret keeps signing this long (CONTRACT §7). */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
const MAX_URL_LENGTH = 2048;

// ---- Input ----------------------------------------------------------------------------------

/** Why a webhook URL is refused, or undefined when it is fine (CONTRACT §7). */
export function webhookUrlProblem(raw: string): string | undefined {
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return 'must not contain spaces or control characters';
  // The document calls it format: uri (RFC 3986), which is ASCII; WHATWG's parser would take an
  // IRI and quietly rewrite it, so the URL stored would not be the one sent.
  if (/[^\u0000-\u007f]/.test(raw)) return 'must be written in ASCII: an international domain name in its xn-- form, other characters percent-encoded';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as http://homeassistant.local:8123/api/webhook/my-id';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use http or https, not ${url.protocol.replace(/:$/, '')}`;
  if (!url.hostname) return 'must name a host';
  if (url.username || url.password) return 'must not contain credentials (user:password@); put a secret in the path or rely on the signature';
  if (url.hash) return 'must not contain a fragment (#…): it is never sent to the server';
  return undefined;
}

/**
 * What webhookUrlProblem requires, as a pattern for the OpenAPI document: http(s), an authority
 * without credentials, then a path and query, in the characters RFC 3986 allows there (so only
 * ASCII) or percent-encoded, and no fragment. With `format: uri` (a valid URI), a URL that
 * matches it is accepted.
 */
const WEBHOOK_URL_PATTERN =
  /^[Hh][Tt][Tt][Pp][Ss]?:\/\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:[\]]|%[0-9A-Fa-f]{2})+(?:[/?](?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?$/;

// This module's schemas are built on first use (z.lazy), not at import: a cold start of the service
// answers its first requests without them (docs/performance.md, "Cold start").
export const webhookUrl = z.lazy(() =>
  z
    .string({ message: 'must be a string' })
    .max(MAX_URL_LENGTH, { message: `must be at most ${MAX_URL_LENGTH} characters` })
    .superRefine((s, ctx) => {
      const problem = webhookUrlProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    // After the check above, so its clearer message is the one reported; the pattern documents it.
    .regex(WEBHOOK_URL_PATTERN, { message: 'must be an absolute http(s) URL without credentials, spaces or fragment' })
    .meta({ format: 'uri', description: 'Absolute http(s) URL; loopback and LAN hosts are allowed; no credentials, no fragment.', example: 'http://homeassistant.local:8123/api/webhook/chyme-7f3c9a2e5b8d41f6' }),
);

export const eventList = z.lazy(() =>
  z
    .array(z.enum(EVENT_TYPES, { message: `must be one of ${EVENT_TYPES.join(', ')}` }), { message: 'must be an array of event names' })
    .min(1, { message: 'must name at least one event' })
    .max(50, { message: 'must name at most 50 events' })
    .transform((list) => [...new Set(list)])
    .meta({ description: 'Event types to deliver (duplicates are ignored).' }),
);

const secretField = z.lazy(() =>
  z
    .string({ message: 'must be a string' })
    .min(16, { message: 'must be at least 16 characters' })
    .max(256, { message: 'must be at most 256 characters' })
    .regex(/^[^\u0000-\u001f\u007f]+$/, { message: 'must not contain control characters' })
    .meta({ description: 'Shared signing secret, 16–256 characters (HMAC key: its UTF-8 bytes). Generated (whsec_…) when absent.' }),
);

/** A pinned certificate's SHA-256 fingerprint, stored in its canonical "AB:CD:…" form. */
export const certificateFingerprint = z.lazy(() =>
  z
    .string({ message: 'must be a string' })
    .max(200, { message: 'must be a SHA-256 fingerprint' })
    .transform((raw, ctx) => {
      const fingerprint = normalizeFingerprint(raw);
      if (fingerprint === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be a SHA-256 fingerprint: 32 bytes as hex, e.g. "54:A7:F4:…:25:AB" (colons optional)' });
        return z.NEVER;
      }
      return fingerprint;
    })
    .meta({
      description:
        'HTTPS receivers only: trust exactly the certificate with this SHA-256 fingerprint (a self-signed one, as Home Assistant often has) instead of verifying it against the certificate authorities. Colons, spaces and case are optional on input. null removes the pin.',
      pattern: FINGERPRINT_PATTERN,
      example: '54:A7:F4:1A:E5:3A:4F:1C:98:12:0A:0A:F9:6B:5A:F4:44:E4:FE:21:1E:4A:74:5A:13:B4:20:A2:6A:89:25:AB',
    }),
);

export const WebhookCreateSchema = z.lazy(() =>
  z
    .strictObject({
      url: webhookUrl,
      events: eventList,
      secret: secretField.optional(),
      tls_certificate_sha256: certificateFingerprint.nullable().optional(),
    })
    .meta({ id: 'WebhookCreate' }),
);

export const WebhookUpdateSchema = z.lazy(() =>
  z
    .strictObject({
      url: webhookUrl.optional(),
      events: eventList.optional(),
      status: z.enum(['enabled', 'disabled'], { message: 'must be enabled or disabled' }).optional(),
      secret: secretField.optional().meta({
        description: 'A new signing secret. The old one keeps signing too (a second v1= in the header) for 24 hours.',
      }),
      tls_certificate_sha256: certificateFingerprint.nullable().optional(),
    })
    .meta({ id: 'WebhookUpdate' }),
);

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;

export function generateSecret(): string {
  return `whsec_${randomToken(32)}`;
}

// ---- Subscriptions --------------------------------------------------------------------------

export function mustGetSubscription(app: AppContext, id: string): WebhookSubscriptionRecord {
  const sub = getSubscription(app.db, id);
  if (!sub) throw new NotFoundError('webhook subscription', id);
  return sub;
}

/** Refuses a subscription count over the limit (creating, or importing `adding` more). */
export function checkSubscriptionLimit(app: AppContext, adding: number, param?: string): void {
  if (countSubscriptions(app.db) + adding <= MAX_SUBSCRIPTIONS) return;
  if (param !== undefined) {
    throw new InvalidInputError(param, `Importing ${adding} subscriptions would exceed the limit of ${MAX_SUBSCRIPTIONS}.`);
  }
  throw new LimitExceededError(`You can have at most ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one first.`);
}

/** Creates an enabled subscription; its secret is the one given, else a new whsec_ one. */
export function createSubscription(app: AppContext, input: z.output<typeof WebhookCreateSchema>): WebhookSubscriptionRecord {
  const host = app.role.webhookHostName();
  if (host !== null) {
    throw new ConflictError(
      'webhook_host_elsewhere',
      `Webhooks of this history are sent by ${host}. Add the webhook there, or make this device the webhook host first (Integrations → Sync, or POST /v1/sync/webhook-host).`,
    );
  }
  const now = app.clock.now();
  const sub: WebhookSubscriptionRecord = {
    id: newId('whsub'),
    url: input.url,
    events: input.events,
    secret: input.secret ?? generateSecret(),
    previousSecret: null,
    previousSecretExpiresMs: null,
    status: 'enabled',
    disabledReason: null,
    disabledMs: null,
    failingSinceMs: null,
    tlsPinSha256: input.tls_certificate_sha256 ?? null,
    tlsSeenSha256: null,
    tlsSeenMs: null,
    createdMs: now,
    updatedMs: now,
  };
  app.db
    .transaction(() => {
      checkSubscriptionLimit(app, 1);
      insertSubscription(app.db, sub);
    })
    .immediate();
  return sub;
}

/**
 * Changes a subscription. A new URL forgets the old one's failures; a new secret signs at once
 * while the old one keeps signing for SECRET_OVERLAP_MS; "disabled" pauses it (pending deliveries
 * are canceled), "enabled" resumes it and clears an automatic disable; a pinned certificate
 * replaces the usual verification for an HTTPS URL.
 */
export function changeSubscription(
  app: AppContext,
  dispatcher: Dispatcher,
  id: string,
  change: z.output<typeof WebhookUpdateSchema>,
): WebhookSubscriptionRecord {
  const now = app.clock.now();
  const updated = app.db
    .transaction(() => {
      const sub = mustGetSubscription(app, id);
      const next: WebhookSubscriptionRecord = { ...sub };
      if (change.url !== undefined && change.url !== sub.url) {
        next.url = change.url;
        next.failingSinceMs = null; // failures of the old URL say nothing about the new one
      }
      if (change.events !== undefined) next.events = change.events;
      if (change.tls_certificate_sha256 !== undefined && change.tls_certificate_sha256 !== sub.tlsPinSha256) {
        next.tlsPinSha256 = change.tls_certificate_sha256;
        next.failingSinceMs = null; // failures under the old trust say nothing about the new one
      }
      if (change.secret !== undefined && change.secret !== sub.secret) {
        next.previousSecret = sub.secret;
        next.previousSecretExpiresMs = now + SECRET_OVERLAP_MS;
        next.secret = change.secret;
      }
      if (change.status === 'enabled' && sub.status === 'disabled') {
        next.status = 'enabled';
        next.disabledMs = null;
        next.disabledReason = null;
        next.failingSinceMs = null;
      } else if (change.status === 'disabled' && sub.status === 'enabled') {
        next.status = 'disabled';
        next.disabledMs = now;
        next.disabledReason = null;
        cancelPendingDeliveries(app.db, sub.id, now, 'canceled: the subscription was paused');
      }
      if (JSON.stringify({ ...next, updatedMs: 0 }) === JSON.stringify({ ...sub, updatedMs: 0 })) return sub;
      next.updatedMs = now;
      updateSubscription(app.db, next);
      return next;
    })
    .immediate();
  if (updated.status === 'enabled') dispatcher.wake();
  return updated;
}

// ---- Deliveries -----------------------------------------------------------------------------

export interface TestPingOutcome {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  deliveryId: string;
  /** HTTPS: the fingerprint of the certificate the receiver presented, trusted or not. */
  certificateSha256: string | null;
  error?: string;
}

/**
 * Sends one test.ping to a subscription now (one attempt, no retries; disabled ones too). It is
 * enveloped and logged like every other delivery, but never recorded as an event or fanned out.
 */
export async function sendTestPing(app: AppContext, dispatcher: Dispatcher, id: string): Promise<TestPingOutcome> {
  const sub = mustGetSubscription(app, id);
  const now = app.clock.now();
  const deliveryId = newId('whdel');
  const event = {
    id: newId('evt'),
    type: 'test.ping',
    createdMs: now,
    data: {
      object: {
        object: 'webhook_ping',
        subscription_id: sub.id,
        message: 'A test delivery from Chyme. Answer with any 2xx status to acknowledge deliveries.',
      },
    },
  };
  insertDelivery(app.db, {
    id: deliveryId,
    subscriptionId: sub.id,
    eventId: event.id,
    eventType: event.type,
    kind: 'test',
    redeliveryOf: null,
    body: JSON.stringify(eventEnvelope(event, deliveryId)),
    maxAttempts: 1,
    nextAttemptMs: null,
    createdMs: now,
  });
  const report = await dispatcher.attemptNow(deliveryId);
  if (!report) throw new Error(`test delivery ${deliveryId} vanished before its attempt`);
  const r = report.result;
  return {
    delivered: r.ok,
    statusCode: r.statusCode,
    durationMs: r.durationMs,
    deliveryId,
    certificateSha256: r.peerCertificateSha256,
    ...(r.ok ? {} : { error: r.error ?? 'not delivered' }),
  };
}

function mustGetDelivery(app: AppContext, subscriptionId: string, deliveryId: string): WebhookDeliveryRecord {
  const d = getDelivery(app.db, deliveryId);
  if (!d || d.subscriptionId !== subscriptionId) throw new NotFoundError('webhook delivery', deliveryId);
  return d;
}

/** A subscription's deliveries, newest first, each with its attempts, as API resources. */
export function deliveriesPage(
  app: AppContext,
  subscriptionId: string,
  opts: { status?: (typeof DELIVERY_STATUSES)[number] | undefined; startingAfter?: string | undefined; limit: number },
): { data: Record<string, unknown>[]; hasMore: boolean } {
  mustGetSubscription(app, subscriptionId);
  let afterSeq: number | undefined;
  if (opts.startingAfter !== undefined) {
    const cursor = getDelivery(app.db, opts.startingAfter);
    if (!cursor || cursor.subscriptionId !== subscriptionId) {
      throw new InvalidCursorError('starting_after', opts.startingAfter);
    }
    afterSeq = cursor.seq;
  }
  const page = listDeliveriesPage(app.db, { subscriptionId, status: opts.status, afterSeq, limit: opts.limit });
  const attempts = listAttemptsFor(app.db, page.deliveries.map((d) => d.id));
  return { data: page.deliveries.map((d) => deliveryResource(d, attempts.get(d.id) ?? [])), hasMore: page.hasMore };
}

export function deliveryWithAttempts(app: AppContext, subscriptionId: string, deliveryId: string): Record<string, unknown> {
  mustGetSubscription(app, subscriptionId);
  const d = mustGetDelivery(app, subscriptionId, deliveryId);
  return deliveryResource(d, listAttempts(app.db, d.id));
}

/**
 * Queues the same event (same event id and data) again under a new webhook_delivery_id, so a
 * receiver that deduplicates still processes it, with the full retry policy.
 */
export function redeliver(app: AppContext, dispatcher: Dispatcher, subscriptionId: string, deliveryId: string): WebhookDeliveryRecord {
  const now = app.clock.now();
  const created = app.db
    .transaction(() => {
      const sub = mustGetSubscription(app, subscriptionId);
      const original = mustGetDelivery(app, sub.id, deliveryId);
      if (sub.status !== 'enabled') {
        throw new ConflictError('webhook_disabled', 'This webhook subscription is disabled; enable it before redelivering.');
      }
      const id = newId('whdel');
      const envelope = JSON.parse(original.body) as Record<string, unknown>;
      envelope.webhook_delivery_id = id;
      insertDelivery(app.db, {
        id,
        subscriptionId: sub.id,
        eventId: original.eventId,
        eventType: original.eventType,
        kind: 'redelivery',
        redeliveryOf: original.id,
        body: JSON.stringify(envelope),
        maxAttempts: original.kind === 'test' ? 1 : MAX_ATTEMPTS,
        nextAttemptMs: now,
        createdMs: now,
      });
      return getDelivery(app.db, id)!;
    })
    .immediate();
  dispatcher.wake();
  return created;
}
