import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { eventExists, insertEvent, type EventRecord } from '../db/events.js';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { base62 } from '../ids.js';
import type { EventType } from './types.js';


export type { EventRecord };

export interface EmitOptions {
  /** The changed fields' earlier values (Stripe's convention), e.g. the previous state. */
  previousAttributes?: Record<string, unknown>;
}

export type Emit = (type: EventType, object: unknown, options?: EmitOptions) => EventRecord;

/** Runs inside the writing transaction for every event recorded (the webhook outbox hooks here). */
export type EventRecorder = (db: Db, event: EventRecord) => void;
/** Runs after the transaction that recorded the event has committed. */
export type EventListener = (event: EventRecord) => void;

/**
 * The seam between changes and their announcements. A write runs in one transaction; the events
 * it emits are stored in that same transaction (and so are the webhook deliveries they cause), so
 * a change and its announcements are committed together or not at all. Listeners (the live event
 * stream, the dispatcher's wake-up, desktop notifications) hear about them only after commit.
 */
export class EventBus {
  private readonly recorders: EventRecorder[] = [];
  private readonly listeners = new Set<EventListener>();
  private readonly restoredListeners = new Set<() => void>();
  private pending: EventRecord[] | null = null;
  private readonly commitListeners = new Set<() => void>();

  constructor(
    private db: Db,
    private readonly clock: Clock,
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {}

  /** Switches to a new connection (a restore reopened the database); never inside a write. */
  useDatabase(db: Db): void {
    if (this.pending) throw new Error('the database cannot be replaced inside a write');
    this.db = db;
  }

  onRecord(recorder: EventRecorder): void {
    this.recorders.push(recorder);
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Listens for a restore having replaced the data (announceRestored). The events recorded since
   * are those of the restored file: their sequence numbers start from where it stopped.
   */
  onRestored(listener: () => void): () => void {
    this.restoredListeners.add(listener);
    return () => this.restoredListeners.delete(listener);
  }

  /** Tells listeners the data was replaced by a restore, once the service answers on it again. */
  announceRestored(): void {
    for (const listener of this.restoredListeners) {
      try {
        listener();
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  /** Hears of every committed write, with or without events (sync moves the changes on). */
  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Runs `fn` in one IMMEDIATE transaction; nested calls join the outer one. */
  write<T>(fn: (emit: Emit) => T): T {
    if (this.pending) return fn(this.emit);
    this.pending = [];
    let committed: EventRecord[] | undefined;
    try {
      const result = this.db.transaction(() => fn(this.emit)).immediate();
      committed = this.pending;
      return result;
    } finally {
      this.pending = null;
      for (const event of committed ?? []) this.publish(event);
      if (committed) for (const listener of this.commitListeners) this.call(listener);
    }
  }

  private readonly emit: Emit = (type, object, options) => {
    if (!this.pending) throw new Error('events can only be emitted inside EventBus.write');
    const data: EventRecord['data'] = { object };
    if (options?.previousAttributes) data.previous_attributes = options.previousAttributes;
    // The n-th announcement of the same object on this device: a real repeat (windows back to
    // what they were) is a new event with its own id; every device that records the same history
    // of announcements gives each the same id.
    let id: string;
    let n = 0;
    do id = eventId(type, object, n++);
    while (eventExists(this.db, id));
    const event = insertEvent(this.db, { id, type, createdMs: this.clock.now(), data });
    for (const record of this.recorders) record(this.db, event);
    this.pending.push(event);
    return event;
  };

  private call(listener: () => void): void {
    try {
      listener();
    } catch (err) {
      this.onListenerError(err);
    }
  }

  private publish(event: EventRecord): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}

/**
 * An event's id is a digest of its type, its object and how many times this device announced that
 * same object before. Every device announces the changes of a synced history (only the webhook
 * host delivers them), so the host, a device that becomes the host, and a restored or copied data
 * folder all give one change the same id, and receivers, which dedupe by id, see it once.
 */
export function eventId(type: string, object: unknown, repeat = 0): string {
  const digest = createHash('sha256').update(type).update('\0').update(canonicalJson(object)).update(`\0${repeat}`).digest();
  return `evt_${base62(digest).slice(0, 20)}`;
}

/** Fields of a resource that differ, with their old values (Stripe's previous_attributes); updated_at is not a change. */
export function previousAttributes(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(before)) {
    if (k !== 'updated_at' && JSON.stringify(v) !== JSON.stringify(after[k])) out[k] = v;
  }
  return out;
}

/** The JSON envelope of an event, as webhooks and the event stream carry it (CONTRACT §7). */
export function eventEnvelope(event: Pick<EventRecord, 'id' | 'type' | 'createdMs' | 'data'>, webhookDeliveryId?: string): Record<string, unknown> {
  return {
    object: 'event',
    id: event.id,
    type: event.type,
    created: new Date(event.createdMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(webhookDeliveryId ? { webhook_delivery_id: webhookDeliveryId } : {}),
    data: event.data,
  };
}
