import { z } from 'zod';
import { deleteSubscription, listSubscriptions } from '../../db/webhook-subscriptions.js';
import { idString } from '../../fields.js';
import type { Dispatcher } from '../../webhooks/dispatcher.js';
import {
  deliveryResource,
  subscriptionResource,
  WebhookDeliverySchema,
  WebhookSubscriptionSchema,
  WebhookTestSchema,
} from '../../webhooks/resources.js';
import {
  changeSubscription,
  createSubscription,
  deliveriesPage,
  DELIVERY_STATUSES,
  deliveryWithAttempts,
  MAX_SUBSCRIPTIONS,
  mustGetSubscription,
  redeliver,
  sendTestPing,
  WebhookCreateSchema,
  WebhookUpdateSchema,
} from '../../webhooks/subscriptions.js';
import { errors } from '../errors.js';
import { defineRoute, type RouteDef } from '../route.js';
import { DeletedSchema, ErrorSchema, listOf } from '../schemas.js';
import { queryInt } from '../validation.js';

const subParams = z.object({ id: idString('whsub') });
const deliveryParams = z.object({ id: idString('whsub'), delivery_id: idString('whdel') });

const errorResponses = {
  400: { description: 'Invalid request', schema: ErrorSchema },
  401: { description: 'Missing or invalid API key', schema: ErrorSchema },
  403: { description: 'The key lacks the required scope', schema: ErrorSchema },
};
const notFound = { 404: { description: 'No such webhook subscription', schema: ErrorSchema } };

export interface WebhookRouteDeps {
  dispatcher: Dispatcher;
}

export function webhookRoutes({ dispatcher }: WebhookRouteDeps): RouteDef[] {
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
        const sub = createSubscription(app, body);
        return { status: 201, body: subscriptionResource(sub, app.clock.now(), sub.secret) };
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
        return { body: subscriptionResource(mustGetSubscription(app, params.id), app.clock.now()) };
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Update a webhook subscription (url, events, status, secret)',
      description:
        'status "disabled" pauses it (pending deliveries are canceled, new events are not recorded for it); "enabled" resumes it and clears an automatic disable. A new secret starts signing at once and the old one keeps signing too for 24 hours.',
      tag: 'Webhooks',
      access: 'webhooks:write',
      params: subParams,
      body: WebhookUpdateSchema,
      responses: { 200: { description: 'The updated subscription', schema: WebhookSubscriptionSchema }, ...notFound, ...errorResponses },
      handler({ app, params, body }) {
        return { body: subscriptionResource(changeSubscription(app, dispatcher, params.id, body), app.clock.now()) };
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
        const outcome = await sendTestPing(app, dispatcher, params.id);
        return {
          body: {
            object: 'webhook_test',
            delivered: outcome.delivered,
            status_code: outcome.statusCode,
            duration_ms: outcome.durationMs,
            webhook_delivery_id: outcome.deliveryId,
            ...(outcome.error !== undefined ? { error: outcome.error } : {}),
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
        status: z.enum(DELIVERY_STATUSES, { message: 'must be pending, succeeded, failed or canceled' }).optional(),
      }),
      responses: { 200: { description: 'A page of deliveries', schema: listOf(WebhookDeliverySchema, 'WebhookDeliveryList') }, ...notFound, ...errorResponses },
      handler({ app, params, query }) {
        const page = deliveriesPage(app, params.id, { status: query.status, startingAfter: query.starting_after, limit: query.limit ?? 20 });
        return { body: { object: 'list', data: page.data, has_more: page.hasMore } };
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
        return { body: deliveryWithAttempts(app, params.id, params.delivery_id) };
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
        return { status: 201, body: deliveryResource(redeliver(app, dispatcher, params.id, params.delivery_id), []) };
      },
    }),
  ];
}
