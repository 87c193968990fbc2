import type { Db } from '../db/connection.js';
import { insertDelivery } from '../db/webhook-deliveries.js';
import { listEnabledSubscriptionIdsFor } from '../db/webhook-subscriptions.js';
import { eventEnvelope, type EventRecord } from '../events/bus.js';
import { newId } from '../ids.js';
import { MAX_ATTEMPTS } from './dispatcher.js';

/**
 * The outbox writer (an EventBus recorder): runs inside the transaction that records `event`, and
 * stores one delivery per enabled subscription listing the event's type, due at once. The change,
 * its event and its deliveries commit together or not at all; nothing is sent from here.
 *
 * test.ping is never fanned out: it is sent only by the test endpoint, to one subscription.
 */
export function recordDeliveries(db: Db, event: EventRecord): void {
  if (event.type === 'test.ping') return;
  const subscriptionIds = listEnabledSubscriptionIdsFor(db, event.type);
  if (subscriptionIds.length === 0) return;
  const body = deliveryBodies(event);
  for (const subscriptionId of subscriptionIds) {
    const id = newId('whdel');
    insertDelivery(db, {
      id,
      subscriptionId,
      eventId: event.id,
      eventType: event.type,
      kind: 'event',
      redeliveryOf: null,
      body: body(id),
      maxAttempts: MAX_ATTEMPTS,
      nextAttemptMs: event.createdMs,
      createdMs: event.createdMs,
    });
  }
}

/**
 * The body of each delivery of `event`: exactly JSON.stringify(eventEnvelope(event, deliveryId)),
 * with the event's data serialised once for all its subscriptions rather than once per delivery
 * (the data is the whole resource; the deliveries differ only in webhook_delivery_id).
 */
export function deliveryBodies(event: Pick<EventRecord, 'id' | 'type' | 'createdMs' | 'data'>): (deliveryId: string) => string {
  // The envelope's keys before data, in their order; webhook_delivery_id comes last of them.
  const head = JSON.stringify(eventEnvelope({ ...event, data: undefined as never })).slice(0, -1);
  const tail = `,"data":${JSON.stringify(event.data)}}`;
  return (deliveryId) => `${head},"webhook_delivery_id":${JSON.stringify(deliveryId)}${tail}`;
}
