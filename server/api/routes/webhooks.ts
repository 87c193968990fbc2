import { z } from 'zod';
import { listAttempts, listAttemptsFor } from '../../db/webhook-attempts.js';
import { getDelivery, insertDelivery, listDeliveriesPage, cancelPendingDeliveries } from '../../db/webhook-deliveries.js';
import {
  countSubscriptions,
  deleteSubscription,
  getSubscription,
  insertSubscription,
  listSubscriptions,
  updateSubscription,
  type WebhookSubscriptionRecord,
} from '../../db/webhook-subscriptions.js';
import { EVENT_TYPES } from '../../events/bus.js';
import { newId, randomToken } from '../../ids.js';
import { isoUtc } from '../../time/tz.js';
import { MAX_ATTEMPTS, type Dispatcher } from '../../webhooks/dispatcher.js';
import { FINGERPRINT_PATTERN, normalizeFingerprint } from '../../webhooks/tls-pin.js';
import {
  deliveryResource,
  subscriptionResource,
  WebhookDeliverySchema,
  WebhookSubscriptionSchema,
  WebhookTestSchema,
} from '../../webhooks/resources.js';
import { errors } from '../errors.js';
import { defineRoute, type RouteDef } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { idString, queryInt } from '../validation.js';

export const MAX_SUBSCRIPTIONS = 50;
/** After a rotation the old secret keeps signing this long (CONTRACT §7). */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
const MAX_URL_LENGTH = 2048;

/** Why a webhook URL is refused, or undefined when it is fine (CONTRACT §7). */
export function webhookUrlProblem(raw: string): string | undefined {
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return 'must not contain spaces or control characters';
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
 * without credentials, no spaces, control characters or fragment. With `format: uri` (a valid
 * URI), a URL that matches it is accepted.
 */
const WEBHOOK_URL_PATTERN = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\u0000-\u0020\u007f/?#@\\]+([/?][^\u0000-\u0020\u007f#]*)?$/;

export const webhookUrl = z
  .string({ message: 'must be a string' })
  .max(MAX_URL_LENGTH, { message: `must be at most ${MAX_URL_LENGTH} characters` })
  .superRefine((s, ctx) => {
    const problem = webhookUrlProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  // After the check above, so its clearer message is the one reported; the pattern documents it.
  .regex(WEBHOOK_URL_PATTERN, { message: 'must be an absolute http(s) URL without credentials, spaces or fragment' })
  .meta({ format: 'uri', description: 'Absolute http(s) URL; loopback and LAN hosts are allowed; no credentials, no fragment.', example: 'http://homeassistant.local:8123/api/webhook/chyme-7f3c9a2e5b8d41f6' });

export const eventList = z
  .array(z.enum(EVENT_TYPES, { message: `must be one of ${EVENT_TYPES.join(', ')}` }), { message: 'must be an array of event names' })
  .min(1, { message: 'must name at least one event' })
  .max(50, { message: 'must name at most 50 events' })
  .transform((list) => [...new Set(list)])
  .meta({ description: 'Event types to deliver (duplicates are ignored).' });

const secretField = z
  .string({ message: 'must be a string' })
  .min(16, { message: 'must be at least 16 characters' })
  .max(256, { message: 'must be at most 256 characters' })
  .regex(/^[^\u0000-\u001f\u007f]+$/, { message: 'must not contain control characters' })
  .meta({ description: 'Shared signing secret, 16–256 characters (HMAC key: its UTF-8 bytes). Generated (whsec_…) when absent.' });

/** A pinned certificate's SHA-256 fingerprint, stored in its canonical "AB:CD:…" form. */
export const certificateFingerprint = z
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
  });

export const WebhookCreateSchema = z
  .strictObject({
    url: webhookUrl,
    events: eventList,
    secret: secretField.optional(),
    tls_certificate_sha256: certificateFingerprint.nullable().optional(),
  })
  .meta({ id: 'WebhookCreate' });

export const WebhookUpdateSchema = z
  .strictObject({
    url: webhookUrl.optional(),
    events: eventList.optional(),
    status: z.enum(['enabled', 'disabled'], { message: 'must be enabled or disabled' }).optional(),
    secret: secretField.optional().meta({
      description: 'A new signing secret. The old one keeps signing too (a second v1= in the header) for 24 hours.',
    }),
    tls_certificate_sha256: certificateFingerprint.nullable().optional(),
  })
  .meta({ id: 'WebhookUpdate' });

const subParams = z.object({ id: idString('whsub') });
const deliveryParams = z.object({ id: idString('whsub'), delivery_id: idString('whdel') });

const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};
const notFound = { 404: { description: 'No such webhook subscription', schema: ErrorSchema } };

export function generateSecret(): string {
  return `whsec_${randomToken(32)}`;
}

export interface WebhookRouteDeps {
  dispatcher: Dispatcher;
}

export function webhookRoutes({ dispatcher }: WebhookRouteDeps): RouteDef[] {
  const mustGet = (db: Parameters<typeof getSubscription>[0], id: string): WebhookSubscriptionRecord => {
    const sub = getSubscription(db, id);
    if (!sub) throw errors.resourceMissing('webhook subscription', id);
    return sub;
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook subscription',
      description: `url and events are required. The signing secret is returned in this response only. At most ${MAX_SUBSCRIPTIONS} subscriptions.`,
      tag: 'Webhooks',
      access: 'webhooks:write',
      body: WebhookCreateSchema,
      responses: { 201: { description: 'The subscription, with its secret', schema: WebhookSubscriptionSchema }, ...errorResponses },
      handler({ app, body }) {
        const now = app.clock.now();
        const secret = body.secret ?? generateSecret();
        const sub: WebhookSubscriptionRecord = {
          id: newId('whsub'),
          url: body.url,
          events: body.events,
          secret,
          previousSecret: null,
          previousSecretExpiresMs: null,
          status: 'enabled',
          disabledReason: null,
          disabledMs: null,
          failingSinceMs: null,
          tlsPinSha256: body.tls_certificate_sha256 ?? null,
          tlsSeenSha256: null,
          tlsSeenMs: null,
          createdMs: now,
          updatedMs: now,
        };
        app.db
          .transaction(() => {
            if (countSubscriptions(app.db) >= MAX_SUBSCRIPTIONS) {
              throw errors.limitExceeded(`You can have at most ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one first.`);
            }
            insertSubscription(app.db, sub);
          })
          .immediate();
        return { status: 201, body: subscriptionResource(sub, now, secret) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook subscriptions',
      description: 'Every subscription (at most 50), newest first.',
      tag: 'Webhooks',
      access: 'webhooks:read',
      responses: { 200: { description: 'The subscriptions', schema: listOf(WebhookSubscriptionSchema, 'WebhookSubscriptionList') }, ...errorResponses },
      handler({ app }) {
        const now = app.clock.now();
        return { body: { object: 'list', data: listSubscriptions(app.db).map((s) => subscriptionResource(s, now)), has_more: false } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Retrieve a webhook subscription',
      tag: 'Webhooks',
      access: 'webhooks:read',
      params: subParams,
      responses: { 200: { description: 'The subscription', schema: WebhookSubscriptionSchema }, ...notFound, ...errorResponses },
      handler({ app, params }) {
        return { body: subscriptionResource(mustGet(app.db, params.id), app.clock.now()) };
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Update a webhook subscription (url, events, status, secret, pinned certificate)',
      description:
        'status "disabled" pauses it (pending deliveries are canceled, new events are not recorded for it); "enabled" resumes it and clears an automatic disable. A new secret starts signing at once and the old one keeps signing too for 24 hours.',
      tag: 'Webhooks',
      access: 'webhooks:write',
      params: subParams,
      body: WebhookUpdateSchema,
      responses: { 200: { description: 'The updated subscription', schema: WebhookSubscriptionSchema }, ...notFound, ...errorResponses },
      handler({ app, params, body }) {
        const now = app.clock.now();
        const updated = app.db
          .transaction(() => {
            const sub = mustGet(app.db, params.id);
            const next: WebhookSubscriptionRecord = { ...sub };
            if (body.url !== undefined && body.url !== sub.url) {
              next.url = body.url;
              next.failingSinceMs = null; // failures of the old URL say nothing about the new one
            }
            if (body.events !== undefined) next.events = body.events;
            if (body.tls_certificate_sha256 !== undefined && body.tls_certificate_sha256 !== sub.tlsPinSha256) {
              next.tlsPinSha256 = body.tls_certificate_sha256;
              next.failingSinceMs = null; // failures under the old trust say nothing about the new one
            }
            if (body.secret !== undefined && body.secret !== sub.secret) {
              next.previousSecret = sub.secret;
              next.previousSecretExpiresMs = now + SECRET_OVERLAP_MS;
              next.secret = body.secret;
            }
            if (body.status === 'enabled' && sub.status === 'disabled') {
              next.status = 'enabled';
              next.disabledMs = null;
              next.disabledReason = null;
              next.failingSinceMs = null;
            } else if (body.status === 'disabled' && sub.status === 'enabled') {
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
        return { body: subscriptionResource(updated, now) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook subscription and its delivery log',
      tag: 'Webhooks',
      access: 'webhooks:write',
      params: subParams,
      responses: { 200: { description: 'Deleted', schema: DeletedSchema }, ...notFound, ...errorResponses },
      handler({ app, params }) {
        if (!deleteSubscription(app.db, params.id)) throw errors.resourceMissing('webhook subscription', params.id);
        return { body: { id: params.id, object: 'webhook_subscription', deleted: true } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Send a test.ping to the subscription URL, once, and report the outcome',
      description:
        'No body is needed. One synchronous attempt (10 s timeout, no retries), signed like every delivery; works on a disabled subscription too. delivered is true when the receiver answered 2xx. The attempt appears in the delivery log.',
      tag: 'Webhooks',
      access: 'webhooks:write',
      params: subParams,
      responses: { 200: { description: 'The outcome of the attempt', schema: WebhookTestSchema }, ...notFound, ...errorResponses },
      async handler({ app, params }) {
        const sub = mustGet(app.db, params.id);
        const now = app.clock.now();
        const deliveryId = newId('whdel');
        const envelope = {
          object: 'event',
          id: newId('evt'),
          type: 'test.ping',
          created: isoUtc(now),
          webhook_delivery_id: deliveryId,
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
          eventId: envelope.id,
          eventType: 'test.ping',
          kind: 'test',
          redeliveryOf: null,
          body: JSON.stringify(envelope),
          maxAttempts: 1,
          nextAttemptMs: null,
          createdMs: now,
        });
        const report = await dispatcher.attemptNow(deliveryId);
        if (!report) throw errors.internal();
        const r = report.result;
        return {
          body: {
            object: 'webhook_test',
            delivered: r.ok,
            status_code: r.statusCode,
            duration_ms: r.durationMs,
            webhook_delivery_id: deliveryId,
            certificate_sha256: r.peerCertificateSha256,
            ...(r.ok ? {} : { error: r.error ?? 'not delivered' }),
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List deliveries of a subscription, newest first, with their attempts',
      description:
        'Each delivery lists every attempt (start time, outcome, HTTP status, duration, error). Page with starting_after=<last delivery id>. Payloads are not included (they may hold data the key cannot read). Finished deliveries are kept 30 days.',
      tag: 'Webhooks',
      access: 'webhooks:read',
      params: subParams,
      query: z.object({
        limit: queryInt(1, 100).optional(),
        starting_after: idString('whdel').optional(),
        status: z.enum(['pending', 'succeeded', 'failed', 'canceled'], { message: 'must be pending, succeeded, failed or canceled' }).optional(),
      }),
      responses: { 200: { description: 'A page of deliveries', schema: listOf(WebhookDeliverySchema, 'WebhookDeliveryList') }, ...notFound, ...errorResponses },
      handler({ app, params, query }) {
        mustGet(app.db, params.id);
        let afterSeq: number | undefined;
        if (query.starting_after !== undefined) {
          const cursor = getDelivery(app.db, query.starting_after);
          if (!cursor || cursor.subscriptionId !== params.id) throw errors.invalidCursor('starting_after', query.starting_after);
          afterSeq = cursor.seq;
        }
        const page = listDeliveriesPage(app.db, { subscriptionId: params.id, status: query.status, afterSeq, limit: query.limit ?? 20 });
        const attempts = listAttemptsFor(app.db, page.deliveries.map((d) => d.id));
        return {
          body: {
            object: 'list',
            data: page.deliveries.map((d) => deliveryResource(d, attempts.get(d.id) ?? [])),
            has_more: page.hasMore,
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks/{id}/deliveries/{delivery_id}',
      operationId: 'getWebhookDelivery',
      summary: 'Retrieve one delivery with its attempts',
      tag: 'Webhooks',
      access: 'webhooks:read',
      params: deliveryParams,
      responses: { 200: { description: 'The delivery', schema: WebhookDeliverySchema }, ...notFound, ...errorResponses },
      handler({ app, params }) {
        mustGet(app.db, params.id);
        const d = getDelivery(app.db, params.delivery_id);
        if (!d || d.subscriptionId !== params.id) throw errors.resourceMissing('webhook delivery', params.delivery_id);
        return { body: deliveryResource(d, listAttempts(app.db, d.id)) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again',
      description:
        'Queues a new delivery of the same event (same event id and data) with a new webhook_delivery_id, so a receiver that deduplicates still processes it, and the full retry policy. Its redelivery_of names the original. The subscription must be enabled.',
      tag: 'Webhooks',
      access: 'webhooks:write',
      params: deliveryParams,
      responses: {
        201: { description: 'The new delivery (pending)', schema: WebhookDeliverySchema },
        409: { description: 'The subscription is disabled', schema: ErrorSchema },
        ...notFound,
        ...errorResponses,
      },
      handler({ app, params }) {
        const now = app.clock.now();
        const created = app.db
          .transaction(() => {
            const sub = mustGet(app.db, params.id);
            const original = getDelivery(app.db, params.delivery_id);
            if (!original || original.subscriptionId !== sub.id) throw errors.resourceMissing('webhook delivery', params.delivery_id);
            if (sub.status !== 'enabled') {
              throw errors.conflict('webhook_disabled', 'This webhook subscription is disabled; enable it before redelivering.');
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
        return { status: 201, body: deliveryResource(created, []) };
      },
    }),
  ];
}
