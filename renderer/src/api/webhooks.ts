/** /v1/webhooks: subscriptions, their test ping and their deliveries. */
import { api } from './client';
import type { Deleted, List, WebhookDelivery, WebhookInput, WebhookPatch, WebhookSubscription, WebhookTest } from './types';

const path = (id: string) => `/v1/webhooks/${encodeURIComponent(id)}`;

export const listWebhooks = (signal?: AbortSignal) => api.get<List<WebhookSubscription>>('/v1/webhooks', undefined, signal);
/** The created subscription carries its signing secret, shown once. */
export const createWebhook = (body: WebhookInput, idempotencyKey?: string) => api.post<WebhookSubscription>('/v1/webhooks', body, idempotencyKey);
export const updateWebhook = (id: string, body: WebhookPatch) => api.patch<WebhookSubscription>(path(id), body);
export const deleteWebhook = (id: string) => api.del<Deleted>(path(id));
/** Sends a signed test ping now and reports how the receiver answered. */
export const testWebhook = (id: string) => api.post<WebhookTest>(`${path(id)}/test`);
export const listDeliveries = (id: string, query: { limit?: number }, signal?: AbortSignal) => api.get<List<WebhookDelivery>>(`${path(id)}/deliveries`, query, signal);
export const redeliver = (id: string, deliveryId: string, idempotencyKey?: string) =>
  api.post<WebhookDelivery>(`${path(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, undefined, idempotencyKey);
