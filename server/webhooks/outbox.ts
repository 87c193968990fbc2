import type { Db } from '../db/connection.js';
import { insertDelivery } from '../db/webhook-deliveries.js';
import { listEnabledSubscriptionsFor } from '../db/webhook-subscriptions.js';
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
  for (const sub of listEnabledSubscriptionsFor(db, event.type)) {
    const id = newId('whdel');
    insertDelivery(db, {
      id,
      subscriptionId: sub.id,
      eventId: event.id,
      eventType: event.type,
      kind: 'event',
      redeliveryOf: null,
      body: JSON.stringify(eventEnvelope(event, id)),
      maxAttempts: MAX_ATTEMPTS,
      nextAttemptMs: event.createdMs,
      createdMs: event.createdMs,
    });
  }
}
